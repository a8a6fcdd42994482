package sgemm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

func randSlice(rnd *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rnd.NormFloat64())
	}
	return x
}

// naive returns A·B in float64 for the m×k a and k×n b (row-major).
func naive(m, k, n int, a, b []float32) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for kk := range k {
				s += float64(a[i*k+kk]) * float64(b[kk*n+j])
			}
			c[i*n+j] = s
		}
	}
	return c
}

func check(t *testing.T, what string, got []float32, ldc int, want []float64, m, n, k int, lower bool) {
	t.Helper()
	for i := range m {
		for j := range n {
			if lower && j > i {
				continue
			}
			g, w := float64(got[i*ldc+j]), want[i*n+j]
			if math.Abs(g-w) > 1e-5*float64(k)+1e-6*math.Abs(w) {
				t.Fatalf("%s: C[%d,%d] = %v, want %v", what, i, j, g, w)
			}
		}
	}
}

func TestMul(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{1, 1, 1}, {6, 16, 1}, {5, 3, 7}, {13, 40, 33}, {12, 32, 5}, {25, 70, 9}, {48, 200, 100}, {150, 150, 200}, {7, 17, 0}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b := randSlice(rnd, m*k), randSlice(rnd, k*n)
		want := naive(m, k, n, a, b)
		var p Panels
		p.Pack(k, n, b, n)
		work := make([]float32, WorkLen(m, k))
		ldc := n + 3
		c := make([]float32, m*ldc)
		Mul(m, a, k, &p, 0, n, c, ldc, false, work)
		check(t, "Mul", c, ldc, want, m, n, k, false)
		// A column range and the lower triangle.
		if n > NR {
			c2 := make([]float32, m*n)
			Mul(m, a, k, &p, NR, n, c2, n, false, work)
			for i := range m {
				for j := NR; j < n; j++ {
					if c2[i*n+j-NR] != c[i*ldc+j] {
						t.Fatalf("range: C[%d,%d] = %v, want %v", i, j, c2[i*n+j-NR], c[i*ldc+j])
					}
				}
			}
		}
		// PackT of bᵀ gives the same panels.
		bt := make([]float32, n*k)
		for kk := range k {
			for j := range n {
				bt[j*k+kk] = b[kk*n+j]
			}
		}
		var q Panels
		q.PackT(k, n, bt, k)
		for i := range p.Data {
			if p.Data[i] != q.Data[i] {
				t.Fatalf("PackT differs from Pack at %d", i)
			}
		}
		c3 := make([]float32, m*ldc)
		Mul(m, a, k, &q, 0, n, c3, ldc, true, work)
		check(t, "lower", c3, ldc, want, m, n, k, true)
	}
}

