package enforce

import (
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"sync"
	"sync/atomic"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Gate decides, once per forward pass, whether AdaNP is applied to a batch:
// it receives the inputs x, the prediction ŷ and the result of one NP step
// from ŷ, and returns false to pass ŷ through unchanged (with an identity
// gradient). It implements the activation rule of the paper's Algorithm 2
// (project only when one step does not make the task measure worse).
type Gate func(x, yhat, oneStep *mat.Dense) bool

// ApplyOption configures an AdaNP node.
type ApplyOption func(*applyConfig)

type applyConfig struct {
	xGrad    bool
	xGradSet bool
	gate     Gate
	theta    *gorgonia.Node
}

// WithInputGradient sets whether the node back-propagates into x. By
// default it does exactly when x is computed by other operations (x is not
// a leaf variable) and the constraint implements JacobianX.
func WithInputGradient(on bool) ApplyOption {
	return func(c *applyConfig) { c.xGrad, c.xGradSet = on, true }
}

// WithTrainableWeights gives the node the parameter θ of
// TrainableDiagonal weights, W = diag(exp(θ)): a vector node of length ny
// and ŷ's dtype, in ŷ's graph, usually a learnable initialised to zero
// (W = I). θ becomes the node's last input, differentiable: its gradient
// ∂ℓ/∂θ comes from the same backward pass as ŷ's (AdaNP.VJPTheta).
// Apply requires it exactly when Settings.Weights is TrainableDiagonal.
func WithTrainableWeights(theta *gorgonia.Node) ApplyOption {
	return func(c *applyConfig) { c.theta = theta }
}

// gateIDs numbers the gated nodes.
var gateIDs atomic.Uint64

// WithGate sets a Gate consulted on every forward pass. The gate's one NP
// step is computed separately from the AdaNP run that follows when the
// gate accepts, which starts again from ŷ: one extra step per pass, traded
// for keeping the trace (and so the gradient) of the whole run in one place.
func WithGate(g Gate) ApplyOption {
	return func(c *applyConfig) { c.gate = g }
}

// Op is the gorgonia operation that applies an AdaNP to (x, ŷ), added to a
// graph by AdaNP.Apply. Its gradient is computed by a second operation
// from the trace of the forward pass, as set by Settings.Grad. After a run,
// Stats and Projected describe the last forward pass.
type Op struct {
	a      *AdaNP
	one    *AdaNP // one NP step, for the gate
	gate   Gate
	hasX   bool
	xGrad  bool
	hasT   bool // θ is the last input (TrainableDiagonal)
	dtype  tensor.Dtype
	gateID uint64 // unique per gated node, 0 without a gate

	// run serialises passes (forward and gradient) of the node; mu guards
	// the fields read by Stats and Projected. User code (the Gate, the
	// constraint) runs under run only, so it may call Stats.
	run       sync.Mutex
	mu        sync.Mutex
	needTrace bool
	tr        Trace
	stats     Stats
	projected bool
	ran       bool
	pass      uint64 // forward passes so far
	// The gradients of the last backward pass, computed once for ŷ and x.
	gradPass uint64
	gy, gx   *mat.Dense
	gth      []float64
	gstats   GradStats
}

// Apply adds an AdaNP node ỹ = AdaNP(x, ŷ) to ŷ's graph. x and ŷ are
// matrices of shapes (batch, nx) and (batch, ny) of the same dtype, Float64
// or Float32 (float32 values are projected in float64 arithmetic, or with
// Settings.Precision Auto in Float32 precision, and rounded back; Auto then
// gives the node its own AdaNP with Precision Float32, except with
// BatchDiagonal weights).
// x must be nil exactly when the constraint has no inputs (nx = 0).
func (a *AdaNP) Apply(x, yhat *gorgonia.Node, opts ...ApplyOption) (*gorgonia.Node, error) {
	var cfg applyConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := a.checkNodes(x, yhat); err != nil {
		return nil, err
	}
	if err := a.checkTheta(yhat, cfg.theta); err != nil {
		return nil, err
	}
	if a.s.Precision == Auto && yhat.Dtype() == tensor.Float32 && a.s.Weights != BatchDiagonal {
		// Auto in a float32 graph: a projector of the same settings in
		// Float32 precision (BatchDiagonal weights stay in Float64).
		s := a.s
		s.Precision = Float32
		lo, err := NewAdaNP(a.c, s)
		if err != nil {
			return nil, err
		}
		a = lo
	}
	op := &Op{a: a, gate: cfg.gate, hasX: x != nil, hasT: cfg.theta != nil, dtype: yhat.Dtype()}
	if cfg.gate != nil {
		// A gate is code and state: two nodes with gates are never the
		// same node, even if their closures share code.
		op.gateID = gateIDs.Add(1)
	}
	if x != nil {
		op.xGrad = a.hasJX && !x.IsVar()
		if cfg.xGradSet {
			if cfg.xGrad && !a.hasJX {
				return nil, errors.New("enforce: gradient with respect to x needs a constraint that implements JacobianX")
			}
			op.xGrad = cfg.xGrad
		}
	}
	if cfg.gate != nil {
		s := a.s
		s.MinDepth, s.MaxDepth = 1, 1
		one, err := NewAdaNP(a.c, s)
		if err != nil {
			return nil, err
		}
		op.one = one
	}
	children := []*gorgonia.Node{yhat}
	if x != nil {
		children = []*gorgonia.Node{x, yhat}
	}
	if cfg.theta != nil {
		children = append(children, cfg.theta)
	}
	return applyOp(op, children...)
}

// AdaNPNode is a shorthand for NewAdaNP followed by Apply.
func AdaNPNode(x, yhat *gorgonia.Node, c Constraint, s Settings, opts ...ApplyOption) (*gorgonia.Node, error) {
	a, err := NewAdaNP(c, s)
	if err != nil {
		return nil, err
	}
	return a.Apply(x, yhat, opts...)
}

// OpOf returns the AdaNP operation of a node built by Apply.
func OpOf(n *gorgonia.Node) (*Op, bool) {
	if n == nil {
		return nil, false
	}
	op, ok := n.Op().(*Op)
	return op, ok
}

// applyOp is gorgonia.ApplyOp with its panics turned into errors.
func applyOp(op gorgonia.Op, children ...*gorgonia.Node) (n *gorgonia.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("enforce: gorgonia: %v", r)
		}
	}()
	return gorgonia.ApplyOp(op, children...)
}

