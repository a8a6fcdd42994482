// Package dense holds the small dense linear-algebra kernels of one
// projection step, on row-major []float64 slices: the Gram matrix
// G = B·diag(d)·Bᵀ + εI, its Cholesky factorisation and solves, and the
// clamped eigendecomposition used when Cholesky fails.
//
// Small systems are handled by plain loops (a call into BLAS costs more than
// the arithmetic). Larger Gram matrices are products on internal/sgemm's
// assembly kernels where the CPU has them (AVX2 or AVX-512), else, and
// under the openblas build tag, on the registered BLAS; larger
// factorisations and solves go through gonum's blas64 and lapack64, which
// dispatch to whatever implementation is registered (pure Go by default,
// OpenBLAS with the openblas build tag). No kernel allocates once its
// scratch is sized: GramScratch.Resize and Gram32Scratch.Resize allocate
// it (Gram grows a GramScratch that is too small).
package dense

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/enforce-nn/enforce/internal/mixed"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// blasMin is the size (in multiply–adds) above which a kernel calls BLAS or
// LAPACK instead of plain loops.
const blasMin = 4096

// GramScratch holds the temporaries of Gram: B·diag(d)^½ and its two
// packings for the float64 kernel. Its zero value is ready to use; Gram
// grows it as needed, and Resize sizes it in advance.
type GramScratch struct {
	a, pa, tile, sd []float64
	p               sgemm.Panels64
}

// Resize makes s large enough for B of nc×n, so that Gram does not
// allocate; below the size at which Gram calls a kernel it does nothing.
// Its slices keep their memory when they are long enough already.
func (s *GramScratch) Resize(nc, n int) {
	if nc*nc*n < blasMin {
		return
	}
	grow := func(v []float64, l int) []float64 {
		if cap(v) < l {
			return make([]float64, l)
		}
		return v[:l]
	}
	s.a = grow(s.a, nc*n)
	s.sd = grow(s.sd, n)
	s.pa = grow(s.pa, sgemm.WorkLen(nc, n)-sgemm.MR*sgemm.NR)
	s.tile = grow(s.tile, sgemm.MR*sgemm.NR)
	s.p.Data = grow(s.p.Data, sgemm.Len(n, nc))
}

// Gram writes g = B·diag(d)·Bᵀ + reg·I into the full nc×nc row-major g,
// for B nc×n row-major. A nil d means d = 1. s holds the temporaries; it
// may be nil for B·Bᵀ below the size at which Gram calls a kernel (nc²·n <
// 4096), and is grown as needed otherwise.
//
// With the assembly kernels (sgemm.HasAsm) the product is
// sgemm.MulPacked64Lower's: every entry one chain of fused multiply–adds
// over B's columns in order, only the blocks on and below the diagonal
// computed, and the result does not depend on the machine's core count;
// without them, or with BLASGram, it is the registered BLAS's dsyrk.
func Gram(g, b, d []float64, nc, n int, reg float64, s *GramScratch) {
	if nc*nc*n >= blasMin {
		if s == nil {
			s = new(GramScratch)
		}
		s.Resize(nc, n)
		a := b
		if d != nil {
			a = s.a[:nc*n]
			sd := s.sd[:n]
			for k, v := range d[:n] {
				sd[k] = math.Sqrt(v)
			}
			for i := 0; i < nc; i++ {
				row, src := a[i*n:(i+1)*n], b[i*n:(i+1)*n]
				for k, v := range src {
					row[k] = v * sd[k]
				}
			}
		}
		if sgemm.HasAsm && !BLASGram {
			sgemm.PackA64(nc, n, a, n, s.pa)
			s.p.PackT(n, nc, a, n)
			sgemm.MulPacked64Lower(nc, s.pa, &s.p, g, nc, s.tile)
			for i := 0; i < nc; i++ {
				g[i*nc+i] += reg
				for j := i + 1; j < nc; j++ {
					g[i*nc+j] = g[j*nc+i]
				}
			}
			return
		}
		blas64.Syrk(blas.NoTrans, 1,
			blas64.General{Rows: nc, Cols: n, Stride: n, Data: a}, 0,
			blas64.Symmetric{Uplo: blas.Upper, N: nc, Stride: nc, Data: g})
		for i := 0; i < nc; i++ {
			g[i*nc+i] += reg
			for j := 0; j < i; j++ {
				g[i*nc+j] = g[j*nc+i]
			}
		}
		return
	}
	gramLoops(g, b, d, nc, n, reg)
}

