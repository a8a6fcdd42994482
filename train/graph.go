package train

import (
	"errors"
	"fmt"
	"sync"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/losses"
)

// Objective builds a per-sample objective f(x, y) on a graph for inputs x
// (N×nx, original units) and solutions y (N×ny). It returns N per-sample
// values (shape (N) or (N, 1)) or their mean as a scalar; see
// losses.Objective.
type Objective func(x, y *gorgonia.Node) (*gorgonia.Node, error)

// Graph is a training graph of a Model for batches of a fixed size:
//
//	X ─(standardise)→ backbone ─(un-standardise)→ YHat ─(AdaNP)→ YTilde
//	Loss = Task(YTilde) [+ λ_D·displacement + λ_C·residual | + soft penalty]
//
// Its learnable nodes share their values with the model, so a solver step
// on one graph is seen by every other graph of the model and by Predict.
// Fit builds and runs Graphs; a custom training loop does the same:
//
//	g, _ := model.NewGraph(batch)
//	vm := gorgonia.NewTapeMachine(g.G, gorgonia.BindDualValues(g.Learnables...))
//	solver := gorgonia.NewAdamSolver(gorgonia.WithLearnRate(1e-3))
//	for each batch (xb, yb) {
//		g.SetBatch(xb, yb)
//		vm.RunAll()
//		solver.Step(gorgonia.NodesToValueGrads(g.Learnables))
//		vm.Reset()
//	}
//	pred, stats, _ := model.Predict(xTest)
//
// A machine adds the gradients of each run to those of the previous runs;
// gorgonia's solvers apply and clear them in Step.
type Graph struct {
	// G is the expression graph.
	G *gorgonia.ExprGraph
	// X and Y are the input nodes of a batch: inputs in original units and
	// labels in the units of the task loss (standardised when the model
	// standardises). Y is nil in a graph built by NewObjectiveGraph.
	// Bind them with SetBatch, which also tells the activation rule the
	// labels.
	X, Y *gorgonia.Node
	// YHat is the backbone output ŷ and YTilde the output the task loss
	// sees: AdaNP(x, ŷ) in ENFORCE mode, ŷ otherwise. Both are in original
	// units. A TapeMachine may reuse their memory for later instructions,
	// so read their values of the last run with Outputs.
	YHat, YTilde *gorgonia.Node
	// Task is the task loss ℓ_T and Loss the total loss, whose gradient
	// with respect to Learnables the graph holds.
	Task, Loss *gorgonia.Node
	// Learnables are the backbone's learnable nodes, in the order of
	// Model.Params (for an MLP W0, b0, W1, b1, …), followed by θ (a
	// vector node named ThetaName, an input of the AdaNP node) when the
	// model learns its projection weights.
	Learnables gorgonia.Nodes
	// Op is the AdaNP operation of YTilde (nil unless Mode is ENFORCE);
	// after a run, Op.Stats() and Op.Projected() describe it.
	Op *enforce.Op

	m       *Model
	sy      *layers.Standardizer // the output scaling built into the graph
	batch   int
	yhatV   *mat.Dense // ŷ and ỹ of the last run, filled by taps
	ytildeV *mat.Dense
	xt, yt  *tensor.Dense // values bound to X and Y
	cur     *mat.Dense    // the current inputs (a view of a float64 xt)
	labels  *mat.Dense    // the current labels in original units
	scaled  *mat.Dense    // the current labels standardised, or nil
	invVar  []float64     // 1/σ_j² of the labels, or nil
	lambdaC float64       // λ_C of the residual term and the objective gate
	obj     *objectiveEval
	mu      sync.Mutex // guards gateErr
	gateErr error
}

// NewGraph returns a supervised training graph for batches of batch rows:
// the task loss is (1/N)Σ‖y − ỹ‖², the paper's ℓ_T for regression. With
// the activation rule on, the graph's Gate projects a batch only when one
// NP step does not increase that measure against the batch labels given
// to SetBatch. A model that standardises must have its Standardizers set
// (Fit, FitStandardizers or SetStandardizers) before.
func (m *Model) NewGraph(batch int) (*Graph, error) {
	if m == nil {
		return nil, errNilModel
	}
	if m.cfg.Standardize && (m.sx == nil || m.sy == nil) {
		return nil, errors.New("train: NewGraph: the model standardises but has no input and output Standardizers (call FitStandardizers)")
	}
	return m.newGraph(batch, nil, false)
}