func (a *AdaNP) checkNodes(x, yhat *gorgonia.Node) error {
	if yhat == nil {
		return errors.New("enforce: nil ŷ node")
	}
	dt := yhat.Dtype()
	if dt != tensor.Float64 && dt != tensor.Float32 {
		return fmt.Errorf("enforce: ŷ has dtype %v, want Float64 or Float32", dt)
	}
	ys := yhat.Shape()
	if len(ys) != 2 || ys[1] != a.ny {
		return fmt.Errorf("enforce: ŷ has shape %v, want (batch, %d)", ys, a.ny)
	}
	switch {
	case x == nil && a.nx != 0:
		return fmt.Errorf("enforce: nil x node, want shape (batch, %d)", a.nx)
	case x != nil && a.nx == 0:
		return errors.New("enforce: the constraint has no inputs: pass a nil x node")
	case x != nil:
		if x.Dtype() != dt {
			return fmt.Errorf("enforce: x has dtype %v, ŷ has %v", x.Dtype(), dt)
		}
		if xs := x.Shape(); len(xs) != 2 || xs[0] != ys[0] || xs[1] != a.nx {
			return fmt.Errorf("enforce: x has shape %v, want (%d, %d)", xs, ys[0], a.nx)
		}
		if x.Graph() != yhat.Graph() {
			return errors.New("enforce: x and ŷ are in different graphs")
		}
	}
	return nil
}

