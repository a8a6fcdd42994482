package train

import (
	"bytes"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestFitDeterministic trains the same Config twice, the second time on
// one core, and requires identical histories, weights and predictions.
// The batches (25 of 60 samples) leave a remainder, so two graphs of
// different batch sizes share the weights and the shuffling matters.
func TestFitDeterministic(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(60, 11)
	run := func() (History, [][]uint64, []uint64) {
		m, err := New(Config{
			Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(),
			LearnRate: 1e-2, BatchSize: 25, Epochs: 40, Seed: 42, LambdaC: 0.1, Standardize: true, Quiet: true,
		})
		require.NoError(t, err)
		h, err := m.Fit(d.X, d.Y)
		require.NoError(t, err)
		pred, _, err := m.Predict(d.X)
		require.NoError(t, err)
		return h, weightBits(m), bits(pred)
	}
	h1, w1, p1 := run()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	h2, w2, p2 := run()
	require.Len(t, h1, 40)
	assert.Equal(t, h1, h2, "per-epoch history")
	assert.Equal(t, w1, w2, "weights")
	assert.Equal(t, p1, p2, "predictions")
	assert.Less(t, h1[39].Task, h1[0].Task, "training reduces the task loss")
}

// TestFitHistory checks the bookkeeping of History and the progress lines.
func TestFitHistory(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(30, 2)
	var log bytes.Buffer
	m, err := New(Config{
		Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(),
		BatchSize: 8, Epochs: 10, LogEvery: 4, Seed: 1, LambdaD: 0.25, LambdaC: 0.5, Progress: &log,
	})
	require.NoError(t, err)
	h, err := m.Fit(d.X, d.Y)
	require.NoError(t, err)
	require.Len(t, h, 10)
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	require.Len(t, lines, 3, "epochs 4, 8 and the last")
	assert.Contains(t, lines[0], "epoch  4/10")
	assert.Contains(t, lines[2], "epoch 10/10")
	for _, field := range []string{"loss", "task", "disp", "res", "max|c|", "depth", "projected", "missed"} {
		assert.Contains(t, lines[0], field)
	}
	for i, e := range h {
		assert.Equal(t, i+1, e.Epoch)
		assert.GreaterOrEqual(t, e.Projected, 0.0)
		assert.LessOrEqual(t, e.Projected, 1.0)
		if e.Projected == 1 {
			// Every batch projected: ℓ = ℓ_T + λ_D·disp + λ_C·res.
			assert.InDelta(t, e.Task+0.25*e.Displacement+0.5*e.Residual, e.Loss, 1e-12*math.Max(1, e.Loss))
			assert.GreaterOrEqual(t, e.Depth, 1.0)
		}
	}
	assert.Equal(t, h[9], h.Last())

	// A second Fit continues training.
	h2, err := m.Fit(d.X, d.Y)
	require.NoError(t, err)
	assert.Equal(t, 1, h2[0].Epoch)
	assert.NotEqual(t, h[9].Loss, h2[0].Loss)
}

// TestActivationRule checks the supervised Gate and that the rule is
// consulted in training: with it on, the fraction of projected batches
// can fall below one; with AlwaysProject, it is always one.
func TestActivationRule(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(4, 1)
	m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Quiet: true})
	require.NoError(t, err)
	g, err := m.NewGraph(4)
	require.NoError(t, err)
	require.NoError(t, g.SetBatch(d.X, d.Y))
	far := mat.DenseCopyOf(d.Y)
	far.Apply(func(_, _ int, v float64) float64 { return v + 1 }, far)
	assert.True(t, g.supervisedGate(d.X, far, d.Y), "a step towards the labels is taken")
	assert.False(t, g.supervisedGate(d.X, d.Y, far), "a step away from the labels is skipped")
	assert.True(t, g.supervisedGate(d.X, d.Y, d.Y), "ties project")

	train := p.Sample(64, 3)
	fractions := func(always bool) []float64 {
		m, err := New(Config{
			Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(),
			BatchSize: 2, Epochs: 5, Seed: 2, AlwaysProject: always, Standardize: true, Quiet: true,
		})
		require.NoError(t, err)
		h, err := m.Fit(train.X, train.Y)
		require.NoError(t, err)
		var f []float64
		for _, e := range h {
			f = append(f, e.Projected)
		}
		return f
	}
	assert.Equal(t, []float64{1, 1, 1, 1, 1}, fractions(true))
	gated := fractions(false)
	// On small batches one NP step from a poor prediction often moves
	// away from the labels (about a third of the batches here).
	assert.Less(t, gated[0], 1.0, "some batches are not projected")
	assert.Greater(t, gated[0], 0.0, "some batches are projected")
}

