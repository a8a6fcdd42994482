package gtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestFloat64s(t *testing.T) {
	d64 := []float64{1, 2}
	got := Float64s(tensor.New(tensor.WithShape(2), tensor.WithBacking(d64)))
	assert.Equal(t, []float64{1, 2}, got)
	got[0] = 9
	assert.Equal(t, 1.0, d64[0], "a copy")
	assert.Equal(t, []float64{3}, Float64s(tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{3}))))
	assert.Equal(t, []float64{4}, Float64s(gorgonia.NewF64(4)))
	assert.Equal(t, []float64{5}, Float64s(gorgonia.NewF32(5)))
	assert.Panics(t, func() { Float64s(tensor.New(tensor.WithShape(1), tensor.WithBacking([]int{1}))) })
}
