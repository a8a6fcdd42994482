package dc3

import (
	"errors"
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
)

// Correction is DC3's gradient-based correction of the inequalities
// (locuslab/DC3, method.py grad_steps and grad_steps_all with corrMode
// "partial"; utils.py ACOPFProblem.ineq_partial_grad): starting from a
// completed point y, each step moves y by
//
//	s ← LearnRate·d + Momentum·s,   y ← y − s,
//
// where d is the gradient of ‖max(0, g(x, y))‖² with respect to the
// partial variables through the completion, d_p = ∇_p + (∂y_o/∂y_p)ᵀ∇_o
// (∇ = 2·(∂g/∂y)ᵀmax(0, g), ∂y_o/∂y_p = −(∂c/∂y_o)⁻¹∂c/∂y_p at y), extended
// to the completed variables along the linearised completion,
// d_o = (∂y_o/∂y_p)·d_p. The completion is not solved again after a step,
// so the equalities drift by the second-order terms of each step, as in
// DC3 (DC3's ACOPF row reports a max equality violation of 6.8e-5).
type Correction struct {
	// Ineq is g(x, y) ≤ 0 on the completion's x and y (for ACOPF,
	// acopf.Model.Inequalities: the voltage and generation bounds, DC3's
	// ineq_resid).
	Ineq enforce.Constraint
	// LearnRate and Momentum are DC3's corrLr and corrMomentum (ACOPF:
	// 1e-4 and 0.5).
	LearnRate, Momentum float64
	// Steps is the number of steps: DC3's corrTrainSteps in training and
	// corrTestMaxSteps at test time (ACOPF: 5 and 5).
	Steps int
	// Eps is the test-time stopping rule (DC3's corrEps, ACOPF 1e-4):
	// Correct stops before a step once every sample's max|c| of the
	// balances and its max bound violation are at most Eps (the first
	// step is always taken, as in DC3). Zero runs all Steps.
	Eps float64
	// ExactGradient selects CorrectNode's gradient with respect to the
	// completed point: false (the zero value, and the only behaviour
	// before this field existed) is the identity, a straight-through
	// estimate; true differentiates through the steps, as DC3's autograd
	// does, with the second derivatives of the power flow and of Ineq
	// (their Capabilities' HessVec; a constant-Jacobian Ineq needs none),
	// recomputing the steps in the backward pass (correctgrad.go). It does
	// not change the corrected points. Correct ignores it.
	ExactGradient bool
}

// DC3's ACOPF correction settings (default_args.py, method_default_args
// for "acopf").
const (
	ACOPFCorrLearnRate = 1e-4
	ACOPFCorrMomentum  = 0.5
	ACOPFCorrSteps     = 5
	ACOPFCorrEps       = 1e-4
)

// validate checks corr against a completion with ny outputs and nx inputs.
func (corr Correction) validate(nx, ny int) error {
	if corr.Ineq == nil {
		return errors.New("dc3: Correction.Ineq is nil")
	}
	gx, gy, _ := corr.Ineq.Dims()
	if gx != nx || gy != ny {
		return fmt.Errorf("dc3: Correction.Ineq has dims (%d, %d), want (%d, %d) as the completion", gx, gy, nx, ny)
	}
	if !(corr.LearnRate > 0) || math.IsInf(corr.LearnRate, 0) || !(corr.Momentum >= 0 && corr.Momentum < 1) || corr.Steps < 0 || !(corr.Eps >= 0) || math.IsInf(corr.Eps, 0) {
		return fmt.Errorf("dc3: Correction: LearnRate %g, Momentum %g, Steps %d, Eps %g: want LearnRate > 0, 0 ≤ Momentum < 1, Steps ≥ 0, Eps ≥ 0",
			corr.LearnRate, corr.Momentum, corr.Steps, corr.Eps)
	}
	return nil
}

