//go:build !race

package enforce

const raceEnabled = false
