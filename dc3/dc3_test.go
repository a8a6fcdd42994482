package dc3

import (
	"fmt"
	"io"
	"math"
	"slices"
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

// TestPredictMatchesGraph checks the two modes of the network against a
// plain-Go forward pass after a few epochs of training (Dropout off, so
// that the training graph is deterministic). With linear completion, the
// training graph's summed objective on a batch is that of the network
// with BatchNorm on the batch's statistics, and Predict's predictions are
// those of the network with BatchNorm on the running estimates; the two
// objectives differ. With Newton completion the network's outputs in
// evaluation mode are checked (Newton's method from y_o = 0 does not
// converge for every sample, and where it does not, its last iterate
// amplifies rounding differences).
func TestPredictMatchesGraph(t *testing.T) {
	lin, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	quad, err := problems.NewNonconvexQuadratic(20, 8, 1)
	require.NoError(t, err)
	x := lin.SampleX(100, 2)
	cfg := Config{Hidden: []int{16, 16}, NoDropout: true, LearnRate: 1e-3, BatchSize: 50, Epochs: 3, Seed: 2, Quiet: true}
	m, err := New(lin, cfg)
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Fit(x)
	require.NoError(t, err)
	batch := mat.DenseCopyOf(x.Slice(0, 50, 0, 8))
	require.NoError(t, gorgonia.Let(m.x, tensor.New(tensor.WithShape(50, 8), tensor.WithBacking(batch.RawMatrix().Data))))
	require.NoError(t, m.vm.RunAll())
	graphLoss := m.loss.Value().Data().(float64)
	m.vm.Reset()
	sumObj := func(y *mat.Dense) float64 {
		s := 0.0
		for i := range 50 {
			s += lin.Objective(nil, y.RawRowView(i))
		}
		return s
	}
	yTrain, err := m.comp.complete(batch, forwardBatchStats(m.net, batch))
	require.NoError(t, err)
	assert.InDelta(t, graphLoss, sumObj(yTrain), 1e-9*(1+math.Abs(graphLoss)), "training mode")
	y, err := m.Predict(batch)
	require.NoError(t, err)
	yEval, err := m.comp.complete(batch, forwardStats(m.net, batch, m.net.runMean, m.net.runVar))
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(y, yEval, 1e-10), "evaluation mode")
	assert.Greater(t, math.Abs(sumObj(y)-graphLoss), 1e-6*math.Abs(graphLoss), "the modes differ")

	mq, err := NewNewton(quad.SineQuadratic, quad.Equalities(), cfg)
	require.NoError(t, err)
	defer mq.Close()
	_, err = mq.Fit(x)
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(mq.net.predict(batch), forwardStats(mq.net, batch, mq.net.runMean, mq.net.runVar), 1e-12), "newton: evaluation mode")
}

// TestPaperDefaults trains the default Config (DC3's NNSolver: 2×200,
// Dropout 0.2, batch 200, Adam 1e-4) for one epoch on the paper's
// (N_O, N_C) = (100, 50) instance and its DC3 split: the layer sizes are
// DC3's, the test predictions satisfy Cy = x to 1e-9, and the mean test
// objective falls by more than half (from the untrained network in
// evaluation mode, whose BatchNorm still has running estimates 0 and 1).
// With -short it trains on the first 1000 training inputs.
func TestPaperDefaults(t *testing.T) {
	p, err := problems.NewNonconvexLinear(100, 50, problems.PaperSeed)
	require.NoError(t, err)
	train, _, test := p.PaperData()
	xTrain := train.X
	if testing.Short() {
		xTrain = mat.DenseCopyOf(train.X.Slice(0, 1000, 0, 50))
	}
	m, err := New(p, Config{Epochs: 1, Seed: 1, Quiet: true})
	require.NoError(t, err)
	defer m.Close()
	assert.Equal(t, []int{50, 200, 200, 50}, m.net.sizes)
	assert.Len(t, m.net.masks, 2)
	assert.Equal(t, 0.2, m.cfg.Dropout)
	assert.Equal(t, 200, m.cfg.BatchSize)
	assert.Equal(t, 1e-4, m.cfg.LearnRate)

	meanObj := func(y *mat.Dense) float64 {
		n, _ := y.Dims()
		s := 0.0
		for i := range n {
			s += p.Objective(nil, y.RawRowView(i)) / float64(n)
		}
		return s
	}
	y0, err := m.Predict(test.X)
	require.NoError(t, err)
	_, err = m.Fit(xTrain)
	require.NoError(t, err)
	y, err := m.Predict(test.X)
	require.NoError(t, err)
	var r mat.Dense
	r.Mul(y, p.C.T())
	r.Sub(&r, test.X)
	assert.Less(t, mat.Norm(&r, math.Inf(1)), 1e-9)
	assert.Less(t, meanObj(y), meanObj(y0)/2)
	t.Logf("mean test objective %.1f → %.1f", meanObj(y0), meanObj(y))
}