// gramLoops is Gram by plain loops in float64, for B in float64 or
// float32.
func gramLoops[T sgemm.Real](g []float64, b []T, d []float64, nc, n int, reg float64) {
	for i := 0; i < nc; i++ {
		bi := b[i*n : (i+1)*n]
		for j := 0; j <= i; j++ {
			bj := b[j*n : (j+1)*n]
			var s float64
			if d == nil {
				for k, v := range bi {
					s += float64(v) * float64(bj[k])
				}
			} else {
				for k, v := range bi {
					s += float64(v) * d[k] * float64(bj[k])
				}
			}
			g[i*nc+j] = s
			g[j*nc+i] = s
		}
		g[i*nc+i] += reg
	}
}

// BLASGram, when set (the openblas build sets it), makes Gram's float64
// product the registered BLAS's dsyrk even where sgemm's assembly kernels
// are in use.
var BLASGram bool

// Potrf, when set, factors larger matrices for Cholesky: it overwrites the
// lower triangle of the n×n row-major a with L, a = L·Lᵀ, and reports
// whether a was positive definite. The openblas build sets it to OpenBLAS's
// dpotrf; by default it is nil and gonum's pure-Go factorisation is used.
var Potrf func(a []float64, n int) bool

// Cholesky overwrites the lower triangle of the symmetric n×n row-major a
// with L, a = L·Lᵀ, and reports whether a is numerically positive definite:
// every pivot must be finite and larger than 1e-13 times the corresponding
// diagonal entry of a, so that a matrix singular up to rounding is rejected
// rather than factored into a useless, huge inverse. diag is scratch of
// length n. The strict upper triangle is left unspecified.
func Cholesky(a []float64, n int, diag []float64) bool {
	return CholeskyRel(a, n, diag, 1e-13)
}

// CholeskyRel is Cholesky with the pivot threshold rel in place of 1e-13:
// every pivot d_j must satisfy d_j² > rel·a_jj.
func CholeskyRel(a []float64, n int, diag []float64, rel float64) bool {
	for i := 0; i < n; i++ {
		diag[i] = a[i*n+i]
	}
	if n*n*n >= 3*blasMin && Potrf != nil {
		if !Potrf(a, n) {
			return false
		}
		for i := 0; i < n; i++ {
			if d := a[i*n+i]; !(d*d > rel*diag[i]) || math.IsInf(d, 1) {
				return false
			}
		}
		return true
	}
	if n*n*n >= 3*blasMin {
		// The unblocked factorisation: for the sizes of a projection it is
		// as fast as the blocked one and, unlike it, allocates nothing.
		if !(gonumlapack.Implementation{}).Dpotf2(blas.Lower, n, a, n) {
			return false
		}
		for i := 0; i < n; i++ {
			if d := a[i*n+i]; !(d*d > rel*diag[i]) || math.IsInf(d, 1) {
				return false
			}
		}
		return true
	}
	for j := 0; j < n; j++ {
		rj := a[j*n : j*n+j]
		d := a[j*n+j]
		for _, v := range rj {
			d -= v * v
		}
		if !(d > rel*diag[j]) || math.IsInf(d, 1) {
			return false
		}
		d = math.Sqrt(d)
		a[j*n+j] = d
		for i := j + 1; i < n; i++ {
			ri := a[i*n : i*n+j]
			s := a[i*n+j]
			for k, v := range ri {
				s -= v * rj[k]
			}
			a[i*n+j] = s / d
		}
	}
	return true
}

// CholSolve overwrites b with the solution of L·Lᵀ·x = b, where the lower
// triangle of the n×n row-major l holds L from Cholesky.
func CholSolve(l []float64, n int, b []float64) {
	if n*n >= blasMin {
		t := blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: n, Stride: n, Data: l}
		v := blas64.Vector{N: n, Inc: 1, Data: b}
		blas64.Trsv(blas.NoTrans, t, v)
		blas64.Trsv(blas.Trans, t, v)
		return
	}
	// L·z = b, four rows at a time: their sums over the solved entries
	// b[:i] are independent and run interleaved, then each takes its
	// terms from the rows before it in the group; every sum keeps the
	// order k = 0, 1, … of one row at a time (TestCholSolveBits).
	i := 0
	for ; i+4 <= n; i += 4 {
		r0, r1, r2, r3 := l[i*n:i*n+i], l[(i+1)*n:(i+1)*n+i], l[(i+2)*n:(i+2)*n+i], l[(i+3)*n:(i+3)*n+i]
		s0, s1, s2, s3 := b[i], b[i+1], b[i+2], b[i+3]
		for k, v := range b[:i] {
			s0 -= r0[k] * v
			s1 -= r1[k] * v
			s2 -= r2[k] * v
			s3 -= r3[k] * v
		}
		q0, q1, q2, q3 := l[i*n+i:], l[(i+1)*n+i:], l[(i+2)*n+i:], l[(i+3)*n+i:]
		z0 := s0 / q0[0]
		s1 -= q1[0] * z0
		z1 := s1 / q1[1]
		s2 -= q2[0] * z0
		s2 -= q2[1] * z1
		z2 := s2 / q2[2]
		s3 -= q3[0] * z0
		s3 -= q3[1] * z1
		s3 -= q3[2] * z2
		b[i], b[i+1], b[i+2], b[i+3] = z0, z1, z2, s3/q3[3]
	}
	for ; i < n; i++ {
		s := b[i]
		row := l[i*n : i*n+i]
		for k, v := range row {
			s -= v * b[k]
		}
		b[i] = s / l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < n; k++ {
			s -= l[k*n+i] * b[k]
		}
		b[i] = s / l[i*n+i]
	}
}