// checkTheta checks the θ node of WithTrainableWeights against the
// weighting and ŷ.
func (a *AdaNP) checkTheta(yhat, theta *gorgonia.Node) error {
	switch {
	case theta == nil && a.s.Weights == TrainableDiagonal:
		return errors.New("enforce: trainable-diagonal weights need a θ node: pass WithTrainableWeights")
	case theta == nil:
		return nil
	case a.s.Weights != TrainableDiagonal:
		return fmt.Errorf("enforce: WithTrainableWeights needs Settings.Weights TrainableDiagonal, not %v", a.s.Weights)
	case theta.Dtype() != yhat.Dtype():
		return fmt.Errorf("enforce: θ has dtype %v, ŷ has %v", theta.Dtype(), yhat.Dtype())
	case theta.Graph() != yhat.Graph():
		return errors.New("enforce: θ and ŷ are in different graphs")
	}
	if ts := theta.Shape(); len(ts) != 1 || ts[0] != a.ny {
		return fmt.Errorf("enforce: θ has shape %v, want (%d)", ts, a.ny)
	}
	return nil
}

// Stats returns the statistics of the last forward pass, also of one that
// failed with Settings.RequireTol (gorgonia's machines pass the
// *ToleranceError on as text: Stats().Missed lists the rows).
func (o *Op) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stats
}

// Projected reports whether the last forward pass applied AdaNP (false
// when the Gate passed ŷ through).
func (o *Op) Projected() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.projected
}

// AdaNP returns the projection the node applies.
func (o *Op) AdaNP() *AdaNP { return o.a }

// Arity is 2 (x, ŷ), or 1 (ŷ) for constraints without inputs, plus 1 for
// θ (WithTrainableWeights).
func (o *Op) Arity() int {
	n := 1
	if o.hasX {
		n++
	}
	if o.hasT {
		n++
	}
	return n
}

// yIndex is ŷ's position among the inputs.
func (o *Op) yIndex() int {
	if o.hasX {
		return 1
	}
	return 0
}

// inputTypes returns the types of the inputs: matrices, and a vector θ.
func (o *Op) inputTypes() []hm.Type {
	t := gorgonia.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	ts := []hm.Type{t}
	if o.hasX {
		ts = append(ts, t)
	}
	if o.hasT {
		ts = append(ts, gorgonia.TensorType{Dims: 1, Of: hm.TypeVariable('a')})
	}
	return ts
}

// Type returns the operation's type: matrices (and θ) in, a matrix out.
func (o *Op) Type() hm.Type {
	t := gorgonia.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	return hm.NewFnType(append(o.inputTypes(), t)...)
}

// InferShape returns ŷ's shape.
func (o *Op) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != o.Arity() {
		return nil, fmt.Errorf("enforce: AdaNP takes %d inputs, got %d", o.Arity(), len(inputs))
	}
	s, ok := inputs[o.yIndex()].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("enforce: AdaNP cannot infer a shape from %T", inputs[o.yIndex()])
	}
	return s.Clone(), nil
}

// ReturnsPtr is false: Do returns fresh memory.
func (o *Op) ReturnsPtr() bool { return false }

// CallsExtern is false: the projection runs on the CPU.
func (o *Op) CallsExtern() bool { return false }

// OverwritesInput is -1: no input is overwritten.
func (o *Op) OverwritesInput() int { return -1 }

// WriteHash writes everything that distinguishes this operation.
func (o *Op) WriteHash(h hash.Hash) {
	s := o.a.s
	fmt.Fprintf(h, "enforce.AdaNP{a=%p c=%p tol=%v depth=%d..%d measure=%d reg=%v weights=%d diag=%v grad=%d prec=%d recompute=%v maxstep=%v ls=%v damping=%v smoothing=%v smfirst=%d ladder=%v eqsteps=%d chord=%d chordcg=%d nonmono=%d smnonmono=%d smpatience=%d smfrom=%v feasstop=%v path=%d hasX=%v xgrad=%v theta=%v gate=%d dtype=%v}",
		o.a, o.a.c, s.Tol, s.MinDepth, s.MaxDepth, s.Measure, s.Reg, s.Weights, s.Diag, s.Grad, s.Precision, s.Recompute, s.MaxStep, s.LineSearch, s.Damping, s.Smoothing, s.SmoothingFirstDepth, s.SmoothingLadder, s.EqualitySteps, s.Chord, s.ChordCG, s.Nonmonotone, s.SmoothingNonmonotone, s.SmoothingPatience, s.SmoothingFromAttempt, s.StopWhenFeasible, s.Path, o.hasX, o.xGrad, o.hasT, o.gateID, o.dtype)
}

