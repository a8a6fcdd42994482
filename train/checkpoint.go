package train

type fitState struct{}
