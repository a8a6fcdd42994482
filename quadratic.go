package enforce

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/par"
)

// Quadratic returns the system of nc quadratic constraints in y ∈ ℝ^ny
//
//	c_i(x, y) = yᵀA_i y + C_i·y + d_i − r_i(x) = 0,  i = 1, …, nc,
//
// where each A_i is a symmetric ny×ny matrix, C_i is row i of the nc×ny
// matrix C, d ∈ ℝ^nc and r is an RHS of nc components of x ∈ ℝ^nx. The
// Jacobians are ∂c_i/∂y = 2A_i y + C_i and ∂c/∂x = −∂r/∂x, the curvature is
// Σ_i w_i ∇²c_i v = 2Σ_i w_i A_i v and the mixed second derivative is zero.
//
// The number of inputs nx cannot be inferred and must be given. The other
// sizes are inferred: nc from len(A), the rows of C and len(d); ny from the
// non-nil A_i and the columns of C. Any of A, C, d and r may be nil (or, for
// A, empty), and so may any A_i, meaning zero; but nc and ny must be
// determined by the arguments and agree between them. Quadratic copies A, C
// and d.
//
// Quadratic returns an error if nx < 0, the sizes are undetermined or
// inconsistent, or an element of A, C or d is NaN or infinite.
//
// One evaluation costs about 2·nc·ny² flops, dominated by the products A_i y,
// which it computes once for both c and ∂c/∂y. The constraint's
// Capabilities declare JacobianX, HessVec and MixedHessVec, and the batched
// methods EvalBatch and HessVecBatch with their single-precision forms
// EvalBatch32 and HessVecBatch32, which Settings.Precision Float32 uses.
func Quadratic(nx int, A []*mat.SymDense, C *mat.Dense, d []float64, r RHS) (Constraint, error) {
	if nx < 0 {
		return nil, fmt.Errorf("enforce: Quadratic: nx = %d, want nx ≥ 0", nx)
	}
	nc, ny, err := quadraticDims(A, C, d)
	if err != nil {
		return nil, fmt.Errorf("enforce: Quadratic: %w", err)
	}
	q := &quadraticConstraint{nx: nx, ny: ny, nc: nc, r: r, a: make([]float64, nc*ny*ny)}
	for i, ai := range A {
		if ai == nil {
			continue
		}
		block := q.a[i*ny*ny : (i+1)*ny*ny]
		for j := range ny {
			for k := j; k < ny; k++ {
				v := ai.At(j, k)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("enforce: Quadratic: A[%d][%d, %d] = %v, want finite", i, j, k, v)
				}
				block[j*ny+k] = v
				block[k*ny+j] = v
			}
		}
	}
	if C != nil {
		q.cm = make([]float64, nc*ny)
		for i := range nc {
			for j := range ny {
				v := C.At(i, j)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("enforce: Quadratic: C[%d, %d] = %v, want finite", i, j, v)
				}
				q.cm[i*ny+j] = v
			}
		}
	}
	if d != nil {
		for i, v := range d {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("enforce: Quadratic: d[%d] = %v, want finite", i, v)
			}
		}
		q.d = append([]float64(nil), d...)
	}
	q.caps = Capabilities{
		JacobianX: q.JacobianX, HessVec: q.HessVec, MixedHessVec: q.MixedHessVec,
		EvalBatch: q.EvalBatch, HessVecBatch: q.HessVecBatch,
		EvalBatch32: q.EvalBatch32, HessVecBatch32: q.HessVecBatch32,
		finiteJ: true,
	}
	q.hvBuf.New = func() any { return new([]float64) }
	q.jobs.New = func() any { return new(quadraticJobs) }
	q.pool.New = func() any {
		return &quadraticScratch{ay: make([]float64, nc*ny), r: make([]float64, nc)}
	}
	return q, nil
}

