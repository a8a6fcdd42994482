package fastblas

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// stored returns the rows×cols storage of op(X) for the r×c matrix
// op(X) with stride ld ≥ its column count, filled with random values; the
// padding holds NaN so that a read past a row shows in the result.
func stored[T float32 | float64](rnd *rand.Rand, t blas.Transpose, r, c, pad int) ([]T, int) {
	rows, cols := r, c
	if t != blas.NoTrans {
		rows, cols = c, r
	}
	ld := cols + pad
	x := make([]T, max(0, (rows-1)*ld+cols))
	for i := range x {
		if i%ld < cols {
			x[i] = T(rnd.NormFloat64())
		} else {
			x[i] = T(math.NaN())
		}
	}
	return x, max(ld, 1)
}

// at returns op(X)[i, j] for X stored with stride ld.
func at[T float32 | float64](x []T, ld int, t blas.Transpose, i, j int) float64 {
	if t != blas.NoTrans {
		return float64(x[j*ld+i])
	}
	return float64(x[i*ld+j])
}

// gemmFunc is Sgemm's or Dgemm's signature.
type gemmFunc[T float32 | float64] func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// TestSgemm compares Sgemm with a float64 product for every transpose
// pair, shapes that are and are not multiples of the kernel's tiles,
// padded strides, and alpha/beta combinations; the error bound is the
// float32 summation bound k·2⁻²³·Σ|terms| with a margin.
func TestSgemm(t *testing.T) { checkGemm(t, Implementation{}.Sgemm, 0x1p-23) }

// TestDgemm is TestSgemm for Dgemm, against a float64 product with the
// bound k·2⁻⁵²·Σ|terms|.
func TestDgemm(t *testing.T) { checkGemm(t, Implementation{}.Dgemm, 0x1p-52) }

