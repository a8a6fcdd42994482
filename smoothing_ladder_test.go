package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestSmoothingLadderValidation(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	for _, tc := range []struct {
		name string
		s    Settings
	}{
		{"without Smoothing", Settings{SmoothingLadder: []float64{1e-4}}},
		{"at the constraint's ε", Settings{Smoothing: 1e-2, SmoothingLadder: []float64{1e-8}}},
		{"below the constraint's ε", Settings{Smoothing: 1e-2, SmoothingLadder: []float64{1e-9}}},
		{"at Smoothing", Settings{Smoothing: 1e-2, SmoothingLadder: []float64{1e-2}}},
		{"above Smoothing", Settings{Smoothing: 1e-2, SmoothingLadder: []float64{1e-1}}},
		{"not increasing", Settings{Smoothing: 1e-2, SmoothingLadder: []float64{1e-3, 1e-4}}},
		{"repeated", Settings{Smoothing: 1e-2, SmoothingLadder: []float64{1e-4, 1e-4}}},
		{"NaN", Settings{Smoothing: 1e-2, SmoothingLadder: []float64{math.NaN()}}},
		{"too many", Settings{Smoothing: 1, SmoothingLadder: []float64{1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 2e-3, 3e-3, 1e-2, 1e-1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewAdaNP(c, tc.s)
			assert.Error(t, err)
		})
	}
	a, err := NewAdaNP(c, Settings{Smoothing: 1e-2, SmoothingLadder: []float64{1e-6, 1e-4}})
	require.NoError(t, err)
	got := a.Settings().SmoothingLadder
	assert.Equal(t, []float64{1e-6, 1e-4}, got)
	got[0] = 5 // a copy
	assert.Equal(t, 1e-6, a.Settings().SmoothingLadder[0])
}

// ladderCase is a batch of the smoothed box-circle whose rows take each
// branch of Settings{Smoothing: 1e-1, SmoothingLadder: {1e-4},
// SmoothingFirstDepth: 4}: some converge in the plain attempt, some on the
// ladder's rung, some miss it and take Smoothing's stage.
func ladderCase(t *testing.T) (c Constraint, x, yhat *mat.Dense) {
	c = smBoxCircle(t, 1e-6)
	rnd := rand.New(rand.NewPCG(11, 12))
	const rows = 24
	x, yhat = circleStarts(rnd, rows, 0.5, 4)
	return c, x, yhat
}

// TestSmoothingLadderProjects checks the ladder's branches against their
// definition, bit for bit: a row that the plain attempt takes to Tol is
// its result; a row that meets the rung is the constraint's own
// projection of the rung's projection of ŷ; a row that misses the rung
// is the result without the ladder; and every row converges.
func TestSmoothingLadderProjects(t *testing.T) {
	c, x, yhat := ladderCase(t)
	rows, _ := yhat.Dims()
	const first = 4
	base := Settings{Smoothing: 1e-1, SmoothingFirstDepth: first, Damping: DefaultDamping}
	lad := base
	lad.SmoothingLadder = []float64{1e-4}
	withL, err := NewAdaNP(c, lad)
	require.NoError(t, err)
	without, err := NewAdaNP(c, base)
	require.NoError(t, err)
	var tr Trace
	y := mat.NewDense(rows, 2, nil)
	st, err := withL.ProjectTrace(y, x, yhat, &tr)
	require.NoError(t, err)
	require.True(t, st.Converged(), "%v", st)
	y0, st0, err := without.Project(x, yhat)
	require.NoError(t, err)

	// The definition, stage by stage, one row at a time.
	plainS := Settings{MaxDepth: first, Damping: DefaultDamping}
	plain, err := NewAdaNP(c, plainS)
	require.NoError(t, err)
	eq, g := c.(*fbConstraint).eq.c, c.(*fbConstraint).g.c
	cr, err := WithInequalities(eq, g, 1e-4)
	require.NoError(t, err)
	rung, err := NewAdaNP(cr, Settings{Tol: 1e-5, MaxDepth: first, Damping: DefaultDamping})
	require.NoError(t, err)
	last, err := NewAdaNP(c, Settings{Damping: DefaultDamping})
	require.NoError(t, err)
	var nPlain, nRung, nMissed int
	for i := range rows {
		xi, yi := mat.NewDense(1, 1, mat.Row(nil, i, x)), mat.NewDense(1, 2, mat.Row(nil, i, yhat))
		yp, sp, err := plain.Project(xi, yi)
		require.NoError(t, err)
		got := mat.Row(nil, i, y)
		if sp.Converged() {
			nPlain++
			assert.Equal(t, mat.Row(nil, 0, yp), got, "row %d: the plain attempt's result", i)
			continue
		}
		yr, sr, err := rung.Project(xi, yi)
		require.NoError(t, err)
		if sr.Converged() {
			nRung++
			yl, sl, err := last.Project(xi, yr)
			require.NoError(t, err)
			assert.Equal(t, mat.Row(nil, 0, yl), got, "row %d: from the rung's point", i)
			assert.Equal(t, first+sr.Depth+sl.Depth, tr.Depth(i), "row %d: the depth counts every stage", i)
			continue
		}
		nMissed++
		assert.Equal(t, mat.Row(nil, i, y0), got, "row %d: missed the rung, as without the ladder", i)
	}
	require.Positive(t, nPlain)
	require.Positive(t, nRung)
	require.Positive(t, nMissed)
	t.Logf("rows: %d plain, %d on the rung, %d past it; steps %.2f with the ladder, %.2f without; mean displacement %.4g and %.4g",
		nPlain, nRung, nMissed, st.MeanDepth, st0.MeanDepth, st.Displacement.Mean, st0.Displacement.Mean)
}

// TestSmoothingLadderGradients checks the gradients through every branch
// of the ladder: Unrolled against finite differences, and every mode
// finite.
func TestSmoothingLadderGradients(t *testing.T) {
	c, x, yhat := ladderCase(t)
	rows, _ := yhat.Dims()
	a := randDense(rand.New(rand.NewPCG(5, 6)), rows, 2, 1)
	s := Settings{Smoothing: 1e-1, SmoothingLadder: []float64{1e-4}, SmoothingFirstDepth: 4, Damping: DefaultDamping}
	assertStagedGradients(t, func(Settings) Constraint { return c }, []Settings{s,
		{Smoothing: 1e-1, SmoothingLadder: []float64{1e-5, 1e-3}, SmoothingFirstDepth: 4},
		{Smoothing: 1e-1, SmoothingLadder: []float64{1e-4}, SmoothingFirstDepth: 4, Damping: DefaultDamping, EqualitySteps: 1},
	}, s, x, yhat, a)
}

// TestSmoothingLadderTraceReuse: a trace recorded again on a batch whose
// rows take other branches gives the gradient of a fresh trace.
func TestSmoothingLadderTraceReuse(t *testing.T) {
	c, x, yhat := ladderCase(t)
	rows, _ := yhat.Dims()
	p, err := NewAdaNP(c, Settings{Smoothing: 1e-1, SmoothingLadder: []float64{1e-4}, SmoothingFirstDepth: 4, Damping: DefaultDamping})
	require.NoError(t, err)
	up := randDense(rand.New(rand.NewPCG(9, 10)), rows, 2, 1)
	grads := func(tr *Trace, xb, yb *mat.Dense) *mat.Dense {
		r, _ := yb.Dims()
		_, err := p.ProjectTrace(mat.NewDense(r, 2, nil), xb, yb, tr)
		require.NoError(t, err)
		g := mat.NewDense(r, 2, nil)
		require.NoError(t, p.VJP(tr, up.Slice(0, r, 0, 2).(*mat.Dense), g, nil))
		return g
	}
	var reused Trace
	grads(&reused, x, yhat) // every branch, 24 rows
	xb := mat.DenseCopyOf(x.Slice(rows-8, rows, 0, 1))
	yb := mat.DenseCopyOf(yhat.Slice(rows-8, rows, 0, 2))
	got := grads(&reused, xb, yb)
	want := grads(new(Trace), xb, yb)
	assert.True(t, mat.Equal(want, got), "got\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(want))
}