// TestKernelsAgree checks that the assembly kernel, when in use, gives
// bit-identical results to the Go one.
func TestKernelsAgree(t *testing.T) {
	if !HasAsm {
		t.Skip("no assembly kernel on this machine/build")
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{1, 2, 7, 200} {
		a, b := randSlice(rnd, k*MR), randSlice(rnd, k*NR)
		c1, c2 := make([]float32, MR*20), make([]float32, MR*20)
		kernel(k, a, b, c1, 20)
		kernelGo(k, a, b, c2, 20)
		for i := range c1 {
			if math.Abs(float64(c1[i]-c2[i])) > 1e-5*float64(k) {
				t.Fatalf("k=%d: asm %v, Go %v at %d", k, c1[i], c2[i], i)
			}
		}
	}
}

// TestKernel512 checks the AVX-512 12×32 kernel, when in use, against
// the Go kernel on its four 6×16 blocks.
func TestKernel512(t *testing.T) {
	if !Has512 {
		t.Skip("no AVX-512 kernel on this machine/build")
	}
	rnd := rand.New(rand.NewPCG(13, 14))
	for _, k := range []int{1, 2, 7, 200} {
		a, b := randSlice(rnd, 2*k*MR), randSlice(rnd, 2*k*NR)
		ldc := 40
		c1, c2 := make([]float32, 2*MR*ldc), make([]float32, 2*MR*ldc)
		kernel2(k, a, b, c1, ldc)
		for bi := range 2 {
			for bj := range 2 {
				kernelGo(k, a[bi*k*MR:], b[bj*k*NR:], c2[bi*MR*ldc+bj*NR:], ldc)
			}
		}
		for i := range c1 {
			if math.Abs(float64(c1[i]-c2[i])) > 1e-5*float64(k) {
				t.Fatalf("k=%d: AVX-512 %v, Go %v at (%d, %d)", k, c1[i], c2[i], i/ldc, i%ldc)
			}
		}
	}
}

func TestMulDoesNotAllocate(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	m, n, k := 30, 64, 50
	a, b := randSlice(rnd, m*k), randSlice(rnd, k*n)
	var p Panels
	p.Pack(k, n, b, n)
	work, c := make([]float32, WorkLen(m, k)), make([]float32, m*n)
	if n := testing.AllocsPerRun(10, func() { Mul(m, a, k, &p, 0, n, c, n, false, work) }); n != 0 {
		t.Errorf("Mul allocates %v times", n)
	}
}

// BenchmarkGonum times gonum's float32 and float64 matrix products at
// BenchmarkMul's shape, one 48-row block at a time as BenchmarkMul, for
// the comparison docs/performance.md quotes.
func BenchmarkGonum(b *testing.B) {
	rnd := rand.New(rand.NewPCG(7, 8))
	m, k, n := 48, 200, 30000
	a32, b32 := randSlice(rnd, m*k), randSlice(rnd, k*n)
	a64, b64 := make([]float64, m*k), make([]float64, k*n)
	for i, v := range a32 {
		a64[i] = float64(v)
	}
	for i, v := range b32 {
		b64[i] = float64(v)
	}
	b.Run("Sgemm", func(b *testing.B) {
		c := make([]float32, m*1024)
		for b.Loop() {
			for j0 := 0; j0 < n; j0 += 1024 {
				w := min(1024, n-j0)
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, blas32.General{Rows: m, Cols: k, Stride: k, Data: a32},
					blas32.General{Rows: k, Cols: w, Stride: n, Data: b32[j0:]}, 0, blas32.General{Rows: m, Cols: w, Stride: 1024, Data: c})
			}
		}
		b.ReportMetric(2*float64(m*k*n)/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
	})
	b.Run("Dgemm", func(b *testing.B) {
		c := make([]float64, m*1024)
		for b.Loop() {
			for j0 := 0; j0 < n; j0 += 1024 {
				w := min(1024, n-j0)
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: m, Cols: k, Stride: k, Data: a64},
					blas64.General{Rows: k, Cols: w, Stride: n, Data: b64[j0:]}, 0, blas64.General{Rows: m, Cols: w, Stride: 1024, Data: c})
			}
		}
		b.ReportMetric(2*float64(m*k*n)/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
	})
}

// kernelName names the kernel in use: AVX512, AVX2 or Go.
func kernelName() string {
	switch {
	case Has512:
		return "AVX512"
	case HasAsm:
		return "AVX2"
	}
	return "Go"
}

// BenchmarkMul times Y·[A_1 … A_nc] at the (833, 200, 150) evaluation's
// shape, one 48-row block at a time, with the kernel in use (sub-benchmark
// AVX512, AVX2 or Go) and, where that is AVX-512, with the AVX2 one too.
func BenchmarkMul(b *testing.B) {
	rnd := rand.New(rand.NewPCG(7, 8))
	m, k, n := 48, 200, 30000
	a, bb := randSlice(rnd, m*k), randSlice(rnd, k*n)
	var p Panels
	p.Pack(k, n, bb, n)
	work, c := make([]float32, WorkLen(m, k)), make([]float32, m*1024)
	run := func(b *testing.B) {
		for b.Loop() {
			for j0 := 0; j0 < n; j0 += 1024 {
				Mul(m, a, k, &p, j0, min(j0+1024, n), c, 1024, false, work)
			}
		}
		b.ReportMetric(2*float64(m*k*n)/b.Elapsed().Seconds()*float64(b.N)/1e9, "GFLOP/s")
	}
	b.Run(kernelName(), run)
	if Has512 {
		b.Run("AVX2", func(b *testing.B) {
			Has512 = false
			defer func() { Has512 = true }()
			run(b)
		})
	}
}

