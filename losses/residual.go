package losses

import (
	"fmt"

	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/graphguard"
)

// Residual returns λ_C·(1/N) Σ_i ‖c(x_i, y_i)‖₂, the constraint residual
// penalty of the ENFORCE loss, for inputs x (N×nx) and predictions y (N×ny)
// with (nx, ny, nc) = c.Dims(). lambdaC must be finite and non-negative.
//
// The constraint is evaluated sample by sample in plain Go, or a chunk of
// samples at a time if its enforce.Capabilities have EvalBatch (as
// enforce.Quadratic's do), or, for enforce.Linear and Stacks of Linears, a
// whole batch at a time with matrix products (Y·Cᵀ − R, and the
// y-gradients as one product with C; the results are those of the
// per-sample evaluation up to rounding; a panic in the right-hand side r
// is an error naming the sample); float32 graphs are converted to float64 and
// back. Its gradient with respect to y_i is
// (λ_C/N)·J_yᵀc/‖c‖, and 0 for a sample with c = 0 (a subgradient of the
// norm). If c's enforce.Capabilities have JacobianX, the node is also
// differentiable with respect to x, with gradient (λ_C/N)·J_xᵀc/‖c‖;
// gorgonia.Grad then builds that gradient too, and the machine evaluates it
// on every run, even when x is data. Otherwise the node is not
// differentiable with respect to x, and asking gorgonia.Grad for a gradient
// that only flows through x is an error.
//
// Running the node fails if c(x_i, y_i) or its Jacobian is not finite.
func Residual(c enforce.Constraint, x, y *gorgonia.Node, lambdaC float64) (*gorgonia.Node, error) {
	return constraintLoss(norm, c, x, y, lambdaC)
}

// SoftPenalty returns λ·(1/N) Σ_i ‖c(x_i, y_i)‖₂², the penalty of the soft
// constrained baseline that adds constraint violation to the loss instead
// of projecting. Its gradient with respect to y_i is (λ/N)·2J_yᵀc, and with
// respect to x_i (λ/N)·2J_xᵀc under the same conditions as for Residual,
// whose documentation describes the shapes and failure modes.
func SoftPenalty(c enforce.Constraint, x, y *gorgonia.Node, lambda float64) (*gorgonia.Node, error) {
	return constraintLoss(squaredNorm, c, x, y, lambda)
}

// HingePenalty returns λ·(1/N) Σ_i Σ_j max(0, c_j(x_i, y_i))², the
// quadratic penalty on the violations of inequalities c_j(x, y) ⩽ 0: the
// soft-constrained baseline of the paper's inequality experiment (§5.2).
// Its gradient with respect to y_i is (λ/N)·2J_yᵀmax(0, c), and with
// respect to x_i (λ/N)·2J_xᵀmax(0, c) under the same conditions as for
// Residual, whose documentation describes the shapes and failure modes.
// Give it the inequalities themselves, not the Fischer–Burmeister
// constraint that enforce.WithInequalities builds from them.
func HingePenalty(c enforce.Constraint, x, y *gorgonia.Node, lambda float64) (*gorgonia.Node, error) {
	return constraintLoss(squaredHinge, c, x, y, lambda)
}

// SquaredNormMeanAbsPenalty returns
// λ·((1/N)Σ_i‖c(x_i, y_i)‖₂² + (1/(N·nc))Σ_iΣ_j|c_j(x_i, y_i)|), the soft
// penalty of the PyTorch reference of ENFORCE with its SOFT_CONSTRAINED
// switch on: its unsupervised loss adds weight·(1/N)Σ_i‖c_i‖₂² and its
// model's loss weight·mean|c| over all N·nc entries, with one weight. Its
// gradient with respect to y_i is (λ/N)·J_yᵀ(2c + sign(c)/nc), with
// sign(0) = 0 (a subgradient of |c_j| at c_j = 0), and with respect to x_i
// the same with J_x, under the same conditions as for Residual, whose
// documentation describes the shapes and failure modes.
func SquaredNormMeanAbsPenalty(c enforce.Constraint, x, y *gorgonia.Node, lambda float64) (*gorgonia.Node, error) {
	return constraintLoss(squaredNormMeanAbs, c, x, y, lambda)
}

func constraintLoss(p penalty, c enforce.Constraint, x, y *gorgonia.Node, lambda float64) (out *gorgonia.Node, err error) {
	where := "losses: " + p.String()
	defer graphguard.Recover(&out, &err, where)
	op, err := newConstraintLossOp(p, c, lambda)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if err := op.checkNodes(x, y); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if out, err = gorgonia.ApplyOp(op, x, y); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return out, nil
}

// checkNodes checks that x (N×nx) and y (N×ny) suit the constraint.
func (op *constraintLossOp) checkNodes(x, y *gorgonia.Node) error {
	switch {
	case x == nil || y == nil:
		return fmt.Errorf("nil node")
	case x.Graph() != y.Graph():
		return fmt.Errorf("x %q and y %q are in different graphs", x.Name(), y.Name())
	case !x.IsMatrix() || x.Shape()[1] != op.nx:
		return fmt.Errorf("x %q has shape %v, want (N, %d)", x.Name(), x.Shape(), op.nx)
	case !y.IsMatrix() || y.Shape()[1] != op.ny:
		return fmt.Errorf("y %q has shape %v, want (N, %d)", y.Name(), y.Shape(), op.ny)
	case x.Shape()[0] != y.Shape()[0]:
		return fmt.Errorf("x has %d rows and y %d", x.Shape()[0], y.Shape()[0])
	case x.Dtype() != y.Dtype():
		return fmt.Errorf("x has dtype %v and y %v", x.Dtype(), y.Dtype())
	}
	return graphguard.CheckFloat(x.Dtype())
}
