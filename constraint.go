package enforce

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Constraint is a system of nc equality constraints c(x, y) = 0 on a
// prediction y ∈ ℝ^ny given an input x ∈ ℝ^nx, evaluated one sample at a time.
//
// Eval writes c(x, y) into c (length nc) and, when jy is not nil, the Jacobian
// ∂c/∂y into jy in row-major order (nc×ny: jy[i*ny+j] = ∂c_i/∂y_j).
// Eval must not retain or modify x and y, must not allocate in steady state,
// and must be safe to call from several goroutines at once: AdaNP evaluates
// the samples of a batch in parallel.
//
// Everything else a constraint can do (derivatives with respect to x,
// curvature, a constant Jacobian, latent variables, batched and
// single-precision evaluation) is declared in one place: the Capabilities
// it returns if it implements Capable. Func, Linear, Quadratic, Stack and
// WithInequalities do; a hand-written constraint may.
type Constraint interface {
	// Dims returns the sizes of x, y and c.
	Dims() (nx, ny, nc int)
	// Eval writes c(x, y) into c and, if jy != nil, ∂c/∂y (nc×ny, row-major) into jy.
	Eval(x, y, c, jy []float64)
}

// Capable is implemented by constraints that can do more than Eval. AdaNP,
// Stack, WithInequalities and the losses and train packages call
// Capabilities once, when they are built, and keep the functions it
// returns: its result must not change afterwards.
type Capable interface {
	Constraint
	Capabilities() Capabilities
}

// Capabilities declares what a constraint can do beyond Dims and Eval, in
// the style of gonum/optimize's Problem: every field is optional, and a nil
// (or zero) field means the constraint does not have that capability. The
// functions follow Eval's rules: they must not retain or modify their
// inputs, must not allocate in steady state, and must be safe for
// concurrent use. All slices are row-major.
//
// A wrapper (Stack, WithInequalities) builds its Capabilities from its
// parts' when it is constructed: a field is set when every part provides
// what it needs, or when the wrapper can build it from what the parts have
// (a Stack of a Quadratic and a Func evaluates batches with the Quadratic's
// EvalBatch and the Func's Eval). No capability is lost by wrapping.
//
// What AdaNP does with each field:
//
//	JacobianX        gradients with respect to x
//	HessVec          the exact Unrolled and Implicit gradients (curvature in y)
//	MixedHessVec     the exact x-gradient when ∂c/∂y depends on x
//	ConstantJacobian one factorisation of G per AdaNP instead of per sample and step
//	Latent           latent variables appended as zeros and dropped (WithInequalities)
//	EvalBatch        the samples of a batch advance in lockstep, one call per step
//	HessVecBatch     VJP back-propagates a batch in lockstep, one call per step
//	EvalBatch32      Settings.Precision Float32: evaluations far from the set in single precision
//	HessVecBatch32   Settings.Precision Float32: curvature products in single precision
//	Sparse           the sparse path: cost and memory follow the nonzeros of ∂c/∂y
type Capabilities struct {
	// JacobianX writes ∂c/∂x at (x, y) into jx (nc×nx).
	JacobianX func(x, y, jx []float64)
	// HessVec writes out = Σ_i w_i ∇²_yy c_i(x, y) · v, with w of length
	// nc and v, out of length ny.
	HessVec func(x, y, w, v, out []float64)
	// MixedHessVec writes out = Σ_i w_i ∇²_xy c_i(x, y) · v, that is
	// out_k = Σ_i Σ_j w_i ∂²c_i/∂x_k∂y_j v_j, with w of length nc, v of
	// length ny and out of length nx.
	MixedHessVec func(x, y, w, v, out []float64)
	// ConstantJacobian, if not nil, is ∂c/∂y (nc×ny) for every x and y:
	// the constraint is affine in y with a constant matrix. It must not be
	// modified.
	ConstantJacobian []float64
	// Latent is the number of trailing variables of y that are internal
	// to the constraint system rather than predicted, such as the
	// Fischer–Burmeister multipliers added by WithInequalities. AdaNP
	// appends them as zeros before projecting and drops them afterwards,
	// so a caller sees only the first ny − Latent variables.
	Latent int
	// EvalBatch evaluates rows samples at once, faster than one by one
	// (Quadratic computes every A_i·y of the batch with one matrix
	// product). x (rows×nx), y (rows×ny) and c (rows×nc) are row-major;
	// jy, when not nil, receives the rows Jacobians one after another
	// (rows×nc×ny). It may use all cores.
	EvalBatch func(rows int, x, y, c, jy []float64)
	// HessVecBatch writes out_s = Σ_i w_si ∇²_yy c_i(x_s, y_s)·v_s for
	// rows samples; x (rows×nx), y, v, out (rows×ny) and w (rows×nc). It
	// may use all cores.
	HessVecBatch func(rows int, x, y, w, v, out []float64)
	// EvalBatch32 is EvalBatch with jy not nil, computed in single
	// precision where it pays, with the Jacobians returned in float32: c
	// and jy may carry relative errors of about 1e-7 of the terms summed.
	// A Jacobian entry that is not finite must make its sample's c not
	// finite too. AdaNP uses it with Settings.Precision Float32 for the
	// samples still far from the constraint set, and EvalBatch (or Eval)
	// for the rest; a sample whose single-precision evaluation is not
	// finite is evaluated again in float64.
	EvalBatch32 func(rows int, x, y, c []float64, jy []float32)
	// HessVecBatch32 is HessVecBatch computed in single precision where it
	// pays.
	HessVecBatch32 func(rows int, x, y, w, v, out []float64)
	// Sparse, if not nil, declares the sparsity pattern of ∂c/∂y and
	// evaluates its values in that pattern (see SparseJacobian).
	Sparse *SparseJacobian

	// finiteJ: c is not finite wherever the Jacobian is not (at finite
	// y), so the projection need not scan J.
	finiteJ bool
	// linear is set by Linear: AdaNP projects batches of it with matrix
	// products (linbatch.go).
	linear *linearConstraint
	// feasibility, if set, writes the residual a user checks at (x, y),
	// y without latent variables, when it is not c itself
	// (WithInequalities: the equalities and max(g, 0)).
	feasibility func(x, y, r []float64)
	// feasEq is the number of leading rows of c that are also the
	// leading rows of feasibility's residual (WithInequalities: its
	// equalities), so that c alone can show that a point is not yet
	// feasible.
	feasEq int
}

