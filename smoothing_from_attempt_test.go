package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestSmoothingFromAttemptValidation(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	_, err := NewAdaNP(c, Settings{SmoothingFromAttempt: true})
	assert.ErrorContains(t, err, "SmoothingFromAttempt")
	a, err := NewAdaNP(c, Settings{Smoothing: 1e-2, SmoothingFromAttempt: true, SmoothingLadder: []float64{1e-4}})
	require.NoError(t, err)
	for i, st := range append(append(a.sm.stages(), a.sm.first), a.sm.second) {
		assert.False(t, st.s.SmoothingFromAttempt, "stage %d", i)
	}
}

// TestSmoothingFromAttempt: each row that misses the plain attempt (five
// steps here) is the fallback's projection of the attempt's last point,
// bit for bit: the smoothed stage from that point, then the constraint
// itself from the stage's; the other rows are the attempt's. Displacement
// is measured from ŷ, and every row meets the constraint.
func TestSmoothingFromAttempt(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	rnd := rand.New(rand.NewPCG(7, 8))
	const rows = 16
	x, yhat := circleStarts(rnd, rows, 1, 4)
	s := Settings{Smoothing: 1e-2, SmoothingFirstDepth: 5, SmoothingFromAttempt: true}
	a, err := NewAdaNP(c, s)
	require.NoError(t, err)
	y, st, err := a.Project(x, yhat)
	require.NoError(t, err)
	require.True(t, st.Converged(), "%v", st)

	attempt, as, err := a.sm.first.Project(x, yhat)
	require.NoError(t, err)
	require.NotEmpty(t, as.Missed, "some rows miss the five-step attempt")
	require.Less(t, len(as.Missed), rows, "not every row")
	xm, ym := gatherRows(x, as.Missed), gatherRows(attempt, as.Missed)
	y0, _, err := a.sm.pre.Project(xm, ym)
	require.NoError(t, err)
	want, _, err := a.sm.second.Project(xm, y0)
	require.NoError(t, err)
	k := 0
	var dmax float64
	for i := range rows {
		if k < len(as.Missed) && as.Missed[k] == i {
			assert.Equal(t, mat.Row(nil, k, want), mat.Row(nil, i, y), "row %d: the fallback from the attempt's point", i)
			k++
		} else {
			assert.Equal(t, mat.Row(nil, i, attempt), mat.Row(nil, i, y), "row %d: the attempt's point", i)
		}
		dmax = math.Max(dmax, math.Hypot(y.At(i, 0)-yhat.At(i, 0), y.At(i, 1)-yhat.At(i, 1)))
	}
	assert.InDelta(t, dmax, st.Displacement.Max, 1e-12, "from ŷ")

	// Without it the fallback starts from ŷ: other points for those rows.
	s.SmoothingFromAttempt = false
	b, err := NewAdaNP(c, s)
	require.NoError(t, err)
	yb, _, err := b.Project(x, yhat)
	require.NoError(t, err)
	assert.False(t, mat.Equal(y, yb))
}

// TestSmoothingFromAttemptGradients: Unrolled gradients through rows
// whose fallback started from the attempt's point, against finite
// differences (the attempt's steps included), with and without a ladder
// and damping; the other modes finite.
func TestSmoothingFromAttemptGradients(t *testing.T) {
	c := smBoxCircle(t, 1e-6)
	rnd := rand.New(rand.NewPCG(3, 4))
	const rows = 4
	x, yhat := circleStarts(rnd, rows, 0.5, 1.5)
	fixed := Settings{Smoothing: 1e-2, SmoothingFromAttempt: true, MinDepth: 2, MaxDepth: 2}
	p, err := NewAdaNP(c, fixed)
	require.NoError(t, err)
	_, st, err := p.sm.first.Project(x, yhat)
	require.NoError(t, err)
	require.NotEmpty(t, st.Missed, "some rows take the fallback")
	a := randDense(rnd, rows, 2, 1)
	ladder := fixed
	ladder.SmoothingLadder = []float64{1e-4}
	damped := fixed
	damped.Damping = 0.1
	assertStagedGradients(t, func(Settings) Constraint { return c }, []Settings{fixed, ladder, damped},
		Settings{Smoothing: 1e-2, SmoothingFromAttempt: true}, x, yhat, a)

	// Implicit and FinalProjector: the attempt's part is taken at a point
	// that did not converge, and those rows are counted inexact.
	for _, g := range []GradMode{Implicit, FinalProjector} {
		q, err := NewAdaNP(c, Settings{Smoothing: 1e-2, SmoothingFromAttempt: true, SmoothingFirstDepth: 2, Grad: g})
		require.NoError(t, err)
		_, sq, err := q.sm.first.Project(x, yhat)
		require.NoError(t, err)
		require.NotEmpty(t, sq.Missed)
		gy, gx, gs := gtVJP(t, q, x, yhat, a)
		assert.True(t, allFinite(gy) && allFinite(gx), "%v", g)
		assert.GreaterOrEqual(t, gs.Inexact, len(sq.Missed), "%v: %+v", g, gs)
	}
}

// TestStagedVJPBadGradient: the projections of several stages whose VJP
// checks the gradient before a stage does (SmoothingFromAttempt with rows
// in the fallback, EqualitySteps) return an error for a nil, empty or
// wrongly shaped gradient, as a single stage does, instead of panicking.
func TestStagedVJPBadGradient(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	rnd := rand.New(rand.NewPCG(7, 8))
	const rows = 8
	x, yhat := circleStarts(rnd, rows, 1, 4)
	for _, s := range []Settings{
		{},
		{Smoothing: 1e-2, SmoothingFirstDepth: 2, SmoothingFromAttempt: true},
		{Smoothing: 1e-2, EqualitySteps: 1},
	} {
		a, err := NewAdaNP(c, s)
		require.NoError(t, err)
		var tr Trace
		_, err = a.ProjectTrace(mat.NewDense(rows, 2, nil), x, yhat, &tr)
		require.NoError(t, err)
		for _, g := range []*mat.Dense{nil, {}, mat.NewDense(rows-1, 2, nil), mat.NewDense(rows, 3, nil)} {
			assert.NotPanics(t, func() {
				assert.Error(t, a.VJP(&tr, g, nil, nil), "%+v", s)
			}, "%+v", s)
		}
		assert.NoError(t, a.VJP(&tr, mat.NewDense(rows, 2, nil), nil, nil), "%+v", s)
	}
}
