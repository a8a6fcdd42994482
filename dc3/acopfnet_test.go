package dc3

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/problems/acopf"
)

// testCost is a generation cost f(y) = Σ_j a_j·Pg_j² + b_j·Pg_j on an
// ACOPF y = (Vm, Va, Pg, Qg), in plain Go and as ACOPFLoss.Objective.
type testCost struct{ q, l []float64 }

func newTestCost(m *acopf.Model) testCost {
	_, ny := m.Dims()
	nb := len(m.Case.Buses)
	c := testCost{q: make([]float64, ny), l: make([]float64, ny)}
	for j := range m.Case.Gens {
		c.q[2*nb+j] = 0.1 * float64(j+1)
		c.l[2*nb+j] = 1 + 0.5*float64(j)
	}
	return c
}

func (c testCost) eval(y []float64) float64 {
	var f float64
	for k, v := range y {
		f += c.q[k]*v*v + c.l[k]*v
	}
	return f
}

func (c testCost) node(_, y *gorgonia.Node) (*gorgonia.Node, error) {
	g := y.Graph()
	vec := func(v []float64, name string) *gorgonia.Node {
		return gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(len(v)), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v))))
	}
	sq, err := gorgonia.HadamardProd(y, y)
	if err != nil {
		return nil, err
	}
	fq, err := gorgonia.Mul(sq, vec(c.q, "test_q"))
	if err != nil {
		return nil, err
	}
	fl, err := gorgonia.Mul(y, vec(c.l, "test_l"))
	if err != nil {
		return nil, err
	}
	return gorgonia.Add(fq, fl)
}

// acopfFixture is MATPOWER 6.0's case57 with n load draws about its
// loads (each load scaled by 1 + 0.2ξ), and DC3's loss on a test cost.
type acopfFixture struct {
	m    *acopf.Model
	cost testCost
	x    *mat.Dense
	loss ACOPFLoss
}

func newACOPFFixture(t *testing.T, n int, corr bool) acopfFixture {
	_, m, _ := case57Completion(t)
	base := m.Loads()
	rng := rand.New(rand.NewPCG(7, 57))
	x := mat.NewDense(n, len(base), nil)
	for i := range n {
		for j, v := range base {
			x.Set(i, j, v*(1+0.2*rng.NormFloat64()))
		}
	}
	f := acopfFixture{m: m, cost: newTestCost(m), x: x}
	f.loss = ACOPFLoss{Objective: f.cost.node, EqWeight: ACOPFEqWeight, IneqWeight: ACOPFIneqWeight}
	if corr {
		f.loss.Correction = &Correction{Ineq: m.Inequalities(), LearnRate: ACOPFCorrLearnRate, Momentum: ACOPFCorrMomentum,
			Steps: ACOPFCorrSteps, Eps: ACOPFCorrEps}
	}
	return f
}

// lossOf is DC3's ACOPF loss of the points y for the loads x, summed over
// the samples, in plain Go.
func (f acopfFixture) lossOf(x, y *mat.Dense) float64 {
	pf, lim := f.m.PowerFlow(), f.m.Inequalities()
	_, _, nc := pf.Dims()
	_, _, ng := lim.Dims()
	c, g := make([]float64, nc), make([]float64, ng)
	n, _ := x.Dims()
	var s float64
	for i := range n {
		xi, yi := x.RawRowView(i), y.RawRowView(i)
		pf.Eval(xi, yi, c, nil)
		lim.Eval(xi, yi, g, nil)
		var ce, gi float64
		for _, v := range c {
			ce += v * v
		}
		for _, v := range g {
			gi += max(v, 0) * max(v, 0)
		}
		s += f.cost.eval(yi) + ACOPFEqWeight*math.Sqrt(ce) + ACOPFIneqWeight*math.Sqrt(gi)
	}
	return s
}

// runBatch runs m's training graph on the first rows of x and returns
// its loss.
func runBatch(t *testing.T, m *Model, x *mat.Dense) float64 {
	t.Helper()
	bs := m.cfg.BatchSize
	_, nx := x.Dims()
	batch := mat.DenseCopyOf(x.Slice(0, bs, 0, nx))
	require.NoError(t, gorgonia.Let(m.x, tensor.New(tensor.WithShape(bs, nx), tensor.WithBacking(batch.RawMatrix().Data))))
	require.NoError(t, m.vm.RunAll())
	return m.loss.Value().Data().(float64)
}