// TestBaselines trains the MLP and Soft baselines: no projection, and the
// soft penalty lowers the residual compared with the MLP.
func TestBaselines(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(100, 4)
	res := map[Mode]float64{}
	for _, mode := range []Mode{MLP, Soft} {
		m, err := New(Config{
			Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Mode: mode,
			LambdaC: 10, LearnRate: 1e-2, Epochs: 200, Seed: 3, Standardize: true, Quiet: true,
		})
		require.NoError(t, err)
		assert.Nil(t, m.TrainAdaNP())
		h, err := m.Fit(d.X, d.Y)
		require.NoError(t, err)
		last := h.Last()
		assert.Zero(t, last.Projected)
		assert.Zero(t, last.Depth)
		assert.Zero(t, last.Displacement)
		pred, st, err := m.Predict(d.X)
		require.NoError(t, err)
		yhat, err := m.Backbone(d.X)
		require.NoError(t, err)
		assert.Equal(t, bits(yhat), bits(pred), "no projection at inference")
		assert.Zero(t, st.Depth)
		res[mode] = st.After.Mean
	}
	assert.Less(t, res[Soft], res[MLP])
}

// TestFitUnsupervised solves min ½‖y‖² s.t. y₁ + y₂ = x for x ∈ [−1, 1]
// (solution y = (x/2, x/2)) by training on the objective alone.
func TestFitUnsupervised(t *testing.T) {
	c := sumIsX(t)
	objective := func(_, y *gorgonia.Node) (*gorgonia.Node, error) {
		sq, err := gorgonia.Square(y)
		if err != nil {
			return nil, err
		}
		s, err := gorgonia.Sum(sq, 1)
		if err != nil {
			return nil, err
		}
		return gorgonia.Mul(s, gorgonia.NewConstant(0.5))
	}
	x := mat.NewDense(64, 1, nil)
	for i := range 64 {
		x.Set(i, 0, -1+2*float64(i)/63)
	}
	for _, always := range []bool{false, true} {
		m, err := New(Config{
			Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: c, LambdaC: 1,
			LearnRate: 1e-2, BatchSize: 20, Epochs: 150, Seed: 1, AlwaysProject: always, Standardize: true, Quiet: true,
		})
		require.NoError(t, err)
		h, err := m.FitUnsupervised(x, objective)
		require.NoError(t, err)
		assert.Less(t, h.Last().Loss, h[0].Loss)
		pred, st, err := m.Predict(x)
		require.NoError(t, err)
		assert.LessOrEqual(t, st.After.Max, 1e-6)
		want := mat.NewDense(64, 2, nil)
		for i := range 64 {
			want.Set(i, 0, x.At(i, 0)/2)
			want.Set(i, 1, x.At(i, 0)/2)
		}
		assert.Less(t, meanSquaredError(pred, want), 1e-3, "AlwaysProject=%v", always)
		_, sy := m.Standardizers()
		assert.Nil(t, sy, "no output standardisation without labels")
	}
}

// TestFitUnsupervisedDefaultsProject checks that FitUnsupervised with the
// default λ_C (DefaultObjectiveLambdaC) projects: with λ_C = 0 the
// activation rule compares objectives only, rejects every projection (a
// feasible point has a worse objective than the unconstrained minimum
// y = 0) and the model trains exactly as the MLP.
func TestFitUnsupervisedDefaultsProject(t *testing.T) {
	c := sumIsX(t)
	objective := func(_, y *gorgonia.Node) (*gorgonia.Node, error) {
		sq, err := gorgonia.Square(y)
		if err != nil {
			return nil, err
		}
		return gorgonia.Sum(sq, 1)
	}
	x := mat.NewDense(64, 1, nil)
	for i := range 64 {
		x.Set(i, 0, -1+2*float64(i)/63)
	}
	projected := func(lambdaC float64) float64 {
		m, err := New(Config{Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: c, LambdaC: lambdaC,
			LearnRate: 1e-2, BatchSize: 16, Epochs: 30, Seed: 1, Quiet: true})
		require.NoError(t, err)
		h, err := m.FitUnsupervised(x, objective)
		require.NoError(t, err)
		var p float64
		for _, ep := range h {
			p += ep.Projected / float64(len(h))
		}
		return p
	}
	assert.GreaterOrEqual(t, projected(0), 0.9, "defaults: most batches are projected")
	assert.Zero(t, projected(-1), "λ_C off: the objective gate rejects every projection")
}

