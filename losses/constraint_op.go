package losses

import (
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"github.com/chewxy/hm"
	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/affine"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// penalty is the per-sample function of the constraint values.
type penalty uint8

const (
	norm               penalty = iota // ‖c‖₂ (Residual)
	squaredNorm                       // ‖c‖₂² (SoftPenalty)
	squaredHinge                      // Σ_j max(0, c_j)² (HingePenalty)
	squaredNormMeanAbs                // ‖c‖₂² + (1/nc)Σ_j|c_j| (SquaredNormMeanAbsPenalty)
)

func (p penalty) String() string {
	switch p {
	case squaredNorm:
		return "SoftPenalty"
	case squaredHinge:
		return "HingePenalty"
	case squaredNormMeanAbs:
		return "SquaredNormMeanAbsPenalty"
	}
	return "Residual"
}

// constraintLossOp is the gorgonia Op of Residual and SoftPenalty:
// (x N×nx, y N×ny) ↦ λ·(1/N) Σ_i p(c(x_i, y_i)).
type constraintLossOp struct {
	penalty    penalty
	c          enforce.Constraint
	id         string // identity of c, for hashing
	lambda     float64
	nx, ny, nc int
	k          enforce.Capabilities // c's, read once
	jx         bool                 // c provides ∂c/∂x
	// aff is c's batched evaluator when c is affine with one
	// (enforce.Linear, a Stack of them, train's view of them), else nil.
	aff *affine.Residual
	// bufs keeps evalBatch's residual and Jacobian buffers between calls
	// (tens of megabytes at the quadratic benchmark's largest size).
	bufs sync.Pool // *batchBufs
}

// batchBufs are evalBatch's and evalAffine's temporaries.
type batchBufs struct{ c, jy, k []float64 }

// perSampleAffine makes eval evaluate affine constraints one sample at a
// time, as before evalAffine: tests and benchmarks compare the two paths.
var perSampleAffine bool

func newConstraintLossOp(p penalty, c enforce.Constraint, lambda float64) (*constraintLossOp, error) {
	if c == nil {
		return nil, fmt.Errorf("nil constraint")
	}
	if v := reflect.ValueOf(c); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("nil %T constraint", c)
	}
	if err := checkLambda("weight", lambda); err != nil {
		return nil, err
	}
	nx, ny, nc := c.Dims()
	if nx < 1 || ny < 1 || nc < 1 {
		return nil, fmt.Errorf("constraint dimensions (nx, ny, nc) = (%d, %d, %d) must be positive", nx, ny, nc)
	}
	if err := enforce.CheckCapable(c); err != nil {
		return nil, err
	}
	k := enforce.CapabilitiesOf(c)
	var aff *affine.Residual
	if p, ok := c.(affine.Provider); ok {
		if r := p.AffineResidual(); r != nil {
			if rnx, rny, rnc := r.Dims(); rnx <= nx && rny == ny && rnc == nc {
				aff = r
			}
		}
	}
	return &constraintLossOp{
		aff:     aff,
		penalty: p,
		k:       k,
		c:       c,
		id:      identity(c),
		lambda:  lambda,
		nx:      nx,
		ny:      ny,
		nc:      nc,
		jx:      k.JacobianX != nil || (k.Sparse != nil && k.Sparse.JacobianXTVec != nil),
	}, nil
}

// identity names a constraint for hashing: its dynamic type and the data
// word of the interface value, which is the pointer itself for pointer
// types and otherwise the address of the boxed copy (kept alive by the op).
// One constraint value always gets one name, and two live constraints never
// share a name, even values that differ only in closures they hold. Two
// boxings of equal values get different names, which only costs gorgonia a
// merge of equal nodes.
func identity(c enforce.Constraint) string {
	data := (*[2]unsafe.Pointer)(unsafe.Pointer(&c))[1]
	return fmt.Sprintf("%T@%p", c, data)
}

func (op *constraintLossOp) Arity() int { return 2 }

// Type is Matrix a → Matrix a → a, built afresh on every call because
// gorgonia's type inference may mutate the types it is handed.
func (op *constraintLossOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, a)
}

