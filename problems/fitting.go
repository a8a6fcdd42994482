package problems

import (
	"fmt"
	"math"

	"github.com/enforce-nn/enforce"
	"gonum.org/v1/gonum/mat"
)

// DefaultFrequency is the frequency f of FittingEquality used in the
// paper's main results.
const DefaultFrequency = 5

// FittingEquality is the function-fitting benchmark with one nonlinear
// equality constraint (paper §5.1): a scalar input x ∈ [−2, 2] and the
// targets
//
//	y₁(x) = 2 sin(f·x),   y₂(x) = −sin²(f·x) − x²,
//
// which satisfy c(x, y) = (½y₁)² + x² + y₂ = 0. The constraint does not
// depend on f. The paper trains on 100 points (the reference code on 1000)
// and tests on 100,000, both uniform on [−2, 2].
//
// The zero value is ready to use, with f = DefaultFrequency.
type FittingEquality struct {
	// Freq is the frequency f; zero means DefaultFrequency.
	Freq float64
}

// freq returns f with the default applied.
func (p FittingEquality) freq() float64 {
	if p.Freq == 0 {
		return DefaultFrequency
	}
	return p.Freq
}

// Name returns "fitting-equality".
func (FittingEquality) Name() string { return "fitting-equality" }

// Dims returns nx = 1, ny = 2.
func (FittingEquality) Dims() (nx, ny int) { return 1, 2 }

// Equalities returns c(x, y) = ¼y₁² + x² + y₂ (nc = 1), analytic, with
// ∂c/∂y = [½y₁, 1], ∂c/∂x = 2x, ∇²_yy c = diag(½, 0) and ∇²_xy c = 0.
// Its Capabilities declare JacobianX, HessVec and MixedHessVec.
func (FittingEquality) Equalities() enforce.Constraint { return fittingEq{} }

// Inequalities returns nil: there are none.
func (FittingEquality) Inequalities() enforce.Constraint { return nil }

// Constraint returns Equalities.
func (p FittingEquality) Constraint() (enforce.Constraint, error) { return p.Equalities(), nil }

// Truth writes the noise-free targets (y₁(x), y₂(x)) into y (length 2).
func (p FittingEquality) Truth(x float64, y []float64) {
	s := math.Sin(p.freq() * x)
	y[0] = 2 * s
	y[1] = -s*s - x*x
}

// Sample returns n noise-free samples with x ~ U(−2, 2) drawn from a PCG
// generator seeded by seed, and Y given by Truth.
func (p FittingEquality) Sample(n int, seed uint64) Dataset {
	rnd := newRand(seed, streamFitting)
	return sample(n, 1, 2, func(x, y []float64) {
		x[0] = -2 + 4*rnd.Float64()
		p.Truth(x[0], y)
	})
}

// sample builds an n-row Dataset by calling fill on each row in turn. It
// panics if n < 0.
func sample(n, nx, ny int, fill func(x, y []float64)) Dataset {
	if n < 0 {
		panic(fmt.Sprintf("problems: negative sample count %d", n))
	}
	if n == 0 {
		return Dataset{}
	}
	d := Dataset{X: mat.NewDense(n, nx, nil), Y: mat.NewDense(n, ny, nil)}
	for i := range n {
		fill(d.X.RawRowView(i), d.Y.RawRowView(i))
	}
	return d
}

// fittingEq is c = ¼y₁² + x² + y₂.
type fittingEq struct{}

func (fittingEq) Dims() (nx, ny, nc int) { return 1, 2, 1 }

func (fittingEq) Eval(x, y, c, jy []float64) {
	checkEval("fittingEq", x, y, c, jy, 1, 2, 1)
	c[0] = 0.25*y[0]*y[0] + x[0]*x[0] + y[1]
	if jy != nil {
		jy[0] = 0.5 * y[0]
		jy[1] = 1
	}
}

func (fittingEq) JacobianX(x, y, jx []float64) {
	checkJacobianX("fittingEq", x, y, jx, 1, 2, 1)
	jx[0] = 2 * x[0]
}