func checkGemm[T float32 | float64](t *testing.T, gemm gemmFunc[T], eps float64) {
	rnd := rand.New(rand.NewPCG(1, 2))
	trans := []blas.Transpose{blas.NoTrans, blas.Trans}
	shapes := [][3]int{{33, 40, 35}, {48, 64, 32}, {97, 50, 61}, {12, 200, 200}, {200, 17, 150}, {5, 300, 40}}
	scalars := [][2]T{{1, 0}, {1, 1}, {-0.5, 2}, {2, 0}}
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tA := range trans {
			for _, tB := range trans {
				for _, ab := range scalars {
					for _, pad := range []int{0, 3} {
						name := fmt.Sprintf("%dx%dx%d/%c%c/a%g_b%g/pad%d", m, n, k, tA, tB, ab[0], ab[1], pad)
						a, lda := stored[T](rnd, tA, m, k, pad)
						b, ldb := stored[T](rnd, tB, k, n, pad)
						ldc := n + pad
						c := make([]T, (m-1)*ldc+n)
						for i := range c {
							c[i] = T(rnd.NormFloat64())
						}
						if ab[1] == 0 {
							for i := range c {
								c[i] = T(math.NaN()) // not read when beta is 0
							}
						}
						c0 := append([]T(nil), c...)
						gemm(tA, tB, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
						for i := range m {
							for j := range n {
								var want, mag float64
								for kk := range k {
									p := at(a, lda, tA, i, kk) * at(b, ldb, tB, kk, j)
									want += p
									mag += math.Abs(p)
								}
								want *= float64(ab[0])
								mag *= math.Abs(float64(ab[0]))
								if ab[1] != 0 {
									want += float64(ab[1]) * float64(c0[i*ldc+j])
									mag += math.Abs(float64(ab[1]) * float64(c0[i*ldc+j]))
								}
								got := float64(c[i*ldc+j])
								if tol := 2 * float64(k+2) * eps * mag; !(math.Abs(got-want) <= tol) {
									t.Fatalf("%s: C[%d,%d] = %g, want %g ± %g", name, i, j, got, want, tol)
								}
							}
							for j := n; j < ldc && i < m-1; j++ {
								if got := c[i*ldc+j]; !(math.IsNaN(float64(got)) && math.IsNaN(float64(c0[i*ldc+j]))) && got != c0[i*ldc+j] {
									t.Fatalf("%s: padding C[%d,%d] changed", name, i, j)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestSgemmSmallAndDegenerate checks the cases handed to gonum: small
// products, alpha = 0 (C = beta·C, A and B not read), k = 0, m or n = 0.
func TestSgemmSmallAndDegenerate(t *testing.T) {
	checkSmallAndDegenerate(t, Implementation{}.Sgemm, gonum.Implementation{}.Sgemm, 1e-4)
}

// TestDgemmSmallAndDegenerate is TestSgemmSmallAndDegenerate for Dgemm.
func TestDgemmSmallAndDegenerate(t *testing.T) {
	checkSmallAndDegenerate(t, Implementation{}.Dgemm, gonum.Implementation{}.Dgemm, 1e-12)
}

func checkSmallAndDegenerate[T float32 | float64](t *testing.T, ours, theirs gemmFunc[T], tol float64) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][3]int{{3, 4, 5}, {40, 40, 0}, {0, 40, 40}, {40, 0, 40}, {64, 64, 64}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, alpha := range []T{0, 1.5} {
			a, _ := stored[T](rnd, blas.NoTrans, m, max(k, 1), 0)
			b, _ := stored[T](rnd, blas.NoTrans, max(k, 1), n, 0)
			c, _ := stored[T](rnd, blas.NoTrans, m, n, 0)
			want := append([]T(nil), c...)
			theirs(blas.NoTrans, blas.NoTrans, m, n, k, alpha, a, max(k, 1), b, max(n, 1), 0.5, want, max(n, 1))
			ours(blas.NoTrans, blas.NoTrans, m, n, k, alpha, a, max(k, 1), b, max(n, 1), 0.5, c, max(n, 1))
			for i := range c {
				if d := math.Abs(float64(c[i] - want[i])); d > tol*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%v alpha %g: C[%d] = %g, gonum %g", sh, alpha, i, c[i], want[i])
				}
			}
		}
	}
}

// TestSgemmPanicsLikeGonum checks that invalid arguments panic with
// gonum's message and leave C unchanged.
func TestSgemmPanicsLikeGonum(t *testing.T) {
	checkPanicsLikeGonum(t, Implementation{}.Sgemm, gonum.Implementation{}.Sgemm)
}

// TestDgemmPanicsLikeGonum is TestSgemmPanicsLikeGonum for Dgemm.
func TestDgemmPanicsLikeGonum(t *testing.T) {
	checkPanicsLikeGonum(t, Implementation{}.Dgemm, gonum.Implementation{}.Dgemm)
}

func checkPanicsLikeGonum[T float32 | float64](t *testing.T, ours, theirs gemmFunc[T]) {
	m, n, k := 40, 40, 40
	a, b := make([]T, m*k), make([]T, k*n)
	for _, tc := range []struct {
		name                string
		tA                  blas.Transpose
		lda, ldc, lenC, cut int
	}{
		{"bad transpose", 'x', k, n, m * n, 0},
		{"lda too small", blas.NoTrans, k - 1, n, m * n, 0},
		{"ldc too small", blas.NoTrans, k, n - 1, m * n, 0},
		{"short C", blas.NoTrans, k, n, m*n - 1, 0},
		{"short A", blas.NoTrans, k, n, m * n, 1},
	} {
		msg := func(gemm gemmFunc[T], c []T) (r any) {
			defer func() { r = recover() }()
			gemm(tc.tA, blas.NoTrans, m, n, k, 1, a[:len(a)-tc.cut], tc.lda, b, n, 0, c, tc.ldc)
			return nil
		}
		c := make([]T, tc.lenC)
		for i := range c {
			c[i] = 7
		}
		want := msg(theirs, make([]T, tc.lenC))
		if got := msg(ours, c); want == nil || got != want {
			t.Errorf("%s: panic %v, gonum's %v", tc.name, got, want)
		}
		for _, v := range c {
			if v != 7 {
				t.Errorf("%s: C changed before the panic", tc.name)
				break
			}
		}
	}
}

// TestSgemmIndependentOfGOMAXPROCS checks that the result has the same
// bits with one worker and with several, for every transpose pair.
func TestSgemmIndependentOfGOMAXPROCS(t *testing.T) {
	checkIndependentOfGOMAXPROCS(t, Implementation{}.Sgemm)
}

// TestDgemmIndependentOfGOMAXPROCS is TestSgemmIndependentOfGOMAXPROCS
// for Dgemm.
func TestDgemmIndependentOfGOMAXPROCS(t *testing.T) {
	checkIndependentOfGOMAXPROCS(t, Implementation{}.Dgemm)
}

func checkIndependentOfGOMAXPROCS[T float32 | float64](t *testing.T, gemm gemmFunc[T]) {
	rnd := rand.New(rand.NewPCG(5, 6))
	m, n, k := 101, 70, 90
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			a, lda := stored[T](rnd, tA, m, k, 0)
			b, ldb := stored[T](rnd, tB, k, n, 0)
			run := func(procs int) []T {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				c := make([]T, m*n)
				gemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 0, c, n)
				return c
			}
			one := run(1)
			for _, p := range []int{2, 3, 8} {
				got := run(p)
				for i := range one {
					// float32 → float64 is exact, so equal float64 bits
					// mean equal bits in T.
					if math.Float64bits(float64(one[i])) != math.Float64bits(float64(got[i])) {
						t.Fatalf("%c%c GOMAXPROCS %d: C[%d] = %g, with 1: %g", tA, tB, p, i, got[i], one[i])
					}
				}
			}
		}
	}
}

// TestSgemmDoesNotAllocate checks that a steady-state call allocates
// nothing (its buffers are pooled), with one worker and with two.
func TestSgemmDoesNotAllocate(t *testing.T) { checkDoesNotAllocate(t, Implementation{}.Sgemm) }

// TestDgemmDoesNotAllocate is TestSgemmDoesNotAllocate for Dgemm.
func TestDgemmDoesNotAllocate(t *testing.T) { checkDoesNotAllocate(t, Implementation{}.Dgemm) }

func checkDoesNotAllocate[T float32 | float64](t *testing.T, gemm gemmFunc[T]) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	m, n, k := 96, 64, 80
	a, b, c := make([]T, m*k), make([]T, k*n), make([]T, m*n)
	for _, procs := range []int{1, 2} {
		for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				ldb := n
				if tB == blas.Trans {
					ldb = k
				}
				call := func() { gemm(blas.NoTrans, tB, m, n, k, 2, a, k, b, ldb, 1, c, n) }
				call()
				if got := testing.AllocsPerRun(20, call); got > 0 {
					t.Errorf("GOMAXPROCS %d, %c: %v allocations per call", procs, tB, got)
				}
			}()
		}
	}
}

