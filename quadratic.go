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
// which it computes once for both c and ∂c/∂y.
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
	pool       sync.Pool // *quadraticScratch
}

// quadraticScratch holds the temporaries of one evaluation.
type quadraticScratch struct {
	ay []float64 // A_i y for every i, nc·ny; used when Eval has no jy.
	r  []float64 // r(x), nc; used by JacobianX.
}

var (
	_ JacobianXer    = (*quadraticConstraint)(nil)
	_ HessVecer      = (*quadraticConstraint)(nil)
	_ MixedHessVecer = (*quadraticConstraint)(nil)
)

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