// Hashcode returns a hash of WriteHash's output.
func (o *Op) Hashcode() uint32 { return hashOf(o) }

func hashOf(op gorgonia.Op) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// String describes the operation in graph dumps.
func (o *Op) String() string {
	s := o.a.s
	return fmt.Sprintf("AdaNP(%v≤%g, depth %d..%d, %v W, %v grad)", s.Measure, s.Tol, s.MinDepth, s.MaxDepth, s.Weights, s.Grad)
}

// DiffWRT reports which inputs the operation is differentiable with
// respect to: ŷ and θ always, x when its gradient is enabled.
func (o *Op) DiffWRT(inputs int) []bool {
	d := []bool{true}
	if o.hasX {
		d = []bool{o.xGrad, true}
	}
	if o.hasT {
		d = append(d, true)
	}
	return d
}

// SymDiff returns the gradient nodes for the inputs (nil for an x whose
// gradient is disabled).
func (o *Op) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != o.Arity() {
		return nil, fmt.Errorf("enforce: AdaNP takes %d inputs, got %d", o.Arity(), len(inputs))
	}
	o.mu.Lock()
	o.needTrace = true
	o.mu.Unlock()
	children := append(append(gorgonia.Nodes{}, inputs...), grad)
	gy, err := applyOp(&gradOp{fwd: o}, children...)
	if err != nil {
		return nil, err
	}
	grads := gorgonia.Nodes{gy}
	if o.hasX {
		var gx *gorgonia.Node
		if o.xGrad {
			if gx, err = applyOp(&gradOp{fwd: o, wrtX: true}, children...); err != nil {
				return nil, err
			}
		}
		grads = gorgonia.Nodes{gx, gy}
	}
	if o.hasT {
		gt, err := applyOp(&gradOp{fwd: o, wrtT: true}, children...)
		if err != nil {
			return nil, err
		}
		grads = append(grads, gt)
	}
	return grads, nil
}

// DoDiff accumulates the gradients into the inputs' derivative values, for
// gorgonia's LispMachine.
func (o *Op) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	if len(inputs) != o.Arity() {
		return fmt.Errorf("enforce: AdaNP takes %d inputs, got %d", o.Arity(), len(inputs))
	}
	og, err := output.Grad()
	if err != nil {
		return fmt.Errorf("enforce: AdaNP output has no gradient: %w", err)
	}
	o.mu.Lock()
	o.needTrace = true
	o.mu.Unlock()
	vals := make([]gorgonia.Value, 0, len(inputs)+1)
	for _, in := range inputs {
		vals = append(vals, in.Value())
	}
	vals = append(vals, og)
	for i, in := range inputs {
		wrtX := o.hasX && i == 0
		wrtT := o.hasT && i == len(inputs)-1
		if wrtX && !o.xGrad {
			continue
		}
		d, err := in.Grad()
		if err != nil {
			continue // not a differentiable value
		}
		g, err := (&gradOp{fwd: o, wrtX: wrtX, wrtT: wrtT}).Do(vals...)
		if err != nil {
			return err
		}
		dt, ok1 := d.(*tensor.Dense)
		gt, ok2 := g.(*tensor.Dense)
		if !ok1 || !ok2 {
			return fmt.Errorf("enforce: AdaNP DoDiff: unexpected value types %T, %T", d, g)
		}
		if _, err := tensor.Add(dt, gt, tensor.UseUnsafe()); err != nil {
			return fmt.Errorf("enforce: AdaNP DoDiff: %w", err)
		}
	}
	return nil
}