// correctionDir writes into d DC3's correction direction at the completed
// point y (full length N_O) for the direct gradient dg (length N_O):
// d_p = dg_p − (∂c/∂y_p)ᵀw with (∂c/∂y_o)ᵀw = dg_o, and
// d_o = −(∂c/∂y_o)⁻¹(∂c/∂y_p)d_p.
func (nc *NewtonCompletion) correctionDir(x, y, dg, d []float64) error {
	l := nc.linearise(x, y)
	dp := make([]float64, len(nc.Partial))
	if _, err := l.project(dg, dp); err != nil {
		return fmt.Errorf("dc3: ∂c/∂y_o is singular at the corrected point: %w", err)
	}
	if err := l.lift(dp, d); err != nil {
		return fmt.Errorf("dc3: ∂c/∂y_o is singular at the corrected point: %w", err)
	}
	return nil
}

// violationGrad writes into dg the gradient of ‖max(0, g(x, y))‖² with
// respect to y and returns max(0, max g).
func violationGrad(ineq enforce.Constraint, x, y, dg []float64) float64 {
	_, ny, ng := ineq.Dims()
	g, jac := make([]float64, ng), make([]float64, ng*ny)
	ineq.Eval(x, y, g, jac)
	clear(dg)
	var worst float64
	for r, v := range g {
		if !(v > 0) {
			continue
		}
		worst = math.Max(worst, v)
		for k := range ny {
			dg[k] += 2 * v * jac[r*ny+k]
		}
	}
	return worst
}

// Correct applies DC3's test-time correction (grad_steps_all) to the
// completed points y (one per row, acopf.Model's layout) for the loads x
// in place, with DC3's batch-wide stopping rule (Correction.Eps), and
// returns the number of steps taken. It returns an error for invalid
// settings, mismatched shapes, or a singular ∂c/∂y_o at a step.
func (a *ACOPFCompletion) Correct(x, y *mat.Dense, corr Correction) (int, error) {
	_, ny, _ := a.Newton.C.Dims()
	if err := corr.validate(a.nx, ny); err != nil {
		return 0, err
	}
	n, cx := x.Dims()
	if r, cy := y.Dims(); r != n || cx != a.nx || cy != ny {
		return 0, fmt.Errorf("dc3: ACOPF correction: x is %d×%d and y %d×%d, want n×%d and n×%d", n, cx, r, cy, a.nx, ny)
	}
	steps := make([][]float64, n)
	dg, d := make([]float64, ny), make([]float64, ny)
	for it := 0; it < corr.Steps; it++ {
		if it > 0 && corr.Eps > 0 && a.worst(x, y, corr) <= corr.Eps {
			return it, nil
		}
		for i := range n {
			xi, yi := x.RawRowView(i), y.RawRowView(i)
			if err := a.step(xi, yi, corr, &steps[i], dg, d); err != nil {
				return it, fmt.Errorf("sample %d: %w", i, err)
			}
		}
	}
	return corr.Steps, nil
}

// step takes one correction step of one sample with momentum state s.
func (a *ACOPFCompletion) step(x, y []float64, corr Correction, s *[]float64, dg, d []float64) error {
	violationGrad(corr.Ineq, x, y, dg)
	ys := append([]float64(nil), y...)
	for i := range a.nb {
		ys[i]--
	}
	if err := a.Newton.correctionDir(a.pad(x), ys, dg, d); err != nil {
		return err
	}
	if *s == nil {
		*s = make([]float64, len(y))
	}
	for k := range y {
		(*s)[k] = corr.LearnRate*d[k] + corr.Momentum*(*s)[k]
		y[k] -= (*s)[k]
	}
	return nil
}

// worst returns the largest, over the samples, of max|balance residual|
// and the max bound violation, DC3's stopping measure.
func (a *ACOPFCompletion) worst(x, y *mat.Dense, corr Correction) float64 {
	_, _, nc := a.pf.Dims()
	_, _, ng := corr.Ineq.Dims()
	c, g := make([]float64, nc), make([]float64, ng)
	n, _ := x.Dims()
	var w float64
	for i := range n {
		xi, yi := x.RawRowView(i), y.RawRowView(i)
		a.pf.Eval(xi, yi, c, nil)
		for _, v := range c[:2*a.nb] {
			w = math.Max(w, math.Abs(v))
		}
		corr.Ineq.Eval(xi, yi, g, nil)
		for _, v := range g {
			w = math.Max(w, v)
		}
		if math.IsNaN(w) {
			return math.Inf(1)
		}
	}
	return w
}

