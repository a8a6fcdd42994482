package dc3

import (
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

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
