package enforce

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// ctHD returns the hyperdual constant v.
func ctHD(v float64) hyperdual.Number { return hyperdual.Number{Real: v} }

// ctNonlinearFunc is a small system that exercises every derivative,
// including the mixed ones (nx = 2, ny = 3, nc = 3):
//
//	c1 = sin(x1·y1) + y2²·y3 − x2
//	c2 = exp(0.3·y1·y2) + x1²·y3 + x2·y2·y3
//	c3 = √(1 + y1² + x2²·y3²) − 2
func ctNonlinearFunc(x, y, c []hyperdual.Number) {
	mul := hyperdual.Mul
	add := hyperdual.Add
	c[0] = hyperdual.Sub(add(hyperdual.Sin(mul(x[0], y[0])), mul(mul(y[1], y[1]), y[2])), x[1])
	c[1] = add(add(hyperdual.Exp(hyperdual.Scale(0.3, mul(y[0], y[1]))), mul(mul(x[0], x[0]), y[2])),
		mul(mul(x[1], y[1]), y[2]))
	xy := mul(x[1], y[2])
	c[2] = hyperdual.Sub(hyperdual.Sqrt(add(add(ctHD(1), mul(y[0], y[0])), mul(xy, xy))), ctHD(2))
}

// ctDistillationFunc holds the six bilinear balances of the extractive
// distillation case (nx = 3, ny = 9, nc = 6), with 1-based names:
//
//	h1 = x1 + x2 − y1 − y2
//	h2 = 0.697616946·x1 − y1·y3 − y2·y6
//	h3 = 0.302383054·x1 − y1·y4 − y2·y7
//	h4 = y3 + y4 + y5 − 1
//	h5 = y6 + y7 + y8 − 1
//	h6 = x3·y1 − y9
func ctDistillationFunc(x, y, c []hyperdual.Number) {
	add, sub, mul := hyperdual.Add, hyperdual.Sub, hyperdual.Mul
	c[0] = sub(sub(add(x[0], x[1]), y[0]), y[1])
	c[1] = sub(sub(hyperdual.Scale(0.697616946, x[0]), mul(y[0], y[2])), mul(y[1], y[5]))
	c[2] = sub(sub(hyperdual.Scale(0.302383054, x[0]), mul(y[0], y[3])), mul(y[1], y[6]))
	c[3] = sub(add(add(y[2], y[3]), y[4]), ctHD(1))
	c[4] = sub(add(add(y[5], y[6]), y[7]), ctHD(1))
	c[5] = sub(mul(x[2], y[0]), y[8])
}

// ctQuadraticFunc returns c_i = yᵀA_i y + C_i·y + d_i − x_i³ written with
// hyperdual arithmetic, the Func twin of Quadratic(nc, A, C, d, ctCubeRHS).
func ctQuadraticFunc(A []*mat.SymDense, C *mat.Dense, d []float64) func(x, y, c []hyperdual.Number) {
	return func(x, y, c []hyperdual.Number) {
		for i := range c {
			var ci hyperdual.Number
			for j := range y {
				for k := range y {
					ci = hyperdual.Add(ci, hyperdual.Scale(A[i].At(j, k), hyperdual.Mul(y[j], y[k])))
				}
				ci = hyperdual.Add(ci, hyperdual.Scale(C.At(i, j), y[j]))
			}
			x3 := hyperdual.Mul(hyperdual.Mul(x[i], x[i]), x[i])
			c[i] = hyperdual.Sub(hyperdual.Add(ci, ctHD(d[i])), x3)
		}
	}
}

func TestFuncDerivatives(t *testing.T) {
	t.Parallel()
	for _, test := range []struct {
		name       string
		nx, ny, nc int
		f          func(x, y, c []hyperdual.Number)
	}{
		{name: "nonlinear", nx: 2, ny: 3, nc: 3, f: ctNonlinearFunc},
		{name: "distillation", nx: 3, ny: 9, nc: 6, f: ctDistillationFunc},
		{name: "circle, no x", nx: 0, ny: 2, nc: 1, f: func(_, y, c []hyperdual.Number) {
			c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), ctHD(1))
		}},
		{name: "scalar", nx: 1, ny: 1, nc: 1, f: func(x, y, c []hyperdual.Number) {
			c[0] = hyperdual.Sub(hyperdual.Tanh(hyperdual.Mul(x[0], y[0])), hyperdual.Mul(y[0], y[0]))
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			c, err := Func(test.nx, test.ny, test.nc, test.f)
			require.NoError(t, err)
			assert.Equal(t, []string{"JacobianX", "HessVec", "MixedHessVec"}, ctCaps(c))
			for seed := range uint64(5) {
				ctCheckDerivatives(t, c, seed, -1.5, 1.5, -1.5, 1.5)
			}
		})
	}
}