func (op *constraintLossOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if _, err := op.batchSize(inputs); err != nil {
		return nil, err
	}
	return tensor.ScalarShape(), nil
}

// batchSize checks the input shapes against the constraint and returns N.
func (op *constraintLossOp) batchSize(inputs []gorgonia.DimSizer) (int, error) {
	if len(inputs) < 2 {
		return 0, fmt.Errorf("%v: want inputs x and y, got %d", op, len(inputs))
	}
	xs, ok1 := inputs[0].(tensor.Shape)
	ys, ok2 := inputs[1].(tensor.Shape)
	if !ok1 || !ok2 || xs.Dims() != 2 || ys.Dims() != 2 || xs[1] != op.nx || ys[1] != op.ny || xs[0] != ys[0] {
		return 0, fmt.Errorf("%v: x and y have shapes %v and %v, want (N, %d) and (N, %d)", op, inputs[0], inputs[1], op.nx, op.ny)
	}
	return xs[0], nil
}

func (op *constraintLossOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	x, y, n, dt, err := op.read(inputs[0], inputs[1])
	if err != nil {
		return nil, err
	}
	v, err := op.eval(x, y, n, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	if dt == tensor.Float32 {
		return gorgonia.NewF32(float32(v)), nil
	}
	return gorgonia.NewF64(v), nil
}

func (op *constraintLossOp) ReturnsPtr() bool     { return false }
func (op *constraintLossOp) CallsExtern() bool    { return false }
func (op *constraintLossOp) OverwritesInput() int { return -1 }

// WriteHash writes every parameter of the op: penalty, constraint identity
// and dimensions, weight and whether x is differentiable.
func (op *constraintLossOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "losses.%v{c=%s dims=(%d,%d,%d) λ=%s jx=%t}", op.penalty, op.id, op.nx, op.ny, op.nc,
		strconv.FormatFloat(op.lambda, 'g', -1, 64), op.jx)
}

func (op *constraintLossOp) Hashcode() uint32 { return hashOf(op) }

func (op *constraintLossOp) String() string {
	return fmt.Sprintf("%v{λ=%v, c=%T}", op.penalty, op.lambda, op.c)
}

func hashOf(op gorgonia.Op) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// DiffWRT reports that the loss is differentiable with respect to y, and
// with respect to x when the constraint provides ∂c/∂x.
func (op *constraintLossOp) DiffWRT(inputs int) []bool {
	if inputs != 2 {
		return make([]bool, inputs)
	}
	return []bool{op.jx, true}
}

// SymDiff returns the gradient nodes with respect to x (nil unless the
// constraint provides ∂c/∂x) and y, each a constraintLossGradOp applied to
// (x, y, grad).
func (op *constraintLossOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	grads := make(gorgonia.Nodes, 2)
	for wrt := range grads {
		if wrt == 0 && !op.jx {
			continue
		}
		var err error
		if grads[wrt], err = gorgonia.ApplyOp(&constraintLossGradOp{loss: op, wrt: wrt}, inputs[0], inputs[1], grad); err != nil {
			return nil, fmt.Errorf("%v: gradient: %w", op, err)
		}
	}
	return grads, nil
}

