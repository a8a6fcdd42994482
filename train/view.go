package train

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/affine"
)

// view presents a constraint on the network's inputs and predicted outputs:
// x has the network's nx columns (the constraint may have none) and y only
// the predicted outputs (latent variables, such as the Fischer–Burmeister
// multipliers of enforce.WithInequalities, are appended as zeros, as AdaNP
// does before projecting). The loss terms losses.Residual and
// losses.SoftPenalty see this view (through loss), so they work for every
// constraint a Model accepts. It declares no capability (the batchView of
// a constraint with EvalBatch declares EvalBatch only, the sparseView of a
// sparse constraint its pattern on the predicted outputs): the graph needs no
// gradient with respect to x, which is data.
//
// When the constraint has no latent variables and its enforce.Capabilities
// have EvalBatch (enforce.Quadratic), norms and the loss terms
// evaluate it a chunk of rows at a time with EvalBatch instead of one row
// at a time: for Quadratic at (N_O, N_C) = (200, 150) that reads the 48 MB
// of A_i once per chunk instead of once per sample. When it is affine with
// a batched evaluator (enforce.Linear, a Stack of them) and has no latent
// variables, norms and the loss terms (through AffineResidual) evaluate
// the residuals of a batch with matrix products.
type view struct {
	c      enforce.Constraint
	nx, ny int // presented sizes
	nc     int
	cnx    int       // the constraint's own nx: 0 or nx
	cn     int       // the constraint's own ny: ny + latent
	ys     sync.Pool // *[]float64 of cn: y with its latent variables
	jys    sync.Pool // *[]float64 of nc·cn: a dense Jacobian with latent columns, for callers that ask for one
	// values is the constraint's Sparse.Eval when it declares a sparse
	// Jacobian, else nil: residuals are then evaluated by it, in
	// O(nc + ny + nnz) memory whatever the constraint's Eval needs.
	values func(x, y, c, vals []float64)

	be    func(rows int, x, y, c, jy []float64) // c's EvalBatch, when batched evaluation applies; else nil
	chunk int                                   // rows per EvalBatch call in norms
	bufs  sync.Pool                             // *batchBuf, norms' scratch
	loss  enforce.Constraint                    // what the loss terms see: v, or a batchView of v
	aff   *affine.Residual                      // c's batched affine evaluator, or nil
}

// perSampleAffine makes norms evaluate affine constraints one row at a
// time, as before normsAffine: tests and benchmarks compare the two
// paths.
var perSampleAffine bool

var _ affine.Provider = (*view)(nil)

// AffineResidual returns the constraint's batched affine evaluator when
// the view has one (losses uses it), and nil otherwise. Its x is the
// constraint's (0 or nx columns): the leading columns of the view's x.
func (v *view) AffineResidual() *affine.Residual { return v.aff }

// batchEntries bounds the Jacobian entries of one EvalBatch chunk in
// norms (64 MB): a whole batch of 200 at (N_O, N_C) = (200, 150), which
// measured 1.5× faster there than chunks of 34 rows (8 MB), since each
// chunk sweeps all of A.
const batchEntries = 1 << 23

// batchBuf is norms' scratch for one chunk, grown on demand:
// constraint values, their Jacobians (computed by Quadratic.EvalBatch in
// any case, so passing a buffer saves it an allocation) and copies of
// strided rows.
type batchBuf struct {
	c, jy, x, y []float64
}

// batchView is the view as the loss terms see it when batched evaluation
// applies: it declares EvalBatch, which losses uses when it is there.
type batchView struct{ *view }

// Capabilities declares EvalBatch.
func (b batchView) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{EvalBatch: b.EvalBatch}
}

// sparseView is the view as the loss terms see it when the constraint
// declares a sparse Jacobian: it declares the pattern restricted to the
// predicted outputs (latent columns dropped: their values are zero and the
// network has no gradient there), so that losses follows the nonzeros
// instead of asking Eval for an nc×ny Jacobian (training acopf's
// case1354 with its limits and λ_C had grown to 7.7 GB that way).
type sparseView struct {
	*view
	sj   *enforce.SparseJacobian // the restricted pattern
	keep []int                   // the restricted entries' indices in the constraint's values
	nnz  int                     // the constraint's number of nonzeros
	full sync.Pool               // *[]float64 of nnz
}

func newSparseView(v *view, sj *enforce.SparseJacobian) *sparseView {
	s := &sparseView{view: v, nnz: len(sj.Col)}
	rp := make([]int, v.nc+1)
	var col []int
	for i := range v.nc {
		for q := sj.RowPtr[i]; q < sj.RowPtr[i+1]; q++ {
			if j := sj.Col[q]; j < v.ny {
				col = append(col, j)
				s.keep = append(s.keep, q)
			}
		}
		rp[i+1] = len(col)
	}
	s.full.New = func() any {
		buf := make([]float64, s.nnz)
		return &buf
	}
	s.sj = &enforce.SparseJacobian{RowPtr: rp, Col: col, Eval: s.values}
	return s
}

