package dc3

import (
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/problems"
)

// TestFeasibleAndLearns trains briefly on a small instance: predictions
// satisfy Cy = x to rounding before and after training, the mean objective
// falls, and and Predict runs in plain Go.
func TestFeasibleAndLearns(t *testing.T) {
	p, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	x := p.SampleX(400, 2)
	m, err := New(p, Config{Hidden: []int{32, 32}, LearnRate: 1e-3, BatchSize: 100, Epochs: 60, Seed: 3, Progress: io.Discard})
	require.NoError(t, err)
	defer m.Close()
	assert.Len(t, m.Partial(), 12)

	meanObj := func(y *mat.Dense) float64 {
		n, _ := y.Dims()
		s := 0.0
		for i := range n {
			s += p.Objective(nil, y.RawRowView(i))
		}
		return s / float64(n)
	}
	maxViol := func(y *mat.Dense) float64 {
		var cy mat.Dense
		cy.Mul(y, p.C.T())
		cy.Sub(&cy, x)
		return mat.Norm(&cy, math.Inf(1)) // max row sum, an upper bound on max|c|
	}
	y0, err := m.Predict(x)
	require.NoError(t, err)
	assert.Less(t, maxViol(y0), 1e-9, "feasible before training")
	hist, err := m.Fit(x)
	require.NoError(t, err)
	require.Len(t, hist, 60)
	y1, err := m.Predict(x)
	require.NoError(t, err)
	assert.Less(t, maxViol(y1), 1e-9, "feasible after training")
	assert.Less(t, meanObj(y1), meanObj(y0)-1, "the objective falls")
	assert.Less(t, hist[len(hist)-1].Objective, hist[0].Objective)
	assert.Positive(t, m.TrainTime())
}

// TestErrors checks invalid configurations and data.
func TestErrors(t *testing.T) {
	p, err := problems.NewNonconvexLinear(6, 6, 1)
	require.NoError(t, err)
	_, err = New(p, Config{})
	assert.Error(t, err, "N_C = N_O")
	_, err = New(nil, Config{})
	assert.Error(t, err)
	q, err := problems.NewNonconvexLinear(10, 4, 1)
	require.NoError(t, err)
	_, err = New(q, Config{Hidden: []int{0}})
	assert.Error(t, err)
	m, err := New(q, Config{Hidden: []int{8}, BatchSize: 10, Epochs: 1, Quiet: true})
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Fit(q.SampleX(5, 1))
	assert.Error(t, err, "fewer rows than a batch")
	_, err = m.Predict(mat.NewDense(2, 3, nil))
	assert.Error(t, err)
}

// TestPredictMatchesGraph checks that Predict (plain Go) and the training
// graph compute the same objective on a batch, for both completions.
func TestPredictMatchesGraph(t *testing.T) {
	lin, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	quad, err := problems.NewNonconvexQuadratic(20, 8, 1)
	require.NoError(t, err)
	x := lin.SampleX(100, 2)
	cfg := Config{Hidden: []int{16, 16}, LearnRate: 1e-3, BatchSize: 50, Epochs: 3, Seed: 2, Quiet: true}
	ml, err := New(lin, cfg)
	require.NoError(t, err)
	defer ml.Close()
	mq, err := NewNewton(quad.SineQuadratic, quad.Equalities(), cfg)
	require.NoError(t, err)
	defer mq.Close()
	for _, tc := range []struct {
		name string
		m    *Model
		obj  problems.SineQuadratic
	}{{"linear", ml, lin.SineQuadratic}, {"newton", mq, quad.SineQuadratic}} {
		_, err := tc.m.Fit(x)
		require.NoError(t, err)
		batch := mat.DenseCopyOf(x.Slice(0, 50, 0, 8))
		require.NoError(t, gorgonia.Let(tc.m.x, tensor.New(tensor.WithShape(50, 8), tensor.WithBacking(batch.RawMatrix().Data))))
		require.NoError(t, tc.m.vm.RunAll())
		graphLoss := tc.m.loss.Value().Data().(float64)
		tc.m.vm.Reset()
		y, err := tc.m.Predict(batch)
		require.NoError(t, err)
		mean := 0.0
		for i := range 50 {
			mean += tc.obj.Objective(nil, y.RawRowView(i)) / 50
		}
		assert.InDelta(t, graphLoss, mean, 1e-9*(1+math.Abs(mean)), tc.name)
	}
}
