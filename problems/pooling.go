package problems

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// PoolingReg is the Tikhonov ε the reference adds to G = BW⁻¹Bᵀ for the
// pooling problem (enforce.Settings.Reg); the other problems use the
// default.
const PoolingReg = 1e-3

// Pooling is the pooling problem of KKT-HardNet (Haverly 1978, Floudas et
// al. Handbook §5.2.2; paper §5.4.2): feeds A (3 % S) and B (1 % S) enter a
// pool of sulfur quality m, which is split to products X (≤ 2.5 % S) and Y
// (≤ 1.5 % S) and blended there with feed C (2 % S). The inputs are
//
//	x = (A, B, X, Y)                 (flows, abstract units)
//
// and the outputs
//
//	y = (m [% S], P_x, P_y, C_x, C_y) (pool quality; flows pool→X, pool→Y, C→X, C→Y).
//
// The constraints, exactly as in the reference code (no bounds), are
//
//	h₁ = y₂ + y₃ − x₁ − x₂ = 0             (pool balance)
//	h₂ = x₃ − y₂ − y₄ = 0                  (product X balance)
//	h₃ = x₄ − y₃ − y₅ = 0                  (product Y balance)
//	h₄ = y₁y₂ + y₁y₃ − 3x₁ − x₂ = 0        (pool sulfur balance)
//	g₁ = y₁y₂ + 2y₄ − 2.5x₃ ≤ 0            (X sulfur spec)
//	g₂ = y₁y₃ + 2y₅ − 1.5x₄ ≤ 0            (Y sulfur spec)
//
// Project with Settings.Reg = PoolingReg as the reference does.
type Pooling struct{}

// Name returns "pooling".
func (Pooling) Name() string { return "pooling" }

// Dims returns nx = 4, ny = 5.
func (Pooling) Dims() (nx, ny int) { return 4, 5 }

// Equalities returns h₁..h₄ (nc = 4), analytic. Its Capabilities declare
// JacobianX, HessVec (∂²h₄/∂y₁∂y₂ = ∂²h₄/∂y₁∂y₃ = 1) and
// MixedHessVec (zero).
func (Pooling) Equalities() enforce.Constraint { return poolingEq{} }

// Inequalities returns g₁, g₂ (nc = 2), analytic. Its Capabilities declare
// JacobianX, HessVec (∂²g₁/∂y₁∂y₂ = ∂²g₂/∂y₁∂y₃ = 1) and
// MixedHessVec (zero).
func (Pooling) Inequalities() enforce.Constraint { return poolingIneq{} }

// Constraint returns enforce.WithInequalities(h, g, FBEpsilon): 6
// constraints on (y, λ₁, λ₂).
func (p Pooling) Constraint() (enforce.Constraint, error) {
	return combine(p.Equalities(), p.Inequalities())
}

// LoadPooling reads Pooling_dataset.csv (2000 rows, raw units) and the
// split recovered from the KKT-HardNet repository,
// Pooling_dataset_split_kkthardnet_repo.csv (1600 train / 400 test, no
// validation rows; each listed in increasing row order). With dataDir ""
// it reads the copy embedded in this package; otherwise dataDir is a
// folder holding the two files, directly or in a kkt_hardnet subfolder
// (see DataDir).
func LoadPooling(dataDir string) (all Dataset, split Split, err error) {
	return loadKKTHardNet(dataDir, "Pooling_dataset.csv", "Pooling_dataset_split_kkthardnet_repo.csv",
		[]string{"x1", "x2", "x3", "x4", "y1", "y2", "y3", "y4", "y5"}, 4)
}

// poolingEq is h₁..h₄ of Pooling.
type poolingEq struct{}

func (poolingEq) Dims() (nx, ny, nc int) { return 4, 5, 4 }

func (poolingEq) Eval(x, y, c, jy []float64) {
	checkEval("poolingEq", x, y, c, jy, 4, 5, 4)
	c[0] = y[1] + y[2] - x[0] - x[1]
	c[1] = x[2] - y[1] - y[3]
	c[2] = x[3] - y[2] - y[4]
	c[3] = y[0]*y[1] + y[0]*y[2] - 3*x[0] - x[1]
	if jy == nil {
		return
	}
	clear(jy)
	const n = 5
	jy[0*n+1], jy[0*n+2] = 1, 1
	jy[1*n+1], jy[1*n+3] = -1, -1
	jy[2*n+2], jy[2*n+4] = -1, -1
	jy[3*n+0], jy[3*n+1], jy[3*n+2] = y[1]+y[2], y[0], y[0]
}