func (fittingEq) HessVec(x, y, w, v, out []float64) {
	checkHess("fittingEq.HessVec", x, y, w, v, out, 1, 2, 1, 2)
	out[0] = 0.5 * w[0] * v[0]
	out[1] = 0
}

func (fittingEq) MixedHessVec(x, y, w, v, out []float64) {
	checkHess("fittingEq.MixedHessVec", x, y, w, v, out, 1, 2, 1, 1)
	out[0] = 0
}

// Capabilities declares JacobianX, HessVec and MixedHessVec.
func (c fittingEq) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{JacobianX: c.JacobianX, HessVec: c.HessVec, MixedHessVec: c.MixedHessVec}
}

// Cusp is the regression benchmark whose constraint has a cusp, so its
// zero set is not locally C^{1,1} at the origin (paper, appendix "Zero-set
// not locally C^{1,1}"): x ∈ [−2, 2] and the targets
//
//	y₁(x) = sin x,   y₂(x) = (sin² x)^{1/3},
//
// which satisfy c(y) = y₁² − y₂³ = 0. The paper trains on 100 points and
// tests on 100,000, uniform on [−2, 2].
type Cusp struct{}

// Name returns "cusp".
func (Cusp) Name() string { return "cusp" }

// Dims returns nx = 1, ny = 2.
func (Cusp) Dims() (nx, ny int) { return 1, 2 }

// Equalities returns c(x, y) = y₁² − y₂³ (nc = 1), analytic, with
// ∂c/∂y = [2y₁, −3y₂²], ∂c/∂x = 0, ∇²_yy c = diag(2, −6y₂) and
// ∇²_xy c = 0. Its Capabilities declare JacobianX, HessVec and MixedHessVec.
func (Cusp) Equalities() enforce.Constraint { return cuspEq{} }

// Inequalities returns nil: there are none.
func (Cusp) Inequalities() enforce.Constraint { return nil }

// Constraint returns Equalities.
func (p Cusp) Constraint() (enforce.Constraint, error) { return p.Equalities(), nil }

// Truth writes the targets (sin x, ∛(sin² x)) into y (length 2).
func (Cusp) Truth(x float64, y []float64) {
	s := math.Sin(x)
	y[0] = s
	y[1] = math.Cbrt(s * s)
}

// Sample returns n noise-free samples with x ~ U(−2, 2) drawn from a PCG
// generator seeded by seed, and Y given by Truth.
func (p Cusp) Sample(n int, seed uint64) Dataset {
	rnd := newRand(seed, streamCusp)
	return sample(n, 1, 2, func(x, y []float64) {
		x[0] = -2 + 4*rnd.Float64()
		p.Truth(x[0], y)
	})
}

// cuspEq is c = y₁² − y₂³.
type cuspEq struct{}

func (cuspEq) Dims() (nx, ny, nc int) { return 1, 2, 1 }

func (cuspEq) Eval(x, y, c, jy []float64) {
	checkEval("cuspEq", x, y, c, jy, 1, 2, 1)
	c[0] = y[0]*y[0] - y[1]*y[1]*y[1]
	if jy != nil {
		jy[0] = 2 * y[0]
		jy[1] = -3 * y[1] * y[1]
	}
}

func (cuspEq) JacobianX(x, y, jx []float64) {
	checkJacobianX("cuspEq", x, y, jx, 1, 2, 1)
	jx[0] = 0
}

func (cuspEq) HessVec(x, y, w, v, out []float64) {
	checkHess("cuspEq.HessVec", x, y, w, v, out, 1, 2, 1, 2)
	out[0] = 2 * w[0] * v[0]
	out[1] = -6 * w[0] * y[1] * v[1]
}

func (cuspEq) MixedHessVec(x, y, w, v, out []float64) {
	checkHess("cuspEq.MixedHessVec", x, y, w, v, out, 1, 2, 1, 1)
	out[0] = 0
}

// Capabilities declares JacobianX, HessVec and MixedHessVec.
func (c cuspEq) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{JacobianX: c.JacobianX, HessVec: c.HessVec, MixedHessVec: c.MixedHessVec}
}