// EigWorkLen returns the length of the work slice EigClamp needs for n×n
// matrices.
func EigWorkLen(n int) int {
	work := make([]float64, 1)
	lapack64.Syev(lapack.EVCompute, blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: make([]float64, n*n)}, make([]float64, n), work, -1)
	return max(int(work[0]), 3*n)
}

// EigClamp overwrites the symmetric n×n row-major a with the orthonormal
// eigenvectors of ½(a+aᵀ) (as columns) and writes its eigenvalues, clamped
// below at max(floor, rel·λ_max), into lam. It reports false when the
// eigensolver fails to converge or a is not finite.
func EigClamp(a []float64, n int, floor, rel float64, lam, work []float64) bool {
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s := 0.5 * (a[i*n+j] + a[j*n+i])
			a[i*n+j], a[j*n+i] = s, s
		}
	}
	for _, v := range a[:n*n] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	if !lapack64.Syev(lapack.EVCompute, blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: a}, lam[:n], work, len(work)) {
		return false
	}
	top := 0.0
	for _, v := range lam[:n] {
		top = math.Max(top, math.Abs(v))
	}
	lo := math.Max(floor, rel*top)
	if !(lo > 0) {
		lo = math.SmallestNonzeroFloat64
	}
	for i, v := range lam[:n] {
		lam[i] = math.Max(v, lo)
	}
	return true
}

// EigSolve overwrites b with V·diag(1/lam)·Vᵀ·b, with V the eigenvectors
// (as columns of the n×n row-major v) and lam the clamped eigenvalues from
// EigClamp. tmp must have length at least n.
func EigSolve(v []float64, lam []float64, n int, b, tmp []float64) {
	for j := 0; j < n; j++ {
		var s float64
		for i := 0; i < n; i++ {
			s += v[i*n+j] * b[i]
		}
		tmp[j] = s / lam[j]
	}
	for i := 0; i < n; i++ {
		row := v[i*n : (i+1)*n]
		var s float64
		for j, w := range row {
			s += w * tmp[j]
		}
		b[i] = s
	}
}

// MulVec writes dst = A·x for the m×n row-major A (float64, or float32
// with the products and sums in float64).
func MulVec[T sgemm.Real](dst []float64, a []T, m, n int, x []float64) {
	for i := 0; i < m; i++ {
		row := a[i*n : (i+1)*n]
		var s float64
		for k, v := range row {
			s += float64(v) * x[k]
		}
		dst[i] = s
	}
}

// MulTransVec writes dst = Aᵀ·x for the m×n row-major A (dst has length
// n; A float64, or float32 with the products and sums in float64).
//
// A float64 A is added row by row with the BLAS's axpy (gonum's assembly
// in the pure-Go build), in the same order as the loop below.
func MulTransVec[T sgemm.Real](dst []float64, a []T, m, n int, x []float64) {
	clear(dst[:n])
	if a64, ok := any(a).([]float64); ok {
		impl := blas64.Implementation()
		for i := 0; i < m; i++ {
			if xi := x[i]; xi != 0 {
				impl.Daxpy(n, xi, a64[i*n:(i+1)*n], 1, dst[:n], 1)
			}
		}
		return
	}
	if a32, ok := any(a).([]float32); ok {
		for i := 0; i < m; i++ {
			if xi := x[i]; xi != 0 {
				mixed.Axpy(dst[:n], xi, a32[i*n:(i+1)*n]) // AVX2, the loop's bits
			}
		}
		return
	}
	for i := 0; i < m; i++ {
		row := a[i*n : (i+1)*n]
		xi := x[i]
		if xi == 0 {
			continue
		}
		for k, v := range row {
			dst[k] += float64(v) * xi
		}
	}
}