// Do projects ŷ. Float32 results that overflow float32 are an error.
func (o *Op) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	x, yhat, err := o.inputs(inputs)
	if err != nil {
		return nil, err
	}
	theta, err := o.theta(inputs)
	if err != nil {
		return nil, err
	}
	rows, ny := yhat.Dims()
	out := mat.NewDense(rows, ny, nil)
	o.run.Lock()
	defer o.run.Unlock()
	o.mu.Lock()
	needTrace := o.needTrace
	o.ran, o.pass = false, o.pass+1
	o.mu.Unlock()
	projected := true
	if o.gate != nil {
		step := mat.NewDense(rows, ny, nil)
		_, err := o.one.project(step, x, yhat, theta, nil)
		if err != nil {
			return nil, err
		}
		if projected, err = callGate(o.gate, x, yhat, step); err != nil {
			return nil, err
		}
	}
	var st Stats
	switch {
	case !projected:
		out.Copy(yhat)
		st, err = o.a.Check(x, yhat)
	case needTrace:
		st, err = o.a.project(out, x, yhat, theta, &o.tr)
	default:
		st, err = o.a.project(out, x, yhat, theta, nil)
	}
	if te := (*ToleranceError)(nil); errors.As(err, &te) {
		// Settings.RequireTol: Stats describe the failed pass, since
		// gorgonia's machines report the error as text only.
		o.mu.Lock()
		o.stats, o.projected, o.ran = st, projected, false
		o.mu.Unlock()
	}
	if err != nil {
		return nil, err
	}
	if o.dtype == tensor.Float32 {
		if err := fitsFloat32(out, "ỹ"); err != nil {
			return nil, err
		}
	}
	o.mu.Lock()
	o.stats, o.projected, o.ran = st, projected, true
	o.mu.Unlock()
	return fromMat(out, o.dtype), nil
}

// callGate runs the user's gate, turning a panic into an error.
func callGate(g Gate, x, yhat, step *mat.Dense) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("enforce: Gate panicked: %v", r)
		}
	}()
	return g(x, yhat, step), nil
}

// fitsFloat32 returns an error naming the first sample of m with a value
// that overflows float32.
func fitsFloat32(m *mat.Dense, what string) error {
	r, c := m.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := m.At(i, j); math.Abs(v) > math.MaxFloat32 {
				return fmt.Errorf("enforce: sample %d: %s[%d] = %g overflows float32", i, what, j, v)
			}
		}
	}
	return nil
}

// inputs converts the operation's inputs to float64 matrices.
func (o *Op) inputs(inputs []gorgonia.Value) (x, yhat *mat.Dense, err error) {
	if len(inputs) < o.Arity() {
		return nil, nil, fmt.Errorf("enforce: AdaNP takes %d inputs, got %d", o.Arity(), len(inputs))
	}
	if o.hasX {
		if x, err = toMat(inputs[0], o.a.nx, "x"); err != nil {
			return nil, nil, err
		}
		inputs = inputs[1:]
	}
	if yhat, err = toMat(inputs[0], o.a.ny, "ŷ"); err != nil {
		return nil, nil, err
	}
	if x != nil {
		if xr, _ := x.Dims(); xr != yhat.RawMatrix().Rows {
			return nil, nil, fmt.Errorf("enforce: x has %d rows, ŷ has %d", xr, yhat.RawMatrix().Rows)
		}
	}
	return x, yhat, nil
}

// toMat returns a float64 matrix holding v, a (rows, cols) tensor. Float64
// data are shared, not copied; the caller must not modify them.
func toMat(v gorgonia.Value, cols int, what string) (*mat.Dense, error) {
	t, ok := v.(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("enforce: %s is a %T, want a tensor", what, v)
	}
	s := t.Shape()
	if len(s) != 2 || s[1] != cols || s[0] == 0 {
		return nil, fmt.Errorf("enforce: %s has shape %v, want (batch, %d)", what, s, cols)
	}
	if !t.IsNativelyAccessible() || !t.DataOrder().IsRowMajor() {
		return nil, fmt.Errorf("enforce: %s must be a row-major tensor in host memory", what)
	}
	switch d := t.Data().(type) {
	case []float64:
		return mat.NewDense(s[0], s[1], d[:s[0]*s[1]]), nil
	case []float32:
		m := mat.NewDense(s[0], s[1], nil)
		raw := m.RawMatrix().Data
		for i, v := range d[:s[0]*s[1]] {
			raw[i] = float64(v)
		}
		return m, nil
	}
	return nil, fmt.Errorf("enforce: %s has dtype %v, want Float64 or Float32", what, t.Dtype())
}

