package dense

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// TestGram32 checks Gram32 and GramChol32 against Gram and Cholesky, with
// and without weights, below and above the size where single precision
// starts, with Potrf32 set to a float32 Cholesky in plain Go and without
// (then, with an assembly kernel, the blocked factorisation
// cholBlocked32), and with each kernel of the machine (Go, AVX2,
// AVX-512); B given in float32 gives the same G and L bit for bit. The
// AVX2 and AVX-512 kernels give the same G and L bit for bit too.
func TestGram32(t *testing.T) {
	asm, has := sgemm.HasAsm, sgemm.Has512
	defer func() { sgemm.HasAsm, sgemm.Has512 = asm, has }()
	kernels := [][2]bool{{false, false}}
	if asm {
		kernels = append(kernels, [2]bool{true, false})
	}
	if has {
		kernels = append(kernels, [2]bool{true, true})
	}
	for _, kn := range kernels {
		sgemm.HasAsm, sgemm.Has512 = kn[0], kn[1]
		testGram32(t)
	}
	if !has {
		return
	}
	// The same G and L from the AVX2 and AVX-512 kernels.
	rnd := rand.New(rand.NewPCG(83, 84))
	for _, sz := range [][2]int{{17, 40}, {48, 100}, {150, 200}} {
		nc, n := sz[0], sz[1]
		b := make([]float32, nc*n)
		for i := range b {
			b[i] = float32(rnd.NormFloat64())
		}
		var s Gram32Scratch
		s.Resize(nc, n)
		var out [2][]float64
		for i, use512 := range []bool{false, true} {
			sgemm.HasAsm, sgemm.Has512 = true, use512
			g, diag := make([]float64, nc*nc), make([]float64, nc)
			if !GramChol32(g, b, nil, nc, n, 0.1, &s, diag, 1e-5) {
				t.Fatalf("%v: not factored", sz)
			}
			out[i] = g
		}
		for i := 0; i < nc; i++ {
			for j := 0; j <= i; j++ {
				if math.Float64bits(out[0][i*nc+j]) != math.Float64bits(out[1][i*nc+j]) {
					t.Fatalf("%v: L[%d,%d]: AVX2 %v, AVX-512 %v", sz, i, j, out[0][i*nc+j], out[1][i*nc+j])
				}
			}
		}
	}
}

func testGram32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(81, 82))
	for _, potrf := range []bool{false, true} {
		if potrf {
			Potrf32 = goPotrf32
		} else {
			Potrf32 = nil
		}
		for _, sz := range [][2]int{{3, 5}, {17, 40}, {30, 31}, {48, 100}, {150, 200}} {
			nc, n := sz[0], sz[1]
			for _, weighted := range []bool{false, true} {
				b := make([]float64, nc*n)
				b32 := make([]float32, nc*n)
				for i := range b {
					b32[i] = float32(rnd.NormFloat64())
					b[i] = float64(b32[i])
				}
				var d []float64
				if weighted {
					d = make([]float64, n)
					for i := range d {
						d[i] = 0.5 + rnd.Float64()
					}
				}
				var s Gram32Scratch
				s.Resize(nc, n)
				want, got := make([]float64, nc*nc), make([]float64, nc*nc)
				Gram(want, b, d, nc, n, 0.1, nil)
				Gram32(got, b, d, nc, n, 0.1, &s)
				got32 := make([]float64, nc*nc)
				Gram32(got32, b32, d, nc, n, 0.1, &s)
				if !slices.Equal(got, got32) {
					t.Fatalf("%v weighted=%v: Gram32 from float32 B differs", sz, weighted)
				}
				for i := range want {
					if math.Abs(got[i]-want[i]) > 1e-5*float64(n) {
						t.Fatalf("%v weighted=%v: G[%d] = %v, want %v", sz, weighted, i, got[i], want[i])
					}
				}
				diag := make([]float64, nc)
				if !Cholesky(want, nc, diag) {
					t.Fatalf("%v: float64 Cholesky failed", sz)
				}
				if !GramChol32(got, b, d, nc, n, 0.1, &s, diag, 1e-5) {
					t.Fatalf("%v potrf=%v: GramChol32 failed", sz, potrf)
				}
				if !GramChol32(got32, b32, d, nc, n, 0.1, &s, diag, 1e-5) {
					t.Fatalf("%v potrf=%v: GramChol32 from float32 B failed", sz, potrf)
				}
				for i := 0; i < nc; i++ {
					if !slices.Equal(got[i*nc:i*nc+i+1], got32[i*nc:i*nc+i+1]) {
						t.Fatalf("%v potrf=%v: GramChol32 from float32 B differs in row %d", sz, potrf, i)
					}
				}
				for i := 0; i < nc; i++ {
					for j := 0; j <= i; j++ {
						if w, g := want[i*nc+j], got[i*nc+j]; math.Abs(g-w) > 1e-4*math.Max(1, math.Abs(w)) {
							t.Fatalf("%v potrf=%v: L[%d,%d] = %v, want %v", sz, potrf, i, j, g, w)
						}
					}
				}
			}
		}
	}
	Potrf32 = nil
	// A singular G is rejected.
	nc, n := 20, 30
	b := make([]float64, nc*n)
	for i := range b {
		b[i] = rnd.NormFloat64()
	}
	copy(b[n:2*n], b[:n])
	var s Gram32Scratch
	s.Resize(nc, n)
	if GramChol32(make([]float64, nc*nc), b, nil, nc, n, 0, &s, make([]float64, nc), 1e-5) {
		t.Error("GramChol32 factored a singular G")
	}
}

