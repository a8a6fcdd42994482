package train

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/layers"
)

// Backbone is the network of a Model: it maps a batch of inputs x, a
// (batch, nx) node of the model's precision (float64, or float32 with
// Config.Precision enforce.Float32), to a (batch, ny) node of predictions
// of the same dtype on x's graph. *layers.MLP is a Backbone; any gorgonia
// model with learnable tensors of that dtype can be one.
//
// The model trains the nodes Learnables returns and identifies them by
// name and shape, which must therefore be the same every time the
// BackboneFunc that built it runs, and unique in the graph.
type Backbone interface {
	Forward(x *gorgonia.Node) (*gorgonia.Node, error)
	Learnables() gorgonia.Nodes
}

// DensePredictor is implemented by a Backbone that can also evaluate
// itself in plain Go from the current values of its learnables, such as
// *layers.MLP (see layers.MLP.Predict). Model.Backbone and Model.Predict
// use it when the backbone has it, and otherwise run the backbone on a
// gorgonia graph built for the call.
type DensePredictor interface {
	Predict(x *mat.Dense) (*mat.Dense, error)
}

// DensePredictorTo is a DensePredictor that can also write its prediction
// into a caller's matrix, such as *layers.MLP (layers.MLP.PredictTo).
// Model.BackboneTo uses it to predict without allocating the output.
type DensePredictorTo interface {
	DensePredictor
	PredictTo(dst, x *mat.Dense) error
}

// BackboneFunc builds a fresh Backbone, with initial weights, on g. A
// Model calls it once in New (the weights it draws there are the initial
// weights) and once for every graph it builds afterwards (each training
// batch size, graph-based prediction), replacing the weights of those
// later calls by the model's own. It must build learnables with the same
// names and shapes, in the same order, on every call.
type BackboneFunc func(g *gorgonia.ExprGraph) (Backbone, error)

// Param describes a learnable tensor of a Model's backbone.
type Param struct {
	// Name is the name of the learnable node.
	Name string
	// Shape is its shape.
	Shape []int
}

// Params returns the name and shape of every learnable tensor of the
// backbone, in the order of Weights, followed by θ's (ThetaName, shape
// [ny]) when the model learns its projection weights.
func (m *Model) Params() []Param {
	if m == nil {
		return nil
	}
	ps := make([]Param, len(m.params))
	for i, p := range m.params {
		ps[i] = Param{Name: m.names[i], Shape: slices.Clone([]int(p.Shape()))}
	}
	return ps
}

// mlpBuilder returns the BackboneFunc of the MLP that r describes.
func mlpBuilder(r resolved) BackboneFunc {
	return func(g *gorgonia.ExprGraph) (Backbone, error) {
		return layers.NewMLP(g, r.Sizes, r.Hidden, r.Output,
			layers.WithSeed(r.Seed), layers.WithInit(r.Init), layers.WithName("mlp"), layers.WithDtype(r.dtype))
	}
}

// buildBackbone calls build on g, turning a panic into an error, and checks
// the learnables: at least one, tensors of dtype dt, unique names.
func buildBackbone(build BackboneFunc, g *gorgonia.ExprGraph, dt tensor.Dtype) (b Backbone, ps []*tensor.Dense, names []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, ps, names, err = nil, nil, nil, fmt.Errorf("train: building the backbone: panic: %v", r)
		}
	}()
	if b, err = build(g); err != nil {
		return nil, nil, nil, fmt.Errorf("train: building the backbone: %w", err)
	}
	if b == nil {
		return nil, nil, nil, errors.New("train: building the backbone: the BackboneFunc returned a nil Backbone")
	}
	ls := b.Learnables()
	if len(ls) == 0 {
		return nil, nil, nil, errors.New("train: the backbone has no learnables")
	}
	seen := map[string]bool{}
	for _, n := range ls {
		if n == nil {
			return nil, nil, nil, errors.New("train: the backbone has a nil learnable")
		}
		t, ok := n.Value().(*tensor.Dense)
		if !ok || t.Dtype() != dt {
			return nil, nil, nil, fmt.Errorf("train: learnable %q must hold a %v *tensor.Dense (Config.Precision), holds %s", n.Name(), dt, describeValue(n.Value()))
		}
		if seen[n.Name()] {
			return nil, nil, nil, fmt.Errorf("train: two learnables are named %q", n.Name())
		}
		seen[n.Name()] = true
		ps = append(ps, t)
		names = append(names, n.Name())
	}
	return b, ps, names, nil
}

