package problems

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"sync"
	"unsafe"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/vmath"
)

// sineQuadOp is the gorgonia operation of SineQuadratic.ObjectiveNode:
// y ↦ f(y) = Σ_k ½Q_k y_k² + p_k sin y_k, row by row for a (batch, N_O)
// matrix y (result of shape (batch,)), or for one (N_O) vector y (a
// scalar). Its gradient is sineQuadGradOp.
//
// Float64 values are those of the chain of gorgonia operations
// Square(y)·(Q/2) + Sin(y)·p that ObjectiveNode used to build, bit for bit:
// the same products, math.Sin, and the row sums by the same BLAS call
// (Dgemv for a matrix, Ddot for a vector, of gorgonia's BLAS). Float32
// values are computed in float64 from the float32 y and the float64 Q and
// p, with sin and cos from vmath.SinCos32s (relative error below 1e-10), and
// rounded once: more accurate than gorgonia's float32 chain (math32.Sin
// and Cos, float32 sums), to which they agree to about 1e-6 relative to
// the size of the terms (TestObjectiveNodeOp). The float32 value pass
// computes the derivative Qy + p ⊙ cos y with the same vmath.SinCos32s calls and
// keeps it for the gradient pass (derivCache).
type sineQuadOp struct {
	halfQ, p []float64    // ½Q_k and p_k
	dims     int          // 2: y is (batch, N_O); 1: y is (N_O)
	dt       tensor.Dtype // Float64 or Float32

	last *derivCache // float32: the derivative at the last y evaluated
}

// derivCache holds a copy of the last float32 y whose value the op
// computed and the derivative Q_k y_k + p_k cos y_k there, computed with
// the same sin and cos as the value. The gradient uses it when its y is
// bit for bit the cached one (gorgonia may reuse y's memory for other
// values, so the data is compared, not the pointer), and otherwise
// computes the derivative afresh, with the same bits (deriv32).
type derivCache struct {
	mu sync.Mutex
	y  []float32
	d  []float64
}

// newSineQuadOp returns the op for o and a y of the given shape and dtype,
// or an error if they are not (batch, N_O) or (N_O), Float64 or Float32.
func newSineQuadOp(o SineQuadratic, shape tensor.Shape, dt tensor.Dtype) (*sineQuadOp, error) {
	n := len(o.Q)
	if len(o.P) != n {
		return nil, fmt.Errorf("problems: ObjectiveNode: len(Q) = %d ≠ len(P) = %d", n, len(o.P))
	}
	if (len(shape) != 1 && len(shape) != 2) || shape[len(shape)-1] != n {
		return nil, fmt.Errorf("problems: ObjectiveNode: y has shape %v, want (batch, %d) or (%d)", shape, n, n)
	}
	if dt != tensor.Float64 && dt != tensor.Float32 {
		return nil, fmt.Errorf("problems: ObjectiveNode: dtype %v, want Float64 or Float32", dt)
	}
	op := &sineQuadOp{halfQ: make([]float64, n), p: append([]float64(nil), o.P...), dims: len(shape), dt: dt, last: &derivCache{}}
	for k, q := range o.Q {
		op.halfQ[k] = 0.5 * q
	}
	return op, nil
}

func (op *sineQuadOp) Arity() int { return 1 }

// Type is Matrix a → Vector a (or Vector a → a for one sample), built
// afresh on every call because gorgonia's type inference may mutate the
// types it is handed.
func (op *sineQuadOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	if op.dims == 1 {
		return hm.NewFnType(gorgonia.TensorType{Dims: 1, Of: a}, a)
	}
	return hm.NewFnType(gorgonia.TensorType{Dims: 2, Of: a}, gorgonia.TensorType{Dims: 1, Of: a})
}

func (op *sineQuadOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: want 1 input, got %d", op, len(inputs))
	}
	s, ok := inputs[0].(tensor.Shape)
	if !ok || !op.shapeOK(s) {
		return nil, fmt.Errorf("%v: y has shape %v, want %v", op, inputs[0], op.wantShape())
	}
	if op.dims == 1 {
		return tensor.ScalarShape(), nil
	}
	return tensor.Shape{s[0]}, nil
}

// shapeOK reports whether s is a shape of y this op accepts.
func (op *sineQuadOp) shapeOK(s tensor.Shape) bool {
	return len(s) == op.dims && s[op.dims-1] == len(op.halfQ)
}

