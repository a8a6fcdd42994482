// Package dc3 is the DC3 baseline (Donti, Rolnick & Kolter, "DC3: A
// learning method for optimization with hard constraints", ICLR 2021) for
// the ENFORCE paper's nonconvex benchmark with linear equalities (§5.3.1):
//
//	min_y ½yᵀQy + pᵀ sin y   s.t.   Cy = x.
//
// Equality completion: a network (DC3's NNSolver, below) predicts the
// N_O − N_C "partial" variables y_p; the other N_C variables are completed
// by solving C_o y_o = x − C_p y_p, where C_p and C_o are the columns of C
// of the partial and the other variables, so every prediction satisfies
// Cy = x up to rounding. The completion is linear, y = xK_x + y_pK_y with constant
// matrices, and enters the gorgonia graph as two matrix products, so the
// objective's gradient flows through it exactly. The loss is the objective
// summed over the batch, as DC3 back-propagates it (train_loss.sum()).
//
// For nonlinear equalities (NewNewton, used for the quadratic benchmark of
// §5.3.2, where the ENFORCE paper reports no DC3 results) the completion
// solves c(x, (y_p, y_o)) = 0 for y_o by Newton's method in the forward
// pass, and the backward pass uses the implicit function theorem,
// ∂y_o/∂y_p = −(∂c/∂y_o)⁻¹∂c/∂y_p, as DC3 does for AC optimal power flow.
// Unlike the linear case, a completion need not exist for the y_p the
// network predicts, and Newton's method need not find one that exists: on
// the quadratic benchmark most predictions stay infeasible (see
// RESULTS.md, §5.3).
//
// ACOPFCompletion is that completion for AC optimal power flow on an
// acopf.Model, with DC3's choice of predicted variables (Pg of the
// non-reference generators, Vm of the generator buses), as a batch
// operation on a gorgonia graph (ACOPFCompletion.Node) for any training
// loop. NewACOPF builds DC3's whole ACOPF model on it: the NNSolver
// network below, a sigmoid into the bounds of the predicted variables, the
// completion, optionally the training-time correction, and DC3's loss
// (ACOPFLoss: the objective plus the unsquared norms of the balance
// residual and of the bound violations), trained by Fit and resumed by
// ResumeACOPF; examples/acopf-dc3 runs DC3's ACOPF experiment with it.
//
// The network is DC3's NNSolver (locuslab/DC3, method.py): for each hidden
// width a Linear layer, BatchNorm1d, ReLU and Dropout(0.2), then a Linear
// output layer with N_O − N_C outputs; Linear weights drawn with Kaiming
// (He) normal initialisation, N(0, 2/fan_in), biases U(±1/√fan_in)
// (PyTorch's Linear default), BatchNorm's scale 1 and shift 0. In training
// BatchNorm normalises with the batch's mean and (biased) variance and
// updates running estimates (momentum 0.1, the unbiased variance), and
// Dropout zeroes each hidden unit with probability 0.2 and scales the
// survivors by 1/0.8; Predict is DC3's evaluation mode: BatchNorm uses the
// running estimates and Dropout is off. DC3 feeds the inputs unscaled; so
// does Model (the first BatchNorm normalises the first layer's outputs).
// Config's defaults are DC3's and the paper's, field by field.
//
// Which variables are partial matters: the completion passes the
// network's errors on through C_o⁻¹, and over 200 random choices for the
// paper's (100, 50) instance cond₂(C_o) ranged from 35 to about 70,000
// (Model.Cond, TestCondSpread; RESULTS.md §5.3.1 measures what it does to
// DC3's result). DC3 chooses them once per data set, with the data's
// random generator, so that every model trained on a data set shares them;
// Config.Partial takes that choice (problems.NonconvexLinear.DC3Partial
// reproduces it), and without it each Seed draws its own.
//
// Gradient-based correction, DC3's second ingredient, moves the partial
// variables along the gradient of the inequality violation; the paper's
// problems have no inequalities, so correction (in training and at test
// time) is a no-op there and New and NewNewton do not take it. For AC
// optimal power flow, which has bounds, Correction with
// ACOPFCompletion.Correct (test time) and ACOPFCompletion.CorrectNode
// (training) is DC3's correction (ACOPFLoss.Correction for NewACOPF), with
// DC3's gradient through the training steps when Correction.ExactGradient
// is set. For the paper's problems DC3's soft penalty on the equalities,
// 10·0.5·‖c(x, y)‖₂ per sample, is left out: after a completion it is zero
// up to rounding (or Newton's tolerance), and so is its gradient with
// respect to the network's outputs, ∂c/∂y_p + ∂c/∂y_o·∂y_o/∂y_p = 0.
//
// Training at the paper's scale (3500 epochs) takes the better part of an
// hour and more; with Config.Checkpoint set, Fit writes checkpoints every
// few minutes, and Resume (ResumeNewton for Newton completion) continues
// an interrupted run bit for bit, as package train's Resume does:
//
//	cfg.Checkpoint = dc3.Checkpoint{Dir: dir}
//	m, err := dc3.Resume(dir, p, cfg)
//	if errors.Is(err, fs.ErrNotExist) {
//		m, err = dc3.New(p, cfg) // no checkpoint yet: start afresh
//	}
//	...
//	hist, err := m.Fit(x) // the whole run's history
package dc3

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/adam"
	"github.com/enforce-nn/enforce/problems"
)

