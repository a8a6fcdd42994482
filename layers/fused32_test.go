package layers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/gtest"
)

// TestFused32Gradients checks the fused float32 layer operation and its
// hand-written gradient against gorgonia's float64 chain on the same
// network, for every activation and at a size where the products run on
// the packed kernels (50-40-40-10 on 30 rows): loss and every gradient
// entry within 1e-4 (relative to 1 + |value|; float32 rounding of weights,
// inputs and sums of 50 terms).
func TestFused32Gradients(t *testing.T) {
	sizes := []int{50, 40, 40, 10}
	for _, tc := range []struct{ hidden, output Activation }{
		{ReLU, Identity}, {Tanh, Sigmoid}, {Sigmoid, Tanh}, {Identity, ReLU},
	} {
		t.Run(tc.hidden.String()+"-"+tc.output.String(), func(t *testing.T) {
			p64 := newMSEProblem(t, tensor.Float64, sizes, tc.hidden, tc.output, 30)
			defer p64.m.Close()
			p32 := newMSEProblem(t, tensor.Float32, sizes, tc.hidden, tc.output, 30)
			defer p32.m.Close()
			// The same weights, with nonzero biases.
			w := p64.mlp.Weights()
			for i := 1; i < len(w); i += 2 {
				w[i] = randMatrix(uint64(i), 1, len(w[i]))
				for j := range w[i] {
					w[i][j] *= 0.1
				}
			}
			require.NoError(t, p32.mlp.SetWeights(w))
			require.NoError(t, p64.mlp.SetWeights(p32.mlp.Weights()))

			loss64, grad64 := p64.run(t)
			loss32, grad32 := p32.run(t)
			assert.InDelta(t, loss64, loss32, 1e-4*(1+loss64))
			require.Len(t, grad32, len(grad64))
			for i := range grad64 {
				assert.InDelta(t, grad64[i], grad32[i], 1e-4*(1+abs(grad64[i])), "parameter %d", i)
			}
		})
	}
}

// TestFused32LispMachine checks the fused operation's DoDiff: the
// LispMachine's gradients of a float32 MLP equal the TapeMachine's.
func TestFused32LispMachine(t *testing.T) {
	sizes := []int{50, 40, 10}
	tape := newMSEProblem(t, tensor.Float32, sizes, Tanh, Identity, 30)
	defer tape.m.Close()
	_, want := tape.run(t)

	g := gorgonia.NewGraph()
	mlp, err := NewMLP(g, sizes, Tanh, Identity, WithSeed(5), WithDtype(tensor.Float32))
	require.NoError(t, err)
	x := inputNode(g, tensor.Float32, "x", 30, sizes[0], randMatrix(1, 30, sizes[0]))
	target := inputNode(g, tensor.Float32, "target", 30, sizes[2], randMatrix(2, 30, sizes[2]))
	y, err := mlp.Forward(x)
	require.NoError(t, err)
	diff, err := gorgonia.Sub(y, target)
	require.NoError(t, err)
	sq, err := gorgonia.Square(diff)
	require.NoError(t, err)
	_, err = gorgonia.Mean(sq)
	require.NoError(t, err)
	m := gorgonia.NewLispMachine(g)
	defer m.Close()
	require.NoError(t, m.RunAll())
	var got []float64
	for _, n := range mlp.Learnables() {
		gv, err := n.Grad()
		require.NoError(t, err)
		got = append(got, gtest.Float64s(gv)...)
	}
	assert.InDeltaSlice(t, want, got, 1e-6)
}

// TestFused32Errors checks that the fused operations reject inputs of
// another dtype or shape with an error.
func TestFused32Errors(t *testing.T) {
	x64 := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]float64, 6)))
	x := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]float32, 6)))
	w := tensor.New(tensor.WithShape(4, 2), tensor.WithBacking(make([]float32, 8)))
	b := tensor.New(tensor.WithShape(2), tensor.WithBacking(make([]float32, 2)))
	_, err := (&affineOp{act: ReLU, in: 3, out: 2}).Do(x64, w, b)
	assert.ErrorContains(t, err, "want []float32")
	_, err = (&affineOp{act: ReLU, in: 3, out: 2}).Do(x, w, b)
	assert.ErrorContains(t, err, "values for x")
	_, err = (&gemmOp{}).Do(x, x)
	assert.ErrorContains(t, err, "product of shapes")
	_, err = (&affineOp{act: ReLU, in: 3, out: 2}).Do(x, w)
	assert.Error(t, err)
}