func TestFuncMatchesQuadratic(t *testing.T) {
	t.Parallel()
	const tol = 1e-12
	for _, size := range []struct{ ny, nc int }{{1, 1}, {4, 2}, {7, 5}} {
		rnd := rand.New(rand.NewPCG(uint64(10*size.ny+size.nc), 1))
		A := make([]*mat.SymDense, size.nc)
		for i := range A {
			A[i] = ctRandSym(rnd, size.ny)
		}
		C := ctRandDense(rnd, size.nc, size.ny)
		d := ctRandVec(rnd, size.nc, -1, 1)
		q, err := Quadratic(size.nc, A, C, d, ctCubeRHS)
		require.NoError(t, err)
		f, err := Func(size.nc, size.ny, size.nc, ctQuadraticFunc(A, C, d))
		require.NoError(t, err)
		nx, ny, nc := q.Dims()
		for range 5 {
			x := ctRandVec(rnd, nx, -1, 1)
			y := ctRandVec(rnd, ny, -2, 2)
			w := ctRandVec(rnd, nc, -1, 1)
			v := ctRandVec(rnd, ny, -1, 1)
			qc, qj := ctEval(t, q, x, y)
			fc, fj := ctEval(t, f, x, y)
			ctAssertClose(t, qc, fc, tol, "c")
			ctAssertClose(t, qj, fj, tol, "∂c/∂y")
			qx, fx := make([]float64, nc*nx), make([]float64, nc*nx)
			CapabilitiesOf(q).JacobianX(x, y, qx)
			CapabilitiesOf(f).JacobianX(x, y, fx)
			ctAssertClose(t, qx, fx, tol, "∂c/∂x")
			qh, fh := make([]float64, ny), make([]float64, ny)
			CapabilitiesOf(q).HessVec(x, y, w, v, qh)
			CapabilitiesOf(f).HessVec(x, y, w, v, fh)
			ctAssertClose(t, qh, fh, tol, "HessVec")
			qm, fm := make([]float64, nx), make([]float64, nx)
			CapabilitiesOf(q).MixedHessVec(x, y, w, v, qm)
			CapabilitiesOf(f).MixedHessVec(x, y, w, v, fm)
			ctAssertClose(t, qm, fm, tol, "MixedHessVec")
		}
	}
}

func TestFuncErrors(t *testing.T) {
	t.Parallel()
	ok := func(_, _, _ []hyperdual.Number) {}
	for _, test := range []struct {
		name       string
		nx, ny, nc int
		f          func(x, y, c []hyperdual.Number)
	}{
		{name: "negative nx", nx: -1, ny: 1, nc: 1, f: ok},
		{name: "zero ny", nx: 1, ny: 0, nc: 1, f: ok},
		{name: "zero nc", nx: 1, ny: 1, nc: 0, f: ok},
		{name: "nil f", nx: 1, ny: 1, nc: 1},
	} {
		c, err := Func(test.nx, test.ny, test.nc, test.f)
		assert.Error(t, err, test.name)
		assert.Nil(t, c, test.name)
	}
}

func TestFuncNaN(t *testing.T) {
	t.Parallel()
	c, err := Func(1, 2, 2, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Mul(ctHD(math.NaN()), y[0])
		c[1] = hyperdual.Sqrt(hyperdual.Sub(y[1], x[0])) // NaN for y2 < x1
	})
	require.NoError(t, err)
	x, y := []float64{1}, []float64{0.5, -3}
	cv, jy := make([]float64, 2), make([]float64, 4)
	hv, mv := make([]float64, 2), make([]float64, 1)
	require.NotPanics(t, func() {
		c.Eval(x, y, cv, jy)
		CapabilitiesOf(c).HessVec(x, y, []float64{1, 1}, []float64{1, 1}, hv)
		CapabilitiesOf(c).MixedHessVec(x, y, []float64{1, 1}, []float64{1, 1}, mv)
	})
	assert.True(t, math.IsNaN(cv[0]))
	assert.True(t, math.IsNaN(cv[1]))
	assert.True(t, math.IsNaN(jy[0]))
	assert.True(t, math.IsNaN(hv[0]))
}

