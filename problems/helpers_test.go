package problems

import (
	"math"
	"testing"

	"github.com/enforce-nn/enforce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// dataDirOrSkip returns DataDir's folder: "" (the embedded copy) unless
// ENFORCE_DATA is set. It no longer skips: the data ship with the package.
func dataDirOrSkip(t *testing.T) string {
	t.Helper()
	dir, err := DataDir()
	require.NoError(t, err)
	return dir
}

// assertClose asserts |got_i − want_i| ≤ tol·(1 + |want_i|) elementwise.
func assertClose(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*(1+math.Abs(want[i]))) {
			assert.Failf(t, "mismatch", "%s[%d]: got %.17g, want %.17g (tol %g)", what, i, got[i], want[i], tol)
		}
	}
}

// centralJacobian returns the central finite-difference Jacobian of f
// (m outputs) at z as a row-major m×len(z) slice.
func centralJacobian(m int, f func(out, z []float64), z []float64) []float64 {
	dst := mat.NewDense(m, len(z), nil)
	fd.Jacobian(dst, f, z, &fd.JacobianSettings{Formula: fd.Central})
	return dst.RawMatrix().Data
}

// checkDerivatives compares every derivative c provides at (x, y) with
// central finite differences, using random weights w and direction v.
func checkDerivatives(t *testing.T, c enforce.Constraint, x, y, w, v []float64, tol float64) {
	t.Helper()
	nx, ny, nc := c.Dims()
	require.Len(t, x, nx)
	require.Len(t, y, ny)
	cv := make([]float64, nc)
	jy := make([]float64, nc*ny)
	c.Eval(x, y, cv, jy)
	c2 := make([]float64, nc)
	c.Eval(x, y, c2, nil)
	assert.Equal(t, cv, c2, "Eval with and without Jacobian")

	// ∂c/∂y.
	want := centralJacobian(nc, func(out, z []float64) { c.Eval(x, z, out, nil) }, y)
	assertClose(t, want, jy, tol, "∂c/∂y")

	// jacT returns J(x', y')ᵀw.
	jacT := func(xx, yy []float64) []float64 {
		j := make([]float64, nc*ny)
		c.Eval(xx, yy, make([]float64, nc), j)
		out := make([]float64, ny)
		for i := range nc {
			for k := range ny {
				out[k] += w[i] * j[i*ny+k]
			}
		}
		return out
	}

	if enforce.CapabilitiesOf(c).JacobianX != nil && nx > 0 {
		jx := make([]float64, nc*nx)
		enforce.CapabilitiesOf(c).JacobianX(x, y, jx)
		want := centralJacobian(nc, func(out, z []float64) { c.Eval(z, y, out, nil) }, x)
		assertClose(t, want, jx, tol, "∂c/∂x")
	}
	if enforce.CapabilitiesOf(c).HessVec != nil {
		got := make([]float64, ny)
		enforce.CapabilitiesOf(c).HessVec(x, y, w, v, got)
		// d/dt J(x, y + t v)ᵀw at t = 0.
		want := centralJacobian(ny, func(out, s []float64) {
			yy := make([]float64, ny)
			for k := range yy {
				yy[k] = y[k] + s[0]*v[k]
			}
			copy(out, jacT(x, yy))
		}, []float64{0})
		assertClose(t, want, got, tol, "Σ w_i ∇²_yy c_i v")
	}
	if enforce.CapabilitiesOf(c).MixedHessVec != nil && nx > 0 {
		got := make([]float64, nx)
		enforce.CapabilitiesOf(c).MixedHessVec(x, y, w, v, got)
		// ∂/∂x of wᵀJ(x, y)v.
		want := fd.Gradient(nil, func(z []float64) float64 {
			return mat.Dot(mat.NewVecDense(ny, jacT(z, y)), mat.NewVecDense(ny, v))
		}, x, &fd.Settings{Formula: fd.Central})
		assertClose(t, want, got, tol, "Σ w_i ∇²_xy c_i v")
	}
}