// wantShape describes the shape of y this op accepts.
func (op *sineQuadOp) wantShape() string {
	if op.dims == 1 {
		return fmt.Sprintf("(%d)", len(op.halfQ))
	}
	return fmt.Sprintf("(batch, %d)", len(op.halfQ))
}

// rows returns the contiguous data of y ([]float64 or []float32, only to
// be read) and the number of rows (1 for a vector).
func (op *sineQuadOp) rows(v gorgonia.Value) (any, int, error) {
	if v == nil {
		return nil, 0, fmt.Errorf("%v: y has no value", op)
	}
	s := v.Shape()
	if !op.shapeOK(s) || v.Dtype() != op.dt {
		return nil, 0, fmt.Errorf("%v: y is %v of shape %v, want %v of shape %v", op, v.Dtype(), s, op.dt, op.wantShape())
	}
	if t, ok := v.(*tensor.Dense); ok && t.RequiresIterator() {
		v = t.Materialize()
	}
	m := 1
	if op.dims == 2 {
		m = s[0]
	}
	size := m * len(op.halfQ)
	switch d := v.Data().(type) {
	case []float64:
		if len(d) >= size {
			return d[:size], m, nil
		}
	case []float32:
		if len(d) >= size {
			return d[:size], m, nil
		}
	}
	return nil, 0, fmt.Errorf("%v: y holds %T, want %d %v entries", op, v.Data(), size, op.dt)
}

func (op *sineQuadOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: want 1 input, got %d", op, len(inputs))
	}
	data, m, err := op.rows(inputs[0])
	if err != nil {
		return nil, err
	}
	var backing any
	switch y := data.(type) {
	case []float64:
		f := op.value64(y, m)
		if op.dims == 1 {
			return gorgonia.NewF64(f[0]), nil
		}
		backing = f
	case []float32:
		f := op.value32(y, m)
		if op.dims == 1 {
			return gorgonia.NewF32(f[0]), nil
		}
		backing = f
	}
	return tensor.New(tensor.WithShape(m), tensor.WithBacking(backing)), nil
}

// value64 returns f of the m rows of y as the old chain computed it:
// (y⊙y)·(½Q) + sin(y)·p, the products by gorgonia's BLAS.
func (op *sineQuadOp) value64(y []float64, m int) []float64 {
	n := len(op.halfQ)
	impl := gorgonia.WhichBLAS()
	buf := make([]float64, len(y))
	for i, v := range y {
		buf[i] = v * v
	}
	quad, lin := make([]float64, m), make([]float64, m)
	if op.dims == 1 {
		quad[0] = impl.Ddot(n, buf, 1, op.halfQ, 1)
	} else {
		impl.Dgemv(blas.NoTrans, m, n, 1, buf, n, op.halfQ, 1, 0, quad, 1)
	}
	for i, v := range y {
		buf[i] = math.Sin(v)
	}
	if op.dims == 1 {
		lin[0] = impl.Ddot(n, buf, 1, op.p, 1)
	} else {
		impl.Dgemv(blas.NoTrans, m, n, 1, buf, n, op.p, 1, 0, lin, 1)
	}
	for i := range quad {
		quad[i] += lin[i]
	}
	return quad
}

// value32 returns f of the m rows of y, computed in float64 and rounded,
// and caches y and the derivative there (derivCache).
func (op *sineQuadOp) value32(y []float32, m int) []float32 {
	n := len(op.halfQ)
	c := op.last
	c.mu.Lock() // the cache's buffers are reused: one value or gradient pass at a time
	defer c.mu.Unlock()
	c.y = c.y[:0] // invalid while d is written
	if cap(c.d) < len(y) {
		c.d = make([]float64, len(y))
	}
	d := c.d[:len(y)]
	f := make([]float32, m)
	row, sin, cos := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range f {
		widen(row, y[i*n:(i+1)*n])
		vmath.SinCos32s(row, sin, cos)
		di := d[i*n : (i+1)*n]
		var s float64
		for k, t := range row {
			s += op.halfQ[k]*(t*t) + op.p[k]*sin[k]
			di[k] = deriv32(op.halfQ[k], op.p[k], t, cos[k])
		}
		f[i] = float32(s)
	}
	c.y, c.d = append(c.y, y...), d
	return f
}

// deriv32 returns Q_k t + p_k cos t from ½Q_k, p_k, t and cos t, its
// products rounded (no fused multiply–add), so that the value and the
// gradient passes get the same bits.
func deriv32(halfQ, p, t, cos float64) float64 {
	return float64(2*halfQ*t) + float64(p*cos)
}

