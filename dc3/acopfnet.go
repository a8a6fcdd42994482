package dc3

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/losses"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// DC3's ACOPF training settings (locuslab/DC3, default_args.py,
// method_default_args for "acopf"), the defaults of NewACOPF.
const (
	// ACOPFLearnRate is DC3's lr for ACOPF.
	ACOPFLearnRate = 1e-3
	// ACOPFEpochs is DC3's epochs for ACOPF.
	ACOPFEpochs = 1000
	// ACOPFEqWeight and ACOPFIneqWeight are DC3's softWeight (10) times
	// softWeightEqFrac (0.5) and times 1 − softWeightEqFrac.
	ACOPFEqWeight   = 5
	ACOPFIneqWeight = 5
)

// ACOPFLoss is the training loss of NewACOPF, DC3's total_loss (method.py)
// on the completed (and, with Correction, corrected) point y of each
// sample:
//
//	f(x, y) + EqWeight·‖c(x, y)‖₂ + IneqWeight·‖max(0, g(x, y))‖₂,
//
// c the power flow (acopf.Model.PowerFlow) and g the voltage and
// generation limits (acopf.Model.Inequalities), summed over the batch (DC3
// back-propagates train_loss.sum()). The norms are not squared: DC3's code
// takes torch.norm of the residuals, and its published ACOPF numbers come
// from that code.
type ACOPFLoss struct {
	// Objective returns the objective of each sample of a batch: a
	// vector of n values for the loads x (n×nx) and the points y (n×ny),
	// differentiable in y (DC3's ACOPF objective is the generation cost
	// scaled by the square of the generators' mean MVA base). Required.
	Objective func(x, y *gorgonia.Node) (*gorgonia.Node, error)
	// EqWeight and IneqWeight weigh the two norms; both must be finite
	// and non-negative. DC3's values are ACOPFEqWeight and
	// ACOPFIneqWeight; zero drops a term.
	EqWeight, IneqWeight float64
	// Correction, if not nil, is DC3's training-time correction, applied
	// to the completed point in the training graph (CorrectNode: its
	// gradient is the identity unless Correction.ExactGradient, which
	// makes it DC3's; see there). Predict never
	// applies it: the caller applies the test-time correction
	// (ACOPFCompletion.Correct) to Predict's points, as DC3 does.
	Correction *Correction
}

// validate checks l for a completion with nx inputs and ny outputs.
func (l ACOPFLoss) validate(nx, ny int) error {
	switch {
	case l.Objective == nil:
		return errors.New("dc3: ACOPFLoss.Objective is nil")
	case !(l.EqWeight >= 0) || math.IsInf(l.EqWeight, 1) || !(l.IneqWeight >= 0) || math.IsInf(l.IneqWeight, 1):
		return fmt.Errorf("dc3: ACOPFLoss weights %v and %v: want finite and non-negative", l.EqWeight, l.IneqWeight)
	}
	if l.Correction != nil {
		return l.Correction.validate(nx, ny)
	}
	return nil
}

// NewACOPF builds DC3's ACOPF model for the grid of am (locuslab/DC3,
// method.py NNSolver with useCompl on an "acopf" problem): DC3's network
// (Config: Linear, BatchNorm, ReLU and Dropout per hidden layer, Kaiming
// initialisation, raw inputs) maps the loads x to one output per partial
// variable of ACOPFCompletion (Pg of the non-reference generators, Vm of
// the generator buses), a sigmoid maps each into its bounds,
// y_p = lo + (hi − lo)·σ(z) (DC3's complete_partial), and the completion
// solves the power flow for the other variables. Fit trains it on loss
// (ACOPFLoss), one Adam step per batch; Predict returns the completed
// points in evaluation mode. The partial variables are the completion's:
// cfg.Partial must be nil or equal to ACOPFCompletion.Partial.
//
// Zero fields of cfg mean Config's defaults, except LearnRate and Epochs,
// which default to DC3's ACOPF values, ACOPFLearnRate and ACOPFEpochs.
// NewACOPF returns an error for a nil model, an invalid loss or Config,
// and where NewACOPFCompletion does.
func NewACOPF(am *acopf.Model, loss ACOPFLoss, cfg Config) (*Model, error) {
	if am == nil {
		return nil, errors.New("dc3: nil ACOPF model")
	}
	comp, err := NewACOPFCompletion(am)
	if err != nil {
		return nil, err
	}
	nx, ny := am.Dims()
	if err := loss.validate(nx, ny); err != nil {
		return nil, err
	}
	partial := comp.Partial()
	if cfg.Partial != nil && !slices.Equal(cfg.Partial, partial) {
		return nil, fmt.Errorf("dc3: NewACOPF: Config.Partial %v: the partial variables are the completion's, %v", cfg.Partial, partial)
	}
	cfg.Partial = partial
	if cfg.LearnRate == 0 {
		cfg.LearnRate = ACOPFLearnRate
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = ACOPFEpochs
	}
	m, err := newModel(nx, ny, ny-len(partial), cfg)
	if err != nil {
		return nil, err
	}
	m.comp = &acopfNet{comp: comp, corr: loss.Correction}
	hinge := &hingeConstraint{g: am.Inequalities()}
	pf := am.PowerFlow()
	bs := float64(m.cfg.BatchSize)
	m.lossFn = func(x, y *gorgonia.Node) (*gorgonia.Node, error) {
		f, err := loss.Objective(x, y)
		if err != nil {
			return nil, err
		}
		if f.Shape().TotalSize() != m.cfg.BatchSize {
			return nil, fmt.Errorf("dc3: ACOPFLoss.Objective returned shape %v, want %d values", f.Shape(), m.cfg.BatchSize)
		}
		total, err := gorgonia.Sum(f)
		if err != nil {
			return nil, err
		}
		// losses.Residual is λ·(1/n)Σ‖·‖₂: λ = weight·n sums over the batch.
		for _, p := range []struct {
			c enforce.Constraint
			w float64
		}{{pf, loss.EqWeight}, {hinge, loss.IneqWeight}} {
			if p.w == 0 {
				continue
			}
			r, err := losses.Residual(p.c, x, y, p.w*bs)
			if err != nil {
				return nil, err
			}
			if total, err = gorgonia.Add(total, r); err != nil {
				return nil, err
			}
		}
		return total, nil
	}
	m.kind, m.problem = kindACOPF, acopfFingerprint(am, comp, loss)
	if err := m.build(); err != nil {
		return nil, err
	}
	return m, nil
}