// CapabilitiesOf returns what c declares it can do: c.Capabilities() if c
// is Capable, and no capability otherwise (see CheckCapable for a
// constraint whose methods look like capabilities).
func CapabilitiesOf(c Constraint) Capabilities {
	if k, ok := c.(Capable); ok {
		return k.Capabilities()
	}
	return Capabilities{}
}

// CheckResidual writes to r (length nc) the residual that AdaNP.Check
// measures for the constraint c at (x, y), where y holds the predicted
// outputs only (length ny − Latent of c's ny): c(x, y) itself for a
// constraint without latent variables; for a system built by
// WithInequalities, the equality residuals eq(x, y) followed by the
// inequality violations max(g_j(x, y), 0), which do not depend on the
// multipliers; for any other constraint with latent variables, c at
// (y, 0), the latent variables at zero as AdaNP starts them. Its largest
// |r_k| is thus the largest constraint violation a caller can check on y.
// It returns an error if x, y or r has the wrong length; a panic in c's
// code propagates.
func CheckResidual(c Constraint, x, y, r []float64) error {
	nx, n, nc := c.Dims()
	k := CapabilitiesOf(c)
	ny := n - k.Latent
	if len(x) != nx || len(y) != ny || len(r) != nc {
		return fmt.Errorf("enforce: CheckResidual: len(x), len(y), len(r) = %d, %d, %d, want %d, %d, %d",
			len(x), len(y), len(r), nx, ny, nc)
	}
	switch {
	case k.feasibility != nil:
		k.feasibility(x, y, r)
	case k.Latent == 0:
		c.Eval(x, y, r, nil)
	default:
		yy := make([]float64, n)
		copy(yy, y)
		c.Eval(x, yy, r, nil)
	}
	return nil
}