// quadraticDims infers and checks nc and ny from the arguments of Quadratic.
func quadraticDims(A []*mat.SymDense, C *mat.Dense, d []float64) (nc, ny int, err error) {
	nc, ny = -1, -1
	setNC := func(n int, from string) error {
		if nc >= 0 && n != nc {
			return fmt.Errorf("%s gives nc = %d, other arguments give nc = %d", from, n, nc)
		}
		nc = n
		return nil
	}
	setNY := func(n int, from string) error {
		if ny >= 0 && n != ny {
			return fmt.Errorf("%s gives ny = %d, other arguments give ny = %d", from, n, ny)
		}
		ny = n
		return nil
	}
	if len(A) > 0 {
		if err := setNC(len(A), "len(A)"); err != nil {
			return 0, 0, err
		}
	}
	for i, ai := range A {
		if ai == nil {
			continue
		}
		if ai.IsEmpty() {
			return 0, 0, fmt.Errorf("A[%d] is empty", i)
		}
		if err := setNY(ai.SymmetricDim(), fmt.Sprintf("A[%d]", i)); err != nil {
			return 0, 0, err
		}
	}
	if C != nil {
		if C.IsEmpty() {
			return 0, 0, errors.New("C is empty")
		}
		r, c := C.Dims()
		if err := setNC(r, "C"); err != nil {
			return 0, 0, err
		}
		if err := setNY(c, "C"); err != nil {
			return 0, 0, err
		}
	}
	if d != nil {
		if len(d) == 0 {
			return 0, 0, errors.New("d is empty")
		}
		if err := setNC(len(d), "len(d)"); err != nil {
			return 0, 0, err
		}
	}
	switch {
	case nc < 0:
		return 0, 0, errors.New("cannot infer nc: A, C and d are all nil")
	case ny < 0:
		return 0, 0, errors.New("cannot infer ny: C and every A_i are nil")
	}
	return nc, ny, nil
}

// quadraticConstraint is the Constraint returned by Quadratic. Its data are
// laid out for matrix products over the whole system, so that a batched
// implementation can use them directly:
//
//   - a holds A_1, …, A_nc as one (nc·ny)×ny row-major matrix, both
//     triangles filled: A_i[j, k] = a[(i·ny+j)·ny+k]. A·y over the stacked
//     matrix gives every A_i y at once.
//   - cm holds C (nc×ny, row-major), nil when C is zero.
//   - d holds d (length nc), nil when d is zero.
//   - r is the right-hand side, nil when r(x) = 0.
type quadraticConstraint struct {
	nx, ny, nc int
	a          []float64
	ah         []float64 // [A_1 … A_nc] side by side: ny×(nc·ny), for EvalBatch
	cm         []float64
	d          []float64
	r          RHS
	pool       sync.Pool // *quadraticScratch
	jobs       sync.Pool // *quadraticJobs
	ahOnce     sync.Once
	q32        quadratic32               // single-precision data, for EvalBatch32
	hvBuf      sync.Pool                 // *[]float64, HessVecBatch's products
	hvLast     atomic.Pointer[[]float64] // the last one, kept from the GC
	caps       Capabilities
}

// batchGemm selects one matrix product in EvalBatch, which pays off with
// an optimised BLAS (the openblas build tag sets it).
var batchGemm = false

// gemmRows is the number of samples per matrix product with batchGemm.
const gemmRows = 32

// quadraticBlockBytes is the size of the blocks of A swept by EvalBatch.
const quadraticBlockBytes = 1 << 20

// quadraticBatchJob computes A_i y_s for i in [i0, i1) and a range of
// samples.
type quadraticBatchJob struct {
	q      *quadraticConstraint
	y, ay  []float64
	i0, i1 int
}

// Run handles samples [lo, hi).
func (j *quadraticBatchJob) Run(lo, hi int) {
	ny, nc := j.q.ny, j.q.nc
	a := blas64.General{Rows: (j.i1 - j.i0) * ny, Cols: ny, Stride: ny, Data: j.q.a[j.i0*ny*ny : j.i1*ny*ny]}
	for s := lo; s < hi; s++ {
		blas64.Gemv(blas.NoTrans, 1, a, blas64.Vector{N: ny, Inc: 1, Data: j.y[s*ny : (s+1)*ny]},
			0, blas64.Vector{N: (j.i1 - j.i0) * ny, Inc: 1, Data: j.ay[s*nc*ny+j.i0*ny : s*nc*ny+j.i1*ny]})
	}
}