func (poolingEq) JacobianX(x, y, jx []float64) {
	checkJacobianX("poolingEq", x, y, jx, 4, 5, 4)
	clear(jx)
	const n = 4
	jx[0*n+0], jx[0*n+1] = -1, -1
	jx[1*n+2] = 1
	jx[2*n+3] = 1
	jx[3*n+0], jx[3*n+1] = -3, -1
}

func (poolingEq) HessVec(x, y, w, v, out []float64) {
	checkHess("poolingEq.HessVec", x, y, w, v, out, 4, 5, 4, 5)
	clear(out)
	out[0] = w[3] * (v[1] + v[2])
	out[1] = w[3] * v[0]
	out[2] = w[3] * v[0]
}

func (poolingEq) MixedHessVec(x, y, w, v, out []float64) {
	checkHess("poolingEq.MixedHessVec", x, y, w, v, out, 4, 5, 4, 4)
	clear(out)
}

// Capabilities declares JacobianX, HessVec and MixedHessVec.
func (c poolingEq) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{JacobianX: c.JacobianX, HessVec: c.HessVec, MixedHessVec: c.MixedHessVec}
}

// poolingIneq is g₁, g₂ of Pooling.
type poolingIneq struct{}

func (poolingIneq) Dims() (nx, ny, nc int) { return 4, 5, 2 }

func (poolingIneq) Eval(x, y, c, jy []float64) {
	checkEval("poolingIneq", x, y, c, jy, 4, 5, 2)
	c[0] = y[0]*y[1] + 2*y[3] - 2.5*x[2]
	c[1] = y[0]*y[2] + 2*y[4] - 1.5*x[3]
	if jy == nil {
		return
	}
	clear(jy)
	const n = 5
	jy[0*n+0], jy[0*n+1], jy[0*n+3] = y[1], y[0], 2
	jy[1*n+0], jy[1*n+2], jy[1*n+4] = y[2], y[0], 2
}

func (poolingIneq) JacobianX(x, y, jx []float64) {
	checkJacobianX("poolingIneq", x, y, jx, 4, 5, 2)
	clear(jx)
	const n = 4
	jx[0*n+2] = -2.5
	jx[1*n+3] = -1.5
}

func (poolingIneq) HessVec(x, y, w, v, out []float64) {
	checkHess("poolingIneq.HessVec", x, y, w, v, out, 4, 5, 2, 5)
	clear(out)
	out[0] = w[0]*v[1] + w[1]*v[2]
	out[1] = w[0] * v[0]
	out[2] = w[1] * v[0]
}

func (poolingIneq) MixedHessVec(x, y, w, v, out []float64) {
	checkHess("poolingIneq.MixedHessVec", x, y, w, v, out, 4, 5, 2, 4)
	clear(out)
}

// Capabilities declares JacobianX, HessVec and MixedHessVec.
func (c poolingIneq) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{JacobianX: c.JacobianX, HessVec: c.HessVec, MixedHessVec: c.MixedHessVec}
}