// goPotrf32 is a float32 Cholesky of the lower triangle (row-major), for
// testing the Potrf32 path without OpenBLAS.
func goPotrf32(a []float32, n int) bool {
	for j := 0; j < n; j++ {
		d := a[j*n+j]
		for k := 0; k < j; k++ {
			d -= a[j*n+k] * a[j*n+k]
		}
		if !(d > 0) {
			return false
		}
		d = float32(math.Sqrt(float64(d)))
		a[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= a[i*n+k] * a[j*n+k]
			}
			a[i*n+j] = s / d
		}
	}
	return true
}

// TestGramChol32Threshold checks where GramChol32 factors in single
// precision (Precision's doc: a G of 24 rows or more, with the assembly
// kernels and no Potrf32): at 23 rows its factor has the bits of Gram32
// followed by the float64 CholeskyRel, at 24 those of cholBlocked32 on the
// single-precision G.
func TestGramChol32Threshold(t *testing.T) {
	if !sgemm.HasAsm {
		t.Skip("no assembly kernel on this machine/build")
	}
	rnd := rand.New(rand.NewPCG(85, 86))
	n := 40
	for _, nc := range []int{23, 24} {
		b := make([]float32, nc*n)
		for i := range b {
			b[i] = float32(rnd.NormFloat64())
		}
		var s Gram32Scratch
		s.Resize(nc, n)
		got, diag := make([]float64, nc*nc), make([]float64, nc)
		if !GramChol32(got, b, nil, nc, n, 0.1, &s, diag, 1e-5) {
			t.Fatalf("nc %d: not factored", nc)
		}
		want := make([]float64, nc*nc)
		if nc == 23 {
			Gram32(want, b, nil, nc, n, 0.1, &s)
			if !CholeskyRel(want, nc, diag, 1e-5) {
				t.Fatalf("nc %d: CholeskyRel failed", nc)
			}
		} else {
			g32, ld := gram32Lower(b, nil, nc, n, &s)
			for i := range nc {
				g32[i*ld+i] += 0.1
			}
			if !cholBlocked32(g32, nc, ld, s.cw) {
				t.Fatalf("nc %d: cholBlocked32 failed", nc)
			}
			for i := range nc {
				for j := 0; j <= i; j++ {
					want[i*nc+j] = float64(g32[i*ld+j])
				}
			}
		}
		for i := range nc {
			for j := 0; j <= i; j++ {
				if math.Float64bits(got[i*nc+j]) != math.Float64bits(want[i*nc+j]) {
					t.Fatalf("nc %d: L[%d,%d] = %v, want %v", nc, i, j, got[i*nc+j], want[i*nc+j])
				}
			}
		}
	}
}
