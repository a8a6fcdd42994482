package layers

import (
	"fmt"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/graphguard"
)

// Dense is a fully connected layer y = a(xW + b) for a batch x of shape
// (batch, in), with weights W of shape (in, out), bias b of shape (out) added
// to every row, and activation a.
type Dense struct {
	w, b    *gorgonia.Node
	in, out int
	act     Activation
	dtype   tensor.Dtype
}

// NewDense adds the learnable nodes of a Dense layer to g. W is drawn as
// described by Init (default: He for ReLU, Glorot otherwise) from the seed
// set by WithSeed; b starts at zero.
func NewDense(g *gorgonia.ExprGraph, in, out int, act Activation, opts ...Option) (*Dense, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("layers: NewDense: nil graph")
	}
	prefix := cfg.name
	if prefix == "" {
		prefix = freePrefix(g, "dense", func(p string) string { return p + ".W" })
	}
	return newDense(g, in, out, act, cfg, prefix, 0)
}

// freePrefix returns base, or base_1, base_2, … : the first whose probe name
// is not yet used in g.
func freePrefix(g *gorgonia.ExprGraph, base string, probe func(string) string) string {
	p := base
	for k := 1; len(g.ByName(probe(p))) > 0; k++ {
		p = fmt.Sprintf("%s_%d", base, k)
	}
	return p
}

// newDense builds a layer whose weights are drawn from the PCG stream
// (cfg.seed, stream).
func newDense(g *gorgonia.ExprGraph, in, out int, act Activation, cfg config, prefix string, stream uint64) (d *Dense, err error) {
	if in <= 0 || out <= 0 {
		return nil, fmt.Errorf("layers: dense layer %q: sizes must be positive, got in=%d out=%d", prefix, in, out)
	}
	if !act.valid() {
		return nil, fmt.Errorf("layers: dense layer %q: invalid %v", prefix, act)
	}
	wName, bName := prefix+".W", prefix+".b"
	for _, name := range []string{wName, bName} {
		if len(g.ByName(name)) > 0 {
			return nil, fmt.Errorf("layers: dense layer %q: a node named %q is already in the graph", prefix, name)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("layers: dense layer %q: gorgonia panicked: %v", prefix, r)
		}
	}()

	rng := rand.New(rand.NewPCG(cfg.seed, stream))
	a := cfg.init.bound(in, out, act)
	w := make([]float64, in*out)
	for i := range w {
		w[i] = a * (2*rng.Float64() - 1)
	}
	wt := tensor.New(tensor.WithShape(in, out), tensor.WithBacking(fromFloat64s(cfg.dtype, w)))
	bt := tensor.New(tensor.WithShape(out), tensor.WithBacking(fromFloat64s(cfg.dtype, make([]float64, out))))
	return &Dense{
		w:     gorgonia.NewMatrix(g, cfg.dtype, gorgonia.WithShape(in, out), gorgonia.WithName(wName), gorgonia.WithValue(wt)),
		b:     gorgonia.NewVector(g, cfg.dtype, gorgonia.WithShape(out), gorgonia.WithName(bName), gorgonia.WithValue(bt)),
		in:    in,
		out:   out,
		act:   act,
		dtype: cfg.dtype,
	}, nil
}

// Forward adds a(xW + b) to the graph for x of shape (batch, in) and returns
// the node of shape (batch, out). x must be in the layer's graph and have the
// layer's dtype. A float64 layer is gorgonia's Mul, BroadcastAdd and the
// activation's operation; a float32 layer is one fused operation on
// enforce's float32 matrix product, with a hand-written gradient (three
// matrix products and a column sum; see ReLU for its derivative at 0).
func (d *Dense) Forward(x *gorgonia.Node) (y *gorgonia.Node, err error) {
	if err := d.checkInput(x); err != nil {
		return nil, err
	}
	defer graphguard.Recover(&y, &err, "layers: Dense.Forward")
	if d.dtype == tensor.Float32 {
		if y, err = gorgonia.ApplyOp(&affineOp{act: d.act, in: d.in, out: d.out}, x, d.w, d.b); err != nil {
			return nil, fmt.Errorf("layers: Dense.Forward: %w", err)
		}
		return y, nil
	}
	xw, err := gorgonia.Mul(x, d.w)
	if err != nil {
		return nil, fmt.Errorf("layers: Dense.Forward: %w", err)
	}
	z, err := gorgonia.BroadcastAdd(xw, d.b, nil, []byte{0})
	if err != nil {
		return nil, fmt.Errorf("layers: Dense.Forward: %w", err)
	}
	return d.act.Apply(z)
}