// products writes dst[s, (i−i0)·ny + j] = α(A_i v_s)_j + β·dst[s, (i−i0)·ny + j]
// for the rows samples
// of v (rows×ny) and i in [i0, i1); dst has rows×(i1−i0)·ny elements.
//
// With an optimised BLAS (batchGemm) this is one matrix product per core
// with [A_i0 … A_i1) side by side (A_i is symmetric, so v_sᵀA_i = (A_i v_s)ᵀ).
// With gonum's pure-Go BLAS, whose matrix–vector kernel is the faster one,
// the stacked A is swept in blocks that stay in cache while every sample
// multiplies them, so A is read from memory once per batch rather than once
// per sample.
func (q *quadraticConstraint) products(rows int, v []float64, i0, i1 int, dst []float64, alpha, beta float64) {
	jobs := q.jobs.Get().(*quadraticJobs)
	defer q.putJobs(jobs)
	job := &jobs.products
	*job = quadraticProducts{q: q, v: v, dst: dst, i0: i0, i1: i1, alpha: alpha, beta: beta}
	if batchGemm {
		q.ahOnce.Do(q.sideBySide)
		job.gemm = true
		par.ForBlocks(rows, gemmRows, job)
		return
	}
	blk := max(1, quadraticBlockBytes/(8*q.ny*q.ny))
	for job.b0 = i0; job.b0 < i1; job.b0 += blk {
		job.b1 = min(job.b0+blk, i1)
		par.For(rows, 8, job)
	}
}

// quadraticProducts is the loop body of products over samples.
type quadraticProducts struct {
	q      *quadraticConstraint
	v, dst []float64
	i0, i1 int
	b0, b1 int // the block of constraints, without gemm
	gemm   bool
	alpha  float64
	beta   float64
}

// Run handles samples [lo, hi).
func (j *quadraticProducts) Run(lo, hi int) {
	ny, nc := j.q.ny, j.q.nc
	width := (j.i1 - j.i0) * ny
	if j.gemm {
		// One product per block of gemmRows samples: BLAS's rounding may
		// depend on the shape of the call, and the blocks do not depend on
		// the number of workers (par.ForBlocks).
		for s0 := lo; s0 < hi; s0 += gemmRows {
			s1 := min(s0+gemmRows, hi)
			blas64.Gemm(blas.NoTrans, blas.NoTrans, j.alpha,
				blas64.General{Rows: s1 - s0, Cols: ny, Stride: ny, Data: j.v[s0*ny : s1*ny]},
				blas64.General{Rows: ny, Cols: width, Stride: nc * ny, Data: j.q.ah[j.i0*ny:]}, j.beta,
				blas64.General{Rows: s1 - s0, Cols: width, Stride: width, Data: j.dst[s0*width : s1*width]})
		}
		return
	}
	a := blas64.General{Rows: (j.b1 - j.b0) * ny, Cols: ny, Stride: ny, Data: j.q.a[j.b0*ny*ny : j.b1*ny*ny]}
	off := (j.b0 - j.i0) * ny
	for s := lo; s < hi; s++ {
		blas64.Gemv(blas.NoTrans, j.alpha, a, blas64.Vector{N: ny, Inc: 1, Data: j.v[s*ny : (s+1)*ny]},
			j.beta, blas64.Vector{N: (j.b1 - j.b0) * ny, Inc: 1, Data: j.dst[s*width+off : s*width+off+(j.b1-j.b0)*ny]})
	}
}

// HessVecBatch writes out_s = 2Σ_i w_si A_i v_s for rows samples (see
// Capabilities.HessVecBatch), with the products A_i v_s computed as in EvalBatch, a
// block of constraints at a time.
func (q *quadraticConstraint) HessVecBatch(rows int, x, y, w, v, out []float64) {
	nx, ny, nc := q.nx, q.ny, q.nc
	if rows < 0 || len(x) != rows*nx || len(y) != rows*ny || len(w) != rows*nc || len(v) != rows*ny || len(out) != rows*ny {
		panic(fmt.Sprintf("enforce: Quadratic.HessVecBatch: rows=%d len(x)=%d len(y)=%d len(w)=%d len(v)=%d len(out)=%d",
			rows, len(x), len(y), len(w), len(v), len(out)))
	}
	clear(out)
	if rows == 0 {
		return
	}
	blk := max(1, min(nc, (64<<20)/(8*rows*ny)))
	buf := q.hvLast.Swap(nil)
	if buf == nil {
		buf = q.hvBuf.Get().(*[]float64)
	}
	defer func() {
		if !q.hvLast.CompareAndSwap(nil, buf) {
			q.hvBuf.Put(buf)
		}
	}()
	if cap(*buf) < rows*blk*ny {
		*buf = make([]float64, rows*blk*ny)
	}
	tmp := (*buf)[:rows*blk*ny]
	for i0 := 0; i0 < nc; i0 += blk {
		i1 := min(i0+blk, nc)
		width := (i1 - i0) * ny
		q.products(rows, v, i0, i1, tmp[:rows*width], 1, 0)
		for s := 0; s < rows; s++ {
			os, t := out[s*ny:(s+1)*ny], tmp[s*width:(s+1)*width]
			for i := i0; i < i1; i++ {
				if wi := w[s*nc+i]; wi != 0 {
					floats.AddScaled(os, 2*wi, t[(i-i0)*ny:(i-i0+1)*ny])
				}
			}
		}
	}
}

