package enforce

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce/hd"
)

// meshEquations returns, for a g×g grid with two outputs per node (u at
// 2i, v at 2i+1) and nx = 2 inputs, the equations
//
//	c_i = Σ_{j ∈ N(i)} (u_i − u_j) + 0.1·u_i³ + u_i·v_i − x₁ − 0.1·x₂·u_i
//
// over the 4-neighbourhood N(i), with their pattern: a nonlinear,
// mesh-like system of nc = g² rows and ny = 2g² outputs, about 6
// nonzeros per row. calls, if not nil, counts the evaluations of f.
func meshEquations(g int, calls *atomic.Int64) (pattern [][]int, f func(x, y, c []hyperdual.Number)) {
	nbrs := func(i int) []int {
		r, c := i/g, i%g
		var n []int
		for _, d := range [][2]int{{-1, 0}, {0, -1}, {0, 1}, {1, 0}} {
			rr, cc := r+d[0], c+d[1]
			if rr >= 0 && rr < g && cc >= 0 && cc < g {
				n = append(n, rr*g+cc)
			}
		}
		return n
	}
	pattern = make([][]int, g*g)
	for i := range pattern {
		pattern[i] = []int{2 * i, 2*i + 1}
		for _, j := range nbrs(i) {
			pattern[i] = append(pattern[i], 2*j)
		}
	}
	f = func(x, y, c []hyperdual.Number) {
		if calls != nil {
			calls.Add(1)
		}
		for i := range c {
			u, v := y[2*i], y[2*i+1]
			s := hd.Add(hd.Scale(0.1, hd.Mul(u, u, u)), hd.Mul(u, v), hd.Neg(x[0]), hd.Scale(-0.1, hd.Mul(x[1], u)))
			for _, j := range nbrs(i) {
				s = hd.Add(s, hd.Sub(u, y[2*j]))
			}
			c[i] = s
		}
	}
	return pattern, f
}

// TestSparseFuncDerivatives checks SparseFunc's derivatives against finite
// differences and against Func with the same f (to 1e-13), its pattern
// against its dense Jacobian, and the number of evaluations of f per
// Jacobian (⌈K/2⌉) and per HessVec (K).
func TestSparseFuncDerivatives(t *testing.T) {
	const g = 5
	var calls atomic.Int64
	pattern, f := meshEquations(g, &calls)
	c, err := SparseFunc(2, 2*g*g, g*g, pattern, f)
	require.NoError(t, err)
	ref, err := Func(2, 2*g*g, g*g, f)
	require.NoError(t, err)
	k := c.(interface{ Colours() int }).Colours()
	assert.GreaterOrEqual(t, k, 6) // the longest row has 6 outputs
	assert.LessOrEqual(t, k, 8)
	ctCheckSparse(t, c, 1)
	ctCheckDerivatives(t, c, 2, -1, 1, -1, 1)

	rnd := rand.New(rand.NewPCG(3, 3))
	nx, ny, nc := c.Dims()
	x, y := ctRandVec(rnd, nx, -1, 1), ctRandVec(rnd, ny, -1, 1)
	w, v := ctRandVec(rnd, nc, -1, 1), ctRandVec(rnd, ny, -1, 1)
	kc, kr := CapabilitiesOf(c), CapabilitiesOf(ref)
	for _, tc := range []struct {
		name string
		n    int
		eval func(k Capabilities, out []float64)
	}{
		{"HessVec", ny, func(k Capabilities, out []float64) { k.HessVec(x, y, w, v, out) }},
		{"MixedHessVec", nx, func(k Capabilities, out []float64) { k.MixedHessVec(x, y, w, v, out) }},
		{"JacobianX", nc * nx, func(k Capabilities, out []float64) { k.JacobianX(x, y, out) }},
	} {
		got, want := make([]float64, tc.n), make([]float64, tc.n)
		tc.eval(kc, got)
		tc.eval(kr, want)
		ctAssertClose(t, want, got, 1e-13, tc.name)
	}

	vals := make([]float64, len(pattern)*6)
	vals = vals[:kc.Sparse.nnz()]
	cv := make([]float64, nc)
	calls.Store(0)
	kc.Sparse.Eval(x, y, cv, vals)
	assert.Equal(t, int64((k+1)/2), calls.Load(), "evaluations per Jacobian")
	calls.Store(0)
	kc.HessVec(x, y, w, v, make([]float64, ny))
	assert.Equal(t, int64(k), calls.Load(), "evaluations per HessVec")
	calls.Store(0)
	kc.Sparse.JacobianXTVec(x, y, w, make([]float64, nx))
	assert.Equal(t, int64(1), calls.Load(), "evaluations per (∂c/∂x)ᵀw with nx = 2")
}

// TestSparseFuncProjects projects with SparseFunc on both paths: the same
// result as Func's dense projection, to 1e-10, gradients included.
func TestSparseFuncProjects(t *testing.T) {
	const g = 4
	pattern, f := meshEquations(g, nil)
	c, err := SparseFunc(2, 2*g*g, g*g, pattern, f)
	require.NoError(t, err)
	ref, err := Func(2, 2*g*g, g*g, f)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(4, 4))
	const rows = 3
	x := randDense(rnd, rows, 2, 0.5)
	yhat := randDense(rnd, rows, 2*g*g, 0.5)
	gr := randDense(rnd, rows, 2*g*g, 1)
	for _, mode := range []GradMode{Unrolled, Implicit} {
		s := Settings{Grad: mode, Weights: AutoDiagonal, Tol: 1e-10}
		a0, err := NewAdaNP(ref, s)
		require.NoError(t, err)
		s.Path = PathSparse
		a1, err := NewAdaNP(c, s)
		require.NoError(t, err)
		y0, st0, err := a0.Project(x, yhat)
		require.NoError(t, err)
		y1, st1, err := a1.Project(x, yhat)
		require.NoError(t, err)
		assert.True(t, st1.Converged())
		assert.Equal(t, st0.Depth, st1.Depth)
		ctAssertClose(t, y0.RawMatrix().Data, y1.RawMatrix().Data, 1e-10, "ỹ")
		gy0, gx0, _ := gtVJP(t, a0, x, yhat, gr)
		gy1, gx1, _ := gtVJP(t, a1, x, yhat, gr)
		ctAssertClose(t, gy0, gy1, 1e-10, "∂ℓ/∂ŷ")
		ctAssertClose(t, gx0, gx1, 1e-10, "∂ℓ/∂x")
	}
}

func TestSparseFuncErrors(t *testing.T) {
	f := func(x, y, c []hyperdual.Number) {}
	for _, tc := range []struct {
		name       string
		nx, ny, nc int
		pattern    [][]int
		f          func(x, y, c []hyperdual.Number)
		want       string
	}{
		{"nx", -1, 2, 1, [][]int{{0}}, f, "nx = -1"},
		{"ny", 0, 0, 1, [][]int{{0}}, f, "ny = 0"},
		{"nc", 0, 2, 0, nil, f, "nc = 0"},
		{"f", 0, 2, 1, [][]int{{0}}, nil, "nil function"},
		{"rows", 0, 2, 2, [][]int{{0}}, f, "1 rows"},
		{"range", 0, 2, 1, [][]int{{2}}, f, "outside [0, 2)"},
		{"repeat", 0, 2, 1, [][]int{{1, 0, 1}}, f, "repeats index 1"},
	} {
		_, err := SparseFunc(tc.nx, tc.ny, tc.nc, tc.pattern, tc.f)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
}