// BenchmarkSgemm compares Sgemm with gonum's at the backbone's shapes (a
// batch of 833 inputs through a 200-wide layer, forward and the two
// backward products).
func BenchmarkSgemm(b *testing.B) {
	benchGemm(b, Implementation{}.Sgemm, gonum.Implementation{}.Sgemm)
}

// BenchmarkDgemm is BenchmarkSgemm for Dgemm: the float64 backbone's
// shapes, ours against gonum's.
func BenchmarkDgemm(b *testing.B) {
	benchGemm(b, Implementation{}.Dgemm, gonum.Implementation{}.Dgemm)
}

func benchGemm[T float32 | float64](b *testing.B, ours, theirs gemmFunc[T]) {
	shapes := []struct {
		name    string
		tA, tB  blas.Transpose
		m, n, k int
	}{
		{"forward_833x200x200", blas.NoTrans, blas.NoTrans, 833, 200, 200},
		{"dX_833x200x200_NT", blas.NoTrans, blas.Trans, 833, 200, 200},
		{"dW_200x200x833_TN", blas.Trans, blas.NoTrans, 200, 200, 833},
	}
	impls := []struct {
		name string
		gemm gemmFunc[T]
	}{{"fastblas", ours}, {"gonum", theirs}}
	for _, sh := range shapes {
		// Random (nonzero) values: gonum's kernel skips zero entries of A.
		a, lda := stored[T](rand.New(rand.NewPCG(1, 1)), sh.tA, sh.m, sh.k, 0)
		bb, ldb := stored[T](rand.New(rand.NewPCG(2, 2)), sh.tB, sh.k, sh.n, 0)
		c := make([]T, sh.m*sh.n)
		for _, im := range impls {
			b.Run(sh.name+"/"+im.name, func(b *testing.B) {
				for b.Loop() {
					im.gemm(sh.tA, sh.tB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, sh.n)
				}
				b.ReportMetric(2*float64(sh.m*sh.n*sh.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// TestSgemmAlphaZero checks the reference BLAS's alpha = 0: C = beta·C
// with A and B not read (they hold NaN here) and, for beta = 0, C not read
// either, for every transpose pair, above and below MinFlops.
func TestSgemmAlphaZero(t *testing.T) { checkAlphaZero(t, Implementation{}.Sgemm) }

// TestDgemmAlphaZero is TestSgemmAlphaZero for Dgemm.
func TestDgemmAlphaZero(t *testing.T) { checkAlphaZero(t, Implementation{}.Dgemm) }

func checkAlphaZero[T float32 | float64](t *testing.T, gemm gemmFunc[T]) {
	nan := T(math.NaN())
	trans := []blas.Transpose{blas.NoTrans, blas.Trans, blas.ConjTrans}
	for _, sh := range [][3]int{{3, 4, 5}, {40, 40, 40}, {97, 50, 61}, {5, 0, 7}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, tA := range trans {
			for _, tB := range trans {
				for _, beta := range []T{0, 0.5, 1} {
					lda, ldb := k, n
					if tA != blas.NoTrans {
						lda = m
					}
					if tB != blas.NoTrans {
						ldb = k
					}
					a := make([]T, m*k)
					b := make([]T, k*n)
					for i := range a {
						a[i] = nan
					}
					for i := range b {
						b[i] = nan
					}
					c := make([]T, m*n)
					for i := range c {
						c[i] = T(i + 1)
						if beta == 0 {
							c[i] = nan
						}
					}
					c0 := append([]T(nil), c...)
					gemm(tA, tB, m, n, k, 0, a, max(lda, 1), b, max(ldb, 1), beta, c, max(n, 1))
					for i, v := range c {
						want := beta * c0[i]
						if beta == 0 {
							want = 0
						}
						if v != want {
							t.Fatalf("%v %c%c beta %g: C[%d] = %g, want %g", sh, tA, tB, beta, i, v, want)
						}
					}
				}
			}
		}
	}
}
