package enforce

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestStopWhenFeasibleValidation(t *testing.T) {
	_, err := NewAdaNP(gtCircle(t), Settings{StopWhenFeasible: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "StopWhenFeasible")
	for _, s := range []Settings{
		{StopWhenFeasible: true},
		{StopWhenFeasible: true, Smoothing: 1e-2, Damping: DefaultDamping, EqualitySteps: 1},
		{StopWhenFeasible: true, Path: PathSparse, Grad: FinalProjector, Chord: 2},
		{StopWhenFeasible: true, Grad: Implicit},
	} {
		_, err := NewAdaNP(efFor(t, s, 1e-6), s)
		assert.NoError(t, err, "%+v", s)
	}
}

// stopRows are starts just outside the corner of smBoxCircle's box and
// circle (y1 = 0.6, y2 ≈ 0.8x), where the multiplier of the bound is
// about the Fischer–Burmeister bend √ε (ε = 1e-6), so that its rows
// converge a step or two after the constraints are met (as on the PGLib
// grids: docs/numerics.md).
func stopRows(seed uint64, rows int) (x, yhat *mat.Dense) {
	rnd := rand.New(rand.NewPCG(seed, 11))
	x = mat.NewDense(rows, 1, nil)
	yhat = mat.NewDense(rows, 2, nil)
	for i := range rows {
		x.Set(i, 0, 1+0.02*rnd.Float64())
		yhat.SetRow(i, []float64{0.6 + 0.01*rnd.Float64(), 0.8*x.At(i, 0) + 0.01*(rnd.Float64()-0.5)})
	}
	return x, yhat
}

// TestStopWhenFeasibleProjects: every sample meets the constraints to Tol
// (Check), is counted converged, stops no later than without the setting
// (and, summed over the samples, earlier), and its output is the plain
// projection's iterate at the depth it stopped, bit for bit; the
// residual after projection in Stats is Check's.
func TestStopWhenFeasibleProjects(t *testing.T) {
	const rows = 12
	x, yhat := stopRows(5, rows)
	for _, tc := range []struct {
		name string
		s    Settings
	}{
		{"dense", Settings{}},
		{"damped", Settings{Damping: DefaultDamping}},
		{"sparse", Settings{Path: PathSparse}},
		{"sparse damped", Settings{Path: PathSparse, Damping: DefaultDamping}},
		{"smoothed", Settings{Smoothing: 1e-2, Damping: DefaultDamping}},
		{"smoothed fallback", Settings{Smoothing: 1e-2, SmoothingFirstDepth: 1}},
		{"equalities first", Settings{EqualitySteps: 1}},
		{"float32", Settings{Precision: Float32}},
		{"sparse float32", Settings{Path: PathSparse, Precision: Float32}},
		{"chord", Settings{Path: PathSparse, Grad: FinalProjector, Chord: 2}},
	} {
		c := efFor(t, tc.s, 1e-6)
		s := tc.s
		p0, err := NewAdaNP(c, s)
		require.NoError(t, err)
		y0, st0, err := p0.Project(x, yhat)
		require.NoError(t, err)
		require.True(t, st0.Converged(), "%s: %v", tc.name, st0)
		s.StopWhenFeasible = true
		p, err := NewAdaNP(c, s)
		require.NoError(t, err)
		y, st, err := p.Project(x, yhat)
		require.NoError(t, err)
		require.True(t, st.Converged(), "%s: %v", tc.name, st)
		t.Logf("%s: depth %.2f → %.2f", tc.name, st0.MeanDepth, st.MeanDepth)
		assert.LessOrEqual(t, st.Depth, st0.Depth, tc.name)
		if tc.s.SmoothingFirstDepth == 0 {
			// (Through the fallback these starts stop with the whole
			// system: no step to save.)
			assert.Less(t, st.MeanDepth, st0.MeanDepth, tc.name)
		}

		chk, err := p0.Check(x, y)
		require.NoError(t, err)
		assert.LessOrEqual(t, chk.After.Max, 1e-6, tc.name)
		assert.LessOrEqual(t, st.After.Max, 1e-6, tc.name)
		assert.Equal(t, st0.Before, st.Before, tc.name)

		// Each sample's output is an iterate of the plain projection:
		// with exactly its depth, it gives the same point (samples that
		// took no fallback, without Smoothing).
		if tc.s.Smoothing == 0 && tc.s.EqualitySteps == 0 {
			for i := range rows {
				xi, yi := x.Slice(i, i+1, 0, 1).(*mat.Dense), yhat.Slice(i, i+1, 0, 2).(*mat.Dense)
				_, sti, err := p.Project(xi, yi)
				require.NoError(t, err)
				d := sti.Depth
				fixed := tc.s
				fixed.MinDepth, fixed.MaxDepth = d, d
				q, err := NewAdaNP(c, fixed)
				require.NoError(t, err)
				yq, _, err := q.Project(xi, yi)
				require.NoError(t, err)
				assert.Equal(t, mat.Row(nil, i, y), mat.Row(nil, 0, yq), "%s row %d (depth %d)", tc.name, i, d)
			}
		}
		var dmax float64
		for i := range rows {
			dmax = max(dmax, floats2Dist(mat.Row(nil, i, y), mat.Row(nil, i, y0)))
		}
		t.Logf("%s: largest distance to the converged projection %.2g", tc.name, dmax)
	}
}

func floats2Dist(u, v []float64) float64 { return distance(u, v) }

// TestStopWhenFeasibleGradients: Unrolled is exact through projections
// that stop on feasibility (their depth is a decision, as Tol's is), dense
// and sparse, damped, smoothed and with equality steps first.
func TestStopWhenFeasibleGradients(t *testing.T) {
	x, yhat := stopRows(3, 3)
	a := randDense(rand.New(rand.NewPCG(3, 6)), 3, 2, 1)
	base := []Settings{
		{},
		{Path: PathSparse},
		{Damping: 0.1},
		{Smoothing: 1e-2},
		{Smoothing: 1e-2, SmoothingFirstDepth: 1},
		{EqualitySteps: 1, Path: PathSparse},
	}
	var exact []Settings
	for _, s := range base {
		p0, err := NewAdaNP(efFor(t, s, 1e-6), s)
		require.NoError(t, err)
		_, st0, err := p0.Project(x, yhat)
		require.NoError(t, err)
		s.StopWhenFeasible = true
		p, err := NewAdaNP(efFor(t, s, 1e-6), s)
		require.NoError(t, err)
		_, st, err := p.Project(x, yhat)
		require.NoError(t, err)
		require.True(t, st.Converged(), "%+v: %v", s, st)
		if s.SmoothingFirstDepth == 0 {
			assert.Less(t, st.MeanDepth, st0.MeanDepth, "%+v: the test needs samples that stop early", s)
		}
		exact = append(exact, s)
	}
	assertStagedGradients(t, func(s Settings) Constraint { return efFor(t, s, 1e-6) }, exact,
		Settings{StopWhenFeasible: true}, x, yhat, a)
}

// TestStopWhenFeasibleShortcut: skipping the check where c's equality rows
// already exceed twice Tol gives the same outputs and Stats, bit for bit,
// with fewer evaluations of the check, on every path and stage.
func TestStopWhenFeasibleShortcut(t *testing.T) {
	const rows = 12
	x, yhat := stopRows(5, rows)
	yhat.Apply(func(i, j int, v float64) float64 { return v + 0.3*float64((i+j)%3-1) }, yhat)
	for _, tc := range []struct {
		name  string
		s     Settings
		fewer bool
	}{
		{"dense", Settings{}, true},
		{"damped", Settings{Damping: DefaultDamping}, true},
		{"mean measure", Settings{Measure: MeanAbs}, true},
		{"sparse", Settings{Path: PathSparse}, true},
		{"augmented", Settings{Path: PathAugmented, Damping: DefaultDamping}, true},
		{"smoothed fallback", Settings{Smoothing: 1e-2, SmoothingFirstDepth: 1}, false},
		{"equalities first", Settings{EqualitySteps: 1}, true},
		{"float32", Settings{Precision: Float32}, false},
	} {
		s := tc.s
		s.StopWhenFeasible = true
		if s.Path == PathAugmented {
			s.Path = PathSparse
		}
		c := efFor(t, s, 1e-6)
		s.Path = tc.s.Path
		p, err := NewAdaNP(c, s)
		require.NoError(t, err)
		var ys [2]*mat.Dense
		var sts [2]Stats
		var evals [2]int64
		for i, on := range []bool{false, true} {
			feasShortcut = on
			before := feasibilityEvals.Load()
			ys[i], sts[i], err = p.Project(x, yhat)
			evals[i] = feasibilityEvals.Load() - before
			require.NoError(t, err, tc.name)
		}
		feasShortcut = true
		require.True(t, sts[1].Converged(), "%s: %v", tc.name, sts[1])
		assert.True(t, mat.Equal(ys[0], ys[1]), tc.name)
		assert.Equal(t, sts[0], sts[1], tc.name)
		t.Logf("%s: %d → %d evaluations of the check, depth %.2f", tc.name, evals[0], evals[1], sts[1].MeanDepth)
		if tc.fewer {
			assert.Less(t, evals[1], evals[0], tc.name)
		} else {
			assert.LessOrEqual(t, evals[1], evals[0], tc.name)
		}
	}
}