// PxInterval returns the interval [lo, hi] of pool-to-X flows P_x that the
// constraints allow at the inputs x = (A, B, X, Y), with every flow
// non-negative, once the balances fix the rest: with P = A + B, the pool
// quality m = (3A + B)/P and d = 2 − m = (B − A)/P,
//
//	P_y = P − P_x ≥ 0,  C_x = X − P_x ≥ 0,  C_y = Y − P_y ≥ 0,
//	g₁ ≤ 0  ⇔  m·P_x + 2·C_x ≤ 2.5·X  ⇔  −d·P_x ≤ 0.5·X,
//	g₂ ≤ 0  ⇔  m·P_y + 2·C_y ≤ 1.5·Y  ⇔  d·P_y ≥ 0.5·Y,
//
// so lo = max(0, P − Y) and hi = min(P, X), narrowed by the
// specifications as the sign of d says:
//
//	d > 0 (A < B, the pool below 2 % S):  lo ≥ −0.5·X/d,  hi ≤ P − 0.5·Y/d;
//	d < 0 (A > B, the pool above 2 % S):  lo ≥ P − 0.5·Y/d,  hi ≤ −0.5·X/d;
//	d = 0 (A = B):  g₂ holds for no P_x when Y > 0 (lo = +Inf then).
//
// With A > B and Y > 0 the interval is therefore empty: Y blends the pool
// with C (2 % S) and cannot meet 1.5 % S. x must have length 4; lo > hi
// means that no output satisfies the constraints. Without inflow to the
// pool (A + B ≤ 0), or with an input that is NaN or infinite, m or the
// bounds are undefined and both bounds are NaN.
func (Pooling) PxInterval(x []float64) (lo, hi float64) {
	_ = x[3]
	a, b, fx, fy := x[0], x[1], x[2], x[3]
	p := a + b
	for _, v := range x[:4] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN(), math.NaN()
		}
	}
	if !(p > 0) {
		return math.NaN(), math.NaN()
	}
	d := (b - a) / p
	lo = math.Max(0, p-fy)
	hi = math.Min(p, fx)
	switch {
	case d > 0:
		lo = math.Max(lo, -0.5*fx/d)
		hi = math.Min(hi, p-0.5*fy/d)
	case d < 0:
		lo = math.Max(lo, p-0.5*fy/d)
		hi = math.Min(hi, -0.5*fx/d)
	case fy > 0:
		lo = math.Inf(1)
	}
	return lo, hi
}

// ConditionalMean writes to y (length 5) the best prediction from x in
// mean squared error when P_x is uniform on PxInterval(x), as it is in the
// KKT-HardNet data (TestPoolingFreeFlow): with P_x at the interval's
// midpoint, y = (m, P_x, P − P_x, X − P_x, Y − P + P_x). It satisfies the
// four balances and both specifications. Where PxInterval is NaN, or the
// interval is empty (no output satisfies the constraints, so there is no
// such prediction), every element of y is NaN. Its squared error on a
// data set is the floor that no surrogate can beat in expectation (on a
// finite data set one can land below it by chance), and FloorMSE gives
// the floor's expectation.
func (p Pooling) ConditionalMean(x, y []float64) {
	_, _ = x[3], y[4]
	lo, hi := p.PxInterval(x)
	if !(lo <= hi) {
		for i := range y[:5] {
			y[i] = math.NaN()
		}
		return
	}
	pool := x[0] + x[1]
	mid := (lo + hi) / 2
	y[0] = (3*x[0] + x[1]) / pool
	y[1] = mid
	y[2] = pool - mid
	y[3] = x[2] - mid
	y[4] = x[3] - pool + mid
}

// ConditionalMeanErrors returns, for each row of d, the squared error of
// ConditionalMean averaged over the five outputs. Their mean over a test
// set is that set's floor: the MSE of the best prediction from x there.
func (p Pooling) ConditionalMeanErrors(d Dataset) []float64 {
	e := make([]float64, d.Len())
	y := make([]float64, 5)
	for i := range e {
		p.ConditionalMean(d.X.RawRowView(i), y)
		for j, v := range y {
			r := v - d.Y.At(i, j)
			e[i] += r * r / 5
		}
	}
	return e
}

// FloorMSE returns the expected mean squared error over the five outputs
// of ConditionalMean at the inputs x when P_x is uniform on
// PxInterval(x): P_x's variance (hi − lo)²/12 in four of the five outputs,
// (4/5)·(hi − lo)²/12, averaged over the rows of x. It is NaN when a
// row's interval is NaN or empty, where ConditionalMean is NaN.
func (p Pooling) FloorMSE(x *mat.Dense) float64 {
	r, _ := x.Dims()
	var s float64
	for i := 0; i < r; i++ {
		lo, hi := p.PxInterval(x.RawRowView(i))
		if !(lo <= hi) {
			return math.NaN()
		}
		s += 0.8 * (hi - lo) * (hi - lo) / 12
	}
	return s / float64(r)
}
