package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randSlice64(rnd *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rnd.NormFloat64()
	}
	return x
}

// TestMulPacked64 checks the float64 product against a plain triple loop,
// with each kernel this machine has (AVX-512, AVX2, Go), on full and
// partial blocks and column ranges.
func TestMulPacked64(t *testing.T) {
	rnd := rand.New(rand.NewPCG(21, 22))
	for _, kn := range kernelsOf(t) {
		kn.use()
		for _, sz := range [][3]int{{1, 1, 1}, {6, 16, 1}, {5, 3, 7}, {13, 40, 33}, {12, 16, 5}, {25, 70, 9}, {48, 200, 100}, {7, 17, 0}, {33, 20, 0}} {
			m, n, k := sz[0], sz[1], sz[2]
			a, b := randSlice64(rnd, m*k), randSlice64(rnd, k*n)
			var p Panels64
			p.Pack(k, n, b, n)
			pa := make([]float64, WorkLen(m, k)-MR*NR)
			PackA64(m, k, a, k, pa)
			ldc := n + 3
			c := make([]float64, m*ldc)
			tile := make([]float64, MR*NR)
			MulPacked64(m, pa, &p, 0, n, c, ldc, tile)
			for i := range m {
				for j := range n {
					var want, mag float64
					for kk := range k {
						want += a[i*k+kk] * b[kk*n+j]
						mag += math.Abs(a[i*k+kk] * b[kk*n+j])
					}
					if got := c[i*ldc+j]; math.Abs(got-want) > 1e-15*float64(k)*mag {
						t.Fatalf("%s %v: C[%d,%d] = %v, want %v", kn.name, sz, i, j, got, want)
					}
				}
			}
			if n > NR {
				c2 := make([]float64, m*n)
				MulPacked64(m, pa, &p, NR, n, c2, n, tile)
				for i := range m {
					for j := NR; j < n; j++ {
						if c2[i*n+j-NR] != c[i*ldc+j] {
							t.Fatalf("%s %v: range: C[%d,%d] = %v, want %v", kn.name, sz, i, j, c2[i*n+j-NR], c[i*ldc+j])
						}
					}
				}
			}
		}
	}
}

// TestKernels64Agree checks that the AVX-512 and AVX2 float64 kernels,
// which both accumulate with fused multiply–adds in order over k, give
// bit-identical blocks, so that a product does not depend on how its rows
// fall into blocks.
func TestKernels64Agree(t *testing.T) {
	if !Has512 {
		t.Skip("no AVX-512 kernel on this machine/build")
	}
	rnd := rand.New(rand.NewPCG(23, 24))
	for _, k := range []int{1, 2, 7, 201} {
		a, b := randSlice64(rnd, 2*k*MR), randSlice64(rnd, k*NR)
		ldc := 20
		c1, c2 := make([]float64, 2*MR*ldc), make([]float64, 2*MR*ldc)
		kernel64x2(k, a, b, c1, ldc)
		kernel64(k, a, b, c2, ldc)
		kernel64(k, a[k*MR:], b, c2[MR*ldc:], ldc)
		for i := range c1 {
			if c1[i] != c2[i] {
				t.Fatalf("k=%d: AVX-512 %v, AVX2 %v at (%d, %d)", k, c1[i], c2[i], i/ldc, i%ldc)
			}
		}
	}
}

func TestMulPacked64DoesNotAllocate(t *testing.T) {
	rnd := rand.New(rand.NewPCG(25, 26))
	m, n, k := 30, 64, 50
	var p Panels64
	p.Pack(k, n, randSlice64(rnd, k*n), n)
	pa := make([]float64, WorkLen(m, k)-MR*NR)
	PackA64(m, k, randSlice64(rnd, m*k), k, pa)
	c, tile := make([]float64, m*n), make([]float64, MR*NR)
	if n := testing.AllocsPerRun(10, func() { MulPacked64(m, pa, &p, 0, n, c, n, tile) }); n != 0 {
		t.Errorf("MulPacked64 allocates %v times", n)
	}
}

// BenchmarkMul64 is BenchmarkMul in float64: Y·[A_1 … A_nc] at the
// (833, 200, 150) evaluation's shape, one 48-row block at a time, on one
// core.
func BenchmarkMul64(b *testing.B) {
	rnd := rand.New(rand.NewPCG(7, 8))
	m, k, n := 48, 200, 30000
	a, bb := randSlice64(rnd, m*k), randSlice64(rnd, k*n)
	var p Panels64
	p.Pack(k, n, bb, n)
	pa, tile := make([]float64, WorkLen(m, k)-MR*NR), make([]float64, MR*NR)
	c := make([]float64, m*1024)
	for b.Loop() {
		PackA64(m, k, a, k, pa)
		for j0 := 0; j0 < n; j0 += 1024 {
			MulPacked64(m, pa, &p, j0, min(j0+1024, n), c, 1024, tile)
		}
	}
	b.ReportMetric(2*float64(m*k*n)/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
}

// TestMulPacked64Lower checks MulPacked64Lower against MulPacked64 on the
// Gram matrix M·Mᵀ of one packing (PackA64 of M, PackT of M), with each
// kernel of the machine: the same bits on and below the diagonal, and
// every block wholly above it untouched.
func TestMulPacked64Lower(t *testing.T) {
	rnd := rand.New(rand.NewPCG(25, 26))
	for _, kn := range kernelsOf(t) {
		kn.use()
		for _, sz := range [][2]int{{1, 1}, {5, 3}, {6, 16}, {16, 7}, {17, 30}, {40, 60}, {50, 100}, {150, 200}, {33, 0}} {
			n, k := sz[0], sz[1]
			mm := randSlice64(rnd, n*k)
			var p Panels64
			p.PackT(k, n, mm, k)
			pa := make([]float64, WorkLen(n, k)-MR*NR)
			PackA64(n, k, mm, k, pa)
			tile := make([]float64, MR*NR)
			full, low := make([]float64, n*n), make([]float64, n*n)
			for i := range low {
				low[i] = 7
			}
			MulPacked64(n, pa, &p, 0, n, full, n, tile)
			MulPacked64Lower(n, pa, &p, low, n, tile)
			for i := range n {
				for j := range n {
					switch {
					case j <= i:
						if math.Float64bits(low[i*n+j]) != math.Float64bits(full[i*n+j]) {
							t.Fatalf("%s %v: C[%d,%d] = %v, MulPacked64 %v", kn.name, sz, i, j, low[i*n+j], full[i*n+j])
						}
					case j/NR*NR > i/MR*MR+MR-1 && low[i*n+j] != 7:
						// The block of column panel j/NR and row panel i/MR
						// lies wholly above the diagonal.
						t.Fatalf("%s %v: C[%d,%d] written above the diagonal", kn.name, sz, i, j)
					}
				}
			}
		}
	}
}
