package dc3

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/problems"
)

// TestNewtonCompletion checks that the completion is feasible when a
// completion exists (predicted variables taken from a feasible point) and
// Newton starts near it, and that its VJP matches central finite
// differences of the completion map. It logs whether Newton converges
// from y_o = 0 as well.
func TestNewtonCompletion(t *testing.T) {
	p, err := problems.NewNonconvexQuadratic(20, 8, 1)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(1, 2))
	perm := rnd.Perm(20)
	nc := &NewtonCompletion{C: p.Equalities(), Partial: perm[:12], Other: perm[12:]}
	xs := p.SampleX(5, 3)
	c := make([]float64, 8)
	for i := range 5 {
		x := xs.RawRowView(i)
		feasible := make([]float64, 20)
		for j := range feasible {
			feasible[j] = rnd.NormFloat64()
		}
		p.Complete(x, feasible, feasible)
		yp := make([]float64, 12)
		for j, col := range nc.Partial {
			yp[j] = feasible[col]
		}
		zero := make([]float64, 20)
		_, fromZero, err := nc.Complete(x, yp, zero)
		require.NoError(t, err)
		t.Logf("sample %d: Newton from y_o = 0 converges: %v", i, fromZero)
		y := make([]float64, 20)
		for _, col := range nc.Other {
			y[col] = feasible[col] + 0.1*rnd.NormFloat64()
		}
		res, ok, err := nc.Complete(x, yp, y)
		require.NoError(t, err)
		require.True(t, ok, "sample %d: converged (max|c| = %g)", i, res)
		p.Equalities().Eval(x, y, c, nil)
		assert.LessOrEqual(t, floats.Norm(c, math.Inf(1)), DefaultNewtonTol)
		for j, col := range nc.Partial {
			assert.Equal(t, yp[j], y[col], "predicted variables pass through")
		}

		g := make([]float64, 20)
		for j := range g {
			g[j] = rnd.NormFloat64()
		}
		gp := make([]float64, 12)
		require.NoError(t, nc.VJP(x, y, g, gp))
		want := fd.Gradient(nil, func(z []float64) float64 {
			yz := append([]float64(nil), y...)
			_, _, err := nc.Complete(x, z, yz)
			require.NoError(t, err)
			return floats.Dot(g, yz)
		}, yp, &fd.Settings{Formula: fd.Central, Step: 1e-6})
		for j := range gp {
			assert.InDelta(t, want[j], gp[j], 1e-5*(1+math.Abs(want[j])), "sample %d, ∂/∂y_p[%d]", i, j)
		}
	}
}

// TestNewNewtonLearns trains DC3 with Newton completion briefly on a small
// quadratic instance (40 epochs of 2 steps). The claim is one with a wide
// margin in both builds (pure Go and -tags openblas, whose rounding sends
// the non-converging Newton samples elsewhere): the mean objective of
// Predict on the training inputs falls by more than a factor of 3 (from
// 126–238 to 18–30 over seeds 1–6 in either build), as BatchNorm's
// running estimates move from their initial 0 and 1 to the layers'
// statistics and the weights train. The objective of the training-mode
// batches moves little over so few steps and is not asserted. A
// network's y_p need not admit a completion: the test only logs the
// fraction of feasible predictions.
func TestNewNewtonLearns(t *testing.T) {
	p, err := problems.NewNonconvexQuadratic(20, 8, 1)
	require.NoError(t, err)
	x := p.SampleX(200, 2)
	m, err := NewNewton(p.SineQuadratic, p.Equalities(), Config{Hidden: []int{32}, LearnRate: 1e-3, BatchSize: 100, Epochs: 40, Seed: 1, Progress: io.Discard})
	require.NoError(t, err)
	defer m.Close()
	meanObj := func(y *mat.Dense) float64 {
		s := 0.0
		for i := range 200 {
			s += p.Objective(nil, y.RawRowView(i)) / 200
		}
		return s
	}
	y0, err := m.Predict(x)
	require.NoError(t, err)
	hist, err := m.Fit(x)
	require.NoError(t, err)
	require.Len(t, hist, 40)
	y, err := m.Predict(x)
	require.NoError(t, err)
	before, after := meanObj(y0), meanObj(y)
	assert.Less(t, after, before/3, "the objective falls by more than a factor of 3")
	c := make([]float64, 8)
	feasible := 0
	for i := range 200 {
		p.Equalities().Eval(x.RawRowView(i), y.RawRowView(i), c, nil)
		if floats.Norm(c, math.Inf(1)) <= DefaultNewtonTol {
			feasible++
		}
	}
	t.Logf("feasible predictions after training: %d of 200; objective %.3f → %.3f", feasible, before, after)

	_, err = NewNewton(p.SineQuadratic, nil, Config{})
	assert.Error(t, err)
	lin, err := problems.NewNonconvexLinear(10, 4, 1)
	require.NoError(t, err)
	_, err = NewNewton(p.SineQuadratic, lin.Equalities(), Config{})
	assert.Error(t, err, "dimension mismatch")
}
