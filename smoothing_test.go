package enforce

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// smBoxCircle is the circle y1² + y2² = x² with the box 0.2 ≤ y1 ≤ 0.6,
// smoothed with ε.
func smBoxCircle(t *testing.T, eps float64) Constraint {
	eq, err := Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Mul(x[0], x[0]))
	})
	require.NoError(t, err)
	g, err := Func(1, 2, 2, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(y[0], hyperdual.Number{Real: 0.6})
		c[1] = hyperdual.Sub(hyperdual.Number{Real: 0.2}, y[0])
	})
	require.NoError(t, err)
	c, err := WithInequalities(eq, g, eps)
	require.NoError(t, err)
	return c
}

// circleStarts returns rows of x in [1, 1+xSpread) and ŷ uniform in the
// square of side ySpread around 0, drawn from rnd in that order row by
// row: far and near starts for smBoxCircle.
func circleStarts(rnd *rand.Rand, rows int, xSpread, ySpread float64) (x, yhat *mat.Dense) {
	x = mat.NewDense(rows, 1, nil)
	yhat = mat.NewDense(rows, 2, nil)
	for i := range rows {
		x.Set(i, 0, 1+xSpread*rnd.Float64())
		yhat.SetRow(i, []float64{ySpread * (rnd.Float64() - 0.5), ySpread * (rnd.Float64() - 0.5)})
	}
	return x, yhat
}

func TestSmoothingValidation(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	for _, tc := range []struct {
		name string
		c    Constraint
		s    Settings
	}{
		{"negative", c, Settings{Smoothing: -1}},
		{"NaN", c, Settings{Smoothing: math.NaN()}},
		{"not WithInequalities", gtCircle(t), Settings{Smoothing: 1e-2}},
		{"not above the constraint's ε", c, Settings{Smoothing: 1e-8}},
		{"batch-diagonal", c, Settings{Smoothing: 1e-2, Weights: BatchDiagonal}},
		{"trainable-diagonal", c, Settings{Smoothing: 1e-2, Weights: TrainableDiagonal}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewAdaNP(tc.c, tc.s)
			assert.Error(t, err)
		})
	}
}

// TestSmoothingProjects checks that a smoothed projection meets the
// constraint's own tolerance, that its Stats describe the whole
// projection (depths of both stages added, Before and Displacement
// measured from ŷ on the constraint itself), and that rows the plain
// projection converges on keep its result.
func TestSmoothingProjects(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	rnd := rand.New(rand.NewPCG(7, 8))
	const rows = 6
	x, yhat := circleStarts(rnd, rows, 1, 4)
	plain, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	sm, err := NewAdaNP(c, Settings{Smoothing: 1e-2})
	require.NoError(t, err)
	y, st, err := sm.Project(x, yhat)
	require.NoError(t, err)
	require.True(t, st.Converged(), "%v", st)
	chk, err := plain.Check(x, y)
	require.NoError(t, err)
	assert.LessOrEqual(t, chk.After.Max, 1e-6)
	_, st0, err := plain.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, st0.Before, st.Before, "Before is c at ŷ on the constraint itself")
	var dmax float64
	for i := range rows {
		d := math.Hypot(y.At(i, 0)-yhat.At(i, 0), y.At(i, 1)-yhat.At(i, 1))
		dmax = math.Max(dmax, d)
		assert.True(t, y.At(i, 0) < 0.6+1e-6 && y.At(i, 0) > 0.2-1e-6, "row %d: %v", i, mat.Row(nil, i, y))
	}
	assert.InDelta(t, dmax, st.Displacement.Max, 1e-12)

	// Rows the plain projection takes to Tol within 15 steps are its
	// results bit for bit, with its depths; the others took the smoothed
	// branch and converged too.
	y0, s0, err := plain.Project(x, yhat)
	require.NoError(t, err)
	for i := range rows {
		if !slices.Contains(s0.Missed, i) {
			assert.Equal(t, mat.Row(nil, i, y0), mat.Row(nil, i, y), "row %d", i)
		}
	}
	assert.GreaterOrEqual(t, st.MeanDepth, s0.MeanDepth)
}

// TestSmoothingGradients checks the composed map's gradients: Unrolled
// against finite differences in ŷ and x (with SmoothingNonmonotone too),
// and every mode without error.
func TestSmoothingGradients(t *testing.T) {
	c := smBoxCircle(t, 1e-6)
	rnd := rand.New(rand.NewPCG(3, 4))
	const rows = 3
	x, yhat := circleStarts(rnd, rows, 0.5, 1.5)
	a := randDense(rnd, rows, 2, 1)
	assertStagedGradients(t, func(Settings) Constraint { return c }, []Settings{
		{Smoothing: 1e-2, MinDepth: 4, MaxDepth: 4},
		{Smoothing: 1e-2, Damping: 0.1, MinDepth: 4, MaxDepth: 4},
		{Smoothing: 1e-3, LineSearch: true, Recompute: true, MinDepth: 4, MaxDepth: 4},
		// A nonmonotone search in the last stage alone, and a monotone
		// last stage after nonmonotone ones (SmoothingNonmonotone).
		{Smoothing: 1e-2, Damping: 0.1, SmoothingNonmonotone: 5, MinDepth: 4, MaxDepth: 4},
		{Smoothing: 1e-3, LineSearch: true, Nonmonotone: 3, SmoothingNonmonotone: 1, MinDepth: 4, MaxDepth: 4},
	}, Settings{Smoothing: 1e-2}, x, yhat, a)
}

