package enforce

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/par"
	"github.com/enforce-nn/enforce/internal/sgemm"
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
	cm         []float64
	d          []float64
	r          RHS
	pool       sync.Pool   // *quadraticScratch
	jobs       sync.Pool   // *quadraticJobs
	q64        quadratic64 // the data packed for EvalBatch and HessVecBatch
	q32        quadratic32 // single-precision data, for EvalBatch32
	caps       Capabilities
}

// HessVecBatch writes out_s = 2Σ_i w_si A_i v_s for rows samples (see
// Capabilities.HessVecBatch), with the products 2A_i v_s from the float64
// matrix product [v_s 0]·[2A_1 … 2A_nc; C] a block of samples and columns
// at a time, as in EvalBatch.
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
	if q.q64.once.Do(q.init64); q.q64.wide {
		jobs := q.jobs.Get().(*quadraticJobs)
		defer q.putJobs(jobs)
		jobs.wide = quadraticWide{q: q, x: x, y: y, w: w, v: v, out: out, hv: true}
		par.For(rows, 8, &jobs.wide)
		return
	}
	jobs := q.jobs.Get().(*quadraticJobs)
	defer q.putJobs(jobs)
	jobs.q64 = q64Job{q: q, v: v, hv: true, w: w, out: out}
	par.For(rows, q64Rows, &jobs.q64)
}

