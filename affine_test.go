package enforce

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/internal/affine"
)

// TestAffineResidual checks that Linear and a Stack of Linears hand out a
// batched evaluator whose residuals are Eval's to rounding, and that a
// Stack with a nonlinear part does not.
func TestAffineResidual(t *testing.T) {
	const nx, ny, rows = 2, 5, 60
	mk := func(nc int, off float64) Constraint {
		cm := mat.NewDense(nc, ny, nil)
		for i := range nc {
			for j := range ny {
				cm.Set(i, j, math.Sin(float64(i*ny+j)+off))
			}
		}
		l, err := Linear(nx, cm, func(x, r, _ []float64) {
			for i := range r {
				r[i] = x[i%nx]*x[i%nx] + off
			}
		})
		require.NoError(t, err)
		return l
	}
	l1, l2 := mk(3, 0), mk(2, 1)
	st, err := Stack(l1, l2)
	require.NoError(t, err)
	x, y := make([]float64, rows*nx), make([]float64, rows*ny)
	for i := range x {
		x[i] = math.Cos(float64(i))
	}
	for i := range y {
		y[i] = math.Sin(0.3 * float64(i))
	}
	for _, c := range []Constraint{l1, st} {
		p, ok := c.(affine.Provider)
		require.True(t, ok)
		a := p.AffineResidual()
		require.NotNil(t, a)
		assert.Same(t, a, p.AffineResidual(), "built once")
		_, _, nc := c.Dims()
		anx, ayn, anc := a.Dims()
		require.Equal(t, [3]int{nx, ny, nc}, [3]int{anx, ayn, anc})
		got := make([]float64, rows*nc)
		require.NoError(t, a.Eval(rows, x, nx, y, ny, got))
		want := make([]float64, nc)
		for s := range rows {
			c.Eval(x[s*nx:(s+1)*nx], y[s*ny:(s+1)*ny], want, nil)
			assert.InDeltaSlice(t, want, got[s*nc:(s+1)*nc], 1e-14, "sample %d", s)
		}
	}

	fn, err := Func(nx, ny, 1, func(x, y, c []hd.Number) { c[0] = hd.Mul(y[0], y[1]) })
	require.NoError(t, err)
	mixed, err := Stack(l1, fn)
	require.NoError(t, err)
	assert.Nil(t, mixed.(affine.Provider).AffineResidual())
}
