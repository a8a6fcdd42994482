package layers

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/fastblas"
	"github.com/enforce-nn/enforce/internal/par"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// A float32 Dense layer is one graph operation, affineOp: y = a(x·W + b)
// with the matrix product on enforce's float32 kernels (fastblas, the
// BLAS the default build installs in gorgonia) and the bias and the
// activation applied in the same pass over the product. Its gradient is
// three more operations: dz = ∂L/∂y ⊙ a'(z), read from y (actGradOp);
// ∂L/∂x = dz·Wᵀ and ∂L/∂W = xᵀ·dz (gemmOp, with the transposes passed to
// the kernel rather than materialised); ∂L/∂b, the column sums of dz
// (colSumOp). The chain gorgonia builds for a float64 layer (Mul,
// BroadcastAdd with its repeated bias, the activation and their
// gradients) costs as much again as the products on a 200-wide layer;
// this one allocates nothing per run on a TapeMachine (every operation
// writes into the register the machine preallocates, or into memory of
// its own: see buffer).

// blas32 is the float32 BLAS of the fused operations, and blas64 the
// float64 one of the plain-Go float64 predictions (Dense.predict): the
// matrix products of internal/fastblas.
var blas32, blas64 = fastblas.Implementation{}, fastblas.Implementation{}

func opHash(op gorgonia.Op) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// float32Data returns the float32 slices of values, or an error naming op.
func float32Data(op string, vals ...gorgonia.Value) ([][]float32, error) {
	out := make([][]float32, len(vals))
	for i, v := range vals {
		if v == nil {
			return nil, fmt.Errorf("layers: %s: input %d has no value", op, i)
		}
		d, ok := v.Data().([]float32)
		if !ok {
			return nil, fmt.Errorf("layers: %s: input %d holds %T, want []float32", op, i, v.Data())
		}
		out[i] = d
	}
	return out, nil
}

// buffer is the output a fused operation owns: a TapeMachine clears its
// registers on Reset, so an operation that allocated its output would
// allocate on every run; one that keeps its own reuses it (the machine
// then treats it as a register's memory: the value is valid until the
// register is written again).
type buffer struct{ t *tensor.Dense }

// output returns prealloc when it is a float32 tensor of the shape, else
// the operation's own buffer, made or remade to the shape.
func (b *buffer) output(prealloc gorgonia.Value, shape ...int) *tensor.Dense {
	if t, ok := prealloc.(*tensor.Dense); ok && t.Dtype() == tensor.Float32 && t.Shape().Eq(tensor.Shape(shape)) {
		return t
	}
	if b.t == nil || !b.t.Shape().Eq(tensor.Shape(shape)) {
		b.t = tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float32))
	}
	return b.t
}

var (
	matrixType = gorgonia.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	vectorType = gorgonia.TensorType{Dims: 1, Of: hm.TypeVariable('a')}
)

// affineOp computes a(x·W + b) for x (n×in), W (in×out) and b (out).
type affineOp struct {
	act     Activation
	in, out int
	buffer
}

func (op *affineOp) Arity() int { return 3 }
func (op *affineOp) Type() hm.Type {
	return hm.NewFnType(matrixType, matrixType, vectorType, matrixType)
}
func (op *affineOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("layers: dense32 takes 3 inputs, got %d", len(inputs))
	}
	x, ok := inputs[0].(tensor.Shape)
	if !ok || len(x) != 2 {
		return nil, fmt.Errorf("layers: dense32: input shape %v", inputs[0])
	}
	return tensor.Shape{x[0], op.out}, nil
}
func (op *affineOp) ReturnsPtr() bool     { return false }
func (op *affineOp) CallsExtern() bool    { return false }
func (op *affineOp) OverwritesInput() int { return -1 }
func (op *affineOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "layers.dense32(%v,%d,%d)", op.act, op.in, op.out)
}
func (op *affineOp) Hashcode() uint32 { return opHash(op) }
func (op *affineOp) String() string   { return fmt.Sprintf("dense32(%v)", op.act) }

