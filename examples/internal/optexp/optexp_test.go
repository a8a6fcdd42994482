package optexp

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
)

func TestFlags(t *testing.T) {
	var o Options
	f := Flags(Experiment{Name: "linear", DC3: true}, &o)
	require.NoError(t, f.Parse([]string{"-quick", "-epochs", "5", "-float32"}))
	require.NoError(t, o.finish())
	assert.Equal(t, 5, o.Epochs, "an explicit flag keeps its value")
	assert.Equal(t, 400, o.NTrain)
	assert.Equal(t, "0", o.Sizes)
	assert.Equal(t, []float64{1}, o.Soft)
	assert.True(t, o.DC3, "the experiment's default")
	assert.Equal(t, enforce.Float32, o.Precision)

	f = Flags(Experiment{Name: "quadratic"}, &o)
	require.NoError(t, f.Parse(nil))
	require.NoError(t, o.finish())
	assert.Equal(t, []float64{5, 1, 0.1}, o.Soft)
	assert.False(t, o.DC3)
	assert.Equal(t, 1000, o.Epochs)
	assert.Equal(t, 2, o.Layers, "the paper's two hidden layers")
	assert.Equal(t, []int{50, 200, 200, 100}, hiddenSizes(50, o.Width, o.Layers, 100))
	assert.Equal(t, []int{50, 200, 200, 200, 100}, hiddenSizes(50, 200, 3, 100), "-layers 3: the reference's code")
	assert.ErrorContains(t, Run(io.Discard, io.Discard, Experiment{Name: "linear"}, Options{Seeds: 1, NTest: 1, NTrain: 1, Batch: 1, Width: 8}), "-layers")

	f = Flags(Experiment{Name: "quadratic"}, &o)
	require.NoError(t, f.Parse([]string{"-soft", "1,x"}))
	assert.ErrorContains(t, o.finish(), "bad -soft")
}