// grad32 returns the float32 gradient for the upstream gradient up (one
// entry per row of y): up_i·(Q_k y_k + p_k cos y_k), computed in float64
// and rounded, the derivative from the cache if y is the last y evaluated.
func (op *sineQuadOp) grad32(y []float32, up []float64) []float32 {
	n := len(op.halfQ)
	c := op.last
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.d
	if len(c.y) != len(y) || !bytes.Equal(float32Bytes(c.y), float32Bytes(y)) {
		d = make([]float64, len(y))
		row, sin, cos := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range up {
			widen(row, y[i*n:(i+1)*n])
			vmath.SinCos32s(row, sin, cos)
			di := d[i*n : (i+1)*n]
			for k, t := range row {
				di[k] = deriv32(op.halfQ[k], op.p[k], t, cos[k])
			}
		}
	}
	g := make([]float32, len(y))
	grow := make([]float64, n)
	for i, u := range up {
		for k, v := range d[i*n : (i+1)*n] {
			grow[k] = u * v
		}
		narrow(g[i*n:(i+1)*n], grow)
	}
	return g
}

// float32Bytes returns the bytes of v (for comparing bit patterns, NaNs
// included).
func float32Bytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

// widen sets dst[k] = float64(src[k]). The float32 loops convert a row
// before and after computing on it: a conversion inside the loop of
// SinCos32 calls (CVTSS2SD or CVTSD2SS, which keep the rest of their
// destination register) chains the iterations and made them 2.5× slower.
func widen(dst []float64, src []float32) {
	for k, v := range src {
		dst[k] = float64(v)
	}
}

// narrow sets dst[k] = float32(src[k]) (see widen).
func narrow(dst []float32, src []float64) {
	for k, v := range src {
		dst[k] = float32(v)
	}
}

func (op *sineQuadOp) ReturnsPtr() bool     { return false }
func (op *sineQuadOp) CallsExtern() bool    { return false }
func (op *sineQuadOp) OverwritesInput() int { return -1 }

// WriteHash writes every parameter of the op: the shape kind, the dtype
// and the bits of ½Q and p.
func (op *sineQuadOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "problems.SineQuadratic{dims=%d dt=%v n=%d}", op.dims, op.dt, len(op.halfQ))
	var b [8]byte
	for _, v := range [2][]float64{op.halfQ, op.p} {
		for _, x := range v {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			h.Write(b[:])
		}
	}
}

func (op *sineQuadOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// String names the op by N_O, the dtype and a hash of ½Q and p, so that
// different instances print differently.
func (op *sineQuadOp) String() string {
	h := fnv.New64a()
	op.WriteHash(h)
	return fmt.Sprintf("SineQuadratic(N_O=%d, %v, %016x)", len(op.halfQ), op.dt, h.Sum64())
}

// DiffWRT reports that f is differentiable with respect to y.
func (op *sineQuadOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	if inputs == 1 {
		d[0] = true
	}
	return d
}

// SymDiff returns the gradient node with respect to y, a sineQuadGradOp
// applied to (y, grad).
func (op *sineQuadOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: want 1 input, got %d", op, len(inputs))
	}
	d, err := gorgonia.ApplyOp(&sineQuadGradOp{f: op}, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("%v: gradient: %w", op, err)
	}
	return gorgonia.Nodes{d}, nil
}

// DoDiff adds the gradient with respect to y into y's dual value, for
// machines that differentiate by executing (gorgonia.NewLispMachine).
func (op *sineQuadOp) DoDiff(ctx gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	if len(inputs) != 1 {
		return fmt.Errorf("%v: want 1 input, got %d", op, len(inputs))
	}
	up, err := output.Grad()
	if err != nil {
		return fmt.Errorf("%v: output gradient: %w", op, err)
	}
	d, err := inputs[0].Grad()
	if err != nil {
		return nil // the machine does not track y's gradient
	}
	g, err := op.grad(inputs[0].Value(), up)
	if err != nil {
		return err
	}
	switch dst := d.Data().(type) {
	case []float64:
		src, ok := g.([]float64)
		if ok && len(dst) == len(src) {
			for i, v := range src {
				dst[i] += v
			}
			return nil
		}
	case []float32:
		src, ok := g.([]float32)
		if ok && len(dst) == len(src) {
			for i, v := range src {
				dst[i] += v
			}
			return nil
		}
	}
	return fmt.Errorf("%v: y's gradient holds %T of shape %v, want %v of shape %v", op, d.Data(), d.Shape(), op.dt, inputs[0].Shape())
}

