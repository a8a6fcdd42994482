package enforce

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestSmoothingNonmonotoneValidation(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	for _, s := range []Settings{
		{Smoothing: 1e-2, Damping: DefaultDamping, SmoothingNonmonotone: -1},
		{Smoothing: 1e-2, Damping: DefaultDamping, SmoothingNonmonotone: maxNonmonotone + 1},
		{Damping: DefaultDamping, SmoothingNonmonotone: 5},            // no Smoothing
		{Damping: DefaultDamping, SmoothingNonmonotone: 1},            // no Smoothing, even monotone
		{Smoothing: 1e-2, SmoothingNonmonotone: 5},                    // no line search to relax
		{Smoothing: 1e-2, LineSearch: true, SmoothingNonmonotone: 17}, // out of range
	} {
		_, err := NewAdaNP(c, s)
		require.Error(t, err, "%+v", s)
		assert.Contains(t, err.Error(), "SmoothingNonmonotone")
	}
	for _, s := range []Settings{
		{Smoothing: 1e-2, SmoothingNonmonotone: 1},
		{Smoothing: 1e-2, LineSearch: true, SmoothingNonmonotone: maxNonmonotone},
		{Smoothing: 1e-2, Damping: DefaultDamping, SmoothingNonmonotone: 5, EqualitySteps: 1},
		{Smoothing: 1e-2, Damping: DefaultDamping, SmoothingNonmonotone: 5, SmoothingLadder: []float64{1e-4}},
	} {
		_, err := NewAdaNP(c, s)
		assert.NoError(t, err, "%+v", s)
	}
}

// TestSmoothingNonmonotoneStages checks that SmoothingNonmonotone sets the
// last stage's Nonmonotone and no other stage's, and that the rows the
// plain attempt converges on keep its results bit for bit.
func TestSmoothingNonmonotoneStages(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	for _, tc := range []struct {
		s          Settings
		rest, last int
	}{
		{Settings{Smoothing: 1e-2, Damping: DefaultDamping, SmoothingNonmonotone: 5, SmoothingLadder: []float64{1e-4}}, 0, 5},
		{Settings{Smoothing: 1e-2, Damping: DefaultDamping, Nonmonotone: 3, SmoothingNonmonotone: 1}, 3, 1},
		{Settings{Smoothing: 1e-2, Damping: DefaultDamping, Nonmonotone: 3}, 3, 3},
	} {
		a, err := NewAdaNP(c, tc.s)
		require.NoError(t, err)
		require.NotNil(t, a.sm)
		assert.Equal(t, tc.rest, a.s.Nonmonotone, "%+v", tc.s)
		assert.Equal(t, tc.rest, a.sm.first.s.Nonmonotone, "%+v: plain attempt", tc.s)
		for i, st := range a.sm.stages() {
			assert.Equal(t, tc.rest, st.s.Nonmonotone, "%+v: smoothed stage %d", tc.s, i)
			assert.Zero(t, st.s.SmoothingNonmonotone)
		}
		assert.Equal(t, tc.last, a.sm.second.s.Nonmonotone, "%+v: last stage", tc.s)
		assert.Zero(t, a.sm.second.s.SmoothingNonmonotone)
	}

	rnd := rand.New(rand.NewPCG(7, 8))
	const rows = 8
	x, yhat := circleStarts(rnd, rows, 1, 4)
	base := Settings{Smoothing: 1e-2, Damping: DefaultDamping, SmoothingFirstDepth: 4}
	with := base
	with.SmoothingNonmonotone = 5
	p0, err := NewAdaNP(c, base)
	require.NoError(t, err)
	p1, err := NewAdaNP(c, with)
	require.NoError(t, err)
	y0, st0, err := p0.Project(x, yhat)
	require.NoError(t, err)
	y1, st1, err := p1.Project(x, yhat)
	require.NoError(t, err)
	require.True(t, st0.Converged() && st1.Converged(), "%v\n%v", st0, st1)
	plain, err := NewAdaNP(c, Settings{Damping: DefaultDamping, MaxDepth: 4})
	require.NoError(t, err)
	_, sp, err := plain.Project(x, yhat)
	require.NoError(t, err)
	require.NotEmpty(t, sp.Missed, "some rows take the fallback")
	require.Less(t, len(sp.Missed), rows, "some rows do not")
	for i := range rows {
		if !slices.Contains(sp.Missed, i) {
			assert.Equal(t, mat.Row(nil, i, y0), mat.Row(nil, i, y1), "row %d converged in the plain attempt", i)
		}
	}
}
