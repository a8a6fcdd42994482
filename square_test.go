package enforce

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// gtSquare is a square nonlinear system (nc = ny = 2):
//
//	c1 = y1 + 0.3·y2² − x1,  c2 = y2 + 0.3·sin(y1) − x2,
//
// whose solution y*(x) near x is unique for the inputs used here.
func gtSquare(t *testing.T) Constraint {
	c, err := Func(2, 2, 2, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(y[0], hyperdual.Scale(0.3, hyperdual.Mul(y[1], y[1]))), x[0])
		c[1] = hyperdual.Sub(hyperdual.Add(y[1], hyperdual.Scale(0.3, hyperdual.Sin(y[0]))), x[1])
	})
	require.NoError(t, err)
	return c
}

// TestSquareSystem checks that a square system (nc = ny) is projected by
// Newton's method onto its solution: every sample converges to the same
// point whatever ŷ, with every weighting; that every gradient mode gives
// ∂ỹ/∂ŷ ≈ 0 and ∂ỹ/∂x equal to central finite differences of the computed
// map; and that a square Linear system is solved in one step.
func TestSquareSystem(t *testing.T) {
	c := gtSquare(t)
	rnd := rand.New(rand.NewPCG(3, 4))
	const rows = 6
	x := randDense(rnd, rows, 2, 0.5)
	yhat := randDense(rnd, rows, 2, 0.8)
	yhat2 := randDense(rnd, rows, 2, 0.8)
	a := randDense(rnd, rows, 2, 1)

	for _, w := range []Settings{
		{},
		{Weights: Diagonal, Diag: []float64{0.5, 3}},
		{Weights: AutoDiagonal},
		{LineSearch: true},
	} {
		t.Run(fmt.Sprintf("%v line search %v", w.Weights, w.LineSearch), func(t *testing.T) {
			w.Tol = 1e-12
			p, err := NewAdaNP(c, w)
			require.NoError(t, err)
			y1, st, err := p.Project(x, yhat)
			require.NoError(t, err)
			require.True(t, st.Converged(), "%v", st)
			assert.LessOrEqual(t, st.After.Max, 1e-12)
			y2, _, err := p.Project(x, yhat2)
			require.NoError(t, err)
			assert.True(t, mat.EqualApprox(y1, y2, 1e-10), "the solution does not depend on ŷ")
		})
	}

	for _, mode := range []GradMode{Unrolled, Projector, Implicit, FinalProjector} {
		t.Run(fmt.Sprint("grad ", mode), func(t *testing.T) {
			p, err := NewAdaNP(c, Settings{Tol: 1e-13, Grad: mode})
			require.NoError(t, err)
			fy, fx := gtFD(t, p, x, yhat, a)
			gy, gx, gs := gtVJP(t, p, x, yhat, a)
			for i := range gy {
				assert.InDelta(t, 0, gy[i], 1e-6, "∂ℓ/∂ŷ[%d]", i)
				assert.InDelta(t, fy[i], gy[i], 1e-6, "∂ℓ/∂ŷ[%d] against FD", i)
			}
			for i := range gx {
				assert.InDelta(t, fx[i], gx[i], 1e-6*(1+abs(fx[i])), "∂ℓ/∂x[%d]", i)
			}
			assert.Zero(t, gs.Amplified)
			if mode == Unrolled || mode == Implicit {
				assert.True(t, gs.Exact(), "%+v", gs)
			}
		})
	}

	// Square through the wrappers: a Stack of two single constraints, and
	// WithInequalities, whose multiplier of an inactive inequality adds
	// one unknown and one equation.
	first, err := Func(2, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(y[0], hyperdual.Scale(0.3, hyperdual.Mul(y[1], y[1]))), x[0])
	})
	require.NoError(t, err)
	second, err := Func(2, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(y[1], hyperdual.Scale(0.3, hyperdual.Sin(y[0]))), x[1])
	})
	require.NoError(t, err)
	stacked, err := Stack(first, second)
	require.NoError(t, err)
	below, err := Func(2, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(y[0], hyperdual.Number{Real: 10}) // y1 ≤ 10, inactive
	})
	require.NoError(t, err)
	withIneq, err := WithInequalities(c, below, 0)
	require.NoError(t, err)
	direct, err := NewAdaNP(c, Settings{Tol: 1e-12})
	require.NoError(t, err)
	want, _, err := direct.Project(x, yhat)
	require.NoError(t, err)
	for name, sc := range map[string]Constraint{"Stack": stacked, "WithInequalities": withIneq} {
		p, err := NewAdaNP(sc, Settings{Tol: 1e-12})
		require.NoError(t, err, name)
		got, st, err := p.Project(x, yhat)
		require.NoError(t, err, name)
		assert.True(t, st.Converged(), "%s: %v", name, st)
		assert.True(t, mat.EqualApprox(want, got, 1e-9), "%s", name)
	}

	lin, err := Linear(1, mat.NewDense(2, 2, []float64{2, 1, 1, 3}), func(x, r, jx []float64) {
		r[0], r[1] = x[0], -x[0]
		if jx != nil {
			jx[0], jx[1] = 1, -1
		}
	})
	require.NoError(t, err)
	p, err := NewAdaNP(lin, Settings{})
	require.NoError(t, err)
	xl := mat.NewDense(2, 1, []float64{1, 2})
	y, st, err := p.Project(xl, mat.NewDense(2, 2, []float64{5, -5, 0, 7}))
	require.NoError(t, err)
	assert.Equal(t, 1, st.Depth)
	// [2 1; 1 3]·y = (x, −x): y = x·(4, −3)/5.
	assert.InDeltaSlice(t, []float64{0.8, -0.6, 1.6, -1.2}, y.RawMatrix().Data, 1e-14)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
