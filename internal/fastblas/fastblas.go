// Package fastblas is a BLAS implementation for gorgonia and gonum whose
// matrix products (Sgemm and Dgemm) run on enforce's own kernels
// (internal/sgemm: Go-assembly AVX-512 and AVX2/FMA kernels chosen at run
// time, plain Go elsewhere), split over the cores; every other routine is
// gonum's pure-Go one. It needs no cgo.
//
// The products' results do not depend on GOMAXPROCS: the rows of C are
// split among the workers in blocks of 2·sgemm.MR, the height of the
// largest kernel, so each entry is computed by the same kernel with the
// same summation order whatever the number of workers. They do differ from
// gonum's in rounding (fused multiply–adds, another order over k).
package fastblas

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/enforce-nn/enforce/internal/par"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// Implementation is gonum's pure-Go BLAS with Sgemm and Dgemm replaced. It satisfies
// gorgonia's and tensor's BLAS interfaces (gorgonia.Use) as well as gonum's
// blas.Float32 and blas.Float64 (blas32.Use, blas64.Use).
type Implementation struct {
	gonum.Implementation
}

// MinFlops is the size m·n·k below which Sgemm and Dgemm call gonum's:
// packing costs more than it saves on small products.
const MinFlops = 32 * 32 * 32

// Sgemm computes C = alpha·op(A)·op(B) + beta·C, with op(X) = X or Xᵀ as
// tA and tB say, for row-major matrices (BLAS's C interface in row-major
// order, as gonum's Sgemm). As in the reference BLAS, C is not read when
// beta is 0, and A and B are not read when alpha is 0 or k is 0. It panics
// on invalid arguments with gonum's messages, as every gonum BLAS routine
// does.
func (impl Implementation) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if alpha == 0 {
		// gonum checks every argument and, with beta = 1, returns before
		// it reads A, B or C; with another beta it would multiply A by B
		// (0·NaN is NaN), so C is scaled here.
		impl.Implementation.Sgemm(tA, tB, m, n, k, 0, a, lda, b, ldb, 1, c, ldc)
		scale(m, n, beta, c, ldc)
		return
	}
	if m*n*k < MinFlops || !validTrans(tA) || !validTrans(tB) {
		// gonum checks every argument and handles the degenerate cases.
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	run(&kernels32, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm computes C = alpha·op(A)·op(B) + beta·C in float64, as Sgemm does
// in float32 (row-major, the reference BLAS's treatment of beta = 0 and
// alpha = 0, gonum's panics), on enforce's float64 kernel
// (sgemm.MulPacked64). Each entry of the product is accumulated over k in
// order with fused multiply–adds, so its rounding differs from gonum's
// Dgemm but not with GOMAXPROCS.
func (impl Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if alpha == 0 {
		impl.Implementation.Dgemm(tA, tB, m, n, k, 0, a, lda, b, ldb, 1, c, ldc) // checks only, as in Sgemm
		scale(m, n, beta, c, ldc)
		return
	}
	if m*n*k < MinFlops || !validTrans(tA) || !validTrans(tB) {
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	run(&kernels64, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// kernels are the packing and product routines of internal/sgemm in one
// precision, T, with its packed-B type P, and the pools of Sgemm's or
// Dgemm's call state and per-worker scratch.
type kernels[T float32 | float64, P any] struct {
	gonumGemm func(tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)
	packB     func(p *P, k, n int, b []T, ldb int)
	packBT    func(p *P, k, n int, bt []T, ldbt int)
	packA     func(m, k int, a []T, lda int, dst []T)
	packAT    func(m, k int, at []T, ldat int, dst []T)
	mul       func(m int, pa []T, p *P, n int, c []T, ldc int, tile []T)
	calls, ws sync.Pool
}

var kernels32 = kernels[float32, sgemm.Panels]{
	gonumGemm: gonum.Implementation{}.Sgemm,
	packB:     (*sgemm.Panels).Pack,
	packBT:    (*sgemm.Panels).PackT,
	packA:     func(m, k int, a []float32, lda int, dst []float32) { sgemm.PackAScaled(m, k, a, lda, nil, dst) },
	packAT:    sgemm.PackAT,
	mul: func(m int, pa []float32, p *sgemm.Panels, n int, c []float32, ldc int, tile []float32) {
		sgemm.MulPacked(m, pa, p, 0, n, c, ldc, false, tile)
	},
}

var kernels64 = kernels[float64, sgemm.Panels64]{
	gonumGemm: gonum.Implementation{}.Dgemm,
	packB:     (*sgemm.Panels64).Pack,
	packBT:    (*sgemm.Panels64).PackT,
	packA:     sgemm.PackA64,
	packAT:    sgemm.PackAT64,
	mul: func(m int, pa []float64, p *sgemm.Panels64, n int, c []float64, ldc int, tile []float64) {
		sgemm.MulPacked64(m, pa, p, 0, n, c, ldc, tile)
	},
}

// run is Sgemm and Dgemm past their gonum cases: it checks the sizes,
// packs B once and computes the rows of C in blocks of 2·sgemm.MR over the
// workers.
func run[T float32 | float64, P any](kn *kernels[T, P], tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	checkSizes(tA, tB, m, n, k, a, lda, b, ldb, c, ldc, func(tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
		kn.gonumGemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
	})
	g, _ := kn.calls.Get().(*gemm[T, P])
	if g == nil {
		g = new(gemm[T, P])
	}
	defer kn.calls.Put(g)
	g.kn = kn
	g.m, g.n, g.k = m, n, k
	g.tA, g.a, g.lda = tA, a, lda
	g.alpha, g.beta = alpha, beta
	g.c, g.ldc = c, ldc
	if tB == blas.NoTrans {
		kn.packB(&g.b, k, n, b, ldb)
	} else {
		kn.packBT(&g.b, k, n, b, ldb)
	}
	par.ForBlocks(m, 2*sgemm.MR, g)
	g.a, g.c = nil, nil
}

func validTrans(t blas.Transpose) bool {
	return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
}

// checkSizes panics, as gonum's Sgemm and Dgemm do, when a slice is too
// short or a leading dimension too small (gonum's messages, via gonumGemm,
// a call that fails).
func checkSizes[T float32 | float64](tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int,
	gonumGemm func(tA, tB blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int)) {
	rowA, colA := m, k
	if tA != blas.NoTrans {
		rowA, colA = k, m
	}
	rowB, colB := k, n
	if tB != blas.NoTrans {
		rowB, colB = n, k
	}
	if m < 0 || n < 0 || k < 0 || lda < max(1, colA) || ldb < max(1, colB) || ldc < max(1, n) ||
		len(a) < lda*(rowA-1)+colA || len(b) < ldb*(rowB-1)+colB || len(c) < ldc*(m-1)+n {
		// Let gonum panic with its message for the first bad argument.
		gonumGemm(tA, tB, m, n, k, a, lda, b, ldb, c, ldc)
		panic("fastblas: bad gemm arguments") // not reached: gonum panics first
	}
}

// gemm is the state of one Sgemm or Dgemm call, shared by its workers;
// pooled with its packed B.
type gemm[T float32 | float64, P any] struct {
	kn          *kernels[T, P]
	m, n, k     int
	tA          blas.Transpose
	a           []T
	lda         int
	alpha, beta T
	c           []T
	ldc         int
	b           P
}

// scratch is one worker's packed rows of A, product block and tile.
type scratch[T float32 | float64] struct {
	pa, t, tile []T
}

func grow[T float32 | float64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Run computes the rows [lo, hi) of C.
func (g *gemm[T, P]) Run(lo, hi int) {
	rows, k, n := hi-lo, g.k, g.n
	s, _ := g.kn.ws.Get().(*scratch[T])
	if s == nil {
		s = new(scratch[T])
	}
	defer g.kn.ws.Put(s)
	s.pa = grow(s.pa, sgemm.WorkLen(rows, k)-sgemm.MR*sgemm.NR)
	s.tile = grow(s.tile, sgemm.MR*sgemm.NR)
	if g.tA == blas.NoTrans {
		g.kn.packA(rows, k, g.a[lo*g.lda:], g.lda, s.pa)
	} else {
		g.kn.packAT(rows, k, g.a[lo:], g.lda, s.pa)
	}
	c := g.c[lo*g.ldc:]
	if g.alpha == 1 && g.beta == 0 {
		g.kn.mul(rows, s.pa, &g.b, n, c, g.ldc, s.tile)
		return
	}
	s.t = grow(s.t, rows*n)
	g.kn.mul(rows, s.pa, &g.b, n, s.t, n, s.tile)
	combine(c, g.ldc, s.t, rows, n, g.alpha, g.beta)
}

// scale writes C = beta·C for the m×n matrix C (stride ldc): zeros, C
// not read, when beta is 0; nothing when beta is 1.
func scale[T float32 | float64](m, n int, beta T, c []T, ldc int) {
	if beta == 1 || n == 0 {
		return
	}
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(ci)
			continue
		}
		for j := range ci {
			ci[j] *= beta
		}
	}
}

// combine writes C = alpha·T + beta·C for the rows×n product T (stride
// n); C is not read when beta is 0.
func combine[T float32 | float64](c []T, ldc int, t []T, rows, n int, alpha, beta T) {
	for i := range rows {
		ci, ti := c[i*ldc:i*ldc+n], t[i*n:i*n+n]
		if beta == 0 {
			for j, v := range ti {
				ci[j] = alpha * v
			}
			continue
		}
		for j, v := range ti {
			ci[j] = alpha*v + beta*ci[j]
		}
	}
}
