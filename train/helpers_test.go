package train

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// meanSquaredError returns the mean over all entries of (a − b)².
func meanSquaredError(a, b *mat.Dense) float64 {
	r, c := a.Dims()
	var s float64
	for i := range r {
		for j := range c {
			d := a.At(i, j) - b.At(i, j)
			s += d * d
		}
	}
	return s / float64(r*c)
}

// bits returns the IEEE-754 bit patterns of a's entries, row by row, so
// that tests compare values exactly (0 and −0 differ, NaN equals itself).
func bits(a *mat.Dense) []uint64 {
	r, c := a.Dims()
	out := make([]uint64, 0, r*c)
	for i := range r {
		for _, v := range a.RawRowView(i) {
			out = append(out, math.Float64bits(v))
		}
	}
	return out
}

// weightBits returns the bit patterns of a model's weights.
func weightBits(m *Model) [][]uint64 {
	var out [][]uint64
	for _, w := range m.Weights() {
		b := make([]uint64, len(w))
		for i, v := range w {
			b[i] = math.Float64bits(v)
		}
		out = append(out, b)
	}
	return out
}

// sumIsX is the linear constraint y₁ + y₂ = x of one input and two
// outputs, which several tests train on.
func sumIsX(t *testing.T) enforce.Constraint {
	t.Helper()
	c, err := enforce.Linear(1, mat.NewDense(1, 2, []float64{1, 1}), func(x, r, jx []float64) {
		r[0] = x[0]
		if jx != nil {
			jx[0] = 1
		}
	})
	require.NoError(t, err)
	return c
}