// TestPack64 checks that packing from float64 with a column scale gives
// the products Mul gives on the scaled, rounded matrices.
func TestPack64(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	for _, sz := range [][2]int{{1, 1}, {7, 19}, {25, 40}} {
		m, k := sz[0], sz[1]
		a := make([]float64, m*k)
		scale := make([]float64, k)
		for i := range a {
			a[i] = rnd.NormFloat64()
		}
		for i := range scale {
			scale[i] = 0.5 + rnd.Float64()
		}
		for _, sc := range [][]float64{nil, scale} {
			a32 := make([]float32, m*k)
			for i, v := range a {
				s := 1.0
				if sc != nil {
					s = sc[i%k]
				}
				a32[i] = float32(v * s)
			}
			var p, q Panels
			p.PackT(k, m, a32, k)
			PackTScaled(&q, k, m, a, k, sc)
			for i := range p.Data {
				if p.Data[i] != q.Data[i] {
					t.Fatalf("PackTScaled differs at %d", i)
				}
			}
			work := make([]float32, WorkLen(m, k))
			want, got := make([]float32, m*m), make([]float32, m*m)
			Mul(m, a32, k, &p, 0, m, want, m, false, work)
			PackAScaled(m, k, a, k, sc, work[:len(work)-MR*NR])
			MulPacked(m, work[:len(work)-MR*NR], &q, 0, m, got, m, false, work[len(work)-MR*NR:])
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("%v: MulPacked[%d] = %v, Mul %v", sz, i, got[i], want[i])
				}
			}
		}
	}
}

// TestPackScaled32 checks the packers on a float32 source: each entry is
// scaled in float64 and rounded once, and panels of 16 and 6 rows take the
// unscaled fast path.
func TestPackScaled32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	for _, sz := range [][2]int{{1, 1}, {7, 19}, {32, 40}} {
		m, k := sz[0], sz[1]
		a := make([]float32, m*k)
		a64 := make([]float64, m*k)
		scale := make([]float64, k)
		for i := range a {
			a[i] = float32(rnd.NormFloat64())
			a64[i] = float64(a[i])
		}
		for i := range scale {
			scale[i] = 0.5 + rnd.Float64()
		}
		for _, sc := range [][]float64{nil, scale} {
			var p, q Panels
			PackTScaled(&p, k, m, a64, k, sc)
			PackTScaled(&q, k, m, a, k, sc)
			if !slices.Equal(p.Data, q.Data) {
				t.Fatalf("%v: PackTScaled from float32 differs from float64", sz)
			}
			n := WorkLen(m, k) - MR*NR
			pa, qa := make([]float32, n), make([]float32, n)
			PackAScaled(m, k, a64, k, sc, pa)
			PackAScaled(m, k, a, k, sc, qa)
			if !slices.Equal(pa, qa) {
				t.Fatalf("%v: PackAScaled from float32 differs from float64", sz)
			}
		}
	}
}

// kernelSel is one kernel of this machine and build: the settings of
// HasAsm and Has512 that select it, and its name.
type kernelSel struct {
	name        string
	asm, has512 bool
}

// use selects the kernel.
func (k kernelSel) use() { HasAsm, Has512 = k.asm, k.has512 }

