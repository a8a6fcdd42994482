package enforce

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// mixedSystem is y1 + y2 + y3 = x (equality) with y1² + y2² ≤ 1 and
// y3 ≤ 0.5 (inequalities).
func mixedSystem(t *testing.T) (eq, g, ext Constraint) {
	eq, err := Func(1, 3, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Add(y[0], y[1]), y[2]), x[0])
	})
	require.NoError(t, err)
	g, err = Func(1, 3, 2, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Number{Real: 1})
		c[1] = hyperdual.Sub(y[2], hyperdual.Number{Real: 0.5})
	})
	require.NoError(t, err)
	ext, err = WithInequalities(eq, g, 0)
	require.NoError(t, err)
	return eq, g, ext
}

func TestInequalitiesProjection(t *testing.T) {
	eq, g, ext := mixedSystem(t)
	p, err := NewAdaNP(ext, Settings{})
	require.NoError(t, err)
	nx, ny := p.Dims()
	require.Equal(t, 1, nx)
	require.Equal(t, 3, ny, "the caller sees y only, not the multipliers")

	rnd := rand.New(rand.NewPCG(31, 32))
	const rows = 200
	x := mat.NewDense(rows, 1, nil)
	yhat := mat.NewDense(rows, 3, nil)
	violated := 0
	for s := 0; s < rows; s++ {
		x.Set(s, 0, 0.5+0.5*rnd.Float64())
		for j := 0; j < 3; j++ {
			yhat.Set(s, j, 0.6+0.4*rnd.NormFloat64())
		}
		gv := make([]float64, 2)
		g.Eval(x.RawRowView(s), yhat.RawRowView(s), gv, nil)
		if gv[0] > 0 || gv[1] > 0 {
			violated++
		}
	}
	require.Greater(t, violated, rows/4, "the test needs violated starting points")
	y, st, err := p.Project(x, yhat)
	require.NoError(t, err)
	require.Zero(t, st.NotConverged)
	gv, cv := make([]float64, 2), make([]float64, 1)
	for s := 0; s < rows; s++ {
		g.Eval(x.RawRowView(s), y.RawRowView(s), gv, nil)
		eq.Eval(x.RawRowView(s), y.RawRowView(s), cv, nil)
		assert.LessOrEqual(t, gv[0], 1e-6, "sample %d", s)
		assert.LessOrEqual(t, gv[1], 1e-6, "sample %d", s)
		assert.InDelta(t, 0, cv[0], 1e-6, "sample %d", s)
	}
}

func TestInequalitiesGradient(t *testing.T) {
	_, _, ext := mixedSystem(t)
	p, err := NewAdaNP(ext, Settings{MinDepth: 4, MaxDepth: 4})
	require.NoError(t, err)
	require.True(t, p.ExactGradient())
	rnd := rand.New(rand.NewPCG(33, 34))
	const rows = 3
	x := mat.NewDense(rows, 1, []float64{0.6, 0.8, 0.7})
	yhat := mat.NewDense(rows, 3, []float64{0.9, 0.7, 0.2, 0.1, 0.2, 0.9, 0.3, 0.3, 0.1})
	a := randDense(rnd, rows, 3, 1)
	npCheckVJP(t, p, x, yhat, a)
}
