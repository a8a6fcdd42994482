package enforce

// Constraint is a system of nc equality constraints c(x, y) = 0 on a
// prediction y ∈ ℝ^ny given an input x ∈ ℝ^nx, evaluated one sample at a time.
//
// Eval writes c(x, y) into c (length nc) and, when jy is not nil, the Jacobian
// ∂c/∂y into jy in row-major order (nc×ny: jy[i*ny+j] = ∂c_i/∂y_j).
// Eval must not retain or modify x and y, must not allocate in steady state,
// and must be safe to call from several goroutines at once: AdaNP evaluates
// the samples of a batch in parallel.
//
// A Constraint may also implement JacobianXer, HessVecer and MixedHessVecer.
// AdaNP discovers them by type assertion; they enable gradients with respect
// to x and the exact (curvature-aware) Unrolled gradient.
type Constraint interface {
	// Dims returns the sizes of x, y and c.
	Dims() (nx, ny, nc int)
	// Eval writes c(x, y) into c and, if jy != nil, ∂c/∂y (nc×ny, row-major) into jy.
	Eval(x, y, c, jy []float64)
}

// JacobianXer is implemented by constraints that can differentiate with
// respect to their input x. It is needed for gradients with respect to x.
type JacobianXer interface {
	// JacobianX writes ∂c/∂x at (x, y) into jx (nc×nx, row-major).
	JacobianX(x, y, jx []float64)
}

// HessVecer is implemented by constraints that provide curvature in y.
// It is needed for the exact Unrolled gradient through nonlinear constraints.
type HessVecer interface {
	// HessVec writes out = Σ_i w_i ∇²_yy c_i(x, y) · v, with w of length nc
	// and v, out of length ny.
	HessVec(x, y, w, v, out []float64)
}

// MixedHessVecer is implemented by constraints that provide the mixed second
// derivative. It is needed for the exact Unrolled gradient with respect to x
// when the Jacobian ∂c/∂y depends on x.
type MixedHessVecer interface {
	// MixedHessVec writes out = Σ_i w_i ∇²_xy c_i(x, y) · v, that is
	// out_k = Σ_i Σ_j w_i ∂²c_i/∂x_k∂y_j v_j, with w of length nc, v of
	// length ny and out of length nx.
	MixedHessVec(x, y, w, v, out []float64)
}

// Latent is implemented by constraints whose last Latent() variables of y
// are internal to the constraint system rather than predicted, such as the
// Fischer–Burmeister multipliers added by WithInequalities. AdaNP appends
// them as zeros before projecting and drops them afterwards, so a caller
// sees only the first ny−Latent() variables.
type Latent interface {
	Latent() int
}

// RHS is a right-hand side r(x) of nc components that depends on the input
// only, as used by Linear and Quadratic. It writes r(x) into r and, when jx
// is not nil, ∂r/∂x (nc×nx, row-major) into jx. A nil RHS means r(x) = 0.
type RHS func(x, r, jx []float64)

// ConstantJacobianer is implemented by constraints whose Jacobian ∂c/∂y is
// the same for every x and y (constraints affine in y with a constant
// matrix, such as Linear). AdaNP then factors G = BW⁻¹Bᵀ once per batch
// instead of once per sample and step.
type ConstantJacobianer interface {
	// ConstantJacobian returns ∂c/∂y (nc×ny, row-major). The caller must
	// not modify it.
	ConstantJacobian() []float64
}

// Capability names one of the optional interfaces a Constraint may
// implement.
type Capability int

const (
	CapJacobianX Capability = iota
	CapHessVec
	CapMixedHessVec
	CapConstantJacobian
)

// Provider is implemented by constraint combinators (Stack,
// WithInequalities) whose optional methods exist on their type but work only
// when every wrapped constraint provides them. Provides reports whether the
// capability is really available.
type Provider interface {
	Provides(Capability) bool
}

// Provides reports whether c offers the optional capability: it implements
// the corresponding interface and, if it is a Provider, says it provides it.
func Provides(c Constraint, capability Capability) bool {
	var ok bool
	switch capability {
	case CapJacobianX:
		_, ok = c.(JacobianXer)
	case CapHessVec:
		_, ok = c.(HessVecer)
	case CapMixedHessVec:
		_, ok = c.(MixedHessVecer)
	case CapConstantJacobian:
		_, ok = c.(ConstantJacobianer)
	}
	if !ok {
		return false
	}
	if p, isProvider := c.(Provider); isProvider {
		return p.Provides(capability)
	}
	return true
}

// BatchEvaluator is implemented by constraints that evaluate many samples
// faster together than one by one (Quadratic computes every A_i·y of the
// batch with one matrix product). AdaNP then advances the unconverged
// samples of a batch in lockstep and evaluates them with one call per step.
type BatchEvaluator interface {
	// EvalBatch evaluates rows samples at once. x (rows×nx), y (rows×ny)
	// and c (rows×nc) are row-major; jy, when not nil, receives the rows
	// Jacobians one after another (rows×nc×ny). It may use all cores.
	EvalBatch(rows int, x, y, c, jy []float64)
}

// BatchHessVecer is implemented by constraints whose curvature products
// are faster for many samples together (Quadratic). VJP then back-propagates
// the samples of a batch in lockstep, one call per step and product.
type BatchHessVecer interface {
	// HessVecBatch writes out_s = Σ_i w_si ∇²_yy c_i(x_s, y_s)·v_s for
	// rows samples; x (rows×nx), y, v, out (rows×ny) and w (rows×nc) are
	// row-major. It may use all cores.
	HessVecBatch(rows int, x, y, w, v, out []float64)
}

// Float32Batcher is implemented by batch constraints that can do their
// heavy arithmetic in single precision (Quadratic: the products A_i·y).
// AdaNP uses it with Settings.Precision Float32 for the samples that are
// still far from the constraint set, and the float64 methods for the rest
// (see Float32); a sample whose single-precision evaluation is not finite
// is evaluated again with EvalBatch.
type Float32Batcher interface {
	// EvalBatch32 is EvalBatch (with jy not nil) computed in single
	// precision where it pays, with the Jacobians returned in float32:
	// c and jy may carry relative errors of about 1e-7 of the terms
	// summed. AdaNP keeps jy in float32 while it uses it (for the Gram
	// matrix and the step), which halves the memory an evaluation writes.
	EvalBatch32(rows int, x, y, c []float64, jy []float32)
	// HessVecBatch32 is HessVecBatch (BatchHessVecer) computed in single
	// precision where it pays.
	HessVecBatch32(rows int, x, y, w, v, out []float64)
}