// Capabilities declares the restricted sparse Jacobian.
func (s *sparseView) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{Sparse: s.sj}
}

// values evaluates c and, when vals is not nil, the restricted nonzeros at
// (x, y) with the latent variables at zero.
func (s *sparseView) values(x, y, c, vals []float64) {
	x = x[:s.cnx]
	yy := y
	if s.cn != s.ny {
		yp := s.ys.Get().(*[]float64)
		defer s.ys.Put(yp)
		yy = *yp
		copy(yy, y)
		clear(yy[s.ny:])
	}
	if vals == nil {
		s.view.values(x, yy, c, nil)
		return
	}
	fp := s.full.Get().(*[]float64)
	defer s.full.Put(fp)
	full := *fp
	s.view.values(x, yy, c, full)
	for q, p := range s.keep {
		vals[q] = full[p]
	}
}

// EvalBatch evaluates rows samples (x rows×nx, y rows×ny, row-major) with
// the constraint's EvalBatch. It is safe for concurrent use if the
// constraint's EvalBatch is.
func (b batchView) EvalBatch(rows int, x, y, c, jy []float64) {
	if b.cnx == 0 {
		x = nil
	}
	b.be(rows, x, y, c, jy)
}

func newView(c enforce.Constraint, nx int) *view {
	cnx, cn, nc := c.Dims()
	k := enforce.CapabilitiesOf(c)
	ny := cn - k.Latent
	v := &view{c: c, nx: nx, ny: ny, nc: nc, cnx: cnx, cn: cn}
	v.ys.New = func() any {
		buf := make([]float64, cn)
		return &buf
	}
	v.jys.New = func() any {
		buf := make([]float64, nc*cn)
		return &buf
	}
	v.loss = v
	if k.Sparse != nil {
		v.values = k.Sparse.Eval
	}
	if p, ok := c.(affine.Provider); ok && cn == ny {
		v.aff = p.AffineResidual()
	}
	if k.Sparse != nil {
		v.loss = newSparseView(v, k.Sparse)
	}
	if be := k.EvalBatch; be != nil && cn == ny {
		v.be = be
		v.chunk = max(1, batchEntries/max(1, nc*cn))
		v.loss = batchView{v}
	}
	v.bufs.New = func() any { return new(batchBuf) }
	return v
}

// Dims returns the network's nx, the number of predicted outputs and nc.
func (v *view) Dims() (nx, ny, nc int) { return v.nx, v.ny, v.nc }

// Eval evaluates the constraint at (x, y) with latent variables at zero.
// Without jy, a constraint that declares a sparse Jacobian is evaluated by
// its Sparse.Eval, and the view needs O(ny) scratch: the residuals of a
// sparse constraint (norms), with inequalities or not, follow its
// nonzeros, never an nc×ny Jacobian.
func (v *view) Eval(x, y, c, jy []float64) {
	x = x[:v.cnx]
	if v.cn == v.ny {
		v.eval(x, y, c, jy)
		return
	}
	yp := v.ys.Get().(*[]float64)
	defer v.ys.Put(yp)
	yy := *yp
	copy(yy, y)
	clear(yy[v.ny:])
	if jy == nil {
		v.eval(x, yy, c, nil)
		return
	}
	jp := v.jys.Get().(*[]float64)
	defer v.jys.Put(jp)
	jj := *jp
	v.c.Eval(x, yy, c, jj)
	for i := range v.nc {
		copy(jy[i*v.ny:(i+1)*v.ny], jj[i*v.cn:i*v.cn+v.ny])
	}
}

// eval evaluates the constraint itself (its own x and y), by its
// Sparse.Eval when it has one and jy is nil.
func (v *view) eval(x, y, c, jy []float64) {
	if jy == nil && v.values != nil {
		v.values(x, y, c, nil)
		return
	}
	v.c.Eval(x, y, c, jy)
}

// meanNorm returns (1/N)Σ_i ‖c(x_i, y_i)‖₂ over the rows of x and y (see
// norms).
func (v *view) meanNorm(x, y *mat.Dense) (float64, error) {
	mean, _, err := v.norms(x, y)
	return mean, err
}