// sideBySide lays out ah from a on first use by EvalBatch: the product
// Y·[A_1 … A_nc] is a plain matrix product, which BLAS runs faster than
// Y·(stacked A)ᵀ.
func (q *quadraticConstraint) sideBySide() {
	ny, nc := q.ny, q.nc
	q.ah = make([]float64, nc*ny*ny)
	for i := 0; i < nc; i++ {
		for j := 0; j < ny; j++ {
			copy(q.ah[j*nc*ny+i*ny:j*nc*ny+(i+1)*ny], q.a[(i*ny+j)*ny:(i*ny+j+1)*ny])
		}
	}
}

// quadraticJobs holds the loop bodies of the batch methods, pooled so that
// a call allocates nothing.
type quadraticJobs struct {
	products quadraticProducts
	rows     quadraticRows
	q32      q32Job
	rest     quadraticRest
}

// putJobs returns jobs to the pool without the caller's slices.
func (q *quadraticConstraint) putJobs(jobs *quadraticJobs) {
	*jobs = quadraticJobs{}
	q.jobs.Put(jobs)
}

// quadraticScratch holds the temporaries of one evaluation.
type quadraticScratch struct {
	ay    []float64 // A_i y for every i, nc·ny; used when Eval has no jy.
	r     []float64 // r(x), nc; used by JacobianX.
	jWide []float64 // q32Rows·nc·ny, allocated on first use by evalWide32
}

var _ Capable = (*quadraticConstraint)(nil)

// Capabilities returns JacobianX, HessVec, MixedHessVec and the batched
// methods in float64 and float32. Its c is not finite wherever its Jacobian
// is not, at finite y: J_i = C_i + 2A_i y, and every method computes c_i
// as a sum containing y_j·(A_i y)_j for every j (0·Inf is NaN), with C, d
// and r(x)'s coefficients finite; a non-finite r(x) makes c non-finite
// itself.
func (q *quadraticConstraint) Capabilities() Capabilities { return q.caps }

// Dims returns the sizes of x, y and c.
func (q *quadraticConstraint) Dims() (nx, ny, nc int) { return q.nx, q.ny, q.nc }

// stackedA returns A_1, …, A_nc stacked as one (nc·ny)×ny matrix.
func (q *quadraticConstraint) stackedA() blas64.General {
	return blas64.General{Rows: q.nc * q.ny, Cols: q.ny, Stride: q.ny, Data: q.a}
}

// blockA returns A_i as an ny×ny matrix.
func (q *quadraticConstraint) blockA(i int) blas64.General {
	n := q.ny * q.ny
	return blas64.General{Rows: q.ny, Cols: q.ny, Stride: q.ny, Data: q.a[i*n : (i+1)*n]}
}

// Eval writes c_i = yᵀA_i y + C_i·y + d_i − r_i(x) into c and, if jy != nil,
// ∂c_i/∂y = 2A_i y + C_i into row i of jy.
func (q *quadraticConstraint) Eval(x, y, c, jy []float64) {
	checkEvalLen("Quadratic.Eval", q.nx, q.ny, q.nc, x, y, c, jy)
	ny := q.ny
	ay := jy
	var s *quadraticScratch
	if jy == nil {
		s = q.pool.Get().(*quadraticScratch)
		ay = s.ay
	}
	blas64.Gemv(blas.NoTrans, 1, q.stackedA(), blas64.Vector{N: ny, Inc: 1, Data: y},
		0, blas64.Vector{N: q.nc * ny, Inc: 1, Data: ay})
	if q.r != nil {
		q.r(x, c, nil)
	} else {
		clear(c)
	}
	for i := range c {
		t := ay[i*ny : (i+1)*ny]
		ci := floats.Dot(y, t) - c[i]
		if q.cm != nil {
			ci += floats.Dot(q.cm[i*ny:(i+1)*ny], y)
		}
		if q.d != nil {
			ci += q.d[i]
		}
		c[i] = ci
	}
	if s != nil {
		q.pool.Put(s)
		return
	}
	floats.Scale(2, jy)
	if q.cm != nil {
		floats.Add(jy, q.cm)
	}
}

