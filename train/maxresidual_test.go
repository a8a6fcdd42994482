package train

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

// TestMaxResidualInequalities checks Epoch.MaxResidual on a
// WithInequalities system: the largest violation of the equality and the
// inequality (enforce.CheckResidual) of the projected outputs, within the
// projection's tolerance, where the Fischer–Burmeister row at zero
// multiplier (Residual's view) stays about √ε_FB away from zero at the
// active inequality.
func TestMaxResidualInequalities(t *testing.T) {
	t.Parallel()
	eq, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(y[0], y[1]), x[0]) // y₀ + y₁ = x
	})
	require.NoError(t, err)
	g, err := enforce.Func(1, 2, 1, func(_, y, c []hd.Number) {
		c[0] = hd.Sub(y[0], hd.Const(0.2)) // y₀ ≤ 0.2
	})
	require.NoError(t, err)
	const epsFB = 1e-2
	c, err := enforce.WithInequalities(eq, g, epsFB)
	require.NoError(t, err)
	const n = 16
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 2, nil)
	for i := range n {
		v := 1 + float64(i)/n
		x.Set(i, 0, v)
		y.Set(i, 0, v/2) // beyond the bound: the projection makes it active
		y.Set(i, 1, v/2)
	}
	tol := 1e-9
	m, err := New(Config{Sizes: []int{1, 2}, Constraint: c, Epochs: 2, BatchSize: n, Seed: 1, Quiet: true,
		AlwaysProject: true, LearnRate: 1e-3, Train: enforce.Settings{Tol: tol}, Infer: enforce.Settings{Tol: tol}})
	require.NoError(t, err)
	h, err := m.Fit(x, y)
	require.NoError(t, err)
	for _, e := range h {
		require.Equal(t, 0, e.Missed, "epoch %d: every projection converged", e.Epoch)
		assert.LessOrEqual(t, e.MaxResidual, tol, "epoch %d: max violation of ỹ", e.Epoch)
		assert.Greater(t, e.Residual, 0.1*math.Sqrt(epsFB), "epoch %d: the loss's residual, multipliers at zero", e.Epoch)
	}
	// The same numbers from the predictions: the largest CheckResidual
	// entry of ỹ is what MaxResidual reports.
	yt, st, err := m.Predict(x)
	require.NoError(t, err)
	require.True(t, st.Converged())
	v := newView(c, 1)
	mx, err := v.maxViolation(x, yt)
	require.NoError(t, err)
	assert.LessOrEqual(t, mx, tol)
	chk, err := m.InferAdaNP().Check(x, yt)
	require.NoError(t, err)
	assert.Equal(t, chk.Before.Max, mx, "AdaNP.Check's residual")
	_, atZero, err := v.norms(x, yt)
	require.NoError(t, err)
	assert.Greater(t, atZero, 0.1*math.Sqrt(epsFB), "the Fischer–Burmeister row at zero multiplier")
}