// Config configures a Model. Zero fields mean the defaults stated, which
// are DC3's (locuslab/DC3 default_args.py, method_default_args for the
// "simple" and "nonconvex" problems, and method.py) unless the paper says
// otherwise.
type Config struct {
	// Hidden are the widths of the hidden layers (default [200, 200]:
	// DC3's hiddenSize = 200, two hidden layers in NNSolver; the paper's
	// 2×200 backbone).
	Hidden []int
	// Dropout is the probability with which Dropout zeroes a hidden unit
	// in training (default 0.2, NNSolver's nn.Dropout(p=0.2)); NoDropout
	// turns Dropout off.
	Dropout   float64
	NoDropout bool
	// LearnRate is Adam's step size (default 1e-4: DC3's lr and the
	// paper's).
	LearnRate float64
	// BatchSize is the number of samples per step (default 200: DC3's
	// batchSize and the paper's). An epoch visits the samples in a new
	// random order and drops the last incomplete batch (DC3's DataLoader
	// keeps it: 42 steps per epoch on 8334 samples where Model takes 41).
	BatchSize int
	// Epochs is the number of passes per Fit call (default 3500, the
	// paper's DC3 setting, §5.3; DC3's own default is 1000).
	Epochs int
	// Seed seeds the choice of partial variables (unless Partial is set),
	// the initial weights, the shuffling and the dropout masks.
	Seed uint64
	// Partial, if not nil, are the indices of the variables the network
	// predicts, in its output order: N_O − N_C distinct indices in
	// 0..N_O−1 (the rest are completed). DC3 fixes them per data set
	// (problems.NonconvexLinear.DC3Partial gives its choice), so that
	// models of different seeds share one conditioning of the completion;
	// nil draws them from Seed. The initial weights, the shuffling and the
	// dropout masks of a Seed are the same with or without Partial.
	Partial []int
	// Progress receives one line per LogEvery epochs (default os.Stderr,
	// every ⌈Epochs/20⌉); Quiet suppresses it.
	Progress io.Writer
	Quiet    bool
	LogEvery int
	// Checkpoint makes Fit write checkpoints from which Resume (or
	// ResumeNewton) continues an interrupted run bit for bit; the zero
	// value writes none. See Checkpoint.
	Checkpoint Checkpoint
}

// BatchNorm's constants: PyTorch's BatchNorm1d defaults, which DC3 uses.
const (
	// BatchNormEps is added to the variance before its square root.
	BatchNormEps = 1e-5
	// BatchNormMomentum is the weight of a batch's statistics in the
	// running estimates: r ← (1 − m)·r + m·batch.
	BatchNormMomentum = 0.1
)

// completion maps the inputs and the predicted variables to the full
// prediction, in the graph and in plain Go.
type completion interface {
	node(x, yp *gorgonia.Node) (*gorgonia.Node, error)
	complete(x, yp *mat.Dense) (*mat.Dense, error)
}

