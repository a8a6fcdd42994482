package enforce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// ctQuadraticWant returns yᵀA_i y + C_i·y + d_i − r_i(x) computed with mat,
// treating nil arguments as zero.
func ctQuadraticWant(A []*mat.SymDense, C *mat.Dense, d []float64, r RHS, x, y []float64, nc int) []float64 {
	yv := mat.NewVecDense(len(y), y)
	want := make([]float64, nc)
	if r != nil {
		r(x, want, nil)
		for i := range want {
			want[i] = -want[i]
		}
	}
	for i := range nc {
		if i < len(A) && A[i] != nil {
			want[i] += mat.Inner(yv, A[i], yv)
		}
		if C != nil {
			want[i] += mat.Dot(C.RowView(i), yv)
		}
		if d != nil {
			want[i] += d[i]
		}
	}
	return want
}

func TestQuadratic(t *testing.T) {
	t.Parallel()
	for _, test := range []struct {
		name            string
		nx, ny, nc      int
		nilA, nilC, ndA bool // nilA: A == nil; ndA: A[1] == nil; nilC: C == nil
		nilD, withR     bool
	}{
		{name: "full", nx: 4, ny: 6, nc: 4, withR: true},
		{name: "A only", nx: 0, ny: 5, nc: 3, nilC: true, nilD: true},
		{name: "nil A_2", nx: 3, ny: 4, nc: 3, ndA: true, withR: true},
		{name: "affine", nx: 2, ny: 3, nc: 2, nilA: true, withR: true},
		{name: "single", nx: 1, ny: 1, nc: 1, withR: true},
	} {
		t.Run(test.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(uint64(test.ny), uint64(test.nc)))
			var A []*mat.SymDense
			if !test.nilA {
				A = make([]*mat.SymDense, test.nc)
				for i := range A {
					if !(test.ndA && i == 1) {
						A[i] = ctRandSym(rnd, test.ny)
					}
				}
			}
			var C *mat.Dense
			if !test.nilC {
				C = ctRandDense(rnd, test.nc, test.ny)
			}
			var d []float64
			if !test.nilD {
				d = ctRandVec(rnd, test.nc, -1, 1)
			}
			var r RHS
			if test.withR {
				r = ctSinRHS
			}
			q, err := Quadratic(test.nx, A, C, d, r)
			require.NoError(t, err)
			nx, ny, nc := q.Dims()
			require.Equal(t, []int{test.nx, test.ny, test.nc}, []int{nx, ny, nc})
			assert.Equal(t, []string{"JacobianX", "HessVec", "MixedHessVec",
				"EvalBatch", "HessVecBatch", "EvalBatch32", "HessVecBatch32"}, ctCaps(q))

			for seed := range uint64(3) {
				x := ctRandVec(rnd, nx, -2, 2)
				y := ctRandVec(rnd, ny, -2, 2)
				cv, _ := ctEval(t, q, x, y)
				ctAssertClose(t, ctQuadraticWant(A, C, d, r, x, y, nc), cv, 1e-13, "c")
				ctCheckDerivatives(t, q, seed, -2, 2, -2, 2)
			}
		})
	}
}

func TestQuadraticLayout(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(2, 9))
	const ny, nc = 3, 2
	A := []*mat.SymDense{ctRandSym(rnd, ny), nil}
	C := ctRandDense(rnd, nc, ny)
	c, err := Quadratic(0, A, C, nil, nil)
	require.NoError(t, err)
	q := c.(*quadraticConstraint)
	require.Len(t, q.a, nc*ny*ny)
	for i := range nc {
		for j := range ny {
			for k := range ny {
				want := 0.0
				if A[i] != nil {
					want = A[i].At(j, k)
				}
				assert.Equal(t, want, q.a[(i*ny+j)*ny+k], "A[%d][%d, %d]", i, j, k)
				assert.Equal(t, want, q.blockA(i).Data[j*ny+k])
			}
		}
	}
	assert.Equal(t, C.RawMatrix().Data, q.cm)
	assert.Nil(t, q.d)
	assert.Nil(t, q.r)
	assert.Equal(t, nc*ny, q.stackedA().Rows)
}