// assertStagedGradients checks the gradients of a projection of several
// stages (Smoothing, EqualitySteps) with the constraint sys(s) for each
// settings s: Unrolled against finite differences in ŷ and x, exact by
// GradStats, for every s of exact; every other mode finite, with modes'
// other fields; and a trace recorded by another AdaNP refused.
func assertStagedGradients(t *testing.T, sys func(Settings) Constraint, exact []Settings, modes Settings, x, yhat, a *mat.Dense) {
	t.Helper()
	rows, ny := yhat.Dims()
	for _, s := range exact {
		p, err := NewAdaNP(sys(s), s)
		require.NoError(t, err)
		gy, gx, gs := gtVJP(t, p, x, yhat, a)
		wy, wx := gtFD(t, p, x, yhat, a)
		assert.Less(t, relErr(gy, wy), 2e-5, "%+v ŷ-gradient\n got %v\nwant %v", s, gy, wy)
		assert.Less(t, relErr(gx, wx), 2e-5, "%+v x-gradient\n got %v\nwant %v", s, gx, wx)
		assert.True(t, gs.Exact(), "%+v", gs)
		assert.Equal(t, rows, gs.Samples)
	}
	for _, g := range []GradMode{Projector, Implicit, FinalProjector} {
		s := modes
		s.Grad = g
		p, err := NewAdaNP(sys(s), s)
		require.NoError(t, err)
		gy, gx, _ := gtVJP(t, p, x, yhat, a)
		assert.True(t, allFinite(gy) && allFinite(gx), "%v", g)
	}
	p, err := NewAdaNP(sys(modes), modes)
	require.NoError(t, err)
	q, err := NewAdaNP(sys(modes), Settings{})
	require.NoError(t, err)
	var tr Trace
	_, err = q.ProjectTrace(mat.NewDense(rows, ny, nil), x, yhat, &tr)
	require.NoError(t, err)
	assert.Error(t, p.VJP(&tr, a, mat.NewDense(rows, ny, nil), nil))
}

// TestSmoothingInPlace: ProjectTo with dst = ŷ gives the result of a
// separate destination (the fallback reads ŷ after the first attempt).
func TestSmoothingInPlace(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	// MaxDepth 2: the first attempt misses the far rows, which take the
	// fallback.
	p, err := NewAdaNP(c, Settings{Smoothing: 1e-2, MaxDepth: 2})
	require.NoError(t, err)
	x := mat.NewDense(3, 1, []float64{1, 1.5, 2})
	yhat := mat.NewDense(3, 2, []float64{5, -4, -3, 3, 0.1, 0.1})
	want, st, err := p.Project(x, yhat)
	require.NoError(t, err)
	require.Greater(t, st.Depth, 2, "a row took the fallback")
	got := mat.DenseCopyOf(yhat)
	st2, err := p.ProjectTo(got, x, got)
	require.NoError(t, err)
	assert.True(t, mat.Equal(want, got))
	assert.Equal(t, st, st2)
}

// TestSmoothingFirstDepth: the plain attempt's length decides which rows
// take the fallback; a row that converges within it is the plain
// projection's result, and a negative length or one without Smoothing is
// an error.
func TestSmoothingFirstDepth(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	x := mat.NewDense(3, 1, []float64{1, 1.5, 2})
	yhat := mat.NewDense(3, 2, []float64{5, -4, -3, 3, 0.1, 0.1})
	plain, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	want, s0, err := plain.Project(x, yhat)
	require.NoError(t, err)
	require.True(t, s0.Converged())
	require.Greater(t, s0.Depth, 2, "some row needs more than two steps")
	long, err := NewAdaNP(c, Settings{Smoothing: 1e-2, SmoothingFirstDepth: s0.Depth})
	require.NoError(t, err)
	got, st, err := long.Project(x, yhat)
	require.NoError(t, err)
	assert.True(t, mat.Equal(want, got), "an attempt as long as the plain projection: no fallback")
	assert.Equal(t, s0.MeanDepth, st.MeanDepth)
	short, err := NewAdaNP(c, Settings{Smoothing: 1e-2, SmoothingFirstDepth: 2})
	require.NoError(t, err)
	got, st, err = short.Project(x, yhat)
	require.NoError(t, err)
	require.True(t, st.Converged())
	assert.False(t, mat.Equal(want, got), "a two-step attempt sends rows to the fallback")
	// Zero is DefaultSmoothingFirstDepth, the 15 steps the documentation
	// names: the same projection, with MaxDepth below and at it.
	assert.Equal(t, 15, DefaultSmoothingFirstDepth)
	for _, n := range []int{2, DefaultSmoothingFirstDepth} {
		zero, err := NewAdaNP(c, Settings{Smoothing: 1e-2, MaxDepth: n})
		require.NoError(t, err)
		named, err := NewAdaNP(c, Settings{Smoothing: 1e-2, MaxDepth: n, SmoothingFirstDepth: DefaultSmoothingFirstDepth})
		require.NoError(t, err)
		y0, s0, err := zero.Project(x, yhat)
		require.NoError(t, err)
		y1, s1, err := named.Project(x, yhat)
		require.NoError(t, err)
		assert.True(t, mat.Equal(y0, y1), "MaxDepth %d", n)
		assert.Equal(t, s0, s1, "MaxDepth %d", n)
	}
	for _, s := range []Settings{{Smoothing: 1e-2, SmoothingFirstDepth: -1}, {SmoothingFirstDepth: 3}} {
		_, err := NewAdaNP(c, s)
		assert.Error(t, err, "%+v", s)
	}
}
