package layers

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MLP is a multilayer perceptron: a chain of Dense layers with sizes
// [in, h1, …, out], the hidden activation after every layer but the last and
// the output activation after the last.
type MLP struct {
	layers         []*Dense
	sizes          []int
	hidden, output Activation
	packed         *packCache // a float32 MLP's weights packed for Predict
}

// NewMLP adds the learnable nodes of an MLP with layer sizes
// sizes = [in, h1, …, out] (at least two entries, all positive) to g.
// Layer i draws its weights from the PCG stream (seed, i), so layer 0 of an
// MLP equals a Dense layer built with the same seed.
func NewMLP(g *gorgonia.ExprGraph, sizes []int, hidden, output Activation, opts ...Option) (*MLP, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, fmt.Errorf("layers: NewMLP: nil graph")
	}
	if len(sizes) < 2 {
		return nil, fmt.Errorf("layers: NewMLP: need at least 2 sizes [in, …, out], got %v", sizes)
	}
	for _, s := range sizes {
		if s <= 0 {
			return nil, fmt.Errorf("layers: NewMLP: sizes must be positive, got %v", sizes)
		}
	}
	for _, a := range []Activation{hidden, output} {
		if !a.valid() {
			return nil, fmt.Errorf("layers: NewMLP: invalid %v", a)
		}
	}
	prefix := cfg.name
	if prefix == "" {
		prefix = freePrefix(g, "mlp", func(p string) string { return p + ".0.W" })
	}
	m := &MLP{packed: new(packCache),
		layers: make([]*Dense, len(sizes)-1),
		sizes:  append([]int(nil), sizes...),
		hidden: hidden,
		output: output,
	}
	for i := range m.layers {
		act := hidden
		if i == len(m.layers)-1 {
			act = output
		}
		name := fmt.Sprintf("%s.%d", prefix, i)
		if m.layers[i], err = newDense(g, sizes[i], sizes[i+1], act, cfg, name, uint64(i)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Forward adds the network to the graph for x of shape (batch, in) and
// returns the node of shape (batch, out).
func (m *MLP) Forward(x *gorgonia.Node) (*gorgonia.Node, error) {
	h := x
	for _, l := range m.layers {
		var err error
		if h, err = l.Forward(h); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Learnables returns the learnable nodes W0, b0, W1, b1, … in layer order.
func (m *MLP) Learnables() gorgonia.Nodes {
	ns := make(gorgonia.Nodes, 0, 2*len(m.layers))
	for _, l := range m.layers {
		ns = append(ns, l.Learnables()...)
	}
	return ns
}

// Layers returns the MLP's layers in order. The slice is a copy; the layers
// are shared.
func (m *MLP) Layers() []*Dense { return append([]*Dense(nil), m.layers...) }

// Sizes returns a copy of the layer sizes [in, h1, …, out].
func (m *MLP) Sizes() []int { return append([]int(nil), m.sizes...) }

// Hidden returns the activation of the hidden layers.
func (m *MLP) Hidden() Activation { return m.hidden }

// Output returns the activation of the last layer.
func (m *MLP) Output() Activation { return m.output }

// Dtype returns the dtype of the weights.
func (m *MLP) Dtype() tensor.Dtype { return m.layers[0].dtype }

// NumParams returns the number of learnable scalars, Σ_i (sizes[i]+1)·sizes[i+1].
func (m *MLP) NumParams() int {
	n := 0
	for _, l := range m.layers {
		n += (l.in + 1) * l.out
	}
	return n
}

// Weights returns copies of the current weights, converted to float64, in
// the order of Learnables: W0 (row-major, sizes[0]·sizes[1] entries), b0,
// W1, b1, …
func (m *MLP) Weights() [][]float64 {
	w := make([][]float64, 0, 2*len(m.layers))
	for _, l := range m.layers {
		w = append(w, l.Weights()...)
	}
	return w
}

// SetWeights overwrites the weights with w, laid out as Weights returns
// them, converting to the MLP's dtype. The values are copied into the
// nodes' existing tensors, so machines already built on the graph see them.
// Nothing is written if any length is wrong.
func (m *MLP) SetWeights(w [][]float64) error {
	if len(w) != 2*len(m.layers) {
		return fmt.Errorf("layers: MLP.SetWeights: got %d slices, want %d (W, b per layer)", len(w), 2*len(m.layers))
	}
	for i, l := range m.layers {
		if err := l.checkWeights(w[2*i : 2*i+2]); err != nil {
			return fmt.Errorf("layers: MLP.SetWeights: layer %d: %w", i, err)
		}
	}
	for i, l := range m.layers {
		l.setWeights(w[2*i : 2*i+2])
	}
	return nil
}