// TestACOPFModel trains DC3's ACOPF model on case57 for two epochs
// (Dropout off, so that the training graph is deterministic) and checks
// its two modes against plain Go: the training graph's loss on a batch is
// DC3's loss, Σ f + 5‖c‖ + 5‖max(0, g)‖, at the points of the network
// with BatchNorm on the batch's statistics, mapped into the bounds and
// completed; Predict's points are those of the network with BatchNorm on
// the running estimates. Every predicted partial variable is within its
// bounds and every prediction meets the power flow to Newton's tolerance.
func TestACOPFModel(t *testing.T) {
	f := newACOPFFixture(t, 40, false)
	cfg := Config{Hidden: []int{16, 16}, NoDropout: true, BatchSize: 20, Epochs: 2, Seed: 3, Quiet: true}
	m, err := NewACOPF(f.m, f.loss, cfg)
	require.NoError(t, err)
	defer m.Close()
	assert.Equal(t, ACOPFLearnRate, m.cfg.LearnRate, "DC3's ACOPF learning rate by default")
	comp, err := NewACOPFCompletion(f.m)
	require.NoError(t, err)
	assert.Equal(t, comp.Partial(), m.Partial())
	hist, err := m.Fit(f.x)
	require.NoError(t, err)
	require.Len(t, hist, 2)

	graphLoss := runBatch(t, m, f.x)
	m.vm.Reset()
	batch := mat.DenseCopyOf(f.x.Slice(0, 20, 0, f.x.RawMatrix().Cols))
	yTrain, err := m.comp.complete(batch, forwardBatchStats(m.net, batch))
	require.NoError(t, err)
	assert.InDelta(t, f.lossOf(batch, yTrain), graphLoss, 1e-8*(1+math.Abs(graphLoss)), "training mode")

	y, err := m.Predict(f.x)
	require.NoError(t, err)
	yEval, err := m.comp.complete(f.x, forwardStats(m.net, f.x, m.net.runMean, m.net.runVar))
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(y, yEval, 1e-8), "evaluation mode")
	lo, span := comp.PartialBounds()
	pf := f.m.PowerFlow()
	_, _, nc := pf.Dims()
	c := make([]float64, nc)
	for i := range 40 {
		yi := y.RawRowView(i)
		for j, k := range m.Partial() {
			assert.True(t, yi[k] >= lo[j] && yi[k] <= lo[j]+span[j], "sample %d: y[%d] = %v outside [%v, %v]", i, k, yi[k], lo[j], lo[j]+span[j])
		}
		pf.Eval(f.x.RawRowView(i), yi, c, nil)
		for _, v := range c {
			require.LessOrEqual(t, math.Abs(v), DefaultNewtonTol, "sample %d", i)
		}
	}
}

// TestACOPFLossZeroWeights: zero weights drop the norms, leaving the
// objective summed over the batch.
func TestACOPFLossZeroWeights(t *testing.T) {
	f := newACOPFFixture(t, 20, false)
	f.loss.EqWeight, f.loss.IneqWeight = 0, 0
	m, err := NewACOPF(f.m, f.loss, Config{Hidden: []int{8, 8}, NoDropout: true, BatchSize: 20, Epochs: 1, Seed: 3, Quiet: true})
	require.NoError(t, err)
	defer m.Close()
	got := runBatch(t, m, f.x)
	m.vm.Reset()
	y, err := m.comp.complete(f.x, forwardBatchStats(m.net, f.x))
	require.NoError(t, err)
	var want float64
	for i := range 20 {
		want += f.cost.eval(y.RawRowView(i))
	}
	assert.InDelta(t, want, got, 1e-8*(1+math.Abs(want)))
	assert.Less(t, want+1, f.lossOf(f.x, y), "the norms are not small here, so dropping them shows")
}

// TestACOPFGradient compares the training graph's gradient with respect
// to a few weights of every layer with central differences of its loss,
// Dropout off, without the training-time correction (whose gradient is
// the identity, CorrectNode's straight-through estimate, which central
// differences would not match).
func TestACOPFGradient(t *testing.T) {
	f := newACOPFFixture(t, 10, false)
	cfg := Config{Hidden: []int{8, 8}, NoDropout: true, BatchSize: 10, Epochs: 1, Seed: 5, Quiet: true}
	m, err := NewACOPF(f.m, f.loss, cfg)
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Fit(f.x) // away from the initial weights
	require.NoError(t, err)
	// The batch violates bounds, so that the hinge's norm is in the loss.
	y, err := m.comp.complete(f.x, forwardBatchStats(m.net, f.x))
	require.NoError(t, err)
	lim := f.m.Inequalities()
	_, _, ng := lim.Dims()
	g, violated := make([]float64, ng), 0
	for i := range 10 {
		lim.Eval(f.x.RawRowView(i), y.RawRowView(i), g, nil)
		for _, v := range g {
			if v > 0 {
				violated++
			}
		}
	}
	require.Positive(t, violated)
	runBatch(t, m, f.x)
	ps := m.net.learnables()
	grads := make([][]float64, len(ps))
	for i, p := range ps {
		g, err := p.Grad()
		require.NoError(t, err)
		grads[i] = append([]float64(nil), g.Data().([]float64)...)
	}
	m.vm.Reset()
	const h = 1e-5
	for i, p := range ps {
		v := values(p)
		for _, j := range []int{0, len(v) / 2, len(v) - 1} {
			old := v[j]
			v[j] = old + h
			lp := runBatch(t, m, f.x)
			m.vm.Reset()
			v[j] = old - h
			lm := runBatch(t, m, f.x)
			m.vm.Reset()
			v[j] = old
			fd := (lp - lm) / (2 * h)
			assert.InDelta(t, fd, grads[i][j], 1e-4*(1+math.Abs(fd)), "%s[%d]", p.Name(), j)
		}
	}
}

