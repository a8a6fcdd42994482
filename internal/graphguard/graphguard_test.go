package graphguard

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func build(panicWith any) (n *gorgonia.Node, err error) {
	defer Recover(&n, &err, "test")
	n = gorgonia.NewScalar(gorgonia.NewGraph(), tensor.Float64)
	if panicWith != nil {
		panic(panicWith)
	}
	return n, nil
}

func TestRecover(t *testing.T) {
	n, err := build(nil)
	assert.NoError(t, err)
	assert.NotNil(t, n)
	n, err = build(errors.New("boom"))
	assert.Nil(t, n)
	assert.ErrorContains(t, err, "test: gorgonia panicked while building the graph: boom")
}

func TestCheckFloat(t *testing.T) {
	assert.NoError(t, CheckFloat(tensor.Float64))
	assert.NoError(t, CheckFloat(tensor.Float32))
	assert.Error(t, CheckFloat(tensor.Int))
}