func TestQuadraticErrors(t *testing.T) {
	t.Parallel()
	sym := func(n int) *mat.SymDense { return mat.NewSymDense(n, nil) }
	nanSym := sym(2)
	nanSym.SetSym(0, 1, math.NaN())
	for _, test := range []struct {
		name string
		nx   int
		A    []*mat.SymDense
		C    *mat.Dense
		d    []float64
	}{
		{name: "negative nx", nx: -1, A: []*mat.SymDense{sym(2)}},
		{name: "nothing", nx: 1},
		{name: "only d", nx: 1, d: []float64{1, 2}},
		{name: "all A_i nil", nx: 1, A: []*mat.SymDense{nil, nil}, d: []float64{1, 2}},
		{name: "empty A_i", nx: 1, A: []*mat.SymDense{{}}},
		{name: "A_i sizes differ", nx: 1, A: []*mat.SymDense{sym(2), sym(3)}},
		{name: "C rows ≠ len(A)", nx: 1, A: []*mat.SymDense{sym(2)}, C: mat.NewDense(2, 2, nil)},
		{name: "C cols ≠ ny", nx: 1, A: []*mat.SymDense{sym(2)}, C: mat.NewDense(1, 3, nil)},
		{name: "empty C", nx: 1, A: []*mat.SymDense{sym(2)}, C: &mat.Dense{}},
		{name: "len(d) ≠ nc", nx: 1, A: []*mat.SymDense{sym(2)}, d: []float64{1, 2}},
		{name: "empty d", nx: 1, A: []*mat.SymDense{sym(2)}, d: []float64{}},
		{name: "NaN in A", nx: 1, A: []*mat.SymDense{nanSym}},
		{name: "Inf in C", nx: 1, C: mat.NewDense(1, 1, []float64{math.Inf(1)})},
		{name: "NaN in d", nx: 1, A: []*mat.SymDense{sym(1)}, d: []float64{math.NaN()}},
	} {
		var (
			c   Constraint
			err error
		)
		require.NotPanics(t, func() { c, err = Quadratic(test.nx, test.A, test.C, test.d, nil) }, test.name)
		assert.Error(t, err, test.name)
		assert.Nil(t, c, test.name)
	}
}

func TestQuadraticZeroAllocs(t *testing.T) {
	rnd := rand.New(rand.NewPCG(4, 4))
	const ny, nc = 8, 5
	A := make([]*mat.SymDense, nc)
	for i := range A {
		A[i] = ctRandSym(rnd, ny)
	}
	q, err := Quadratic(nc, A, ctRandDense(rnd, nc, ny), ctRandVec(rnd, nc, -1, 1), ctCubeRHS)
	require.NoError(t, err)
	x, y := ctRandVec(rnd, nc, -1, 1), ctRandVec(rnd, ny, -1, 1)
	w, v := ctRandVec(rnd, nc, -1, 1), ctRandVec(rnd, ny, -1, 1)
	cv, jy, jx, hv := make([]float64, nc), make([]float64, nc*ny), make([]float64, nc*nc), make([]float64, ny)
	ctAssertZeroAllocs(t, "Eval with jy", func() { q.Eval(x, y, cv, jy) })
	ctAssertZeroAllocs(t, "Eval without jy", func() { q.Eval(x, y, cv, nil) })
	ctAssertZeroAllocs(t, "JacobianX", func() { CapabilitiesOf(q).JacobianX(x, y, jx) })
	ctAssertZeroAllocs(t, "HessVec", func() { CapabilitiesOf(q).HessVec(x, y, w, v, hv) })
}

func BenchmarkQuadraticEval(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const ny, nc = 200, 150
	A := make([]*mat.SymDense, nc)
	for i := range A {
		A[i] = ctRandSym(rnd, ny)
	}
	q, err := Quadratic(nc, A, ctRandDense(rnd, nc, ny), ctRandVec(rnd, nc, -1, 1), ctCubeRHS)
	require.NoError(b, err)
	x, y := ctRandVec(rnd, nc, -1, 1), ctRandVec(rnd, ny, -1, 1)
	cv, jy := make([]float64, nc), make([]float64, nc*ny)
	b.ReportAllocs()
	for b.Loop() {
		q.Eval(x, y, cv, jy)
	}
}

