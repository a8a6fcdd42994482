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
	if m*n*k < MinFlops || alpha == 0 || !validTrans(tA) || !validTrans(tB) {
		// gonum checks every argument and handles the degenerate cases.
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	checkSizes(tA, tB, m, n, k, a, lda, b, ldb, c, ldc, func(tA, tB blas.Transpose, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
		gonum.Implementation{}.Sgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
	})

	g := gemmPool.Get().(*gemm)
	defer gemmPool.Put(g)
	g.m, g.n, g.k = m, n, k
	g.tA, g.a, g.lda = tA, a, lda
	g.alpha, g.beta = alpha, beta
	g.c, g.ldc = c, ldc
	if tB == blas.NoTrans {
		g.b.Pack(k, n, b, ldb)
	} else {
		g.b.PackT(k, n, b, ldb)
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

// gemm is the state of one Sgemm call, shared by its workers; pooled with
// its packed B.
type gemm struct {
	m, n, k     int
	tA          blas.Transpose
	a           []float32
	lda         int
	alpha, beta float32
	c           []float32
	ldc         int
	b           sgemm.Panels
}

var gemmPool = sync.Pool{New: func() any { return new(gemm) }}

// scratch is one worker's packed rows of A, product block and tile.
type scratch struct {
	pa, t, tile []float32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func grow[T float32 | float64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Run computes the rows [lo, hi) of C.
func (g *gemm) Run(lo, hi int) {
	rows, k, n := hi-lo, g.k, g.n
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	s.pa = grow(s.pa, sgemm.WorkLen(rows, k)-sgemm.MR*sgemm.NR)
	s.tile = grow(s.tile, sgemm.MR*sgemm.NR)
	if g.tA == blas.NoTrans {
		sgemm.PackAScaled(rows, k, g.a[lo*g.lda:], g.lda, nil, s.pa)
	} else {
		sgemm.PackAT(rows, k, g.a[lo:], g.lda, s.pa)
	}
	c := g.c[lo*g.ldc:]
	if g.alpha == 1 && g.beta == 0 {
		sgemm.MulPacked(rows, s.pa, &g.b, 0, n, c, g.ldc, false, s.tile)
		return
	}
	s.t = grow(s.t, rows*n)
	sgemm.MulPacked(rows, s.pa, &g.b, 0, n, s.t, n, false, s.tile)
	combine(c, g.ldc, s.t, rows, n, g.alpha, g.beta)
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

// Dgemm computes C = alpha·op(A)·op(B) + beta·C in float64, as Sgemm does
// in float32 (row-major, the reference BLAS's treatment of beta = 0 and
// alpha = 0, gonum's panics), on enforce's float64 kernel
// (sgemm.MulPacked64). Each entry of the product is accumulated over k in
// order with fused multiply–adds, so its rounding differs from gonum's
// Dgemm but not with GOMAXPROCS.
func (impl Implementation) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m*n*k < MinFlops || alpha == 0 || !validTrans(tA) || !validTrans(tB) {
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	checkSizes(tA, tB, m, n, k, a, lda, b, ldb, c, ldc, func(tA, tB blas.Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
		gonum.Implementation{}.Dgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
	})

	g := gemm64Pool.Get().(*gemm64)
	defer gemm64Pool.Put(g)
	g.m, g.n, g.k = m, n, k
	g.tA, g.a, g.lda = tA, a, lda
	g.alpha, g.beta = alpha, beta
	g.c, g.ldc = c, ldc
	if tB == blas.NoTrans {
		g.b.Pack(k, n, b, ldb)
	} else {
		g.b.PackT(k, n, b, ldb)
	}
	par.ForBlocks(m, 2*sgemm.MR, g)
	g.a, g.c = nil, nil
}

// gemm64 is gemm for Dgemm.
type gemm64 struct {
	m, n, k     int
	tA          blas.Transpose
	a           []float64
	lda         int
	alpha, beta float64
	c           []float64
	ldc         int
	b           sgemm.Panels64
}

var gemm64Pool = sync.Pool{New: func() any { return new(gemm64) }}

// scratch64 is scratch for Dgemm.
type scratch64 struct {
	pa, t, tile []float64
}

var scratch64Pool = sync.Pool{New: func() any { return new(scratch64) }}

// Run computes the rows [lo, hi) of C.
func (g *gemm64) Run(lo, hi int) {
	rows, k, n := hi-lo, g.k, g.n
	s := scratch64Pool.Get().(*scratch64)
	defer scratch64Pool.Put(s)
	s.pa = grow(s.pa, sgemm.WorkLen(rows, k)-sgemm.MR*sgemm.NR)
	s.tile = grow(s.tile, sgemm.MR*sgemm.NR)
	if g.tA == blas.NoTrans {
		sgemm.PackA64(rows, k, g.a[lo*g.lda:], g.lda, s.pa)
	} else {
		sgemm.PackAT64(rows, k, g.a[lo:], g.lda, s.pa)
	}
	c := g.c[lo*g.ldc:]
	if g.alpha == 1 && g.beta == 0 {
		sgemm.MulPacked64(rows, s.pa, &g.b, 0, n, c, g.ldc, s.tile)
		return
	}
	s.t = grow(s.t, rows*n)
	sgemm.MulPacked64(rows, s.pa, &g.b, 0, n, s.t, n, s.tile)
	combine(c, g.ldc, s.t, rows, n, g.alpha, g.beta)
}