// TestResumeACOPFBitExact interrupts DC3's ACOPF model (Dropout and the
// training-time correction on) after k batches and requires the resumed
// run to end with the uninterrupted run's history, weights, BatchNorm
// statistics, Adam state and random stream, bit for bit, and the same
// predictions.
func TestResumeACOPFBitExact(t *testing.T) {
	f := newACOPFFixture(t, 30, true)
	cfg := Config{Hidden: []int{8, 8}, BatchSize: 10, Epochs: 2, Seed: 4, Quiet: true}
	ref, err := NewACOPF(f.m, f.loss, cfg)
	require.NoError(t, err)
	defer ref.Close()
	wantHist, err := ref.Fit(f.x)
	require.NoError(t, err)
	want := snap(t, ref)
	wantY, err := ref.Predict(f.x)
	require.NoError(t, err)
	for _, k := range []int{1, 3, 4} {
		dir := t.TempDir()
		ck := cfg
		ck.Checkpoint = Checkpoint{Dir: dir, Every: time.Second}
		m, err := NewACOPF(f.m, f.loss, ck)
		require.NoError(t, err)
		m.now = fakeClock()
		stopAfter(m, k)
		_, err = m.Fit(f.x)
		require.ErrorIs(t, err, errStop)
		require.NoError(t, m.Close())

		r, err := ResumeACOPF(dir, f.m, f.loss, cfg)
		require.NoError(t, err)
		r.now = fakeClock()
		hist, err := r.Fit(f.x)
		require.NoError(t, err)
		assert.Equal(t, wantHist, hist, "k = %d", k)
		assert.Equal(t, want, snap(t, r), "k = %d", k)
		y, err := r.Predict(f.x)
		require.NoError(t, err)
		assert.True(t, mat.Equal(wantY, y), "k = %d: predictions", k)
		require.NoError(t, r.Close())

		// Another loss is another problem.
		other := f.loss
		other.IneqWeight = 1
		_, err = ResumeACOPF(dir, f.m, other, cfg)
		assert.ErrorContains(t, err, "another problem")
	}
}

// TestNewACOPFErrors checks NewACOPF's errors for bad input.
func TestNewACOPFErrors(t *testing.T) {
	f := newACOPFFixture(t, 1, false)
	cfg := Config{Hidden: []int{4}, BatchSize: 2, Quiet: true}
	_, err := NewACOPF(nil, f.loss, cfg)
	assert.ErrorContains(t, err, "nil ACOPF model")
	for _, tc := range []struct {
		name string
		mod  func(*ACOPFLoss, *Config)
		want string
	}{
		{"nil objective", func(l *ACOPFLoss, _ *Config) { l.Objective = nil }, "Objective is nil"},
		{"negative weight", func(l *ACOPFLoss, _ *Config) { l.EqWeight = -1 }, "finite and non-negative"},
		{"NaN weight", func(l *ACOPFLoss, _ *Config) { l.IneqWeight = math.NaN() }, "finite and non-negative"},
		{"infinite weight", func(l *ACOPFLoss, _ *Config) { l.IneqWeight = math.Inf(1) }, "finite and non-negative"},
		{"correction without inequalities", func(l *ACOPFLoss, _ *Config) { l.Correction = &Correction{LearnRate: 1e-4, Steps: 1} }, "dc3"},
		{"other partial variables", func(_ *ACOPFLoss, c *Config) { c.Partial = []int{0, 1} }, "the completion's"},
		{"batch of one", func(_ *ACOPFLoss, c *Config) { c.BatchSize = 1 }, "BatchSize ≥ 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, c := f.loss, cfg
			tc.mod(&l, &c)
			m, err := NewACOPF(f.m, l, c)
			assert.ErrorContains(t, err, tc.want)
			assert.Nil(t, m)
		})
	}
	m, err := NewACOPF(f.m, f.loss, cfg)
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Fit(mat.NewDense(2, 3, nil))
	assert.ErrorContains(t, err, "want at least 2 rows of")
	_, err = m.Predict(mat.NewDense(2, 3, nil))
	assert.ErrorContains(t, err, "columns, want")

	comp, err := NewACOPFCompletion(f.m)
	require.NoError(t, err)
	_, err = comp.CompleteFlat(f.x, mat.NewDense(1, 2, nil))
	assert.ErrorContains(t, err, "yp is 1×2, want 1×13")
	lo, span := comp.PartialBounds()
	lo[0], span[0] = -1, -1
	lo2, span2 := comp.PartialBounds()
	assert.True(t, lo2[0] >= 0 && span2[0] >= 0, "PartialBounds returns copies")
}