// CheckCapable returns an error if c is not Capable but has a method
// named like a field of Capabilities (HessVec, JacobianX, MixedHessVec,
// EvalBatch, …): CapabilitiesOf(c) would declare no capability, and the
// method would never be called (the Unrolled gradient, for one, would drop
// the curvature that HessVec gives). The error names the methods and the
// fix, a Capabilities method returning them. It returns nil for every other
// constraint, Capable or not. NewAdaNP, Stack, WithInequalities and the
// losses and train packages call it where they read a constraint's
// Capabilities.
func CheckCapable(c Constraint) error {
	if err := capableError(c); err != nil {
		return fmt.Errorf("enforce: %w", err)
	}
	return nil
}

// capableError is CheckCapable's error without the package prefix.
func capableError(c Constraint) error {
	if c == nil {
		return nil
	}
	if _, ok := c.(Capable); ok {
		return nil
	}
	t := reflect.TypeOf(c)
	var named []string
	fields := reflect.TypeFor[Capabilities]()
	for i := range fields.NumField() {
		f := fields.Field(i)
		if !f.IsExported() {
			continue
		}
		_, onT := t.MethodByName(f.Name)
		onPtr := false
		if t.Kind() != reflect.Pointer {
			_, onPtr = reflect.PointerTo(t).MethodByName(f.Name)
		}
		if onT || onPtr {
			named = append(named, f.Name)
		}
	}
	if named == nil {
		return nil
	}
	var lit strings.Builder
	for i, n := range named {
		if i > 0 {
			lit.WriteString(", ")
		}
		fmt.Fprintf(&lit, "%s: c.%s", n, n)
	}
	return fmt.Errorf("constraint %v has methods %s but no Capabilities method, so none of them would be used: "+
		"implement enforce.Capable, e.g. func (c %v) Capabilities() enforce.Capabilities { return enforce.Capabilities{%s} }",
		t, strings.Join(named, ", "), t, lit.String())
}

// check returns an error unless the capabilities fit a constraint of the
// given sizes.
func (k *Capabilities) check(nx, ny, nc int) error {
	switch {
	case k.Latent < 0 || k.Latent >= ny:
		return fmt.Errorf("constraint has %d latent variables out of ny = %d", k.Latent, ny)
	case k.ConstantJacobian != nil && len(k.ConstantJacobian) != nc*ny:
		return fmt.Errorf("constant Jacobian has length %d, want nc·ny = %d", len(k.ConstantJacobian), nc*ny)
	case k.Sparse != nil:
		return k.Sparse.check(ny, nc)
	}
	return nil
}

// RHS is a right-hand side r(x) of nc components that depends on the input
// only, as used by Linear and Quadratic. It writes r(x) into r and, when jx
// is not nil, ∂r/∂x (nc×nx, row-major) into jx. A nil RHS means r(x) = 0.
type RHS func(x, r, jx []float64)

// checkConstraintArg returns an error unless c is a usable part of a
// wrapper: not nil, not a nil pointer, with nx ≥ 0, ny ≥ 1 and nc ≥ 1, and
// without latent variables. It returns c's sizes and capabilities.
func checkConstraintArg(c Constraint) (nx, ny, nc int, k Capabilities, err error) {
	if c == nil {
		return 0, 0, 0, k, errors.New("nil constraint")
	}
	if v := reflect.ValueOf(c); v.Kind() == reflect.Pointer && v.IsNil() {
		return 0, 0, 0, k, fmt.Errorf("nil %T constraint", c)
	}
	nx, ny, nc = c.Dims()
	if nx < 0 || ny < 1 || nc < 1 {
		return 0, 0, 0, k, fmt.Errorf("constraint has invalid dimensions (nx, ny, nc) = (%d, %d, %d)", nx, ny, nc)
	}
	if err := capableError(c); err != nil {
		return 0, 0, 0, k, err
	}
	k = CapabilitiesOf(c)
	if k.Latent != 0 {
		return 0, 0, 0, k, fmt.Errorf("constraint has %d latent variables; apply WithInequalities last", k.Latent)
	}
	if err := k.check(nx, ny, nc); err != nil {
		return 0, 0, 0, k, err
	}
	return nx, ny, nc, k, nil
}
