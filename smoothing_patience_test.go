package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestSmoothingPatienceValidation(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	for _, s := range []Settings{
		{Smoothing: 1e-2, SmoothingPatience: -1},
		{SmoothingPatience: 3},
	} {
		_, err := NewAdaNP(c, s)
		assert.Error(t, err, "%+v", s)
	}
	a, err := NewAdaNP(c, Settings{Smoothing: 1e-2, SmoothingPatience: 3, SmoothingLadder: []float64{1e-4}})
	require.NoError(t, err)
	assert.Equal(t, 3, a.sm.first.patience, "the plain attempt")
	assert.Zero(t, a.patience)
	for i, st := range append(a.sm.stages(), a.sm.second) {
		assert.Zero(t, st.patience, "stage %d", i)
		assert.Zero(t, st.s.SmoothingPatience, "stage %d", i)
	}
}

// rowByRow projects each row of (x, ŷ) alone and returns the outputs and
// each row's depth.
func rowByRow(t *testing.T, a *AdaNP, x, yhat *mat.Dense) (*mat.Dense, []int) {
	t.Helper()
	rows, ny := yhat.Dims()
	_, nx := x.Dims()
	y := mat.NewDense(rows, ny, nil)
	depth := make([]int, rows)
	for i := range rows {
		yi, st, err := a.Project(mat.NewDense(1, nx, x.RawRowView(i)), mat.NewDense(1, ny, yhat.RawRowView(i)))
		require.NoError(t, err)
		require.True(t, st.Converged(), "row %d: %v", i, st)
		y.SetRow(i, yi.RawRowView(0))
		depth[i] = st.Depth
	}
	return y, depth
}

// TestSmoothingPatience: with full steps from far starts on smBoxCircle,
// some rows' plain attempts go three steps without 1 % progress before
// converging late. With SmoothingPatience 3 those rows take the fallback
// at once: each row's point is either the one without patience (bit for
// bit, same depth) or the fallback's from ŷ, which SmoothingFirstDepth 1
// also reaches (bit for bit; its depth counts one plain step instead of
// the steps the patience allowed). A patience longer than the plain
// attempt changes nothing, and the whole batch matches its rows.
func TestSmoothingPatience(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	rnd := rand.New(rand.NewPCG(7, 8))
	const rows = 32
	x, yhat := circleStarts(rnd, rows, 1, 4)
	base := Settings{Smoothing: 1e-2}
	with := base
	with.SmoothingPatience = 3
	one := base
	one.SmoothingFirstDepth = 1
	long := base
	long.SmoothingPatience = DefaultSmoothingFirstDepth + 1
	var ps [4]*AdaNP
	for i, s := range []Settings{base, with, one, long} {
		var err error
		ps[i], err = NewAdaNP(c, s)
		require.NoError(t, err)
	}
	y0, d0 := rowByRow(t, ps[0], x, yhat)
	yp, dp := rowByRow(t, ps[1], x, yhat)
	y1, d1 := rowByRow(t, ps[2], x, yhat)
	handed := 0
	for i := range rows {
		r0, rp, r1 := mat.Row(nil, i, y0), mat.Row(nil, i, yp), mat.Row(nil, i, y1)
		if assert.ObjectsAreEqual(r0, rp) {
			assert.Equal(t, d0[i], dp[i], "row %d: the same point, the same steps", i)
			continue
		}
		handed++
		assert.Equal(t, r1, rp, "row %d: handed over, the fallback's point from ŷ", i)
		assert.Greater(t, dp[i], d1[i], "row %d: more plain steps than one", i)
		assert.Less(t, dp[i]-d1[i], d0[i], "row %d: fewer plain steps than the attempt without patience took", i)
	}
	require.Positive(t, handed, "some row is handed over")
	require.Less(t, handed, rows, "not every row")

	// The batch: the rows' points and depths.
	yb, st, err := ps[1].Project(x, yhat)
	require.NoError(t, err)
	require.True(t, st.Converged(), "%v", st)
	assert.True(t, mat.Equal(yp, yb))
	var sum int
	for _, d := range dp {
		sum += d
	}
	assert.InDelta(t, float64(sum)/rows, st.MeanDepth, 1e-12)

	// A patience the attempt cannot reach: the projection without it.
	want, ws, err := ps[0].Project(x, yhat)
	require.NoError(t, err)
	got, gs, err := ps[3].Project(x, yhat)
	require.NoError(t, err)
	assert.True(t, mat.Equal(want, got))
	assert.Equal(t, ws, gs)
}