// Model is a DC3 network for one problem instance.
type Model struct {
	cfg    Config
	nIn    int // inputs: N_C for the paper's problems, the loads for ACOPF
	nO, nC int // outputs and completed variables
	// lossFn is the training loss of a batch, summed over its samples.
	lossFn   func(x, y *gorgonia.Node) (*gorgonia.Node, error)
	partial  []int // indices of the predicted variables
	comp     completion
	g        *gorgonia.ExprGraph
	net      *network
	x, loss  *gorgonia.Node
	vm       gorgonia.VM
	solver   *adam.Solver
	perm     []int     // partial variables first, then the completed ones
	pcg      *rand.PCG // rnd's state, saved by checkpoints
	rnd      *rand.Rand
	trainDur time.Duration

	// Checkpointing (checkpoint.go).
	kind    string    // "linear" or "newton": the completion
	cond    float64   // cond₂(C_o) of a linear completion, 0 for Newton's
	problem string    // the problem's fingerprint (problemFingerprint)
	resumed *fitState // the interrupted Fit call a Resume restored
	now     func() time.Time
	// afterBatch, when set, runs after every batch of Fit (and after the
	// checkpoint that batch may write); an error stops Fit. Tests
	// interrupt training with it.
	afterBatch func() error
}

// Epoch is one epoch of training: the mean objective per sample over its
// batches (for NewACOPF's model, the mean ACOPFLoss: the objective plus
// the weighted norms), measured before each step in training mode
// (BatchNorm on the batch's statistics, Dropout on), so it differs from
// the objective of Predict's predictions.
type Epoch struct {
	Epoch     int
	Objective float64
}

// New builds a DC3 model with linear completion for p. The partial
// variables are N_O − N_C columns of C chosen uniformly at random from
// Seed, as in DC3's code; it returns an error if the remaining square
// block C_o is numerically singular (condition number above 1e12).
func New(p *problems.NonconvexLinear, cfg Config) (*Model, error) {
	if p == nil {
		return nil, errors.New("dc3: nil problem")
	}
	m, err := newModel(p.NC, p.NO, p.NC, cfg)
	if err != nil {
		return nil, err
	}
	m.lossFn = objectiveSum(p.SineQuadratic)
	m.kind, m.problem = kindLinear, problemFingerprint(kindLinear, p.SineQuadratic, p.NC, p.C)
	k := p.NO - p.NC
	other := m.other()
	co := mat.NewDense(p.NC, p.NC, nil)
	cp := mat.NewDense(p.NC, k, nil)
	for i := range p.NC {
		for j, col := range other {
			co.Set(i, j, p.C.At(i, col))
		}
		for j, col := range m.partial {
			cp.Set(i, j, p.C.At(i, col))
		}
	}
	var lu mat.LU
	lu.Factorize(co)
	if lu.Cond() > 1e12 {
		return nil, errors.New("dc3: the completed block of C is numerically singular")
	}
	m.cond = mat.Cond(co, 2)
	// y_o = C_o⁻¹x − C_o⁻¹C_p y_p, scattered into y.
	var inv, m2 mat.Dense
	if err := inv.Inverse(co); err != nil {
		return nil, fmt.Errorf("dc3: %w", err)
	}
	m2.Mul(&inv, cp)
	lc := &linearCompletion{kx: mat.NewDense(p.NC, p.NO, nil), ky: mat.NewDense(k, p.NO, nil)}
	for j, col := range other {
		for i := range p.NC {
			lc.kx.Set(i, col, inv.At(j, i))
		}
		for i := range k {
			lc.ky.Set(i, col, -m2.At(j, i))
		}
	}
	for i, col := range m.partial {
		lc.ky.Set(i, col, 1)
	}
	m.comp = lc
	if err := m.build(); err != nil {
		return nil, err
	}
	return m, nil
}

// NewNewton builds a DC3 model with Newton completion for the equalities
// c (N_C of them, on N_O = len(obj.Q) outputs, with N_C inputs) and the
// objective obj; NewNonconvexQuadratic's instances are its use. The
// partial variables are chosen as by New. See NewtonCompletion for the
// completion and its gradient.
func NewNewton(obj problems.SineQuadratic, c enforce.Constraint, cfg Config) (*Model, error) {
	if c == nil {
		return nil, errors.New("dc3: nil constraint")
	}
	nx, nO, nC := c.Dims()
	if nO != len(obj.Q) || nx != nC {
		return nil, fmt.Errorf("dc3: the constraint has nx = %d, ny = %d, nc = %d; want ny = %d = len(Q) and nx = nc", nx, nO, nC, len(obj.Q))
	}
	m, err := newModel(nC, nO, nC, cfg)
	if err != nil {
		return nil, err
	}
	m.lossFn = objectiveSum(obj)
	m.kind, m.problem = kindNewton, problemFingerprint(kindNewton, obj, nC, nil)
	m.comp = &NewtonCompletion{C: c, Partial: m.partial, Other: m.other()}
	if err := m.build(); err != nil {
		return nil, err
	}
	return m, nil
}