func (op *affineOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *affineOp) UsePreallocDo(prealloc gorgonia.Value, inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("layers: dense32 takes 3 inputs, got %d", len(inputs))
	}
	d, err := float32Data("dense32", inputs...)
	if err != nil {
		return nil, err
	}
	x, w, b := d[0], d[1], d[2]
	n := len(x) / op.in
	if len(x) != n*op.in || len(w) != op.in*op.out || len(b) != op.out {
		return nil, fmt.Errorf("layers: dense32: %d, %d and %d values for x (n×%d), W (%d×%d) and b (%d)", len(x), len(w), len(b), op.in, op.in, op.out, op.out)
	}
	y := op.output(prealloc, n, op.out)
	yd := y.Data().([]float32)
	blas32.Sgemm(blas.NoTrans, blas.NoTrans, n, op.out, op.in, 1, x, op.in, w, op.out, 0, yd, op.out)
	par.For(n, elementGrain/op.out+1, &biasActBody{y: yd, b: b, act: op.act})
	return y, nil
}

func (op *affineOp) DiffWRT(int) []bool { return []bool{true, true, true} }

func (op *affineOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("layers: dense32 takes 3 inputs, got %d", len(inputs))
	}
	dz, err := gorgonia.ApplyOp(&actGradOp{act: op.act}, output, grad)
	if err != nil {
		return nil, err
	}
	dx, err := gorgonia.ApplyOp(&gemmOp{transB: true}, dz, inputs[1])
	if err != nil {
		return nil, err
	}
	dw, err := gorgonia.ApplyOp(&gemmOp{transA: true}, inputs[0], dz)
	if err != nil {
		return nil, err
	}
	db, err := gorgonia.ApplyOp(&colSumOp{}, dz)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{dx, dw, db}, nil
}

// DoDiff adds the gradients to the inputs' derivatives, for gorgonia's
// LispMachine.
func (op *affineOp) DoDiff(_ gorgonia.ExecutionContext, inputs gorgonia.Nodes, output *gorgonia.Node) error {
	if len(inputs) != 3 {
		return fmt.Errorf("layers: dense32 takes 3 inputs, got %d", len(inputs))
	}
	g, err := output.Grad()
	if err != nil {
		return fmt.Errorf("layers: dense32: the output has no gradient: %w", err)
	}
	dz, err := (&actGradOp{act: op.act}).Do(output.Value(), g)
	if err != nil {
		return err
	}
	grads := []func() (gorgonia.Value, error){
		func() (gorgonia.Value, error) { return (&gemmOp{transB: true}).Do(dz, inputs[1].Value()) },
		func() (gorgonia.Value, error) { return (&gemmOp{transA: true}).Do(inputs[0].Value(), dz) },
		func() (gorgonia.Value, error) { return (&colSumOp{}).Do(dz) },
	}
	for i, in := range inputs {
		d, err := in.Grad()
		if err != nil {
			continue // not a differentiable value
		}
		v, err := grads[i]()
		if err != nil {
			return err
		}
		dd, err := float32Data("dense32 DoDiff", d, v)
		if err != nil {
			return err
		}
		if len(dd[0]) != len(dd[1]) {
			return fmt.Errorf("layers: dense32 DoDiff: %d derivative values for %d gradient values", len(dd[0]), len(dd[1]))
		}
		for j, x := range dd[1] {
			dd[0][j] += x
		}
	}
	return nil
}

// actGradOp computes dz = g ⊙ a'(z) from the output y = a(z) and its
// gradient g: g for Identity, g where y > 0 (else 0) for ReLU, g·(1 − y²)
// for Tanh, g·y·(1 − y) for Sigmoid.
type actGradOp struct {
	act Activation
	buffer
}

