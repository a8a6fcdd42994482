package enforce

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// efBoxCircle is smBoxCircle with sparse parts (SparseFunc), for the
// sparse path.
func efBoxCircle(t *testing.T, eps float64) Constraint {
	eq, err := SparseFunc(1, 2, 1, [][]int{{0, 1}}, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Mul(x[0], x[0]))
	})
	require.NoError(t, err)
	g, err := SparseFunc(1, 2, 2, [][]int{{0}, {0}}, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(y[0], hyperdual.Number{Real: 0.6})
		c[1] = hyperdual.Sub(hyperdual.Number{Real: 0.2}, y[0])
	})
	require.NoError(t, err)
	c, err := WithInequalities(eq, g, eps)
	require.NoError(t, err)
	return c
}

// efFor returns the system for settings s: efBoxCircle on the sparse
// path, smBoxCircle otherwise.
func efFor(t *testing.T, s Settings, eps float64) Constraint {
	if s.Path == PathSparse {
		return efBoxCircle(t, eps)
	}
	return smBoxCircle(t, eps)
}

func TestEqualityStepsValidation(t *testing.T) {
	c := smBoxCircle(t, 1e-6)
	eq, err := Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Mul(x[0], x[0]))
	})
	require.NoError(t, err)
	g, err := Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(y[0], hyperdual.Number{Real: 0.6})
	})
	require.NoError(t, err)
	ineqOnly, err := WithInequalities(nil, g, 1e-6)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		c    Constraint
		s    Settings
		want string
	}{
		{"negative", c, Settings{EqualitySteps: -1}, "must be non-negative"},
		{"no inequalities", eq, Settings{EqualitySteps: 1}, "not one"},
		{"no equalities", ineqOnly, Settings{EqualitySteps: 1}, "has no equalities"},
		{"batch weights", c, Settings{EqualitySteps: 1, Weights: BatchDiagonal}, "batch-diagonal"},
		{"trainable weights", c, Settings{EqualitySteps: 1, Weights: TrainableDiagonal}, "trainable-diagonal"},
	} {
		_, err := NewAdaNP(tc.c, tc.s)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
	}
	for _, s := range []Settings{
		{EqualitySteps: 2},
		{EqualitySteps: 1, Smoothing: 1e-2, Damping: DefaultDamping},
		{EqualitySteps: 3, Path: PathSparse, Grad: Implicit, Chord: 2},
		{EqualitySteps: 1, Weights: Diagonal, Diag: []float64{1, 2}},
	} {
		_, err := NewAdaNP(efFor(t, s, 1e-6), s)
		assert.NoError(t, err, "%+v", s)
	}
}

// TestEqualityStepsProjects: the result is that of the equality stage
// (an AdaNP on the equalities with at most EqualitySteps steps) followed by
// the plain projection from its point, bit for bit; Stats describe the
// whole, from ŷ.
func TestEqualityStepsProjects(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 9))
	const rows = 6
	x, yhat := circleStarts(rnd, rows, 1, 4)
	for _, tc := range []struct {
		name string
		s    Settings
	}{
		{"dense", Settings{}},
		{"damped", Settings{Damping: DefaultDamping}},
		{"sparse", Settings{Path: PathSparse}},
		{"smoothed", Settings{Smoothing: 1e-2, MaxDepth: 40}},
	} {
		c := efFor(t, tc.s, 1e-8)
		eqc := c.(*fbConstraint).eq.c
		for _, k := range []int{1, 2} {
			s := tc.s
			s.EqualitySteps = k
			p, err := NewAdaNP(c, s)
			require.NoError(t, err)
			y, st, err := p.Project(x, yhat)
			require.NoError(t, err, tc.name)
			require.True(t, st.Converged(), "%s %d: %v", tc.name, k, st)

			s0 := tc.s
			s0.Smoothing, s0.MaxDepth = 0, k
			e, err := NewAdaNP(eqc, s0)
			require.NoError(t, err)
			y0, st0, err := e.Project(x, yhat)
			require.NoError(t, err)
			s1 := tc.s
			rest, err := NewAdaNP(c, s1)
			require.NoError(t, err)
			want, st1, err := rest.Project(x, y0)
			require.NoError(t, err)
			assert.True(t, mat.Equal(want, y), "%s %d: the two stages' result", tc.name, k)
			assert.InDelta(t, st0.MeanDepth+st1.MeanDepth, st.MeanDepth, 1e-12, tc.name)

			plain, err := NewAdaNP(c, Settings{MaxDepth: 1})
			require.NoError(t, err)
			_, stp, err := plain.Project(x, yhat)
			require.NoError(t, err)
			assert.Equal(t, stp.Before, st.Before, "%s: Before is c at ŷ on the whole system", tc.name)
			var dmax float64
			for i := range rows {
				dmax = math.Max(dmax, math.Hypot(y.At(i, 0)-yhat.At(i, 0), y.At(i, 1)-yhat.At(i, 1)))
			}
			assert.InDelta(t, dmax, st.Displacement.Max, 1e-12, "%s: Displacement from ŷ", tc.name)
			chk, err := plain.Check(x, y)
			require.NoError(t, err)
			assert.LessOrEqual(t, chk.After.Max, 1e-6, tc.name)

			// In place, and with a latent start of zero: the same.
			got := mat.DenseCopyOf(yhat)
			st2, err := p.ProjectTo(got, x, got)
			require.NoError(t, err)
			assert.True(t, mat.Equal(y, got), tc.name)
			assert.Equal(t, st, st2, tc.name)
			lat := mat.NewDense(rows, 2, nil)
			st3, err := p.ProjectLatent(got, x, yhat, lat)
			require.NoError(t, err)
			assert.True(t, mat.Equal(y, got), tc.name)
			assert.Equal(t, st, st3, tc.name)
			assert.NotEqual(t, 0.0, mat.Sum(lat), "%s: the multipliers come back", tc.name)
		}
	}
	// x or ŷ not finite: the error of a projection without the stage.
	bad := mat.DenseCopyOf(yhat)
	bad.Set(1, 0, math.NaN())
	p0, err := NewAdaNP(smBoxCircle(t, 1e-8), Settings{EqualitySteps: 1})
	require.NoError(t, err)
	_, _, err = p0.Project(x, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sample 1: x or ŷ is not finite")
	// RequireTol: the whole projection's misses are the error.
	c := smBoxCircle(t, 1e-8)
	p, err := NewAdaNP(c, Settings{EqualitySteps: 1, MaxDepth: 1, RequireTol: true})
	require.NoError(t, err)
	_, st, err := p.Project(x, yhat)
	var te *ToleranceError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, st.Missed, te.Samples)
}