func (d *Dense) checkInput(x *gorgonia.Node) error {
	switch {
	case x == nil:
		return fmt.Errorf("layers: Dense.Forward: nil input")
	case x.Graph() != d.w.Graph():
		return fmt.Errorf("layers: Dense.Forward: input %q is not in the layer's graph", x.Name())
	case !x.IsMatrix():
		return fmt.Errorf("layers: Dense.Forward: input %q must be a (batch, %d) matrix, got shape %v", x.Name(), d.in, x.Shape())
	case x.Shape()[1] != d.in:
		return fmt.Errorf("layers: Dense.Forward: input %q has %d columns, want %d", x.Name(), x.Shape()[1], d.in)
	case x.Dtype() != d.dtype:
		return fmt.Errorf("layers: Dense.Forward: input %q has dtype %v, want %v", x.Name(), x.Dtype(), d.dtype)
	}
	return nil
}

// Learnables returns the layer's learnable nodes, W then b.
func (d *Dense) Learnables() gorgonia.Nodes { return gorgonia.Nodes{d.w, d.b} }

// Weight returns the node of W (in×out).
func (d *Dense) Weight() *gorgonia.Node { return d.w }

// Bias returns the node of b (out).
func (d *Dense) Bias() *gorgonia.Node { return d.b }

// Dims returns the layer's input and output sizes.
func (d *Dense) Dims() (in, out int) { return d.in, d.out }

// Activation returns the layer's activation.
func (d *Dense) Activation() Activation { return d.act }

// Dtype returns the dtype of the layer's weights.
func (d *Dense) Dtype() tensor.Dtype { return d.dtype }

// Weights returns copies of the current values of W (row-major, in·out
// entries) and b (out entries), converted to float64.
func (d *Dense) Weights() [][]float64 {
	return [][]float64{nodeFloat64s(d.w), nodeFloat64s(d.b)}
}

// SetWeights overwrites W and b with w[0] (row-major, in·out entries) and
// w[1] (out entries), converted to the layer's dtype. The values are copied
// into the nodes' existing tensors, so machines already built on the graph
// see them. Nothing is written if a length is wrong.
func (d *Dense) SetWeights(w [][]float64) error {
	if err := d.checkWeights(w); err != nil {
		return err
	}
	d.setWeights(w)
	return nil
}

func (d *Dense) checkWeights(w [][]float64) error {
	if len(w) != 2 {
		return fmt.Errorf("layers: Dense.SetWeights: got %d slices, want 2 (W, b)", len(w))
	}
	if len(w[0]) != d.in*d.out || len(w[1]) != d.out {
		return fmt.Errorf("layers: Dense.SetWeights: got lengths (%d, %d), want (%d, %d)", len(w[0]), len(w[1]), d.in*d.out, d.out)
	}
	return nil
}

func (d *Dense) setWeights(w [][]float64) {
	setNodeFloat64s(d.w, w[0])
	setNodeFloat64s(d.b, w[1])
}

// nodeFloat64s returns a float64 copy of the value of a learnable node
// built by this package.
func nodeFloat64s(n *gorgonia.Node) []float64 {
	switch v := n.Value().Data().(type) {
	case []float64:
		return append([]float64(nil), v...)
	case []float32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	panic(fmt.Sprintf("layers: node %q holds %T", n.Name(), n.Value().Data()))
}

// setNodeFloat64s copies src into the value of a learnable node built by
// this package; the caller has checked the length.
func setNodeFloat64s(n *gorgonia.Node, src []float64) {
	switch v := n.Value().Data().(type) {
	case []float64:
		copy(v, src)
	case []float32:
		for i, x := range src {
			v[i] = float32(x)
		}
	default:
		panic(fmt.Sprintf("layers: node %q holds %T", n.Name(), n.Value().Data()))
	}
}