// objectiveSum is the loss of the paper's problems: the objective summed
// over the batch (DC3 back-propagates train_loss.sum(); the completion
// meets the equalities and there are no inequalities).
func objectiveSum(obj problems.SineQuadratic) func(x, y *gorgonia.Node) (*gorgonia.Node, error) {
	return func(_, y *gorgonia.Node) (*gorgonia.Node, error) {
		f, err := obj.ObjectiveNode(y)
		if err != nil {
			return nil, err
		}
		return gorgonia.Sum(f)
	}
}

// newModel validates cfg, applies its defaults and draws the partial
// variables, for a network from nIn inputs to the nO − nC partial
// variables of nO outputs.
func newModel(nIn, nO, nC int, cfg Config) (*Model, error) {
	if nC >= nO {
		return nil, fmt.Errorf("dc3: N_C = %d ≥ N_O = %d leaves nothing to predict", nC, nO)
	}
	if cfg.Hidden == nil {
		cfg.Hidden = []int{200, 200}
	}
	if cfg.Dropout == 0 {
		cfg.Dropout = 0.2
	}
	if cfg.NoDropout {
		cfg.Dropout = 0
	}
	if cfg.LearnRate == 0 {
		cfg.LearnRate = 1e-4
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 200
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = 3500
	}
	if cfg.LogEvery == 0 {
		cfg.LogEvery = (cfg.Epochs + 19) / 20
	}
	if cfg.Progress == nil {
		cfg.Progress = os.Stderr
	}
	if !(cfg.LearnRate > 0) || math.IsInf(cfg.LearnRate, 0) || cfg.BatchSize < 2 || cfg.Epochs < 0 || cfg.LogEvery < 0 ||
		!(cfg.Dropout >= 0 && cfg.Dropout < 1) {
		return nil, fmt.Errorf("dc3: invalid Config (LearnRate %v, BatchSize %d, Epochs %d, LogEvery %d, Dropout %v): "+
			"want a finite LearnRate > 0, BatchSize ≥ 2 (BatchNorm needs two samples), Epochs, LogEvery ≥ 0 and 0 ≤ Dropout < 1",
			cfg.LearnRate, cfg.BatchSize, cfg.Epochs, cfg.LogEvery, cfg.Dropout)
	}
	for _, h := range cfg.Hidden {
		if h <= 0 {
			return nil, fmt.Errorf("dc3: hidden widths must be positive, got %v", cfg.Hidden)
		}
	}
	if err := cfg.Checkpoint.validate(); err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, nIn: nIn, nO: nO, nC: nC, pcg: rand.NewPCG(cfg.Seed, 0xdc3), now: time.Now}
	m.rnd = rand.New(m.pcg)
	m.perm = m.rnd.Perm(nO) // drawn with Partial too, so that the weights are the Seed's
	if cfg.Partial != nil {
		perm, err := partialPerm(cfg.Partial, nO, nC)
		if err != nil {
			return nil, err
		}
		m.perm = perm
		m.cfg.Partial = slices.Clone(cfg.Partial)
	}
	m.partial = m.perm[:nO-nC]
	return m, nil
}

// partialPerm returns the partial variables followed by the other ones in
// increasing order, or an error unless partial holds nO − nC distinct
// indices in 0..nO−1.
func partialPerm(partial []int, nO, nC int) ([]int, error) {
	if len(partial) != nO-nC {
		return nil, fmt.Errorf("dc3: Config.Partial has %d indices, want N_O − N_C = %d", len(partial), nO-nC)
	}
	in := make([]bool, nO)
	for _, j := range partial {
		if j < 0 || j >= nO || in[j] {
			return nil, fmt.Errorf("dc3: Config.Partial %v: want distinct indices in 0..%d", partial, nO-1)
		}
		in[j] = true
	}
	perm := slices.Clone(partial)
	for j := range nO {
		if !in[j] {
			perm = append(perm, j)
		}
	}
	return perm, nil
}

// other returns the completed variables.
func (m *Model) other() []int { return m.perm[m.nO-m.nC:] }

// linearCompletion is y = x·Kx + y_p·Ky.
type linearCompletion struct {
	kx, ky *mat.Dense
}

