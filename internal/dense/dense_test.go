package dense

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

func randB(rnd *rand.Rand, nc, n int) []float64 {
	b := make([]float64, nc*n)
	for i := range b {
		b[i] = rnd.NormFloat64()
	}
	return b
}

// TestGramCholeskySolve checks Gram, Cholesky and CholSolve against gonum
// on sizes on both sides of the thresholds where they switch from loops to
// kernels, with and without weights, with sgemm's assembly kernels (where
// the machine has them), with BLASGram and with neither.
func TestGramCholeskySolve(t *testing.T) {
	asm := sgemm.HasAsm
	defer func() { sgemm.HasAsm, BLASGram = asm, false }()
	for _, mode := range []struct{ asm, blas bool }{{false, false}, {asm, false}, {asm, true}} {
		sgemm.HasAsm, BLASGram = mode.asm, mode.blas
		testGramCholeskySolve(t)
	}
}

func testGramCholeskySolve(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	// Sizes on both sides of the BLAS thresholds.
	for _, sz := range [][2]int{{1, 2}, {3, 5}, {12, 30}, {40, 60}, {13, 7}, {150, 200}} {
		nc, n := sz[0], sz[1]
		b := randB(rnd, nc, n)
		d := make([]float64, n)
		for i := range d {
			d[i] = 0.5 + rnd.Float64()
		}
		for _, dd := range [][]float64{nil, d} {
			g := make([]float64, nc*nc)
			Gram(g, b, dd, nc, n, 1e-3, new(GramScratch))
			B := mat.NewDense(nc, n, b)
			var want mat.Dense
			if dd == nil {
				want.Mul(B, B.T())
			} else {
				var bd mat.Dense
				bd.Mul(B, mat.NewDiagDense(n, dd))
				want.Mul(&bd, B.T())
			}
			for i := 0; i < nc; i++ {
				want.Set(i, i, want.At(i, i)+1e-3)
			}
			require.True(t, mat.EqualApprox(mat.NewDense(nc, nc, append([]float64(nil), g...)), &want, 1e-10), "Gram %v", sz)

			rhs := randB(rnd, 1, nc)
			x := append([]float64(nil), rhs...)
			require.True(t, Cholesky(g, nc, make([]float64, nc)))
			CholSolve(g, nc, x)
			var got mat.VecDense
			got.MulVec(&want, mat.NewVecDense(nc, x))
			assert.InDeltaSlice(t, rhs, got.RawVector().Data, 1e-8, "solve %v", sz)
		}
	}
}

func TestCholeskyRejectsSingular(t *testing.T) {
	for _, n := range []int{2, 30} {
		a := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i*n+j] = 1 // rank one
			}
		}
		assert.False(t, Cholesky(a, n, make([]float64, n)), "n=%d", n)
	}
	assert.False(t, Cholesky([]float64{math.NaN()}, 1, make([]float64, 1)))
	assert.False(t, Cholesky([]float64{-1}, 1, make([]float64, 1)))
}

func TestEigClampSolve(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 4, 20} {
		b := randB(rnd, n, n)
		a := make([]float64, n*n)
		Gram(a, b, nil, n, n, 0, nil)
		orig := mat.NewDense(n, n, append([]float64(nil), a...))
		lam := make([]float64, n)
		require.True(t, EigClamp(a, n, 0, 1e-12, lam, make([]float64, EigWorkLen(n))))
		rhs := randB(rnd, 1, n)
		x := append([]float64(nil), rhs...)
		EigSolve(a, lam, n, x, make([]float64, n))
		var got mat.VecDense
		got.MulVec(orig, mat.NewVecDense(n, x))
		assert.InDeltaSlice(t, rhs, got.RawVector().Data, 1e-6*mat.Norm(orig, 2), "n=%d", n)
	}
	// A singular matrix: eigenvalues are clamped at the floor.
	a := []float64{1, 1, 1, 1}
	lam := make([]float64, 2)
	require.True(t, EigClamp(a, 2, 1e-3, 0, lam, make([]float64, EigWorkLen(2))))
	assert.InDelta(t, 1e-3, lam[0], 1e-15)
	assert.InDelta(t, 2, lam[1], 1e-12)
	assert.False(t, EigClamp([]float64{math.Inf(1)}, 1, 0, 0, lam, make([]float64, EigWorkLen(1))))
}

func TestMulVec(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5, 6}
	dst := make([]float64, 2)
	MulVec(dst, a, 2, 3, []float64{1, 0, -1})
	assert.Equal(t, []float64{-2, -2}, dst)
	dt := make([]float64, 3)
	MulTransVec(dt, a, 2, 3, []float64{1, -1})
	assert.Equal(t, []float64{-3, -3, -3}, dt)
	// A float32 matrix, with the sums in float64.
	a32 := []float32{1, 2, 3, 4, 5, 6}
	MulVec(dst, a32, 2, 3, []float64{1e-9, 0, -1})
	assert.Equal(t, []float64{-3 + 1e-9, -6 + 4e-9}, dst)
	MulTransVec(dt, a32, 2, 3, []float64{1, -1})
	assert.Equal(t, []float64{-3, -3, -3}, dt)
}

func TestRound32(t *testing.T) {
	dst := make([]float32, 3)
	assert.True(t, Round32(dst, []float64{1, -2.5, 3e38}))
	assert.Equal(t, []float32{1, -2.5, 3e38}, dst)
	assert.False(t, Round32(dst, []float64{1, 4e38, 0}), "beyond float32")
	assert.False(t, Round32(dst, []float64{math.NaN(), 0, 0}))
	assert.False(t, Round32(dst, []float64{math.Inf(-1), 0, 0}))
}

// TestCholSolveBits checks CholSolve's plain-loop path (n·n < blasMin),
// whose forward substitution takes four rows at a time, against the
// substitutions one row at a time, bit for bit.
func TestCholSolveBits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(95, 96))
	for n := 1; n*n < blasMin; n++ {
		l := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				l[i*n+j] = rnd.NormFloat64()
			}
			l[i*n+i] = 1 + rnd.Float64()
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = rnd.NormFloat64()
		}
		want := slices.Clone(b)
		for i := 0; i < n; i++ {
			s := want[i]
			for k, v := range l[i*n : i*n+i] {
				s -= v * want[k]
			}
			want[i] = s / l[i*n+i]
		}
		for i := n - 1; i >= 0; i-- {
			s := want[i]
			for k := i + 1; k < n; k++ {
				s -= l[k*n+i] * want[k]
			}
			want[i] = s / l[i*n+i]
		}
		got := slices.Clone(b)
		CholSolve(l, n, got)
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n %d: x[%d] = %v, want %v", n, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkCholSolve times CholSolve at n = 50, the (…, 100, 50) steps'
// number of constraints.
func BenchmarkCholSolve(b *testing.B) {
	rnd := rand.New(rand.NewPCG(97, 98))
	const n = 50
	l := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			l[i*n+j] = rnd.NormFloat64() / n
		}
		l[i*n+i] = 1 + rnd.Float64()
	}
	x := make([]float64, n)
	for b.Loop() {
		for i := range x {
			x[i] = float64(i)
		}
		CholSolve(l, n, x)
	}
}