// TestInequalityConstraint trains on the inequality fitting problem, whose
// Fischer–Burmeister system has latent multipliers: the residual and soft
// penalty terms see only the predicted output.
func TestInequalityConstraint(t *testing.T) {
	p := problems.FittingInequality{}
	c, err := p.Constraint()
	require.NoError(t, err)
	d := p.SampleNoisy(128, 1)
	for _, mode := range []Mode{ENFORCE, Soft} {
		m, err := New(Config{
			Sizes: []int{1, 16, 1}, Hidden: layers.Tanh, Constraint: c, Mode: mode, LambdaC: 0.5,
			BatchSize: 32, Epochs: 20, LearnRate: 1e-2, Seed: 2, AlwaysProject: true, Standardize: true, Quiet: true,
		})
		require.NoError(t, err)
		_, err = m.Fit(d.X, d.Y)
		require.NoError(t, err)
		pred, st, err := m.Predict(p.Sample(300, 2).X)
		require.NoError(t, err)
		rows, cols := pred.Dims()
		assert.Equal(t, []int{300, 1}, []int{rows, cols})
		if mode == ENFORCE {
			assert.True(t, st.Converged())
		}
	}
}

// TestStandardisationAcrossFits checks that a model trained without labels
// and then with labels keeps the input scaling its weights were trained
// with, and that the network's output scaling then applies to both kinds
// of graph.
func TestStandardisationAcrossFits(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(32, 1)
	m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 3, Standardize: true, Quiet: true})
	require.NoError(t, err)
	objective := func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(y) }
	_, err = m.FitUnsupervised(d.X, objective)
	require.NoError(t, err)
	sx, sy := m.Standardizers()
	require.NotNil(t, sx)
	require.Nil(t, sy)

	other := p.Sample(32, 2)
	_, err = m.Fit(other.X, other.Y)
	require.NoError(t, err)
	sx2, sy2 := m.Standardizers()
	assert.Equal(t, sx, sx2, "the input scaling is kept")
	require.NotNil(t, sy2, "the output scaling is fitted on the labels")

	g, err := m.NewObjectiveGraph(32, objective)
	require.NoError(t, err)
	vm := gorgonia.NewTapeMachine(g.G)
	defer vm.Close()
	require.NoError(t, g.SetBatch(d.X, nil))
	require.NoError(t, vm.RunAll())
	yhat, _ := g.Outputs()
	want, err := m.Backbone(d.X)
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(want, yhat, 1e-12), "the objective graph's ŷ is the model's backbone output")
}

// TestPyTorchInit checks the bounds and the reproducibility of
// Config.PyTorchInit.
func TestPyTorchInit(t *testing.T) {
	cfg := Config{Sizes: []int{1, 64, 16, 2}, Hidden: layers.ReLU, Constraint: problems.FittingEquality{}.Equalities(), Seed: 9, PyTorchInit: true}
	a, err := New(cfg)
	require.NoError(t, err)
	b, err := New(cfg)
	require.NoError(t, err)
	assert.Equal(t, weightBits(a), weightBits(b))
	sizes := cfg.Sizes
	for i, w := range a.Weights() {
		bound := 1 / math.Sqrt(float64(sizes[i/2]))
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range w {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		assert.GreaterOrEqual(t, lo, -bound)
		assert.LessOrEqual(t, hi, bound)
		assert.Less(t, hi-lo, 2*bound)
		if len(w) >= 16 {
			assert.Greater(t, hi-lo, bound, "values spread over the interval, biases included (slice %d)", i)
		}
	}
}