// JacobianX writes ∂c/∂x = −∂r/∂x (nc×nx, row-major) into jx.
func (q *quadraticConstraint) JacobianX(x, y, jx []float64) {
	checkJacobianXLen("Quadratic.JacobianX", q.nx, q.ny, q.nc, x, y, jx)
	clear(jx)
	if q.r == nil {
		return
	}
	s := q.pool.Get().(*quadraticScratch)
	q.r(x, s.r, jx)
	q.pool.Put(s)
	floats.Scale(-1, jx)
}

// HessVec writes out = Σ_i w_i ∇²c_i v = 2Σ_i w_i A_i v (length ny). Terms
// with w_i = 0 are skipped.
func (q *quadraticConstraint) HessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Quadratic.HessVec", q.nx, q.ny, q.nc, q.ny, x, y, w, v, out)
	clear(out)
	vv := blas64.Vector{N: q.ny, Inc: 1, Data: v}
	ov := blas64.Vector{N: q.ny, Inc: 1, Data: out}
	for i, wi := range w {
		if wi != 0 {
			blas64.Gemv(blas.NoTrans, 2*wi, q.blockA(i), vv, 1, ov)
		}
	}
}

// MixedHessVec writes out = 0: ∂c/∂y does not depend on x.
func (q *quadraticConstraint) MixedHessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Quadratic.MixedHessVec", q.nx, q.ny, q.nc, q.nx, x, y, w, v, out)
	clear(out)
}

// EvalBatch evaluates rows samples at once (see Capabilities.EvalBatch). All
// products A_i·y_s come from one matrix product Y·[A_1 … A_nc], which
// runs at the speed of the registered BLAS instead of reading every A_i
// once per sample. If jy is nil a temporary of rows·nc·ny is allocated.
func (q *quadraticConstraint) EvalBatch(rows int, x, y, c, jy []float64) {
	nx, ny, nc := q.nx, q.ny, q.nc
	if rows < 0 || len(x) != rows*nx || len(y) != rows*ny || len(c) != rows*nc || (jy != nil && len(jy) != rows*nc*ny) {
		panic(fmt.Sprintf("enforce: Quadratic.EvalBatch: rows=%d len(x)=%d len(y)=%d len(c)=%d len(jy)=%d, want %d, %d, %d, %d",
			rows, len(x), len(y), len(c), len(jy), rows*nx, rows*ny, rows*nc, rows*nc*ny))
	}
	if rows == 0 {
		return
	}
	if jy == nil {
		jy = make([]float64, rows*nc*ny)
	}
	// J_s = C + 2·[A_i y_s]_i: C is laid down first and the products are
	// accumulated onto it, so the Jacobians are written in one pass; then
	// c_i = ½(y·J_i + C_i·y) + d_i − r_i(x) = yᵀA_i y + C_i·y + d_i − r_i(x).
	jobs := q.jobs.Get().(*quadraticJobs)
	defer q.putJobs(jobs)
	job := &jobs.rows
	*job = quadraticRows{q: q, x: x, y: y, c: c, jy: jy}
	par.For(rows, 8, job)
	q.products(rows, y, 0, nc, jy, 2, 1)
	job.finish = true
	par.For(rows, 8, job)
}

// quadraticRows is EvalBatch's per-sample work before (C into J) and after
// (c from J) the products.
type quadraticRows struct {
	q           *quadraticConstraint
	x, y, c, jy []float64
	finish      bool
}

// Run handles samples [lo, hi).
func (j *quadraticRows) Run(lo, hi int) {
	q := j.q
	nx, ny, nc := q.nx, q.ny, q.nc
	for s := lo; s < hi; s++ {
		js := j.jy[s*nc*ny : (s+1)*nc*ny]
		if !j.finish {
			if q.cm != nil {
				copy(js, q.cm)
			} else {
				clear(js)
			}
			continue
		}
		ys, cs := j.y[s*ny:(s+1)*ny], j.c[s*nc:(s+1)*nc]
		if q.r != nil {
			q.r(j.x[s*nx:(s+1)*nx], cs, nil)
		} else {
			clear(cs)
		}
		for i := range cs {
			yj := floats.Dot(ys, js[i*ny:(i+1)*ny])
			if q.cm != nil {
				yj += floats.Dot(q.cm[i*ny:(i+1)*ny], ys)
			}
			ci := 0.5*yj - cs[i]
			if q.d != nil {
				ci += q.d[i]
			}
			cs[i] = ci
		}
	}
}