// ResumeACOPF is Resume for DC3's ACOPF model (NewACOPF): it continues the
// run of NewACOPF(am, loss, cfg) whose checkpoint is in dir. The grid
// (its name, sizes, bounds, loads and costs), the loss's weights and the
// correction's settings are compared with the checkpoint's; the
// objective is code, and must be the one the run was started with.
func ResumeACOPF(dir string, am *acopf.Model, loss ACOPFLoss, cfg Config) (*Model, error) {
	return resume(dir, cfg, func(cfg Config) (*Model, error) { return NewACOPF(am, loss, cfg) })
}

// acopfNet is the completion of NewACOPF's model: the sigmoid into the
// bounds, DC3's ACOPF completion and, in the training graph, the
// training-time correction.
type acopfNet struct {
	comp *ACOPFCompletion
	corr *Correction
}

func (a *acopfNet) node(x, z *gorgonia.Node) (*gorgonia.Node, error) {
	g := x.Graph()
	row := func(v []float64, name string) *gorgonia.Node {
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(1, len(v)), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(1, len(v)), tensor.WithBacking(slices.Clone(v)))))
	}
	s, err := gorgonia.Sigmoid(z)
	if err != nil {
		return nil, err
	}
	rows := []byte{0}
	if s, err = gorgonia.BroadcastHadamardProd(s, row(a.comp.span, "dc3_acopf_span"), nil, rows); err != nil {
		return nil, err
	}
	yp, err := gorgonia.BroadcastAdd(s, row(a.comp.lo, "dc3_acopf_lo"), nil, rows)
	if err != nil {
		return nil, err
	}
	y, err := a.comp.Node(x, yp)
	if err != nil || a.corr == nil {
		return y, err
	}
	return a.comp.CorrectNode(x, y, *a.corr)
}

// complete maps the network's outputs z into the bounds and completes
// each sample from the flat start, as the training graph does.
func (a *acopfNet) complete(x, z *mat.Dense) (*mat.Dense, error) {
	n, k := z.Dims()
	yp := mat.NewDense(n, k, nil)
	for i := range n {
		for j, v := range z.RawRowView(i) {
			yp.Set(i, j, a.comp.lo[j]+a.comp.span[j]/(1+math.Exp(-v)))
		}
	}
	return a.comp.CompleteFlat(x, yp)
}

// hingeConstraint is max(0, g(x, y)) as a constraint, with the rows of
// the inequalities that hold zeroed in its Jacobian, so that
// losses.Residual of it is ‖max(0, g)‖₂ (DC3's ineq_dist).
type hingeConstraint struct{ g enforce.Constraint }

func (h *hingeConstraint) Dims() (nx, ny, nc int) { return h.g.Dims() }

func (h *hingeConstraint) Eval(x, y, c, jy []float64) {
	h.g.Eval(x, y, c, jy)
	_, ny, _ := h.g.Dims()
	for i, v := range c {
		if v < 0 {
			c[i] = 0
			if jy != nil {
				clear(jy[i*ny : (i+1)*ny])
			}
		}
	}
}

// acopfFingerprint returns the hex SHA-256 of the grid (name, sizes,
// loads, the partial variables and their bounds, the generators' costs),
// the loss's weights and the correction's settings.
func acopfFingerprint(am *acopf.Model, comp *ACOPFCompletion, loss ACOPFLoss) string {
	partial := comp.Newton.Partial
	h := newHasher()
	h.h.Write([]byte(kindACOPF))
	h.h.Write([]byte(am.Case.Name))
	nx, ny := am.Dims()
	h.int(nx)
	h.int(ny)
	h.int(len(partial))
	for _, k := range partial {
		h.int(k)
	}
	h.floats(am.Loads())
	h.floats(comp.lo)
	h.floats(comp.span)
	for _, g := range am.Case.Gens {
		h.floats(g.Cost.Poly)
	}
	h.floats([]float64{loss.EqWeight, loss.IneqWeight})
	if c := loss.Correction; c != nil {
		h.floats([]float64{c.LearnRate, c.Momentum, float64(c.Steps), c.Eps})
		if c.ExactGradient {
			h.h.Write([]byte("exact gradient"))
		}
	}
	return h.sum()
}
