package enforce

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/affine"
)

// Linear returns the constraint system affine in y
//
//	c(x, y) = C·y − r(x) = 0,
//
// with C a constant nc×ny matrix, which Linear copies, and r an RHS of nc
// components of x ∈ ℝ^nx; a nil r means r(x) = 0. The Jacobians are
// ∂c/∂y = C and ∂c/∂x = −∂r/∂x; the second derivatives are zero. Its
// Capabilities declare C as the constant Jacobian, so AdaNP factors CW⁻¹Cᵀ
// once; and AdaNP evaluates r once per sample and computes the steps of a
// whole block of samples, and their gradients, with matrix products (see
// AdaNP: the results are those of the per-sample steps up to rounding).
// Likewise the losses package's Residual, SoftPenalty and HingePenalty,
// and the residuals that package train reports, evaluate C·y − r(x) for a
// whole batch with matrix products.
//
// Linear returns an error if nx < 0, C is nil or empty, or C has a NaN or
// infinite element.
func Linear(nx int, C *mat.Dense, r RHS) (Constraint, error) {
	if nx < 0 {
		return nil, fmt.Errorf("enforce: Linear: nx = %d, want nx ≥ 0", nx)
	}
	if C == nil || C.IsEmpty() {
		return nil, errors.New("enforce: Linear: C is nil or empty")
	}
	nc, ny := C.Dims()
	cm := make([]float64, nc*ny)
	for i := range nc {
		for j := range ny {
			v := C.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("enforce: Linear: C[%d, %d] = %v, want finite", i, j, v)
			}
			cm[i*ny+j] = v
		}
	}
	l := &linearConstraint{nx: nx, ny: ny, nc: nc, c: cm, r: r}
	l.caps = Capabilities{JacobianX: l.JacobianX, HessVec: l.HessVec, MixedHessVec: l.MixedHessVec, ConstantJacobian: cm, linear: l}
	l.pool.New = func() any {
		s := make([]float64, nc)
		return &s
	}
	return l, nil
}

// linearConstraint is the Constraint returned by Linear.
type linearConstraint struct {
	nx, ny, nc int
	c          []float64 // C, nc×ny row-major.
	r          RHS       // may be nil.
	pool       sync.Pool // *[]float64 of length nc, for r(x) in JacobianX.
	caps       Capabilities
	aff        struct {
		once sync.Once
		r    *affine.Residual
	}
}

var _ affine.Provider = (*linearConstraint)(nil)

// AffineResidual returns the batched evaluator of C·y − r(x), built on
// first use, through which packages losses and train evaluate the
// residuals of a batch with matrix products.
func (l *linearConstraint) AffineResidual() *affine.Residual {
	l.aff.once.Do(func() { l.aff.r = affine.New(l.nx, l.ny, l.nc, l.c, l.r) })
	return l.aff.r
}

var _ Capable = (*linearConstraint)(nil)

// Capabilities returns JacobianX, HessVec, MixedHessVec and the constant
// Jacobian C.
func (l *linearConstraint) Capabilities() Capabilities { return l.caps }

// Dims returns the sizes of x, y and c.
func (l *linearConstraint) Dims() (nx, ny, nc int) { return l.nx, l.ny, l.nc }

// Eval writes c = C·y − r(x) into c and, if jy != nil, C into jy.
func (l *linearConstraint) Eval(x, y, c, jy []float64) {
	checkEvalLen("Linear.Eval", l.nx, l.ny, l.nc, x, y, c, jy)
	beta := 0.0
	if l.r != nil {
		l.r(x, c, nil)
		beta = -1
	}
	blas64.Gemv(blas.NoTrans, 1, l.matrix(), blas64.Vector{N: l.ny, Inc: 1, Data: y},
		beta, blas64.Vector{N: l.nc, Inc: 1, Data: c})
	if jy != nil {
		copy(jy, l.c)
	}
}

// matrix returns C as a blas64.General.
func (l *linearConstraint) matrix() blas64.General {
	return blas64.General{Rows: l.nc, Cols: l.ny, Stride: l.ny, Data: l.c}
}

// JacobianX writes ∂c/∂x = −∂r/∂x (nc×nx, row-major) into jx.
func (l *linearConstraint) JacobianX(x, y, jx []float64) {
	checkJacobianXLen("Linear.JacobianX", l.nx, l.ny, l.nc, x, y, jx)
	clear(jx)
	if l.r == nil {
		return
	}
	s := l.pool.Get().(*[]float64)
	l.r(x, *s, jx)
	l.pool.Put(s)
	for k := range jx {
		jx[k] = -jx[k]
	}
}

// HessVec writes out = 0: c is affine in y.
func (l *linearConstraint) HessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Linear.HessVec", l.nx, l.ny, l.nc, l.ny, x, y, w, v, out)
	clear(out)
}

// MixedHessVec writes out = 0: ∂c/∂y does not depend on x.
func (l *linearConstraint) MixedHessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Linear.MixedHessVec", l.nx, l.ny, l.nc, l.nx, x, y, w, v, out)
	clear(out)
}