// kernelsOf lists the kernels of this machine and build, Go, AVX2 and
// AVX-512, as far as the machine has them, and restores the kernel in use
// when t ends.
func kernelsOf(t testing.TB) []kernelSel {
	asm, has := HasAsm, Has512
	t.Cleanup(func() { HasAsm, Has512 = asm, has })
	ks := []kernelSel{{"Go", false, false}}
	if asm {
		ks = append(ks, kernelSel{"AVX2", true, false})
	}
	if has {
		ks = append(ks, kernelSel{"AVX512", true, true})
	}
	return ks
}

// TestGramLower checks GramLower's blocks on and below the diagonal
// against M·Mᵀ by a triple loop, with each kernel of the machine (Go,
// AVX2, AVX-512).
func TestGramLower(t *testing.T) {
	rnd := rand.New(rand.NewPCG(15, 16))
	for _, kn := range kernelsOf(t) {
		kn.use()
		for _, sz := range [][2]int{{1, 1}, {16, 3}, {150, 200}, {33, 17}, {5, 1}} {
			n, k := sz[0], sz[1]
			mm := randSlice(rnd, n*k)
			var p Panels
			p.PackT(k, n, mm, k)
			np := Len(1, n)
			c := make([]float32, np*np)
			GramLower(&p, c, np)
			for i := range n {
				for j := 0; j <= i; j++ {
					var want float64
					for kk := range k {
						want += float64(mm[i*k+kk]) * float64(mm[j*k+kk])
					}
					if g := float64(c[i*np+j]); math.Abs(g-want) > 1e-5*float64(k)+1e-6*math.Abs(want) {
						t.Fatalf("%s %v: C[%d,%d] = %v, want %v", kn.name, sz, i, j, g, want)
					}
				}
			}
		}
	}
}

// TestBlockTBits requires BlockT with the assembly kernels (AVX2 and, where
// the machine has it, AVX-512) to give, for C = AᵀB and C −= AᵀB, the bits
// of one chain of fused multiply–adds per entry over k in increasing order
// (math.FMA), which is what makes the AVX2 and AVX-512 factorisations of
// dense.cholBlocked32 agree bit for bit; entries of c outside the block
// stay untouched.
func TestBlockTBits(t *testing.T) {
	if !HasAsm {
		t.Skip("no assembly kernel on this machine/build")
	}
	rnd := rand.New(rand.NewPCG(23, 24))
	for _, kn := range kernelsOf(t)[1:] {
		kn.use()
		for _, k := range []int{1, 2, 7, 16, 50, 201} {
			for _, sub := range []bool{false, true} {
				a, b := randSlice(rnd, k*NR), randSlice(rnd, k*NR)
				ldc := NR + 3
				c := randSlice(rnd, (NR+1)*ldc)
				want := slices.Clone(c)
				for i := range NR {
					for j := range NR {
						var acc float32
						if sub {
							acc = want[i*ldc+j]
						}
						for kk := range k {
							ai, bj := a[kk*NR+i], b[kk*NR+j]
							if sub {
								ai = -ai
							}
							acc = fma32(ai, bj, acc)
						}
						want[i*ldc+j] = acc
					}
				}
				BlockT(k, a, b, c, ldc, sub)
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s k=%d sub=%v: entry (%d, %d) = %v, want %v", kn.name, k, sub, i/ldc, i%ldc, c[i], want[i])
					}
				}
			}
		}
	}
}

// fma32 is a fused multiply–add in float32: x·y + z rounded once (the
// product and sum exact in big.Float, then rounded to 24 bits).
func fma32(x, y, z float32) float32 {
	p := new(big.Float).SetPrec(200).SetFloat64(float64(x) * float64(y)) // exact: 48 bits
	p.Add(p, new(big.Float).SetFloat64(float64(z)))
	f, _ := p.SetPrec(24).Float32()
	return f
}