// CorrectNode adds DC3's training-time correction (grad_steps: Steps
// steps, no stopping rule) to a float64 graph: for loads x (n×nx) and
// completed points y (n×ny, ACOPFCompletion.Node's output) it returns the
// corrected points. By default its gradient with respect to y is the
// identity, a straight-through estimate: DC3 differentiates through the
// steps, whose Jacobian is I minus LearnRate times the derivative of the
// correction direction (second derivatives of the power flow and the
// bounds' active set), and the identity leaves that term out. It is not
// small in general: the completion amplifies the direction (on
// TestCorrect's case57 fixture one step of DC3's 1e-4 moves y by 0.6 in
// the 2-norm). With corr.ExactGradient the gradient is DC3's, through the
// steps (TestCorrectNodeExactGradient checks it against central
// differences); CorrectNode then returns an error if the power flow or
// corr.Ineq lacks the second derivatives it needs.
func (a *ACOPFCompletion) CorrectNode(x, y *gorgonia.Node, corr Correction) (*gorgonia.Node, error) {
	_, ny, _ := a.Newton.C.Dims()
	if err := corr.validate(a.nx, ny); err != nil {
		return nil, err
	}
	if corr.ExactGradient {
		if err := a.checkExact(corr); err != nil {
			return nil, err
		}
	}
	return gorgonia.ApplyOp(&correctOp{a: a, corr: corr}, x, y)
}

// correctOp is (x, y) ↦ y corrected, with the identity as its gradient
// with respect to y.
type correctOp struct {
	a    *ACOPFCompletion
	corr Correction
}

func (op *correctOp) Arity() int { return 2 }

// Type is Matrix a → Matrix a → Matrix a.
func (op *correctOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, m)
}

func (op *correctOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	ys, ok := inputs[1].(tensor.Shape)
	if !ok || ys.Dims() != 2 {
		return nil, fmt.Errorf("%v: y has shape %v, want a matrix", op, inputs[1])
	}
	return ys.Clone(), nil
}

func (op *correctOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	x, err := float64s(inputs[0])
	if err != nil {
		return nil, err
	}
	yin, err := float64s(inputs[1])
	if err != nil {
		return nil, err
	}
	_, ny, _ := op.a.Newton.C.Dims()
	n := len(yin) / ny
	y := append([]float64(nil), yin...) // machine values alias memory
	corr := op.corr
	corr.Eps = 0 // training: all the steps (grad_steps)
	if _, err := op.a.Correct(mat.NewDense(n, op.a.nx, x), mat.NewDense(n, ny, y), corr); err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(n, ny), tensor.WithBacking(y)), nil
}

func (op *correctOp) ReturnsPtr() bool     { return false }
func (op *correctOp) CallsExtern() bool    { return false }
func (op *correctOp) OverwritesInput() int { return -1 }
func (op *correctOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "dc3.correct(%p, %v, %v, %d, %p, %v)", op.a, op.corr.LearnRate, op.corr.Momentum, op.corr.Steps, op.corr.Ineq, op.corr.ExactGradient)
}
func (op *correctOp) Hashcode() uint32 { return hashOf(op) }
func (op *correctOp) String() string   { return "DC3Correction" }

// DiffWRT: differentiable with respect to y only (x is data).
func (op *correctOp) DiffWRT(inputs int) []bool {
	if inputs != 2 {
		return make([]bool, inputs)
	}
	return []bool{false, true}
}

// SymDiff passes the gradient through unchanged, or with
// Correction.ExactGradient through the steps (see CorrectNode).
func (op *correctOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	if !op.corr.ExactGradient {
		return gorgonia.Nodes{nil, grad}, nil
	}
	gy, err := gorgonia.ApplyOp(&correctGradOp{a: op.a, corr: op.corr}, inputs[0], inputs[1], grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{nil, gy}, nil
}