func (lc *linearCompletion) node(x, yp *gorgonia.Node) (*gorgonia.Node, error) {
	g := x.Graph()
	kx := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithName("Kx"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(lc.kx.Dims()), tensor.WithBacking(lc.kx.RawMatrix().Data))))
	ky := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithName("Ky"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(lc.ky.Dims()), tensor.WithBacking(lc.ky.RawMatrix().Data))))
	a, err := gorgonia.Mul(x, kx)
	if err != nil {
		return nil, err
	}
	b, err := gorgonia.Mul(yp, ky)
	if err != nil {
		return nil, err
	}
	return gorgonia.Add(a, b)
}

func (lc *linearCompletion) complete(x, yp *mat.Dense) (*mat.Dense, error) {
	n, _ := x.Dims()
	_, nO := lc.kx.Dims()
	y := mat.NewDense(n, nO, nil)
	y.Mul(x, lc.kx)
	var t mat.Dense
	t.Mul(yp, lc.ky)
	y.Add(y, &t)
	return y, nil
}

// build adds the training graph for one batch: the network in training
// mode, the completion and the summed objective (DC3 back-propagates
// train_loss.sum()).
func (m *Model) build() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("dc3: building the graph: gorgonia panicked: %v", r)
		}
	}()
	bs := m.cfg.BatchSize
	m.g = gorgonia.NewGraph()
	sizes := append(append([]int{m.nIn}, m.cfg.Hidden...), m.nO-m.nC)
	if m.net, err = newNetwork(m.g, sizes, bs, m.cfg.Dropout, m.rnd); err != nil {
		return err
	}
	m.x = gorgonia.NewMatrix(m.g, tensor.Float64, gorgonia.WithShape(bs, m.nIn), gorgonia.WithName("x"))
	yp, err := m.net.forward(m.x)
	if err != nil {
		return err
	}
	y, err := m.comp.node(m.x, yp)
	if err != nil {
		return err
	}
	if m.loss, err = m.lossFn(m.x, y); err != nil {
		return err
	}
	if _, err = gorgonia.Grad(m.loss, m.net.learnables()...); err != nil {
		return err
	}
	m.vm = gorgonia.NewTapeMachine(m.g, gorgonia.BindDualValues(m.net.learnables()...))
	m.solver = &adam.Solver{Eta: m.cfg.LearnRate}
	return nil
}

// Partial returns the indices of the variables the network predicts.
func (m *Model) Partial() []int { return append([]int(nil), m.partial...) }

// Cond returns the 2-norm condition number of C_o, the columns of C of
// the completed variables, for a model with linear completion (New), and
// 0 for one with Newton completion. The completion y_o = C_o⁻¹(x − C_p y_p)
// passes the network's errors on through C_o⁻¹; RESULTS.md §5.3.1
// measures how DC3's result moves with Cond.
func (m *Model) Cond() float64 { return m.cond }

// TrainTime returns the wall-clock time spent in Fit, including the time
// recorded in the checkpoint the model was resumed from: for a resumed
// run, the training time of the whole run, not of this process alone.
func (m *Model) TrainTime() time.Duration { return m.trainDur }