func (op *actGradOp) Arity() int    { return 2 }
func (op *actGradOp) Type() hm.Type { return hm.NewFnType(matrixType, matrixType, matrixType) }
func (op *actGradOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("layers: dense32 activation gradient takes 2 inputs, got %d", len(inputs))
	}
	s, ok := inputs[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("layers: dense32 activation gradient: input shape %v", inputs[0])
	}
	return s.Clone(), nil
}
func (op *actGradOp) ReturnsPtr() bool      { return false }
func (op *actGradOp) CallsExtern() bool     { return false }
func (op *actGradOp) OverwritesInput() int  { return -1 }
func (op *actGradOp) WriteHash(h hash.Hash) { fmt.Fprintf(h, "layers.dense32grad(%v)", op.act) }
func (op *actGradOp) Hashcode() uint32      { return opHash(op) }
func (op *actGradOp) String() string        { return fmt.Sprintf("dense32grad(%v)", op.act) }

func (op *actGradOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *actGradOp) UsePreallocDo(prealloc gorgonia.Value, inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("layers: dense32 activation gradient takes 2 inputs, got %d", len(inputs))
	}
	d, err := float32Data("dense32 activation gradient", inputs...)
	if err != nil {
		return nil, err
	}
	y, g := d[0], d[1]
	if len(g) != len(y) {
		return nil, fmt.Errorf("layers: dense32 activation gradient: %d outputs, %d gradients", len(y), len(g))
	}
	s := inputs[0].Shape()
	out := op.output(prealloc, s...)
	dz := out.Data().([]float32)[:len(y)]
	par.For(len(y), elementGrain, &actGradBody{dz: dz, y: y, g: g, act: op.act})
	return out, nil
}

// elementGrain is the least number of elements a worker of an
// elementwise pass takes: below it, handing work to another core costs
// more than it saves.
const elementGrain = 8192

// biasActBody applies the bias and the activation to rows of y.
type biasActBody struct {
	y, b []float32
	act  Activation
}

func (o *biasActBody) Run(lo, hi int) {
	w := len(o.b)
	biasAct32(o.y[lo*w:hi*w], o.b, o.act)
}

// actGradBody computes dz = g ⊙ a'(z) from y = a(z) on [lo, hi).
type actGradBody struct {
	dz, y, g []float32
	act      Activation
}

func (o *actGradBody) Run(lo, hi int) {
	dz, y, g := o.dz[lo:hi], o.y[lo:hi], o.g[lo:hi]
	switch o.act {
	case ReLU:
		// y = max(z, 0) ≥ +0: g where y > 0, +0 elsewhere (AVX2 where
		// there is one).
		sgemm.ReLUGrad(dz, y, g)
	case Tanh:
		for i, v := range y {
			dz[i] = g[i] * (1 - v*v)
		}
	case Sigmoid:
		for i, v := range y {
			dz[i] = g[i] * (v * (1 - v))
		}
	default:
		copy(dz, g)
	}
}

// gemmOp computes op(A)·op(B) for matrices A and B, op(X) = Xᵀ where
// transA or transB says, on the fused layers' float32 kernels.
type gemmOp struct {
	transA, transB bool
	buffer
}