// attach builds the backbone on g and binds its learnables to the model's
// weight tensors, after checking that they have the model's names and
// shapes.
func (m *Model) attach(g *gorgonia.ExprGraph) (Backbone, gorgonia.Nodes, error) {
	b, ps, names, err := buildBackbone(m.build, g, m.cfg.dtype)
	if err != nil {
		return nil, nil, err
	}
	nb := m.backboneParams()
	if !slices.Equal(names, m.names[:nb]) {
		return nil, nil, fmt.Errorf("train: the BackboneFunc built learnables %q, first %q", names, m.names[:nb])
	}
	ls := b.Learnables()
	for i, n := range ls {
		if !ps[i].Shape().Eq(m.params[i].Shape()) {
			return nil, nil, fmt.Errorf("train: learnable %q has shape %v, first %v", names[i], ps[i].Shape(), m.params[i].Shape())
		}
		if err := gorgonia.Let(n, m.params[i]); err != nil {
			return nil, nil, fmt.Errorf("train: sharing weight %q: %w", n.Name(), err)
		}
	}
	if nb < len(m.params) {
		ls = append(slices.Clip(ls), m.thetaNode(g))
	}
	return b, ls, nil
}

// forwardNode applies the backbone to x, checking the output's shape and
// that its dtype is x's.
func forwardNode(b Backbone, x *gorgonia.Node, ny int) (out *gorgonia.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("train: backbone Forward: panic: %v", r)
		}
	}()
	if out, err = b.Forward(x); err != nil {
		return nil, fmt.Errorf("train: backbone Forward: %w", err)
	}
	batch := x.Shape()[0]
	if out == nil || !out.Shape().Eq(tensor.Shape{batch, ny}) || out.Dtype() != x.Dtype() {
		return nil, fmt.Errorf("train: the backbone must map a (%d, %d) %v input to a (%d, %d) %v output, got %v", batch, x.Shape()[1], x.Dtype(), batch, ny, x.Dtype(), describe(out))
	}
	return out, nil
}

// describeValue names the type of a learnable's value, and its dtype when
// it is a tensor.
func describeValue(v gorgonia.Value) string {
	if t, ok := v.(*tensor.Dense); ok {
		return fmt.Sprintf("a %v *tensor.Dense", t.Dtype())
	}
	return fmt.Sprintf("%T", v)
}

func describe(n *gorgonia.Node) string {
	if n == nil {
		return "nil"
	}
	return fmt.Sprintf("shape %v dtype %v", n.Shape(), n.Dtype())
}

// graphForward evaluates the backbone on a graph built for h's rows (h in
// the network's input units) and returns its output.
func (m *Model) graphForward(h *mat.Dense) (out *mat.Dense, err error) {
	rows, cols := h.Dims()
	g := gorgonia.NewGraph()
	b, _, err := m.attach(g)
	if err != nil {
		return nil, err
	}
	xt := newTensor(m.cfg.dtype, rows, cols)
	setTensor(xt, h)
	x := gorgonia.NewMatrix(g, m.cfg.dtype, gorgonia.WithShape(rows, cols), gorgonia.WithName("x"), gorgonia.WithValue(xt))
	z, err := forwardNode(b, x, m.cfg.ny)
	if err != nil {
		return nil, err
	}
	if out, err = tap(z); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := runAll(vm); err != nil {
		return nil, fmt.Errorf("train: running the backbone: %w", err)
	}
	return out, nil
}