// theta returns θ from the operation's inputs, nil without one.
func (o *Op) theta(inputs []gorgonia.Value) ([]float64, error) {
	if !o.hasT {
		return nil, nil
	}
	if len(inputs) < o.Arity() {
		return nil, fmt.Errorf("enforce: AdaNP takes %d inputs, got %d", o.Arity(), len(inputs))
	}
	t, ok := inputs[o.Arity()-1].(tensor.Tensor)
	if !ok {
		return nil, fmt.Errorf("enforce: θ is a %T, want a tensor", inputs[o.Arity()-1])
	}
	if s := t.Shape(); s.TotalSize() != o.a.ny || s.Dims() > 1 && !(s.Dims() == 2 && (s[0] == 1 || s[1] == 1)) {
		return nil, fmt.Errorf("enforce: θ has shape %v, want (%d)", s, o.a.ny)
	}
	if !t.IsNativelyAccessible() {
		return nil, errors.New("enforce: θ must be a tensor in host memory")
	}
	switch d := t.Data().(type) {
	case []float64:
		return append([]float64(nil), d[:o.a.ny]...), nil
	case []float32:
		th := make([]float64, o.a.ny)
		for i, v := range d[:o.a.ny] {
			th[i] = float64(v)
		}
		return th, nil
	}
	return nil, fmt.Errorf("enforce: θ has dtype %v, want Float64 or Float32", t.Dtype())
}

// project is ProjectTraceTheta with θ, else ProjectTrace (tr non-nil) or
// ProjectTo.
func (a *AdaNP) project(dst, x, yhat *mat.Dense, theta []float64, tr *Trace) (Stats, error) {
	switch {
	case theta != nil:
		return a.ProjectTraceTheta(dst, x, yhat, theta, tr)
	case tr != nil:
		return a.ProjectTrace(dst, x, yhat, tr)
	}
	return a.ProjectTo(dst, x, yhat)
}

// fromMat returns m as a tensor of the given dtype.
func fromMat(m *mat.Dense, dt tensor.Dtype) *tensor.Dense {
	r, c := m.Dims()
	data := m.RawMatrix().Data
	if dt == tensor.Float32 {
		d32 := make([]float32, len(data))
		for i, v := range data {
			d32[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(d32))
	}
	return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(data))
}

// fromVec returns v as a vector tensor of the given dtype.
func fromVec(v []float64, dt tensor.Dtype) *tensor.Dense {
	if dt == tensor.Float32 {
		d32 := make([]float32, len(v))
		for i, x := range v {
			d32[i] = float32(x)
		}
		return tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(d32))
	}
	return tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v))
}

// gradOp computes the gradient of an AdaNP node with respect to ŷ, x or
// θ from the trace of its forward pass. Its inputs are the forward inputs
// followed by the gradient of the output.
type gradOp struct {
	fwd  *Op
	wrtX bool
	wrtT bool
}

func (g *gradOp) Arity() int { return g.fwd.Arity() + 1 }

func (g *gradOp) Type() hm.Type {
	t := gorgonia.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	ts := append(g.fwd.inputTypes(), t)
	if g.wrtT {
		return hm.NewFnType(append(ts, gorgonia.TensorType{Dims: 1, Of: hm.TypeVariable('a')})...)
	}
	return hm.NewFnType(append(ts, t)...)
}

func (g *gradOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != g.Arity() {
		return nil, fmt.Errorf("enforce: AdaNP gradient takes %d inputs, got %d", g.Arity(), len(inputs))
	}
	i := g.fwd.yIndex()
	switch {
	case g.wrtX:
		i = 0
	case g.wrtT:
		i = g.fwd.Arity() - 1
	}
	s, ok := inputs[i].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("enforce: AdaNP gradient cannot infer a shape from %T", inputs[i])
	}
	return s.Clone(), nil
}

func (g *gradOp) ReturnsPtr() bool     { return false }
func (g *gradOp) CallsExtern() bool    { return false }
func (g *gradOp) OverwritesInput() int { return -1 }