// norms returns (1/N)Σ_i ‖c(x_i, y_i)‖₂ over the rows of x and y and the
// largest |c_k(x_i, y_i)| (NaN if a residual is NaN). It is safe for
// concurrent use (the scratch is pooled) if the constraint is. It returns
// an error if the constraint's code panics on the batched affine path
// (normsAffine); elsewhere a panic propagates.
func (v *view) norms(x, y *mat.Dense) (mean, maxAbs float64, err error) {
	if v.aff != nil && !perSampleAffine {
		return v.normsAffine(x, y)
	}
	if v.be != nil {
		mean, maxAbs = v.normsBatch(x, y)
		return mean, maxAbs, nil
	}
	r, _ := y.Dims()
	c := make([]float64, v.nc)
	var sum float64
	for i := range r {
		v.Eval(x.RawRowView(i), y.RawRowView(i), c, nil)
		sum += norm(c)
		maxAbs = largest(maxAbs, c)
	}
	return sum / float64(r), maxAbs, nil
}

// maxViolation returns the largest |r_k| of enforce.CheckResidual over
// the rows of x and y (NaN if one is NaN): for a constraint with latent
// variables, such as a WithInequalities system, the largest violation of
// its equalities and inequalities, which does not depend on the
// multipliers that norms sets to zero.
func (v *view) maxViolation(x, y *mat.Dense) (float64, error) {
	r, _ := y.Dims()
	c := make([]float64, v.nc)
	var m float64
	for i := range r {
		if err := enforce.CheckResidual(v.c, x.RawRowView(i)[:v.cnx], y.RawRowView(i), c); err != nil {
			return 0, err
		}
		m = largest(m, c)
	}
	return m, nil
}

// largest returns the larger of m and the largest |c_k|, NaN if either is.
func largest(m float64, c []float64) float64 {
	for _, ck := range c {
		if a := math.Abs(ck); a > m || a != a {
			m = a
		}
	}
	return m
}

// normsAffine is norms with the batched affine evaluator: the residuals
// of the whole batch, Y·Cᵀ − R, then their norms, summed in row order as
// in norms' per-row path.
func (v *view) normsAffine(x, y *mat.Dense) (mean, maxAbs float64, err error) {
	r, _ := y.Dims()
	b := v.bufs.Get().(*batchBuf)
	defer v.bufs.Put(b)
	nc := v.nc
	b.c = grow(b.c, r*nc)
	var xs []float64
	ldx := 0
	if v.cnx > 0 {
		raw := x.RawMatrix()
		xs, ldx = raw.Data, raw.Stride
	}
	raw := y.RawMatrix()
	if err := v.aff.Eval(r, xs, ldx, raw.Data, raw.Stride, b.c); err != nil {
		return 0, 0, err
	}
	var sum float64
	for s := range r {
		sum += norm(b.c[s*nc : (s+1)*nc])
	}
	return sum / float64(r), largest(0, b.c), nil
}

// norm returns ‖c‖₂, the same arithmetic on all of norms' paths.
func norm(c []float64) float64 {
	var ss float64
	for _, ci := range c {
		ss += ci * ci
	}
	return math.Sqrt(ss)
}

// normsBatch is norms with EvalBatch, v.chunk rows per call. The norms
// are summed in row order, as in norms' per-row path.
func (v *view) normsBatch(x, y *mat.Dense) (mean, maxAbs float64) {
	r, _ := y.Dims()
	b := v.bufs.Get().(*batchBuf)
	defer v.bufs.Put(b)
	nc, n := v.nc, min(v.chunk, r)
	b.c, b.jy = grow(b.c, n*nc), grow(b.jy, n*nc*v.cn)
	b.x, b.y = grow(b.x, n*v.cnx), grow(b.y, n*v.cn)
	var sum float64
	for lo := 0; lo < r; lo += n {
		k := min(n, r-lo)
		var xs []float64
		if v.cnx > 0 {
			xs = rowBlock(x, lo, k, b.x)
		}
		ys := rowBlock(y, lo, k, b.y)
		c := b.c[:k*nc]
		v.be(k, xs, ys, c, b.jy[:k*nc*v.cn])
		for s := range k {
			sum += norm(c[s*nc : (s+1)*nc])
		}
		maxAbs = largest(maxAbs, c)
	}
	return sum / float64(r), maxAbs
}

// grow returns buf if it holds n entries, else a new slice of n.
func grow(buf []float64, n int) []float64 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]float64, n)
}

// rowBlock returns rows [lo, lo+k) of m as one row-major slice: m's own data
// when its rows are contiguous, else a copy in buf.
func rowBlock(m *mat.Dense, lo, k int, buf []float64) []float64 {
	raw := m.RawMatrix()
	if raw.Stride == raw.Cols {
		return raw.Data[lo*raw.Cols : (lo+k)*raw.Cols]
	}
	out := buf[:k*raw.Cols]
	for s := range k {
		copy(out[s*raw.Cols:(s+1)*raw.Cols], m.RawRowView(lo+s))
	}
	return out
}