// TestMul512Bits requires Mul with the AVX-512 kernels (12×32 blocks and
// the masked 12×16 edge blocks) to give the bits of the AVX2 6×16 kernel on
// every shape: widths with no edge, a full 16-wide edge, partial ones
// (1, 4, 8, 15 columns), two edge panels; heights with and without rows
// left over; a column range; the lower triangle (on and below the
// diagonal, above which either may write).
func TestMul512Bits(t *testing.T) {
	if !Has512 {
		t.Skip("no AVX-512 kernel on this machine/build")
	}
	rnd := rand.New(rand.NewPCG(21, 22))
	for _, m := range []int{12, 13, 48, 53} {
		for _, n := range []int{1, 4, 8, 15, 16, 20, 32, 40, 47, 48, 100, 200} {
			for _, k := range []int{1, 9, 50} {
				a, b := randSlice(rnd, m*k), randSlice(rnd, k*n)
				var p Panels
				p.Pack(k, n, b, n)
				work := make([]float32, WorkLen(m, k))
				for _, lower := range []bool{false, true} {
					for _, j0 := range []int{0, NR} {
						if j0 >= n {
							continue
						}
						ldc := n + 5
						c512, c2 := make([]float32, m*ldc), make([]float32, m*ldc)
						for i := range c512 {
							c512[i], c2[i] = 7, 7 // outside the range: untouched
						}
						Mul(m, a, k, &p, j0, n, c512, ldc, lower, work)
						Has512 = false
						Mul(m, a, k, &p, j0, n, c2, ldc, lower, work)
						Has512 = true
						for i := range c2 {
							if r, j := i/ldc, i%ldc+j0; lower && r < j {
								continue // above the diagonal: either may write it
							}
							if math.Float32bits(c512[i]) != math.Float32bits(c2[i]) {
								t.Fatalf("m=%d n=%d k=%d j0=%d lower=%v: entry %d: AVX-512 %v, AVX2 %v", m, n, k, j0, lower, i, c512[i], c2[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestPackRowsAsm checks the AVX2 transposing pack of 16 rows (PackRows,
// and so PackT and PackTScaled without scale) against the Go loop, bit for
// bit, for lengths around its eight entries at a time and padded strides,
// NaN payloads included.
func TestPackRowsAsm(t *testing.T) {
	if !HasAsm {
		t.Skip("no assembly kernel on this machine/build")
	}
	rnd := rand.New(rand.NewPCG(27, 28))
	asm := HasAsm
	defer func() { HasAsm = asm }()
	for _, k := range []int{1, 7, 8, 9, 15, 16, 17, 64, 100, 101} {
		for _, pad := range []int{0, 3, 16} {
			ld := k + pad
			src := randSlice(rnd, 16*ld)
			src[rnd.IntN(len(src))] = math.Float32frombits(0x7fc00123) // a NaN with a payload
			var got, want [2][]float32
			for i, use := range []bool{false, true} {
				HasAsm = use
				got[i] = make([]float32, k*NR)
				PackRows(got[i], k, src, ld)
				var p Panels
				p.PackT(k, NR, src, ld)
				want[i] = slices.Clone(p.Data)
			}
			HasAsm = asm
			for i := range got[0] {
				if math.Float32bits(got[0][i]) != math.Float32bits(got[1][i]) {
					t.Fatalf("k %d ld %d: PackRows entry %d: asm %x, Go %x", k, ld, i, math.Float32bits(got[1][i]), math.Float32bits(got[0][i]))
				}
			}
			if !slices.Equal(want[0], want[1]) && !slices.EqualFunc(want[0], want[1], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
				t.Fatalf("k %d ld %d: PackT differs between the asm and the Go loop", k, ld)
			}
			for kk := range k {
				for i := range NR {
					if math.Float32bits(got[1][kk*NR+i]) != math.Float32bits(src[i*ld+kk]) {
						t.Fatalf("k %d ld %d: panel[%d][%d] is not src[%d][%d]", k, ld, kk, i, i, kk)
					}
				}
			}
		}
	}
}
