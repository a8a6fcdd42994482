package enforce

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// thinSystem is y1 + y2² = x with −δ ≤ y1 ≤ δ, δ = 1e-5: a feasible set
// thinner than the margin the smoothing ε = 1e-2 imposes at its bounds,
// so that AdaNP onto WithInequalities(eq, g, 1e-2) misses 1e-6 after its
// 100 steps from the starts of thinBatch, and onto ε = 1e-6 does not.
func thinSystem(t *testing.T) (eq, g Constraint) {
	const delta = 1e-5
	eq, err := Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(y[0], hyperdual.Mul(y[1], y[1])), x[0])
	})
	require.NoError(t, err)
	g, err = Func(1, 2, 2, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(y[0], hyperdual.Number{Real: delta})
		c[1] = hyperdual.Sub(hyperdual.Number{Real: -delta}, y[0])
	})
	require.NoError(t, err)
	return eq, g
}

func thinBatch() (x, yhat *mat.Dense) {
	return mat.NewDense(3, 1, []float64{1, 2, 0.5}), mat.NewDense(3, 2, []float64{3, 0.1, -2, 1, 0.4, 0.2})
}

func thinStage(t *testing.T, eps float64, s Settings) *AdaNP {
	eq, g := thinSystem(t)
	c, err := WithInequalities(eq, g, eps)
	require.NoError(t, err)
	a, err := NewAdaNP(c, s)
	require.NoError(t, err)
	return a
}

// TestRefine projects with ε_FB = 1e-2, which misses the tolerance on
// every row, and refines two of the three rows with ε_FB = 1e-6: those
// two meet it (the equality and the bounds to 1e-6, checked on eq and g
// themselves), equal what the stage's own projection of them gives, and
// the third row is left as it was, bit for bit. The second stage given
// has no rows left and does not run.
func TestRefine(t *testing.T) {
	coarse := thinStage(t, 1e-2, Settings{})
	x, yhat := thinBatch()
	y, st, err := coarse.Project(x, yhat)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2}, st.Missed, "the test needs rows that ε_FB = 1e-2 leaves above 1e-6")

	fine := thinStage(t, 1e-6, Settings{})
	want, _, err := fine.Project(x, y)
	require.NoError(t, err)
	before := mat.DenseCopyOf(y)

	rs, err := Refine(x, y, []int{0, 2}, fine, thinStage(t, 1e-8, Settings{}))
	require.NoError(t, err)
	assert.Nil(t, rs.Missed)
	require.Len(t, rs.Stages, 1, "the second stage has nothing left to project")
	assert.Equal(t, 2, rs.Stages[0].Samples)
	assert.Zero(t, rs.Stages[0].NotConverged)
	assert.Equal(t, before.RawRowView(1), y.RawRowView(1), "a row not listed is left as it was")
	eq, g := thinSystem(t)
	c, gv := make([]float64, 1), make([]float64, 2)
	for _, i := range []int{0, 2} {
		assert.Equal(t, want.RawRowView(i), y.RawRowView(i), "row %d: the stage's projection", i)
		eq.Eval(x.RawRowView(i), y.RawRowView(i), c, nil)
		g.Eval(x.RawRowView(i), y.RawRowView(i), gv, nil)
		assert.LessOrEqual(t, max(c[0], -c[0]), DefaultTol, "row %d equality", i)
		assert.LessOrEqual(t, max(gv[0], gv[1]), DefaultTol, "row %d bounds", i)
	}

	// Nothing missed: no stage runs and y is unchanged.
	y2 := mat.DenseCopyOf(before)
	rs, err = Refine(x, y2, nil, fine)
	require.NoError(t, err)
	assert.Empty(t, rs.Stages)
	assert.Nil(t, rs.Missed)
	assert.True(t, mat.Equal(before, y2))
}

// TestRefineMisses checks the rows a stage leaves above its tolerance:
// RefineStats.Missed names them as rows of the batch, and with RequireTol
// on the last stage they are a *ToleranceError over the batch, with y
// holding the projection.
func TestRefineMisses(t *testing.T) {
	x, yhat := thinBatch()
	short := thinStage(t, 1e-2, Settings{MaxDepth: 2})
	y := mat.DenseCopyOf(yhat)
	rs, err := Refine(x, y, []int{1, 2}, short)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, rs.Missed)
	assert.Equal(t, []int{0, 1}, rs.Stages[0].Missed, "the stage's own Stats index its rows")
	assert.Equal(t, yhat.RawRowView(0), y.RawRowView(0))
	assert.NotEqual(t, yhat.RawRowView(2), y.RawRowView(2), "projected rows are written back")

	strict := thinStage(t, 1e-2, Settings{MaxDepth: 2, RequireTol: true})
	y = mat.DenseCopyOf(yhat)
	rs, err = Refine(x, y, []int{0, 2}, short, strict)
	var te *ToleranceError
	require.True(t, errors.As(err, &te), "err = %v", err)
	assert.Equal(t, []int{0, 2}, te.Samples)
	assert.Equal(t, 3, te.Rows)
	assert.Equal(t, []int{0, 2}, rs.Missed)
	assert.Len(t, rs.Stages, 2)
	assert.NotEqual(t, yhat.RawRowView(0), y.RawRowView(0))
}

func TestRefineErrors(t *testing.T) {
	x, yhat := thinBatch()
	ok := thinStage(t, 1e-6, Settings{})
	strict := thinStage(t, 1e-6, Settings{RequireTol: true})
	other, err := NewAdaNP(mustFunc(t, 2, 2), Settings{})
	require.NoError(t, err)
	theta := thinStage(t, 1e-6, Settings{Weights: TrainableDiagonal})
	for _, tc := range []struct {
		name   string
		x, y   *mat.Dense
		missed []int
		stages []*AdaNP
		want   string
	}{
		{"nil y", x, nil, []int{0}, []*AdaNP{ok}, "nil or empty y"},
		{"x rows", mat.NewDense(2, 1, nil), yhat, []int{0}, []*AdaNP{ok}, "x has 2 rows"},
		{"no stages", x, yhat, []int{0}, nil, "no stages"},
		{"nil stage", x, yhat, []int{0}, []*AdaNP{ok, nil}, "stage 1 is nil"},
		{"dims", x, yhat, []int{0}, []*AdaNP{other}, "stage 0 has (nx, ny) = (2, 2)"},
		{"require early", x, yhat, []int{0}, []*AdaNP{strict, ok}, "stage 0 of 2 sets RequireTol"},
		{"theta", x, yhat, []int{0}, []*AdaNP{theta}, "trainable-diagonal"},
		{"out of range", x, yhat, []int{3}, []*AdaNP{ok}, "missed[0] = 3"},
		{"negative", x, yhat, []int{-1}, []*AdaNP{ok}, "missed[0] = -1"},
		{"repeated", x, yhat, []int{1, 1}, []*AdaNP{ok}, "missed[1] = 1"},
	} {
		y := tc.y
		if y != nil {
			y = mat.DenseCopyOf(y)
		}
		_, err := Refine(tc.x, y, tc.missed, tc.stages...)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
		if y != nil {
			assert.True(t, mat.Equal(yhat, y), "%s: y changed", tc.name)
		}
	}
}

func mustFunc(t *testing.T, nx, ny int) Constraint {
	c, err := Func(nx, ny, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(y[0], x[0])
	})
	require.NoError(t, err)
	return c
}