// BenchmarkQuadraticCheck is AdaNP.Check of the nonconvex quadratic
// benchmark's largest test batch, 833 samples of a (N_O, N_C) = (200, 150)
// system, which Predict runs for every model that does not project (MLP,
// Soft): by one EvalBatch call, and by Eval sample by sample (perSample
// hides EvalBatch).
func BenchmarkQuadraticCheck(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const ny, nc, rows = 200, 150, 833
	A := make([]*mat.SymDense, nc)
	for i := range A {
		A[i] = ctRandSym(rnd, ny)
	}
	q, err := Quadratic(nc, A, ctRandDense(rnd, nc, ny), ctRandVec(rnd, nc, -1, 1), ctCubeRHS)
	require.NoError(b, err)
	x := mat.NewDense(rows, nc, ctRandVec(rnd, rows*nc, -1, 1))
	y := mat.NewDense(rows, ny, ctRandVec(rnd, rows*ny, -1, 1))
	for _, bc := range []struct {
		name string
		c    Constraint
	}{{"EvalBatch", q}, {"PerSample", perSample{q}}} {
		b.Run(bc.name, func(b *testing.B) {
			a, err := NewAdaNP(bc.c, Settings{Tol: 1e-3})
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Check(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestQuadraticEvalBatch checks the batched float64 methods, one matrix
// product over the batch, against the per-sample Eval and HessVec (Gemv
// per sample) to rounding, with and without C, d and r and without jy, at
// sizes with partial blocks of samples (q64Rows) and columns (q64Cols);
// and that their results do not depend on GOMAXPROCS.
func TestQuadraticEvalBatch(t *testing.T) {
	rnd := rand.New(rand.NewPCG(45, 46))
	for _, sz := range []struct{ nx, ny, nc, rows int }{{1, 1, 1, 1}, {2, 3, 2, 7}, {3, 40, 25, 250}, {2, 17, 50, 97}} {
		for _, full := range []bool{false, true} {
			A := make([]*mat.SymDense, sz.nc)
			for i := range A {
				if i != 1 {
					A[i] = ctRandSym(rnd, sz.ny)
				}
			}
			var C *mat.Dense
			var d []float64
			var r RHS
			if full {
				C, d, r = ctRandDense(rnd, sz.nc, sz.ny), ctRandVec(rnd, sz.nc, -1, 1), ctSinRHS
			}
			q, err := Quadratic(sz.nx, A, C, d, r)
			require.NoError(t, err)
			k := CapabilitiesOf(q)
			nx, ny, nc, rows := sz.nx, sz.ny, sz.nc, sz.rows
			x, y := ctRandVec(rnd, rows*nx, -1, 1), ctRandVec(rnd, rows*ny, -2, 2)
			w, v := ctRandVec(rnd, rows*nc, -1, 1), ctRandVec(rnd, rows*ny, -1, 1)
			w[0] = 0
			cWant, jWant, hWant := make([]float64, rows*nc), make([]float64, rows*nc*ny), make([]float64, rows*ny)
			for s := range rows {
				xs, ys := x[s*nx:(s+1)*nx], y[s*ny:(s+1)*ny]
				q.Eval(xs, ys, cWant[s*nc:(s+1)*nc], jWant[s*nc*ny:(s+1)*nc*ny])
				k.HessVec(xs, ys, w[s*nc:(s+1)*nc], v[s*ny:(s+1)*ny], hWant[s*ny:(s+1)*ny])
			}
			batch := func(procs int) (c, cNoJ, jy, h []float64) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				c, cNoJ, jy, h = make([]float64, rows*nc), make([]float64, rows*nc), make([]float64, rows*nc*ny), make([]float64, rows*ny)
				k.EvalBatch(rows, x, y, c, jy)
				k.EvalBatch(rows, x, y, cNoJ, nil)
				k.HessVecBatch(rows, x, y, w, v, h)
				return c, cNoJ, jy, h
			}
			c, cNoJ, jy, h := batch(1)
			tol := 1e-14 * float64(4*ny) // |terms| ≲ ny·|y|²·|A|
			name := fmt.Sprintf("%v full=%v", sz, full)
			ctAssertClose(t, cWant, c, tol, name+": c")
			ctAssertClose(t, jWant, jy, tol, name+": J")
			ctAssertClose(t, hWant, h, tol, name+": HessVec")
			assert.Equal(t, c, cNoJ, name+": c without jy")
			for _, procs := range []int{2, 3} {
				c2, cNoJ2, jy2, h2 := batch(procs)
				assert.Equal(t, c, c2, name)
				assert.Equal(t, cNoJ, cNoJ2, name)
				assert.Equal(t, jy, jy2, name)
				assert.Equal(t, h, h2, name)
			}
		}
	}
}

// TestQuadraticEvalBatchWide: an A whose double overflows float64 takes
// the per-sample products, which give Eval's numbers exactly.
func TestQuadraticEvalBatchWide(t *testing.T) {
	rnd := rand.New(rand.NewPCG(47, 48))
	ny, nc, rows := 4, 3, 5
	A := []*mat.SymDense{ctRandSym(rnd, ny), ctRandSym(rnd, ny), ctRandSym(rnd, ny)}
	A[2].SetSym(1, 2, 0.9*math.MaxFloat64)
	q, err := Quadratic(0, A, ctRandDense(rnd, nc, ny), nil, nil)
	require.NoError(t, err)
	y := ctRandVec(rnd, rows*ny, -1e-200, 1e-200)
	c, jy := make([]float64, rows*nc), make([]float64, rows*nc*ny)
	CapabilitiesOf(q).EvalBatch(rows, nil, y, c, jy)
	for s := range rows {
		cs, js := make([]float64, nc), make([]float64, nc*ny)
		q.Eval(nil, y[s*ny:(s+1)*ny], cs, js)
		assert.Equal(t, cs, c[s*nc:(s+1)*nc])
		assert.Equal(t, js, jy[s*nc*ny:(s+1)*nc*ny])
	}
}