// TestEqualityStepsGradients checks the composed map's gradients: Unrolled
// against finite differences in ŷ and x, dense and sparse, with damping
// and with the smoothed fallback; every other mode finite.
func TestEqualityStepsGradients(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	const rows = 3
	x, yhat := circleStarts(rnd, rows, 0.5, 2)
	a := randDense(rnd, rows, 2, 1)
	assertStagedGradients(t, func(s Settings) Constraint { return efFor(t, s, 1e-6) }, []Settings{
		{EqualitySteps: 1, MinDepth: 4, MaxDepth: 4},
		{EqualitySteps: 2, MinDepth: 4, MaxDepth: 4, Path: PathSparse},
		{EqualitySteps: 2, Damping: 0.1, MinDepth: 4, MaxDepth: 4},
		{EqualitySteps: 1, Smoothing: 1e-2, MinDepth: 4, MaxDepth: 4},
		{EqualitySteps: 2, LineSearch: true, Recompute: true, MinDepth: 4, MaxDepth: 4, Weights: AutoDiagonal},
	}, Settings{EqualitySteps: 2}, x, yhat, a)
}

// TestEqualityStepsSparseMemory projects one sample of a sparse system
// with 3 000 equalities and 3 000 inequalities (6 000 outputs) with
// EqualitySteps and checks that the memory allocated stays far below the
// 288 MB of the dense Jacobians of its equalities and inequalities, which
// an evaluation through WithInequalities' dense Eval would allocate.
func TestEqualityStepsSparseMemory(t *testing.T) {
	const n = 3000
	c := circlesAndBounds(t, n)
	yhat := mat.NewDense(1, 2*n, nil)
	for k := range 2 * n {
		yhat.Set(0, k, 0.9)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a, err := NewAdaNP(c, Settings{Path: PathSparse, EqualitySteps: 1, Smoothing: 1e-2, Damping: DefaultDamping})
	require.NoError(t, err)
	_, st, err := a.Project(nil, yhat)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	require.True(t, st.Converged(), "%v", st)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%v; allocated %.1f MB", st, float64(alloc)/1e6)
	assert.Less(t, alloc, uint64(50e6), "allocated %d bytes", alloc)
}

// circlesAndBounds is a sparse WithInequalities system of n circles
// y_2i² + y_2i+1² = 1 with the bounds y_2i ≤ 0.5: 2n rows, 3n variables
// with the multipliers, 2 and 1 nonzeros per row.
func circlesAndBounds(t *testing.T, n int) Constraint {
	pat := make([][]int, n)
	gpat := make([][]int, n)
	for i := range n {
		pat[i] = []int{2 * i, 2*i + 1}
		gpat[i] = []int{2 * i}
	}
	eq, err := SparseFunc(0, 2*n, n, pat, func(_, y, c []hyperdual.Number) {
		for i := range n {
			c[i] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[2*i], y[2*i]), hyperdual.Mul(y[2*i+1], y[2*i+1])), hyperdual.Number{Real: 1})
		}
	})
	require.NoError(t, err)
	g, err := SparseFunc(0, 2*n, n, gpat, func(_, y, c []hyperdual.Number) {
		for i := range n {
			c[i] = hyperdual.Sub(y[2*i], hyperdual.Number{Real: 0.5})
		}
	})
	require.NoError(t, err)
	c, err := WithInequalities(eq, g, 1e-6)
	require.NoError(t, err)
	return c
}

// TestWithInequalitiesEvalMemory: Eval without a Jacobian on a sparse
// system of 6 000 rows allocates no dense Jacobian scratch (288 MB here);
// with one it computes the same residual.
func TestWithInequalitiesEvalMemory(t *testing.T) {
	const n = 3000
	c := circlesAndBounds(t, n)
	y := make([]float64, 3*n)
	for k := range y {
		y[k] = 0.9
	}
	r := make([]float64, 2*n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c.Eval(nil, y, r, nil)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, alloc, uint64(10e6), "allocated %d bytes", alloc)
	// A small system with its Jacobian: the same residual.
	small := circlesAndBounds(t, 3)
	r1, r2 := make([]float64, 6), make([]float64, 6)
	ys := y[:9]
	small.Eval(nil, ys, r1, nil)
	small.Eval(nil, ys, r2, make([]float64, 6*9))
	assert.Equal(t, r1, r2)
}