// DoDiff accumulates the gradients into the dual values of x and y, for
// machines that differentiate by executing (gorgonia.NewLispMachine).
func (op *constraintLossOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	if len(inputs) != 2 {
		return fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	upv, err := output.Grad()
	if err != nil {
		return fmt.Errorf("%v: output gradient: %w", op, err)
	}
	up, err := scalarOf(upv)
	if err != nil {
		return fmt.Errorf("%v: output gradient: %w", op, err)
	}
	x, y, n, _, err := op.read(inputs[0].Value(), inputs[1].Value())
	if err != nil {
		return err
	}
	for wrt, cols := range []int{op.nx, op.ny} {
		if wrt == 0 && !op.jx {
			continue
		}
		d, err := inputs[wrt].Grad()
		if err != nil {
			continue // the machine does not track this input's gradient
		}
		g := make([]float64, n*cols)
		gx, gy := g, []float64(nil)
		if wrt == 1 {
			gx, gy = nil, g
		}
		if _, err := op.eval(x, y, n, gx, gy, up*op.lambda/float64(n)); err != nil {
			return err
		}
		if err := accumulate(d, g); err != nil {
			return fmt.Errorf("%v: input %d gradient: %w", op, wrt, err)
		}
	}
	return nil
}

// accumulate adds g to the float data of the gradient value d.
func accumulate(d gorgonia.Value, g []float64) error {
	switch data := d.Data().(type) {
	case []float64:
		if len(data) != len(g) {
			return fmt.Errorf("gradient has %d entries, want %d", len(data), len(g))
		}
		for i, v := range g {
			data[i] += v
		}
	case []float32:
		if len(data) != len(g) {
			return fmt.Errorf("gradient has %d entries, want %d", len(data), len(g))
		}
		for i, v := range g {
			data[i] += float32(v)
		}
	default:
		return fmt.Errorf("gradient holds %T", d.Data())
	}
	return nil
}

// read returns the data of x and y as float64 (copies for float32 or
// strided inputs), the batch size and the dtype.
func (op *constraintLossOp) read(xv, yv gorgonia.Value) (x, y []float64, n int, dt tensor.Dtype, err error) {
	x, n, dt, err = matrixData(xv, op.nx)
	if err != nil {
		return nil, nil, 0, dt, fmt.Errorf("%v: x: %w", op, err)
	}
	y, ny, dty, err := matrixData(yv, op.ny)
	if err != nil {
		return nil, nil, 0, dt, fmt.Errorf("%v: y: %w", op, err)
	}
	if ny != n || dty != dt {
		return nil, nil, 0, dt, fmt.Errorf("%v: x is %d×%d %v and y %d×%d %v", op, n, op.nx, dt, ny, op.ny, dty)
	}
	return x, y, n, dt, nil
}

// matrixData returns the row-major float64 data of an N×cols matrix value,
// N and its dtype. Float64 data is returned without copying and must only
// be read.
func matrixData(v gorgonia.Value, cols int) ([]float64, int, tensor.Dtype, error) {
	if v == nil {
		return nil, 0, tensor.Float64, fmt.Errorf("no value")
	}
	s := v.Shape()
	if s.Dims() != 2 || s[1] != cols {
		return nil, 0, v.Dtype(), fmt.Errorf("shape %v, want (N, %d)", s, cols)
	}
	if t, ok := v.(*tensor.Dense); ok && t.RequiresIterator() {
		v = t.Materialize()
	}
	n := s[0]
	switch data := v.Data().(type) {
	case []float64:
		if len(data) < n*cols {
			return nil, 0, tensor.Float64, fmt.Errorf("%d entries for shape %v", len(data), s)
		}
		return data[:n*cols], n, tensor.Float64, nil
	case []float32:
		if len(data) < n*cols {
			return nil, 0, tensor.Float32, fmt.Errorf("%d entries for shape %v", len(data), s)
		}
		out := make([]float64, n*cols)
		for i := range out {
			out[i] = float64(data[i])
		}
		return out, n, tensor.Float32, nil
	}
	return nil, 0, v.Dtype(), fmt.Errorf("dtype %v is not supported (want Float64 or Float32)", v.Dtype())
}

// scalarOf returns the value of a scalar (or one-element) float value.
func scalarOf(v gorgonia.Value) (float64, error) {
	if v == nil {
		return 0, fmt.Errorf("no value")
	}
	switch d := v.Data().(type) {
	case float64:
		return d, nil
	case float32:
		return float64(d), nil
	case []float64:
		if len(d) == 1 {
			return d[0], nil
		}
	case []float32:
		if len(d) == 1 {
			return float64(d[0]), nil
		}
	}
	return 0, fmt.Errorf("want a float scalar, got %v of shape %v", v.Dtype(), v.Shape())
}

// eval returns λ·(1/N) Σ_i p(c(x_i, y_i)) for the N samples in x and y. If
// gx (N×nx) or gy (N×ny) is not nil it also writes into it, overwriting,
// w·∂p(c_i)/∂x_i or w·∂p(c_i)/∂y_i for every sample i, where w is the
// given weight (λ/N times the upstream gradient).
//
// Samples are evaluated in parallel blocks when the batch is large enough
// (the Constraint contract makes Eval safe for concurrent use); if the
// constraint is affine with a batched evaluator (enforce.Linear), with
// matrix products over the batch (evalAffine); if it declares a sparse
// Jacobian (enforce.Capabilities.Sparse), along its nonzeros
// (evalRangeSparse: no nc×ny matrix at any size); or, if it has a batched
// evaluation (enforce.Capabilities.EvalBatch), in chunks of rows with
// EvalBatch (which parallelises itself). The per-sample penalties are
// summed in sample order, so the result does not depend on the number of
// goroutines. An error names the first failing sample.
func (op *constraintLossOp) eval(x, y []float64, n int, gx, gy []float64, w float64) (_ float64, err error) {
	defer func() {
		// User code (the constraint, its RHS or EvalBatch) panicked on
		// this goroutine: an error, not a crash.
		if r := recover(); r != nil {
			err = fmt.Errorf("%v: constraint code panicked: %v", op, r)
		}
	}()
	per := make([]float64, n)
	if op.aff != nil && !perSampleAffine {
		err = op.evalAffine(x, y, n, per, gx, gy, w)
	} else if sj := op.k.Sparse; sj != nil {
		err = parallelBlocks(n, max(1, minBlockWork/(op.nc+op.nx+op.ny+len(sj.Col))), func(lo, hi int) error {
			return op.evalRangeSparse(sj, x, y, lo, hi, per, gx, gy, w)
		})
	} else if be := op.k.EvalBatch; be != nil {
		err = op.evalBatch(be, x, y, n, min(n, max(1, batchEntries/(op.nc*op.ny))), per, gx, gy, w)
	} else {
		err = parallelBlocks(n, op.samplesPerBlock(), func(lo, hi int) error {
			return op.evalRange(x, y, lo, hi, per, gx, gy, w)
		})
	}
	if err != nil {
		return 0, err
	}
	var total float64
	for _, v := range per {
		total += v
	}
	return op.lambda * total / float64(n), nil
}

// minBlockWork is the least work, in Jacobian entries, worth a goroutine.
const minBlockWork = 1 << 12

// samplesPerBlock is the smallest block of samples worth a goroutine.
func (op *constraintLossOp) samplesPerBlock() int {
	return max(1, minBlockWork/(op.nc*(op.nx+op.ny)))
}

// parallelBlocks calls f on contiguous blocks [lo, hi) covering [0, n), of
// at least minBlock samples, on up to GOMAXPROCS goroutines, and returns
// the error of the first failing block. A panic in f (user code: the
// constraint) is returned as an error, on any goroutine.
func parallelBlocks(n, minBlock int, f func(lo, hi int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n/minBlock)
	if workers <= 1 {
		return guarded(f, 0, n)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for b := range workers {
		lo, hi := b*n/workers, (b+1)*n/workers
		wg.Go(func() { errs[b] = guarded(f, lo, hi) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// guarded calls f(lo, hi) and turns a panic into an error.
func guarded(f func(lo, hi int) error, lo, hi int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("constraint code panicked in samples [%d, %d): %v", lo, hi, r)
		}
	}()
	return f(lo, hi)
}

// batchEntries bounds the Jacobian entries of one EvalBatch chunk (64 MB):
// a whole batch of 200 at the quadratic benchmark's largest size,
// (N_O, N_C) = (200, 150), where fewer, larger chunks sweep the 48 MB of
// A_i fewer times.
const batchEntries = 1 << 23

// evalBatch is eval for a constraint with EvalBatch (be): chunks of k rows are evaluated
// by EvalBatch, always with a Jacobian buffer (Quadratic computes the
// Jacobians in any case and would otherwise allocate them), then each
// sample is finished by sample as in evalRange.
func (op *constraintLossOp) evalBatch(be func(rows int, x, y, c, jy []float64), x, y []float64, n, k int, per, gx, gy []float64, w float64) error {
	nx, ny, nc := op.nx, op.ny, op.nc
	b, _ := op.bufs.Get().(*batchBufs)
	if b == nil {
		b = new(batchBufs)
	}
	defer op.bufs.Put(b)
	if cap(b.c) < k*nc {
		b.c = make([]float64, k*nc)
	}
	if cap(b.jy) < k*nc*ny {
		b.jy = make([]float64, k*nc*ny)
	}
	c, jy := b.c[:k*nc], b.jy[:k*nc*ny]
	var jx []float64
	if gx != nil {
		jx = make([]float64, nc*nx)
	}
	for lo := 0; lo < n; lo += k {
		hi := min(n, lo+k)
		m := hi - lo
		be(m, x[lo*nx:hi*nx], y[lo*ny:hi*ny], c[:m*nc], jy[:m*nc*ny])
		for i := lo; i < hi; i++ {
			s := i - lo
			var jyi []float64
			if gy != nil {
				jyi = jy[s*nc*ny : (s+1)*nc*ny]
			}
			if err := op.sample(x, y, i, c[s*nc:(s+1)*nc], jyi, jx, per, gx, gy, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// evalAffine is eval for an affine constraint with a batched evaluator:
// the residuals of all samples are Res = Y·Cᵀ − R, one product, and the
// y-gradients G = diag(k)·Res·C, another, with k_i the weight of sample
// i's ∂p/∂c (see value).
func (op *constraintLossOp) evalAffine(x, y []float64, n int, per, gx, gy []float64, w float64) error {
	nx, ny, nc := op.nx, op.ny, op.nc
	b, _ := op.bufs.Get().(*batchBufs)
	if b == nil {
		b = new(batchBufs)
	}
	defer op.bufs.Put(b)
	if cap(b.c) < n*nc {
		b.c = make([]float64, n*nc)
	}
	if cap(b.k) < n {
		b.k = make([]float64, n)
	}
	c, k := b.c[:n*nc], b.k[:n]
	if err := op.aff.Eval(n, x, nx, y, ny, c); err != nil {
		return fmt.Errorf("%v: %w", op, err)
	}
	var jx []float64
	if gx != nil {
		jx = make([]float64, nc*nx)
	}
	for i := range n {
		ci := c[i*nc : (i+1)*nc]
		var err error
		if k[i], err = op.value(i, ci, per, w); err != nil {
			return err
		}
		if gx != nil {
			if err := op.gradX(x, y, i, ci, jx, gx, k[i]); err != nil {
				return err
			}
		}
	}
	if gy == nil {
		return nil
	}
	op.aff.GradY(n, k, c, gy)
	for i, v := range gy {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%v: ∂c/∂y at sample %d: k·Cᵀc is not finite (k = %v)", op, i/ny, k[i/ny])
		}
	}
	return nil
}

// evalRange writes p(c(x_i, y_i)) into per[i], and the gradient rows
// described by eval, for the samples lo ⩽ i < hi.
func (op *constraintLossOp) evalRange(x, y []float64, lo, hi int, per, gx, gy []float64, w float64) error {
	nx, ny, nc := op.nx, op.ny, op.nc
	c := make([]float64, nc)
	var jy, jx []float64
	if gy != nil {
		jy = make([]float64, nc*ny)
	}
	if gx != nil {
		jx = make([]float64, nc*nx)
	}
	for i := lo; i < hi; i++ {
		op.c.Eval(x[i*nx:(i+1)*nx], y[i*ny:(i+1)*ny], c, jy)
		if err := op.sample(x, y, i, c, jy, jx, per, gx, gy, w); err != nil {
			return err
		}
	}
	return nil
}

// evalRangeSparse is evalRange for a constraint that declares a sparse
// Jacobian: the values and gradients follow its nonzeros (Sparse.Eval,
// and Sparse.JacobianXTVec for x when it has one), in O(nc + nnz + nx)
// scratch per block, never an nc×ny matrix.
func (op *constraintLossOp) evalRangeSparse(sj *enforce.SparseJacobian, x, y []float64, lo, hi int, per, gx, gy []float64, w float64) error {
	nx, ny, nc := op.nx, op.ny, op.nc
	c := make([]float64, nc)
	var vals, kc, jx []float64
	if gy != nil {
		vals = make([]float64, len(sj.Col))
	}
	if gx != nil {
		if sj.JacobianXTVec != nil {
			kc = make([]float64, nc)
		} else {
			jx = make([]float64, nc*nx)
		}
	}
	rp, col := sj.RowPtr, sj.Col
	for i := lo; i < hi; i++ {
		xi, yi := x[i*nx:(i+1)*nx], y[i*ny:(i+1)*ny]
		sj.Eval(xi, yi, c, vals)
		k, err := op.value(i, c, per, w)
		if err != nil {
			return err
		}
		if gy != nil {
			g := gy[i*ny : (i+1)*ny]
			clear(g)
			for r, cr := range c {
				v := k * cr
				for q := rp[r]; q < rp[r+1]; q++ {
					g[col[q]] += v * vals[q]
				}
			}
			for _, v := range g {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("%v: ∂c/∂y at sample %d: k·Jᵀc is not finite (a declared Jacobian value is not finite, or k = %v)", op, i, k)
				}
			}
		}
		if gx == nil {
			continue
		}
		if jx != nil {
			if err := op.gradX(x, y, i, c, jx, gx, k); err != nil {
				return err
			}
			continue
		}
		for r, cr := range c {
			kc[r] = k * cr
		}
		g := gx[i*nx : (i+1)*nx]
		sj.JacobianXTVec(xi, yi, kc, g)
		for _, v := range g {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%v: ∂c/∂x at sample %d: k·(∂c/∂x)ᵀc is not finite", op, i)
			}
		}
	}
	return nil
}

// sample finishes sample i from its constraint values c and, when gy is
// not nil, its Jacobian jy: it writes p(c) into per[i] and the gradient
// rows described by eval, using jx as scratch for ∂c/∂x.
func (op *constraintLossOp) sample(x, y []float64, i int, c, jy, jx, per, gx, gy []float64, w float64) error {
	k, err := op.value(i, c, per, w)
	if err != nil {
		return err
	}
	if gy != nil {
		ny := op.ny
		if err := transposeTimes(gy[i*ny:(i+1)*ny], jy, c, k); err != nil {
			return fmt.Errorf("%v: ∂c/∂y at sample %d: %w", op, i, err)
		}
	}
	if gx != nil {
		return op.gradX(x, y, i, c, jx, gx, k)
	}
	return nil
}

// gradX writes row i of gx, k·(∂c/∂x)ᵀc at sample i, using jx as scratch.
func (op *constraintLossOp) gradX(x, y []float64, i int, c, jx, gx []float64, k float64) error {
	nx, ny := op.nx, op.ny
	op.k.JacobianX(x[i*nx:(i+1)*nx], y[i*ny:(i+1)*ny], jx)
	if err := transposeTimes(gx[i*nx:(i+1)*nx], jx, c, k); err != nil {
		return fmt.Errorf("%v: ∂c/∂x at sample %d: %w", op, i, err)
	}
	return nil
}

// value writes p(c) into per[i], for the values c of sample i, and returns
// the weight k with w·∂p/∂c = k·c after value returns: 2w for the squared
// penalties, w/‖c‖ for the norm (0 at c = 0). For the hinge it replaces c
// by max(0, c), for ‖c‖² + mean|c| by c + sign(c)/(2nc). It returns an error if c is not finite.
func (op *constraintLossOp) value(i int, c, per []float64, w float64) (float64, error) {
	var ss float64
	for _, v := range c {
		ss += v * v
	}
	if math.IsNaN(ss) || math.IsInf(ss, 0) {
		return 0, fmt.Errorf("%v: constraint value %v is not finite at sample %d", op, c, i)
	}
	if op.penalty == squaredHinge {
		// c is scratch: the hinge is the squared norm of max(0, c).
		ss = 0
		for j, v := range c {
			c[j] = max(v, 0)
			ss += c[j] * c[j]
		}
	}
	if op.penalty == squaredNormMeanAbs {
		// c is scratch: with c' = c + sign(c)/(2nc), 2c' is ∂p/∂c of
		// p = ‖c‖² + (1/nc)Σ|c_j| (sign(0) = 0, a subgradient).
		var abs float64
		h := 0.5 / float64(len(c))
		for j, v := range c {
			abs += math.Abs(v)
			switch {
			case v > 0:
				c[j] = v + h
			case v < 0:
				c[j] = v - h
			}
		}
		ss += abs / float64(len(c))
	}
	if op.penalty == norm {
		per[i] = math.Sqrt(ss)
	} else {
		per[i] = ss
	}
	// ∂p/∂c = 2c for ‖c‖², 2·max(0, c) for the hinge, c/‖c‖ for ‖c‖ (0
	// at c = 0), 2c' (above) for ‖c‖² + mean|c|.
	switch {
	case op.penalty != norm:
		return 2 * w, nil
	case ss > 0:
		return w / math.Sqrt(ss), nil
	}
	return 0, nil
}

// transposeTimes writes dst = k·Jᵀc for the row-major nc×len(dst) matrix J.
// c and k are finite (the caller checks), so an entry of J that is not
// finite makes dst non-finite (Inf·0 is NaN): the entries are checked
// only then, to name the first.
func transposeTimes(dst, j, c []float64, k float64) error {
	m := len(dst)
	clear(dst)
	for r, cr := range c {
		row := j[r*m : (r+1)*m]
		kc := k * cr
		for col, v := range row {
			dst[col] += kc * v
		}
	}
	for _, v := range dst {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			for i, v := range j[:len(c)*m] {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("entry (%d, %d) = %v is not finite", i/m, i%m, v)
				}
			}
			return fmt.Errorf("k·Jᵀc is not finite (k = %v)", k)
		}
	}
	return nil
}

// constraintLossGradOp is the gradient of a constraintLossOp with respect
// to input wrt (0: x, 1: y): (x, y, upstream scalar g) ↦ g·∂loss/∂input.
type constraintLossGradOp struct {
	loss *constraintLossOp
	wrt  int
}

func (op *constraintLossGradOp) Arity() int { return 3 }

// Type is Matrix a → Matrix a → a → Matrix a, built afresh on every call.
func (op *constraintLossGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, a, m)
}

func (op *constraintLossGradOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if _, err := op.loss.batchSize(inputs); err != nil {
		return nil, err
	}
	return inputs[op.wrt].(tensor.Shape).Clone(), nil
}

func (op *constraintLossGradOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("%v: want 3 inputs, got %d", op, len(inputs))
	}
	x, y, n, dt, err := op.loss.read(inputs[0], inputs[1])
	if err != nil {
		return nil, err
	}
	up, err := scalarOf(inputs[2])
	if err != nil {
		return nil, fmt.Errorf("%v: upstream gradient: %w", op, err)
	}
	cols := op.loss.ny
	if op.wrt == 0 {
		cols = op.loss.nx
	}
	g := make([]float64, n*cols)
	gx, gy := g, []float64(nil)
	if op.wrt == 1 {
		gx, gy = nil, g
	}
	if _, err := op.loss.eval(x, y, n, gx, gy, up*op.loss.lambda/float64(n)); err != nil {
		return nil, err
	}
	var backing any = g
	if dt == tensor.Float32 {
		g32 := make([]float32, len(g))
		for i, v := range g {
			g32[i] = float32(v)
		}
		backing = g32
	}
	return tensor.New(tensor.WithShape(n, cols), tensor.WithBacking(backing)), nil
}

func (op *constraintLossGradOp) ReturnsPtr() bool     { return false }
func (op *constraintLossGradOp) CallsExtern() bool    { return false }
func (op *constraintLossGradOp) OverwritesInput() int { return -1 }

// WriteHash writes the forward op's parameters and the input differentiated.
func (op *constraintLossGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "∂/∂%s ", op.wrtName())
	op.loss.WriteHash(h)
}

func (op *constraintLossGradOp) Hashcode() uint32 { return hashOf(op) }

func (op *constraintLossGradOp) String() string {
	return fmt.Sprintf("∂%v/∂%s", op.loss, op.wrtName())
}

func (op *constraintLossGradOp) wrtName() string {
	if op.wrt == 0 {
		return "x"
	}
	return "y"
}

var (
	_ gorgonia.SDOp = (*constraintLossOp)(nil)
	_ gorgonia.ADOp = (*constraintLossOp)(nil)
	_ gorgonia.Op   = (*constraintLossGradOp)(nil)
)