// quadraticJobs holds the loop bodies of the batch methods, pooled so that
// a call allocates nothing.
type quadraticJobs struct {
	q64  q64Job
	wide quadraticWide
	q32  q32Job
	rest quadraticRest
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

// EvalBatch evaluates rows samples at once (see Capabilities.EvalBatch).
// The Jacobians come straight from one float64 matrix product over the
// batch, [y_s 1]·[2A_1 … 2A_nc; C_1 … C_nc] = [2A_1 y_s + C_1 …] (doubling
// is exact), with [2A; C] packed once, on internal/sgemm's float64 kernels
// in every build (Go assembly, as EvalBatch32's: 76 GFLOP/s on one core
// here against about 8 for gonum's pure-Go Dgemm, BenchmarkMul64 and
// BenchmarkGonum; not compared with OpenBLAS's dgemm); the residual is then
// c_i = ½·y_s·J_i + ½·C_i·y_s + d_i − r_i(x), summed in float64. If jy is
// nil the Jacobians are formed a block at a time in scratch and dropped,
// so an evaluation of c alone writes no rows·nc·ny array.
func (q *quadraticConstraint) EvalBatch(rows int, x, y, c, jy []float64) {
	nx, ny, nc := q.nx, q.ny, q.nc
	if rows < 0 || len(x) != rows*nx || len(y) != rows*ny || len(c) != rows*nc || (jy != nil && len(jy) != rows*nc*ny) {
		panic(fmt.Sprintf("enforce: Quadratic.EvalBatch: rows=%d len(x)=%d len(y)=%d len(c)=%d len(jy)=%d, want %d, %d, %d, %d",
			rows, len(x), len(y), len(c), len(jy), rows*nx, rows*ny, rows*nc, rows*nc*ny))
	}
	if rows == 0 {
		return
	}
	jobs := q.jobs.Get().(*quadraticJobs)
	defer q.putJobs(jobs)
	if q.q64.once.Do(q.init64); q.q64.wide {
		jobs.wide = quadraticWide{q: q, x: x, y: y, c: c, jy: jy}
		par.For(rows, 8, &jobs.wide)
		return
	}
	clear(c)
	jobs.q64 = q64Job{q: q, v: y, c: c, jy: jy}
	par.For(rows, q64Rows, &jobs.q64)
	jobs.rest = quadraticRest{q: q, x: x, y: y, c: c, cy: true}
	par.For(rows, 8, &jobs.rest)
}

// q64Rows is the number of samples per float64 product, and q64Cols the
// number of columns of [2A_1 … 2A_nc] per block of its output: the block
// (590 kB) is still in cache when the residuals or Hessian products read
// it.
const (
	q64Rows = 96
	q64Cols = 768
)

// quadratic64 is Quadratic's data packed for the float64 batch product, on
// first use.
type quadratic64 struct {
	once   sync.Once
	wide   bool           // some entry of 2A overflows: per-sample products
	k      int            // rows of the panels: ny, and one more for C
	panels sgemm.Panels64 // [2A_1 … 2A_nc] over [C_1 … C_nc]: k×nc·ny
	pool   sync.Pool      // *q64Scratch
}

// q64Scratch holds one worker's temporaries.
type q64Scratch struct {
	y    []float64 // q64Rows×k: the rows [v_s 1] (or [v_s 0])
	pa   []float64 // y packed
	tile []float64 // MR·NR
	out  []float64 // q64Rows×q64Cols: products not kept (HessVecBatch, or EvalBatch without jy), on first use
}

func (q *quadraticConstraint) init64() {
	ny, nc := q.ny, q.nc
	for _, v := range q.a {
		if math.Abs(v) > math.MaxFloat64/2 {
			q.q64.wide = true
			return
		}
	}
	k, w := ny, nc*ny
	if q.cm != nil {
		k++
	}
	q.q64.k = k
	m := make([]float64, k*w)
	for i := 0; i < nc; i++ {
		for j := 0; j < ny; j++ {
			row := m[j*w+i*ny : j*w+(i+1)*ny]
			for kk, v := range q.a[(i*ny+j)*ny : (i*ny+j+1)*ny] {
				row[kk] = 2 * v
			}
		}
	}
	copy(m[ny*w:], q.cm)
	q.q64.panels.Pack(k, w, m, w)
	q.q64.pool.New = func() any {
		return &q64Scratch{
			y:    make([]float64, q64Rows*k),
			pa:   make([]float64, sgemm.WorkLen(q64Rows, k)-sgemm.MR*sgemm.NR),
			tile: make([]float64, sgemm.MR*sgemm.NR),
		}
	}
}

// q64Job is one float64 batch operation: EvalBatch (hv false) or
// HessVecBatch (hv true).
type q64Job struct {
	q      *quadraticConstraint
	v      []float64 // the vectors multiplied: y or v
	hv     bool
	c, jy  []float64 // EvalBatch; jy may be nil
	w, out []float64 // HessVecBatch
}

// Run handles samples [lo, hi).
func (j *q64Job) Run(lo, hi int) {
	q := j.q
	ny, k, w := q.ny, q.q64.k, q.nc*q.ny
	sc := q.q64.pool.Get().(*q64Scratch)
	defer q.q64.pool.Put(sc)
	e := 1.0
	if j.hv {
		e = 0
	}
	for s0 := lo; s0 < hi; s0 += q64Rows {
		m := min(q64Rows, hi-s0)
		yb := sc.y[:m*k]
		for r := range m {
			row := yb[r*k : (r+1)*k]
			copy(row, j.v[(s0+r)*ny:(s0+r+1)*ny])
			if k > ny {
				row[ny] = e
			}
		}
		sgemm.PackA64(m, k, yb, k, sc.pa)
		for j0 := 0; j0 < w; j0 += q64Cols {
			j1 := min(j0+q64Cols, w)
			if j.hv || j.jy == nil {
				if sc.out == nil {
					sc.out = make([]float64, q64Rows*q64Cols)
				}
				out := sc.out[:m*(j1-j0)]
				sgemm.MulPacked64(m, sc.pa, &q.q64.panels, j0, j1, out, j1-j0, sc.tile)
				if j.hv {
					hessVecBlock(q, j.w, j.out, s0, m, j0, j1, out)
				} else {
					evalBlock(q, j.v, j.c, s0, m, j0, j1, out, j1-j0)
				}
				continue
			}
			sgemm.MulPacked64(m, sc.pa, &q.q64.panels, j0, j1, j.jy[s0*w+j0:], w, sc.tile)
			evalBlock(q, j.v, j.c, s0, m, j0, j1, j.jy[s0*w+j0:], w)
		}
	}
}

// quadraticWide is EvalBatch and HessVecBatch one sample at a time, for an
// A whose double overflows float64.
type quadraticWide struct {
	q                      *quadraticConstraint
	x, y, c, jy, w, v, out []float64
	hv                     bool
}

// Run handles samples [lo, hi).
func (j *quadraticWide) Run(lo, hi int) {
	q := j.q
	nx, ny, nc := q.nx, q.ny, q.nc
	for s := lo; s < hi; s++ {
		xs, ys := j.x[s*nx:(s+1)*nx], j.y[s*ny:(s+1)*ny]
		if j.hv {
			q.HessVec(xs, ys, j.w[s*nc:(s+1)*nc], j.v[s*ny:(s+1)*ny], j.out[s*ny:(s+1)*ny])
			continue
		}
		var js []float64
		if j.jy != nil {
			js = j.jy[s*nc*ny : (s+1)*nc*ny]
		}
		q.Eval(xs, ys, j.c[s*nc:(s+1)*nc], js)
	}
}