func (g *gradOp) WriteHash(h hash.Hash) {
	g.fwd.WriteHash(h)
	fmt.Fprintf(h, ".grad{fwd=%p wrtX=%v wrtT=%v}", g.fwd, g.wrtX, g.wrtT)
}

func (g *gradOp) Hashcode() uint32 { return hashOf(g) }

func (g *gradOp) String() string {
	switch {
	case g.wrtX:
		return "∂AdaNP/∂x"
	case g.wrtT:
		return "∂AdaNP/∂θ"
	}
	return "∂AdaNP/∂ŷ"
}

// Do computes the vector–Jacobian product. The gradients with respect to
// ŷ, x and θ come from one backward pass: the first of the gradient
// operations of a pass computes them all, the others return their share.
func (g *gradOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	o := g.fwd
	if len(inputs) != g.Arity() {
		return nil, fmt.Errorf("enforce: AdaNP gradient takes %d inputs, got %d", g.Arity(), len(inputs))
	}
	x, yhat, err := o.inputs(inputs[:o.Arity()])
	if err != nil {
		return nil, err
	}
	theta, err := o.theta(inputs[:o.Arity()])
	if err != nil {
		return nil, err
	}
	grad, err := toMat(inputs[o.Arity()], o.a.ny, "output gradient")
	if err != nil {
		return nil, err
	}
	rows, _ := yhat.Dims()
	o.run.Lock()
	defer o.run.Unlock()
	o.mu.Lock()
	ran, projected, pass := o.ran, o.projected, o.pass
	o.mu.Unlock()
	if !ran {
		return nil, errors.New("enforce: AdaNP gradient computed before the forward pass")
	}
	if !projected {
		if g.wrtT {
			return fromVec(make([]float64, o.a.ny), o.dtype), nil
		}
		if g.wrtX {
			return fromMat(mat.NewDense(rows, o.a.nx, nil), o.dtype), nil
		}
		return fromMat(mat.DenseCopyOf(grad), o.dtype), nil
	}
	if o.gradPass != pass || o.gy == nil {
		if o.tr.a != o.a || o.tr.rows != rows {
			// The forward pass ran without recording (LispMachine): record now.
			if _, err := o.a.project(mat.NewDense(rows, o.a.ny, nil), x, yhat, theta, &o.tr); err != nil {
				return nil, err
			}
		}
		gy := mat.NewDense(rows, o.a.ny, nil)
		var gx *mat.Dense
		if o.xGrad {
			gx = mat.NewDense(rows, o.a.nx, nil)
		}
		var gth []float64
		if o.hasT {
			gth = make([]float64, o.a.ny)
			err = o.a.VJPTheta(&o.tr, grad, gy, gx, gth)
		} else {
			err = o.a.VJP(&o.tr, grad, gy, gx)
		}
		if err != nil {
			return nil, err
		}
		o.gy, o.gx, o.gth, o.gradPass = gy, gx, gth, pass
		o.mu.Lock()
		o.gstats = o.tr.GradStats()
		o.mu.Unlock()
		if o.dtype == tensor.Float32 {
			if err := fitsFloat32(gy, "∂ℓ/∂ŷ"); err != nil {
				return nil, err
			}
			if gx != nil {
				if err := fitsFloat32(gx, "∂ℓ/∂x"); err != nil {
					return nil, err
				}
			}
			if gth != nil {
				if err := fitsFloat32(mat.NewDense(1, len(gth), gth), "∂ℓ/∂θ"); err != nil {
					return nil, err
				}
			}
		}
	}
	if g.wrtT {
		return fromVec(append([]float64(nil), o.gth...), o.dtype), nil
	}
	if g.wrtX {
		if o.gx == nil {
			return nil, errors.New("enforce: AdaNP gradient with respect to x is disabled for this node")
		}
		return fromMat(mat.DenseCopyOf(o.gx), o.dtype), nil
	}
	return fromMat(mat.DenseCopyOf(o.gy), o.dtype), nil
}

// GradStats returns the statistics of the node's last backward pass.
func (o *Op) GradStats() GradStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gstats
}
