package enforce

import (
	"math"
	"math/rand/v2"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// ctFDTol is the relative tolerance of the comparisons with central finite
// differences: the truncation error of fd.Central at its default step is
// about 1e-10 times the third derivative, the rounding error about 1e-11
// times |c|.
const ctFDTol = 1e-6

// ctRaceEnabled reports whether the test binary was built with -race, under
// which sync.Pool drops a random share of Puts and allocation counts are
// meaningless.
func ctRaceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// ctAssertZeroAllocs checks that f does not allocate after a warm-up call.
func ctAssertZeroAllocs(t *testing.T, name string, f func()) {
	t.Helper()
	if ctRaceEnabled() {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	f()
	assert.Zero(t, testing.AllocsPerRun(100, f), "%s allocates", name)
}

// ctRandVec returns n values uniform in [lo, hi).
func ctRandVec(rnd *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rnd.Float64()
	}
	return v
}

// ctRandSym returns an n×n symmetric matrix with N(0, 1) elements.
func ctRandSym(rnd *rand.Rand, n int) *mat.SymDense {
	a := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			a.SetSym(i, j, rnd.NormFloat64())
		}
	}
	return a
}

// ctRandDense returns an r×c matrix with N(0, 1) elements.
func ctRandDense(rnd *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			m.Set(i, j, rnd.NormFloat64())
		}
	}
	return m
}

// ctCubeRHS is r(x) = x³ elementwise (nc = nx), the right-hand side of the
// paper's nonlinear benchmark.
func ctCubeRHS(x, r, jx []float64) {
	n := len(x)
	for i, v := range x {
		r[i] = v * v * v
	}
	if jx == nil {
		return
	}
	clear(jx)
	for i, v := range x {
		jx[i*n+i] = 3 * v * v
	}
}

// ctEval returns c(x, y) and ∂c/∂y, after checking that Eval with and
// without jy agree on c.
func ctEval(t *testing.T, c Constraint, x, y []float64) (cv, jy []float64) {
	t.Helper()
	_, ny, nc := c.Dims()
	cv = make([]float64, nc)
	jy = make([]float64, nc*ny)
	c.Eval(x, y, cv, jy)
	plain := make([]float64, nc)
	c.Eval(x, y, plain, nil)
	ctAssertClose(t, cv, plain, 1e-14, "c from Eval with and without jy")
	return cv, jy
}

// ctAssertClose checks |got_k − want_k| ≤ tol·max(1, max_k |want_k|) for all
// k, and that the lengths agree.
func ctAssertClose(t *testing.T, want, got []float64, tol float64, msgAndArgs ...any) {
	t.Helper()
	require.Len(t, got, len(want), msgAndArgs...)
	scale := 1.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	var worst float64
	at := -1
	for k := range want {
		if d := math.Abs(got[k] - want[k]); !(d <= worst) {
			worst, at = d, k
		}
	}
	if at >= 0 && !(worst <= tol*scale) {
		assert.Failf(t, "values differ",
			"element %d: got %v, want %v (|diff| = %.3g > tol·scale = %.3g)\ngot  %v\nwant %v",
			at, got[at], want[at], worst, tol*scale, got, want)
		if len(msgAndArgs) > 0 {
			t.Log(msgAndArgs...)
		}
	}
}

// ctCheckJacobian compares ∂c/∂y from Eval with central finite differences.
func ctCheckJacobian(t *testing.T, c Constraint, x, y []float64, tol float64) {
	t.Helper()
	_, ny, nc := c.Dims()
	_, jy := ctEval(t, c, x, y)
	want := mat.NewDense(nc, ny, nil)
	fd.Jacobian(want, func(dst, yy []float64) { c.Eval(x, yy, dst, nil) }, y,
		&fd.JacobianSettings{Formula: fd.Central})
	ctAssertClose(t, want.RawMatrix().Data, jy, tol, "∂c/∂y")
}

// ctCheckJacobianX compares JacobianX with central finite differences.
func ctCheckJacobianX(t *testing.T, c Constraint, x, y []float64, tol float64) {
	t.Helper()
	nx, _, nc := c.Dims()
	require.NotNil(t, CapabilitiesOf(c).JacobianX)
	got := make([]float64, nc*nx)
	CapabilitiesOf(c).JacobianX(x, y, got)
	if nx == 0 {
		return
	}
	want := mat.NewDense(nc, nx, nil)
	fd.Jacobian(want, func(dst, xx []float64) { c.Eval(xx, y, dst, nil) }, x,
		&fd.JacobianSettings{Formula: fd.Central})
	ctAssertClose(t, want.RawMatrix().Data, got, tol, "∂c/∂x")
}