func TestFuncShapePanics(t *testing.T) {
	t.Parallel()
	c, err := Func(2, 3, 3, ctNonlinearFunc)
	require.NoError(t, err)
	assert.PanicsWithValue(t, "enforce: Func.Eval: len(y) = 2, want 3", func() {
		c.Eval(make([]float64, 2), make([]float64, 2), make([]float64, 3), nil)
	})
	assert.PanicsWithValue(t, "enforce: Func.Eval: len(jy) = 8, want 9", func() {
		c.Eval(make([]float64, 2), make([]float64, 3), make([]float64, 3), make([]float64, 8))
	})
	assert.PanicsWithValue(t, "enforce: Func.JacobianX: len(jx) = 0, want 6", func() {
		CapabilitiesOf(c).JacobianX(make([]float64, 2), make([]float64, 3), nil)
	})
	assert.PanicsWithValue(t, "enforce: Func.MixedHessVec: len(out) = 3, want 2", func() {
		CapabilitiesOf(c).MixedHessVec(make([]float64, 2), make([]float64, 3),
			make([]float64, 3), make([]float64, 3), make([]float64, 3))
	})
}

func TestFuncConcurrent(t *testing.T) {
	t.Parallel()
	c, err := Func(2, 3, 3, ctNonlinearFunc)
	require.NoError(t, err)
	const points = 64
	rnd := rand.New(rand.NewPCG(7, 7))
	xs := make([][]float64, points)
	ys := make([][]float64, points)
	want := make([][]float64, points)
	for p := range points {
		xs[p] = ctRandVec(rnd, 2, -1, 1)
		ys[p] = ctRandVec(rnd, 3, -1, 1)
		want[p] = make([]float64, 3+9+2+3)
		ctFuncAll(c, xs[p], ys[p], want[p])
	}
	got := make([][]float64, points)
	var wg sync.WaitGroup
	for p := range points {
		wg.Go(func() {
			got[p] = make([]float64, len(want[p]))
			for range 20 {
				ctFuncAll(c, xs[p], ys[p], got[p])
			}
		})
	}
	wg.Wait()
	for p := range points {
		assert.Equal(t, want[p], got[p], "point %d", p)
	}
}

// ctFuncAll writes c, ∂c/∂y, MixedHessVec and HessVec of the nonlinear
// test system (nx = 2, ny = 3, nc = 3) with w = v = 1 into dst.
func ctFuncAll(c Constraint, x, y, dst []float64) {
	ones := []float64{1, 1, 1}
	c.Eval(x, y, dst[:3], dst[3:12])
	CapabilitiesOf(c).MixedHessVec(x, y, ones, ones, dst[12:14])
	CapabilitiesOf(c).HessVec(x, y, ones, ones, dst[14:17])
}

func TestFuncZeroAllocs(t *testing.T) {
	c, err := Func(3, 9, 6, ctDistillationFunc)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(3, 3))
	x, y := ctRandVec(rnd, 3, 0, 1), ctRandVec(rnd, 9, 0, 1)
	w, v := ctRandVec(rnd, 6, -1, 1), ctRandVec(rnd, 9, -1, 1)
	cv, jy, jx := make([]float64, 6), make([]float64, 54), make([]float64, 18)
	hv, mv := make([]float64, 9), make([]float64, 3)
	ctAssertZeroAllocs(t, "Eval", func() { c.Eval(x, y, cv, jy) })
	ctAssertZeroAllocs(t, "JacobianX", func() { CapabilitiesOf(c).JacobianX(x, y, jx) })
	ctAssertZeroAllocs(t, "HessVec", func() { CapabilitiesOf(c).HessVec(x, y, w, v, hv) })
	ctAssertZeroAllocs(t, "MixedHessVec", func() { CapabilitiesOf(c).MixedHessVec(x, y, w, v, mv) })
}

func BenchmarkFuncEval(b *testing.B) {
	c, err := Func(3, 9, 6, ctDistillationFunc)
	require.NoError(b, err)
	rnd := rand.New(rand.NewPCG(1, 1))
	x, y := ctRandVec(rnd, 3, 0, 1), ctRandVec(rnd, 9, 0, 1)
	cv, jy := make([]float64, 6), make([]float64, 54)
	b.ReportAllocs()
	for b.Loop() {
		c.Eval(x, y, cv, jy)
	}
}