func (op *gemmOp) Arity() int    { return 2 }
func (op *gemmOp) Type() hm.Type { return hm.NewFnType(matrixType, matrixType, matrixType) }
func (op *gemmOp) dims(a, b tensor.Shape) (m, n, k int, err error) {
	if len(a) != 2 || len(b) != 2 {
		return 0, 0, 0, fmt.Errorf("layers: dense32 product of shapes %v and %v", a, b)
	}
	m, k = a[0], a[1]
	if op.transA {
		m, k = k, m
	}
	kb, n := b[0], b[1]
	if op.transB {
		kb, n = n, kb
	}
	if kb != k {
		return 0, 0, 0, fmt.Errorf("layers: dense32 product of shapes %v and %v (transposed %v, %v)", a, b, op.transA, op.transB)
	}
	return m, n, k, nil
}
func (op *gemmOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("layers: dense32 product takes 2 inputs, got %d", len(inputs))
	}
	a, ok1 := inputs[0].(tensor.Shape)
	b, ok2 := inputs[1].(tensor.Shape)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("layers: dense32 product: input shapes %v, %v", inputs[0], inputs[1])
	}
	m, n, _, err := op.dims(a, b)
	if err != nil {
		return nil, err
	}
	return tensor.Shape{m, n}, nil
}
func (op *gemmOp) ReturnsPtr() bool     { return false }
func (op *gemmOp) CallsExtern() bool    { return false }
func (op *gemmOp) OverwritesInput() int { return -1 }
func (op *gemmOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "layers.dense32gemm(%v,%v)", op.transA, op.transB)
}
func (op *gemmOp) Hashcode() uint32 { return opHash(op) }
func (op *gemmOp) String() string {
	return fmt.Sprintf("dense32gemm(%v,%v)", op.transA, op.transB)
}

func (op *gemmOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *gemmOp) UsePreallocDo(prealloc gorgonia.Value, inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("layers: dense32 product takes 2 inputs, got %d", len(inputs))
	}
	d, err := float32Data("dense32 product", inputs...)
	if err != nil {
		return nil, err
	}
	as, bs := inputs[0].Shape(), inputs[1].Shape()
	m, n, k, err := op.dims(as, bs)
	if err != nil {
		return nil, err
	}
	if len(d[0]) != as.TotalSize() || len(d[1]) != bs.TotalSize() {
		return nil, fmt.Errorf("layers: dense32 product: %d and %d values for shapes %v and %v", len(d[0]), len(d[1]), as, bs)
	}
	tA, tB := blas.NoTrans, blas.NoTrans
	if op.transA {
		tA = blas.Trans
	}
	if op.transB {
		tB = blas.Trans
	}
	out := op.output(prealloc, m, n)
	blas32.Sgemm(tA, tB, m, n, k, 1, d[0], as[1], d[1], bs[1], 0, out.Data().([]float32), n)
	return out, nil
}

// colSumOp sums the rows of a matrix: the gradient of a bias added to
// every row. The sum runs over the rows in order.
type colSumOp struct{ buffer }

func (op *colSumOp) Arity() int    { return 1 }
func (op *colSumOp) Type() hm.Type { return hm.NewFnType(matrixType, vectorType) }
func (op *colSumOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("layers: dense32 column sum takes 1 input, got %d", len(inputs))
	}
	s, ok := inputs[0].(tensor.Shape)
	if !ok || len(s) != 2 {
		return nil, fmt.Errorf("layers: dense32 column sum: input shape %v", inputs[0])
	}
	return tensor.Shape{s[1]}, nil
}
func (op *colSumOp) ReturnsPtr() bool      { return false }
func (op *colSumOp) CallsExtern() bool     { return false }
func (op *colSumOp) OverwritesInput() int  { return -1 }
func (op *colSumOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "layers.dense32colsum") }
func (op *colSumOp) Hashcode() uint32      { return opHash(op) }
func (op *colSumOp) String() string        { return "dense32colsum" }

func (op *colSumOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

func (op *colSumOp) UsePreallocDo(prealloc gorgonia.Value, inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("layers: dense32 column sum takes 1 input, got %d", len(inputs))
	}
	d, err := float32Data("dense32 column sum", inputs...)
	if err != nil {
		return nil, err
	}
	s := inputs[0].Shape()
	if len(s) != 2 || len(d[0]) != s.TotalSize() {
		return nil, fmt.Errorf("layers: dense32 column sum: %d values for shape %v", len(d[0]), s)
	}
	out := op.output(prealloc, s[1])
	sum := out.Data().([]float32)
	clear(sum)
	sgemm.ColSum(sum, d[0]) // the rows in order: the bits of a plain loop
	return out, nil
}