// ctCheckHessVec compares HessVec with central finite differences of
// y ↦ (∂c/∂y)ᵀw, whose Jacobian is Σ_i w_i ∇²_yy c_i.
func ctCheckHessVec(t *testing.T, c Constraint, x, y, w, v []float64, tol float64) {
	t.Helper()
	_, ny, nc := c.Dims()
	require.NotNil(t, CapabilitiesOf(c).HessVec)
	got := make([]float64, ny)
	CapabilitiesOf(c).HessVec(x, y, w, v, got)
	cv := make([]float64, nc)
	jy := make([]float64, nc*ny)
	h := mat.NewDense(ny, ny, nil)
	fd.Jacobian(h, func(dst, yy []float64) {
		c.Eval(x, yy, cv, jy)
		mat.NewVecDense(ny, dst).MulVec(mat.NewDense(nc, ny, jy).T(), mat.NewVecDense(nc, w))
	}, y, &fd.JacobianSettings{Formula: fd.Central})
	want := mat.NewVecDense(ny, nil)
	want.MulVec(h, mat.NewVecDense(ny, v))
	ctAssertClose(t, want.RawVector().Data, got, tol, "Σ w_i ∇²c_i v")
}

// ctCheckMixedHessVec compares MixedHessVec with central finite differences
// of x ↦ wᵀ(∂c/∂y)v, whose gradient is Σ_i w_i ∇²_xy c_i v.
func ctCheckMixedHessVec(t *testing.T, c Constraint, x, y, w, v []float64, tol float64) {
	t.Helper()
	nx, ny, nc := c.Dims()
	require.NotNil(t, CapabilitiesOf(c).MixedHessVec)
	got := make([]float64, nx)
	CapabilitiesOf(c).MixedHessVec(x, y, w, v, got)
	if nx == 0 {
		return
	}
	cv := make([]float64, nc)
	jy := make([]float64, nc*ny)
	want := fd.Gradient(nil, func(xx []float64) float64 {
		c.Eval(xx, y, cv, jy)
		return mat.Inner(mat.NewVecDense(nc, w), mat.NewDense(nc, ny, jy), mat.NewVecDense(ny, v))
	}, x, &fd.Settings{Formula: fd.Central})
	ctAssertClose(t, want, got, tol, "Σ w_i ∇²_xy c_i v")
}

// ctCheckDerivatives runs every derivative check that c provides at a point
// with x uniform in [xlo, xhi) and y in [ylo, yhi), drawn from seed.
func ctCheckDerivatives(t *testing.T, c Constraint, seed uint64, xlo, xhi, ylo, yhi float64) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 0))
	nx, ny, nc := c.Dims()
	x := ctRandVec(rnd, nx, xlo, xhi)
	y := ctRandVec(rnd, ny, ylo, yhi)
	w := ctRandVec(rnd, nc, -1, 1)
	v := ctRandVec(rnd, ny, -1, 1)
	ctCheckJacobian(t, c, x, y, ctFDTol)
	if CapabilitiesOf(c).JacobianX != nil {
		ctCheckJacobianX(t, c, x, y, ctFDTol)
	}
	if CapabilitiesOf(c).HessVec != nil {
		ctCheckHessVec(t, c, x, y, w, v, ctFDTol)
	}
	if CapabilitiesOf(c).MixedHessVec != nil {
		ctCheckMixedHessVec(t, c, x, y, w, v, ctFDTol)
	}
}

// ctEvalOnly is a constraint with Eval only, for capability tests: c = y − x
// over the first min(nx, ny) components, c = y elsewhere.
type ctEvalOnly struct{ nx, ny int }

func (e ctEvalOnly) Dims() (nx, ny, nc int) { return e.nx, e.ny, e.ny }

func (e ctEvalOnly) Eval(x, y, c, jy []float64) {
	copy(c, y)
	for k := range min(len(x), len(y)) {
		c[k] -= x[k]
	}
	if jy != nil {
		clear(jy)
		for j := range e.ny {
			jy[j*e.ny+j] = 1
		}
	}
}

// ctCaps returns the names of the capabilities c declares, in the order of
// Capabilities' fields.
func ctCaps(c Constraint) []string {
	k := CapabilitiesOf(c)
	var names []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"JacobianX", k.JacobianX != nil},
		{"HessVec", k.HessVec != nil},
		{"MixedHessVec", k.MixedHessVec != nil},
		{"ConstantJacobian", k.ConstantJacobian != nil},
		{"Latent", k.Latent != 0},
		{"EvalBatch", k.EvalBatch != nil},
		{"HessVecBatch", k.HessVecBatch != nil},
		{"EvalBatch32", k.EvalBatch32 != nil},
		{"HessVecBatch32", k.HessVecBatch32 != nil},
	} {
		if f.has {
			names = append(names, f.name)
		}
	}
	return names
}