// NewObjectiveGraph returns an unsupervised training graph for batches of
// batch rows whose task loss is the mean objective (1/N)Σ f(x_i, ỹ_i)
// (losses.Objective). With the activation rule on, a batch is projected
// only when one NP step does not increase the measure
// (1/N)Σ f(x_i, y_i) + λ_C·(1/N)Σ‖c(x_i, y_i)‖, evaluated on a small
// auxiliary graph. A model that standardises must have its input
// Standardizer set before; an output Standardizer, if set, maps the
// network's output to original units, in which the objective, the
// displacement and the constraint are evaluated.
func (m *Model) NewObjectiveGraph(batch int, objective Objective) (*Graph, error) {
	if m == nil {
		return nil, errNilModel
	}
	if objective == nil {
		return nil, errors.New("train: NewObjectiveGraph: nil objective")
	}
	if m.cfg.Standardize && m.sx == nil {
		return nil, errors.New("train: NewObjectiveGraph: the model standardises but has no input Standardizer (call FitStandardizers)")
	}
	return m.newGraph(batch, objective, false)
}

// newGraph builds a training graph; warm builds the graph of an ENFORCE
// model's warm-up epochs (Config.Warmup): no AdaNP, the task loss on ŷ
// alone.
func (m *Model) newGraph(batch int, objective Objective, warm bool) (gr *Graph, err error) {
	defer func() {
		if err == nil {
			// A training graph steps the shared weights (ErrNotFitted).
			m.fitted = true
		}
	}()
	if batch <= 0 {
		return nil, fmt.Errorf("train: batch size %d must be positive", batch)
	}
	defer func() {
		if r := recover(); r != nil {
			gr, err = nil, fmt.Errorf("train: building the graph: gorgonia panicked: %v", r)
		}
	}()
	cfg := m.cfg
	supervised := objective == nil
	g := gorgonia.NewGraph()
	gr = &Graph{G: g, m: m, sy: m.sy, batch: batch}
	gr.xt = newTensor(cfg.dtype, batch, cfg.nx)
	if d, ok := gr.xt.Data().([]float64); ok {
		gr.cur = mat.NewDense(batch, cfg.nx, d)
	} else {
		gr.cur = mat.NewDense(batch, cfg.nx, nil)
	}
	gr.X = gorgonia.NewMatrix(g, cfg.dtype, gorgonia.WithShape(batch, cfg.nx), gorgonia.WithName("x"), gorgonia.WithValue(gr.xt))
	if supervised {
		gr.yt = newTensor(cfg.dtype, batch, cfg.ny)
		gr.Y = gorgonia.NewMatrix(g, cfg.dtype, gorgonia.WithShape(batch, cfg.ny), gorgonia.WithName("y"), gorgonia.WithValue(gr.yt))
		gr.labels = mat.NewDense(batch, cfg.ny, nil)
		if m.sy != nil {
			gr.scaled = mat.NewDense(batch, cfg.ny, nil)
		}
	}

	net, learnables, err := m.attach(g)
	if err != nil {
		return nil, err
	}
	gr.Learnables = learnables
	gr.lambdaC = cfg.lambdaC
	if !supervised {
		gr.lambdaC = cfg.lambdaCObj
	}

	in := gr.X
	if m.sx != nil {
		if in, err = m.sx.TransformNode(g, gr.X); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	z, err := forwardNode(net, in, cfg.ny)
	if err != nil {
		return nil, err
	}
	gr.YHat = z
	if m.sy != nil {
		if gr.YHat, err = m.sy.InverseNode(g, z); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}

	gr.YTilde = gr.YHat
	project := cfg.Mode == ENFORCE && !warm
	if project {
		var opts []enforce.ApplyOption
		if !cfg.AlwaysProject {
			if supervised {
				opts = append(opts, enforce.WithGate(gr.supervisedGate))
			} else {
				if gr.obj, err = newObjectiveEval(batch, cfg.nx, cfg.ny, objective); err != nil {
					return nil, err
				}
				opts = append(opts, enforce.WithGate(gr.objectiveGate))
			}
		}
		if cfg.learnsTheta() {
			opts = append(opts, enforce.WithTrainableWeights(learnables[len(learnables)-1]))
		}
		var xc *gorgonia.Node
		if cfg.constrainX {
			xc = gr.X
		}
		if gr.YTilde, err = m.train.Apply(xc, gr.YHat, opts...); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		gr.Op, _ = enforce.OpOf(gr.YTilde)
	}

	// A supervised model that standardises measures the task loss and
	// the displacement in the units the network predicts in, where ŷ is z
	// itself; an objective is measured in original units.
	yhatL, ytildeL := gr.YHat, gr.YTilde
	if supervised && m.sy != nil {
		yhatL, ytildeL = z, z
		if project {
			if ytildeL, err = m.sy.TransformNode(g, gr.YTilde); err != nil {
				return nil, fmt.Errorf("train: %w", err)
			}
		}
		gr.invVar = make([]float64, cfg.ny)
		for j, s := range m.sy.Std {
			gr.invVar[j] = 1 / (s * s)
		}
	}
	if supervised {
		gr.Task, err = losses.SumSquaredMean(ytildeL, gr.Y)
	} else {
		gr.Task, err = losses.Objective(objective, gr.X, gr.YTilde)
	}
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	terms := gorgonia.Nodes{gr.Task}
	switch {
	case project:
		if cfg.lambdaD > 0 {
			d, err := losses.Displacement(yhatL, ytildeL, cfg.lambdaD)
			if err != nil {
				return nil, fmt.Errorf("train: %w", err)
			}
			terms = append(terms, d)
		}
		if gr.lambdaC > 0 {
			r, err := losses.Residual(m.view.loss, gr.X, gr.YTilde, gr.lambdaC)
			if err != nil {
				return nil, fmt.Errorf("train: %w", err)
			}
			terms = append(terms, r)
		}
	case cfg.Mode == Soft:
		p, err := m.softTerm(gr.X, gr.YHat)
		if err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		terms = append(terms, p)
	}
	gr.Loss = terms[0]
	for _, t := range terms[1:] {
		if gr.Loss, err = gorgonia.Add(gr.Loss, t); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	if _, err := gorgonia.Grad(gr.Loss, gr.Learnables...); err != nil {
		return nil, fmt.Errorf("train: gradient: %w", err)
	}
	// Taps are not differentiable: gorgonia.Grad refuses graphs that hold
	// them, so they come last.
	if gr.yhatV, err = tap(gr.YHat); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	gr.ytildeV = gr.yhatV
	if gr.YTilde != gr.YHat {
		if gr.ytildeV, err = tap(gr.YTilde); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	return gr, nil
}

// Outputs returns copies of ŷ and ỹ (the values of YHat and YTilde, in
// original units) from the last run of the graph.
func (g *Graph) Outputs() (yhat, ytilde *mat.Dense) {
	return mat.DenseCopyOf(g.yhatV), mat.DenseCopyOf(g.ytildeV)
}

// Batch returns the number of rows the graph takes.
func (g *Graph) Batch() int { return g.batch }

// SetBatch binds a batch of inputs x (original units) and, for a
// supervised graph, labels y (original units; standardised here when the
// model standardises) to X and Y. Both must have Batch() rows and finite
// values; y must be nil for a graph built by NewObjectiveGraph. The data
// are copied.
func (g *Graph) SetBatch(x, y *mat.Dense) error {
	if g == nil || g.m == nil {
		return errors.New("train: SetBatch on a nil or zero Graph (build it with Model.NewGraph)")
	}
	m := g.m
	if err := m.checkData(x, y, g.Y != nil); err != nil {
		return err
	}
	if r, _ := x.Dims(); r != g.batch {
		return fmt.Errorf("train: the batch has %d rows, the graph takes %d", r, g.batch)
	}
	if g.Y == nil && y != nil {
		return errors.New("train: labels given to an objective graph")
	}
	g.cur.Copy(x)
	if g.Y != nil {
		g.labels.Copy(y)
	}
	g.bind()
	return nil
}

// setRows binds rows idx of x and y, which Fit has checked, as SetBatch
// does, without checking them again.
func (g *Graph) setRows(x, y *mat.Dense, idx []int) {
	for k, i := range idx {
		g.cur.SetRow(k, x.RawRowView(i))
		if g.Y != nil {
			g.labels.SetRow(k, y.RawRowView(i))
		}
	}
	g.bind()
}

// bind writes the current inputs and labels into the tensors bound to X
// and Y (standardising the labels when the model does, rounding to
// float32 in a float32 graph) and clears the activation rule's error.
func (g *Graph) bind() {
	if g.xt.Dtype() != tensor.Float64 {
		setTensor(g.xt, g.cur)
	}
	if g.Y != nil {
		yl := g.labels
		if g.sy != nil {
			g.sy.Transform(g.scaled, g.labels)
			yl = g.scaled
		}
		setTensor(g.yt, yl)
	}
	g.mu.Lock()
	g.gateErr = nil
	g.mu.Unlock()
}

// err returns an error recorded by the activation rule during the last
// run.
func (g *Graph) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gateErr
}

// supervisedGate is the activation rule for regression: project unless
// one NP step increases the squared error against the labels (in the
// units of the task loss).
func (g *Graph) supervisedGate(_, yhat, oneStep *mat.Dense) bool {
	return g.sse(oneStep) <= g.sse(yhat)
}

// sse returns Σ_i Σ_j w_j (a_ij − y_ij)² with w_j = 1/σ_j² (or 1).
func (g *Graph) sse(a *mat.Dense) float64 {
	r, c := a.Dims()
	var s float64
	for i := range r {
		ai, yi := a.RawRowView(i), g.labels.RawRowView(i)
		for j := range c {
			d := ai[j] - yi[j]
			if g.invVar != nil {
				d *= d * g.invVar[j]
			} else {
				d *= d
			}
			s += d
		}
	}
	return s
}

// objectiveGate is the activation rule for parametric optimisation:
// project unless one NP step increases mean f + λ_C·mean‖c‖.
func (g *Graph) objectiveGate(_, yhat, oneStep *mat.Dense) bool {
	before, err1 := g.measure(yhat)
	after, err2 := g.measure(oneStep)
	if err := errors.Join(err1, err2); err != nil {
		g.mu.Lock()
		g.gateErr = err
		g.mu.Unlock()
		return true
	}
	return after <= before
}

// measure returns (1/N)Σ f(x_i, y_i) + λ_C·(1/N)Σ‖c(x_i, y_i)‖ for the
// current inputs. With λ_C = 0 (LambdaC < 0) it does not evaluate c: the
// measure is the objective alone (TestObjectiveGateResidualTerm).
func (g *Graph) measure(y *mat.Dense) (float64, error) {
	f, err := g.obj.eval(g.cur, y)
	if err != nil {
		return 0, err
	}
	if g.lambdaC == 0 {
		return f, nil
	}
	res, err := g.m.view.meanNorm(g.cur, y)
	if err != nil {
		return 0, fmt.Errorf("train: the constraint residual: %w", err)
	}
	return f + g.lambdaC*res, nil
}

// objectiveEval evaluates the mean objective of a batch on a graph of its
// own.
type objectiveEval struct {
	xt, yt *tensor.Dense
	out    *gorgonia.Node
	vm     gorgonia.VM
}

func newObjectiveEval(batch, nx, ny int, f Objective) (*objectiveEval, error) {
	g := gorgonia.NewGraph()
	o := &objectiveEval{
		xt: tensor.New(tensor.WithShape(batch, nx), tensor.WithBacking(make([]float64, batch*nx))),
		yt: tensor.New(tensor.WithShape(batch, ny), tensor.WithBacking(make([]float64, batch*ny))),
	}
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(batch, nx), gorgonia.WithName("x"), gorgonia.WithValue(o.xt))
	y := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(batch, ny), gorgonia.WithName("y"), gorgonia.WithValue(o.yt))
	var err error
	if o.out, err = losses.Objective(f, x, y); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	o.vm = gorgonia.NewTapeMachine(g)
	return o, nil
}

func (o *objectiveEval) eval(x, y *mat.Dense) (f float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("train: evaluating the objective: %v", r)
		}
	}()
	_, nx := x.Dims()
	r, ny := y.Dims()
	mat.NewDense(r, nx, o.xt.Data().([]float64)).Copy(x)
	mat.NewDense(r, ny, o.yt.Data().([]float64)).Copy(y)
	defer o.vm.Reset()
	if err := o.vm.RunAll(); err != nil {
		return 0, fmt.Errorf("train: evaluating the objective: %w", err)
	}
	v, ok := o.out.Value().Data().(float64)
	if !ok {
		return 0, fmt.Errorf("train: the objective is a %T, want float64", o.out.Value().Data())
	}
	return v, nil
}