// TestSmoothingPatienceStopsFeasible: with StopWhenFeasible, a step that
// ends the patience at a point that meets the constraint stops there, as
// it would without patience. The start meets the circle and exceeds the
// box by 0.05 (within Tol = 0.08), while its Fischer–Burmeister row is
// 0.1 (above Tol); a damping of 1e6 makes the first step move 2e-6, no
// 1 % progress, so a patience of 1 ends the attempt at a feasible point.
func TestSmoothingPatienceStopsFeasible(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	x := mat.NewDense(1, 1, []float64{1})
	yhat := mat.NewDense(1, 2, []float64{0.65, math.Sqrt(1 - 0.65*0.65)})
	s := Settings{Smoothing: 1e-2, Damping: 1e6, Tol: 0.08, StopWhenFeasible: true}
	p0, err := NewAdaNP(c, s)
	require.NoError(t, err)
	s.SmoothingPatience = 1
	p1, err := NewAdaNP(c, s)
	require.NoError(t, err)
	y0, s0, err := p0.Project(x, yhat)
	require.NoError(t, err)
	y1, s1, err := p1.Project(x, yhat)
	require.NoError(t, err)
	require.True(t, s0.Converged(), "%v", s0)
	assert.Greater(t, s0.Before.Max, s.Tol, "the start is above Tol on the whole system")
	assert.Equal(t, 1, s0.Depth)
	assert.True(t, mat.Equal(y0, y1), "stopped where it would have: %v, %v", y0, y1)
	assert.Equal(t, s0, s1)
}

// TestSmoothingPatienceGradients: the gradients of rows that the
// patience hands to the fallback are the fallback branch's, exact in
// Unrolled mode (finite differences), and every mode is finite.
func TestSmoothingPatienceGradients(t *testing.T) {
	c := smBoxCircle(t, 1e-6)
	rnd := rand.New(rand.NewPCG(7, 8))
	const rows = 32
	x, yhat := circleStarts(rnd, rows, 1, 4)
	// The rows TestSmoothingPatience hands over, found again here.
	p0, err := NewAdaNP(c, Settings{Smoothing: 1e-2})
	require.NoError(t, err)
	pp, err := NewAdaNP(c, Settings{Smoothing: 1e-2, SmoothingPatience: 3})
	require.NoError(t, err)
	y0, _ := rowByRow(t, p0, x, yhat)
	yp, _ := rowByRow(t, pp, x, yhat)
	var pick []int
	for i := range rows {
		if !assert.ObjectsAreEqual(mat.Row(nil, i, y0), mat.Row(nil, i, yp)) {
			pick = append(pick, i)
		}
	}
	require.NotEmpty(t, pick)
	pick = append(pick, 0) // and a row that converges in the plain attempt
	xs, ys := gatherRows(x, pick), gatherRows(yhat, pick)
	a := randDense(rnd, len(pick), 2, 1)
	assertStagedGradients(t, func(Settings) Constraint { return c }, []Settings{
		{Smoothing: 1e-2, SmoothingPatience: 3},
		{Smoothing: 1e-2, SmoothingPatience: 3, Damping: 0.1},
	}, Settings{Smoothing: 1e-2, SmoothingPatience: 3}, xs, ys, a)
}