// grad returns the gradient with respect to y ([]float64 or []float32, of
// y's size) for the upstream gradient up (one entry per row of y):
// ∂/∂y_k = up·(Q_k y_k + p_k cos y_k). In float64 it is computed as the
// old chain's symbolic gradient was, (2y_k)·(up·½Q_k) + cos(y_k)·(up·p_k),
// bit for bit; in float32 in float64 from the float32 inputs, rounded once
// (grad32).
func (op *sineQuadOp) grad(yv, upv gorgonia.Value) (any, error) {
	data, m, err := op.rows(yv)
	if err != nil {
		return nil, err
	}
	up, err := op.upstream(upv, m)
	if err != nil {
		return nil, err
	}
	n := len(op.halfQ)
	switch y := data.(type) {
	case []float64:
		g := make([]float64, len(y))
		for i := range m {
			u := up[i]
			for k, v := range y[i*n : (i+1)*n] {
				// The conversions keep the products rounded (no fused
				// multiply–add), as gorgonia's elementwise ops round them.
				g[i*n+k] = float64((v*2)*(u*op.halfQ[k])) + float64(math.Cos(v)*(u*op.p[k]))
			}
		}
		return g, nil
	case []float32:
		return op.grad32(y, up), nil
	}
	return nil, fmt.Errorf("%v: y holds %T", op, data)
}

// upstream returns the upstream gradient as m float64 values: a scalar
// for one sample, a vector of length m for a batch.
func (op *sineQuadOp) upstream(v gorgonia.Value, m int) ([]float64, error) {
	if v == nil {
		return nil, fmt.Errorf("%v: upstream gradient has no value", op)
	}
	if v.Dtype() == op.dt {
		switch d := v.Data().(type) {
		case float64:
			if op.dims == 1 {
				return []float64{d}, nil
			}
		case float32:
			if op.dims == 1 {
				return []float64{float64(d)}, nil
			}
		case []float64:
			if len(d) == m && (op.dims == 2 || v.Shape().IsScalarEquiv()) {
				return d, nil
			}
		case []float32:
			if len(d) == m && (op.dims == 2 || v.Shape().IsScalarEquiv()) {
				out := make([]float64, m)
				for i, x := range d {
					out[i] = float64(x)
				}
				return out, nil
			}
		}
	}
	return nil, fmt.Errorf("%v: upstream gradient is %v of shape %v, want %v with %d entries", op, v.Dtype(), v.Shape(), op.dt, m)
}

// sineQuadGradOp is the gradient of a sineQuadOp: (y, upstream gradient)
// ↦ the gradient with respect to y (sineQuadOp.grad), of y's shape.
type sineQuadGradOp struct {
	f *sineQuadOp
}

func (op *sineQuadGradOp) Arity() int { return 2 }

// Type is Matrix a → Vector a → Matrix a (or Vector a → a → Vector a),
// built afresh on every call.
func (op *sineQuadGradOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	if op.f.dims == 1 {
		v := gorgonia.TensorType{Dims: 1, Of: a}
		return hm.NewFnType(v, a, gorgonia.TensorType{Dims: 1, Of: a})
	}
	return hm.NewFnType(gorgonia.TensorType{Dims: 2, Of: a}, gorgonia.TensorType{Dims: 1, Of: a}, gorgonia.TensorType{Dims: 2, Of: a})
}

func (op *sineQuadGradOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	s, ok := inputs[0].(tensor.Shape)
	if !ok || !op.f.shapeOK(s) {
		return nil, fmt.Errorf("%v: y has shape %v, want %v", op, inputs[0], op.f.wantShape())
	}
	return s.Clone(), nil
}

func (op *sineQuadGradOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	g, err := op.f.grad(inputs[0], inputs[1])
	if err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(inputs[0].Shape().Clone()...), tensor.WithBacking(g)), nil
}

func (op *sineQuadGradOp) ReturnsPtr() bool     { return false }
func (op *sineQuadGradOp) CallsExtern() bool    { return false }
func (op *sineQuadGradOp) OverwritesInput() int { return -1 }

// WriteHash writes "∂/∂y" and the forward op's parameters.
func (op *sineQuadGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "∂/∂y ")
	op.f.WriteHash(h)
}

func (op *sineQuadGradOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op *sineQuadGradOp) String() string { return fmt.Sprintf("∂%v/∂y", op.f) }

var (
	_ gorgonia.SDOp = (*sineQuadOp)(nil)
	_ gorgonia.ADOp = (*sineQuadOp)(nil)
	_ gorgonia.Op   = (*sineQuadGradOp)(nil)
)