// Fit trains on the inputs x (n×N_C, n ≥ BatchSize, all finite) for
// Config.Epochs epochs of shuffled batches, one Adam step per batch, and
// returns the per-epoch mean objective. It returns an error for bad input
// or when the objective becomes non-finite; the model is then as it was
// after its last completed step and can be trained again.
//
// With Config.Checkpoint set, Fit writes checkpoints as it trains (see
// Checkpoint). On a model returned by Resume or ResumeNewton, the first
// Fit call completes the interrupted call instead: it needs the same x,
// trains the remaining batches and returns the call's whole history.
func (m *Model) Fit(x *mat.Dense) ([]Epoch, error) {
	if x == nil {
		return nil, errors.New("dc3: Fit: nil x")
	}
	n, nx := x.Dims()
	bs := m.cfg.BatchSize
	if nx != m.nIn || n < bs {
		return nil, fmt.Errorf("dc3: Fit: x is %d×%d, want at least %d rows of %d", n, nx, bs, m.nIn)
	}
	if err := checkFinite("Fit", x); err != nil {
		return nil, err
	}
	batches := n / bs
	run, err := m.startRun(x, batches)
	if err != nil {
		return nil, err
	}
	hist := run.History
	if run.Epochs == m.cfg.Epochs {
		return hist, nil // resumed after the end of the call
	}
	start := m.now()
	defer func() { m.trainDur += m.now().Sub(start) }()
	ck := m.newCheckpointer(run, start)
	xb := tensor.New(tensor.WithShape(bs, nx), tensor.WithBacking(make([]float64, bs*nx)))
	buf := xb.Data().([]float64)
	hist = slices.Grow(hist, m.cfg.Epochs-len(hist))
	first, order, sum, steps := run.Batch, run.Order, 0.0, run.Steps
	if len(run.Sum) == 1 {
		sum = run.Sum[0]
	}
	for e := run.Epochs + 1; e <= m.cfg.Epochs; e++ {
		if first == 0 {
			order = m.rnd.Perm(n)
		}
		for b := first; b < batches; b++ {
			for i, r := range order[b*bs : (b+1)*bs] {
				copy(buf[i*nx:(i+1)*nx], x.RawRowView(r))
			}
			loss, err := m.step(xb)
			if err != nil {
				return hist, fmt.Errorf("dc3: epoch %d: %w", e, err)
			}
			sum += loss / float64(bs)
			steps++
			if b+1 == batches {
				hist = append(hist, Epoch{Epoch: e, Objective: sum / float64(steps)})
				if !m.cfg.Quiet && (e%m.cfg.LogEvery == 0 || e == m.cfg.Epochs) {
					fmt.Fprintf(m.cfg.Progress, "dc3 epoch %5d  objective %.5f  (%v)\n", e, sum/float64(steps), m.now().Sub(start).Round(time.Millisecond))
				}
				sum, steps = 0, 0
				if ck != nil && (e == m.cfg.Epochs || ck.due()) {
					if err := ck.write(e, 0, nil, 0, 0, hist); err != nil {
						return hist, err
					}
				}
			} else if ck.due() {
				if err := ck.write(e-1, b+1, order, sum, steps, hist); err != nil {
					return hist, err
				}
			}
			if m.afterBatch != nil {
				if err := m.afterBatch(); err != nil {
					return hist, err
				}
			}
		}
		first = 0
	}
	return hist, nil
}

// step runs the graph on the batch xb with fresh dropout masks and, if the
// summed objective it returns is finite, takes an Adam step and updates
// BatchNorm's running estimates. The machine is reset whatever happens,
// so that a failed step does not stop later ones.
func (m *Model) step(xb *tensor.Dense) (float64, error) {
	defer m.vm.Reset()
	if err := gorgonia.Let(m.x, xb); err != nil {
		return 0, err
	}
	m.net.drawMasks(m.rnd)
	if err := m.vm.RunAll(); err != nil {
		return 0, err
	}
	loss := m.loss.Value().Data().(float64)
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("the objective is %v", loss)
	}
	ps := m.net.learnables()
	w, g := make([]any, len(ps)), make([]any, len(ps))
	for i, p := range ps {
		w[i] = p.Value().Data()
		gv, err := p.Grad()
		if err != nil {
			return loss, err
		}
		g[i] = gv.Data()
	}
	if err := m.solver.Step(w, g); err != nil {
		return loss, err
	}
	m.net.updateRunning()
	return loss, nil
}

// checkFinite returns an error naming the first non-finite entry of x.
func checkFinite(where string, x *mat.Dense) error {
	n, _ := x.Dims()
	for i := range n {
		for j, v := range x.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("dc3: %s: x[%d][%d] = %v, want finite inputs", where, i, j, v)
			}
		}
	}
	return nil
}

// Predict returns the completed predictions y (n×N_O) for inputs x,
// computed in plain Go from the current weights in evaluation mode
// (BatchNorm with its running estimates, no Dropout): c(x, y) = 0 up to
// rounding (linear completion) or to NewtonCompletion's tolerance. It
// returns an error for a nil x, a wrong width or a non-finite entry, and
// if a prediction is not finite (an input so large that the network
// overflows).
func (m *Model) Predict(x *mat.Dense) (*mat.Dense, error) {
	if x == nil {
		return nil, errors.New("dc3: Predict: nil x")
	}
	_, nx := x.Dims()
	if nx != m.nIn {
		return nil, fmt.Errorf("dc3: Predict: x has %d columns, want %d", nx, m.nIn)
	}
	if err := checkFinite("Predict", x); err != nil {
		return nil, err
	}
	y, err := m.comp.complete(x, m.net.predict(x))
	if err != nil {
		return nil, err
	}
	n, _ := y.Dims()
	for i := range n {
		for _, v := range y.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("dc3: Predict: the prediction for x[%d] is not finite (%v)", i, v)
			}
		}
	}
	return y, nil
}

// Close releases the training machine.
func (m *Model) Close() error { return m.vm.Close() }