// BenchmarkStep times one training step (forward, backward, Adam,
// running estimates) of the default Config at the paper's sizes.
func BenchmarkStep(b *testing.B) {
	for _, sz := range [][2]int{{100, 50}, {200, 150}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			p, err := problems.NewNonconvexLinear(sz[0], sz[1], problems.PaperSeed)
			require.NoError(b, err)
			m, err := New(p, Config{Quiet: true})
			require.NoError(b, err)
			defer m.Close()
			xb := tensor.New(tensor.WithShape(200, sz[1]), tensor.WithBacking(mat.DenseCopyOf(p.Examples(200)).RawMatrix().Data))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.step(xb); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestConfigPartial checks Config.Partial: the model predicts the given
// variables, completes the others so that Cy = x, keeps the initial
// weights of its Seed, copies the slice, and rejects a wrong choice.
func TestConfigPartial(t *testing.T) {
	p, err := problems.NewNonconvexLinear(100, 50, problems.PaperSeed)
	require.NoError(t, err)
	partial, err := p.DC3Partial(problems.DC3Ineq)
	require.NoError(t, err)
	cfg := Config{Hidden: []int{16}, Epochs: 1, Seed: 4, Quiet: true}
	seeded, err := New(p, cfg)
	require.NoError(t, err)
	defer seeded.Close()
	cfg.Partial = slices.Clone(partial)
	m, err := New(p, cfg)
	require.NoError(t, err)
	defer m.Close()
	cfg.Partial[0] = -1 // the model holds a copy
	assert.Equal(t, partial, m.Partial())
	assert.InDelta(t, 727.227, m.Cond(), 0.01, "cond₂(C_o) of DC3's choice (NumPy: 727.2270)")
	assert.NotEqual(t, seeded.Partial(), m.Partial())
	for i, l := range m.net.learnables() {
		assert.Equal(t, values(seeded.net.learnables()[i]), values(l), "learnable %d", i)
	}
	// The random stream is at the same place, so the shuffling and the
	// dropout masks are the Seed's too.
	assert.Equal(t, snap(t, seeded).rng, snap(t, m).rng)
	x := p.SampleX(30, 1)
	y, err := m.Predict(x)
	require.NoError(t, err)
	var r mat.Dense
	r.Mul(y, p.C.T())
	r.Sub(&r, x)
	assert.Less(t, mat.Norm(&r, math.Inf(1)), 1e-9)

	for _, bad := range [][]int{partial[1:], append(slices.Clone(partial[1:]), partial[1]), append(slices.Clone(partial[1:]), 100)} {
		c := Config{Quiet: true, Partial: bad}
		_, err := New(p, c)
		assert.ErrorContains(t, err, "Config.Partial")
	}
}

// TestCondSpread backs the package doc's figure: over the choices of
// partial variables New draws for 200 seeds, cond₂(C_o) (Model.Cond) of
// the paper's (100, 50) instance ranges from 35 to about 70,000.
func TestCondSpread(t *testing.T) {
	p, err := problems.NewNonconvexLinear(100, 50, problems.PaperSeed)
	require.NoError(t, err)
	lo, hi := math.Inf(1), 0.0
	for s := uint64(100); s < 300; s++ {
		m, err := New(p, Config{Hidden: []int{1}, Seed: s, Quiet: true})
		require.NoError(t, err)
		lo, hi = math.Min(lo, m.Cond()), math.Max(hi, m.Cond())
		m.Close()
	}
	assert.InDelta(t, 35, lo, 1)
	assert.InDelta(t, 70000, hi, 1000)
}
