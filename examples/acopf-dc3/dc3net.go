package main

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	"sync/atomic"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/dc3"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/train"
)

// dc3Net is DC3's ACOPF network with DC3's completion, as a train.Backbone:
// an MLP with sigmoid outputs predicts the partial variables y_p (Pg of
// the non-reference generators, Vm of the generator buses) mapped into
// their bounds, y_p = lo + (hi − lo)·σ(z) (DC3's complete_partial), and
// dc3.ACOPFCompletion solves the power flow for the rest, with the
// implicit-function gradient. With corr set, the training graph adds
// DC3's training-time correction (dc3.ACOPFCompletion.CorrectNode);
// Predict (train.DensePredictor, which train.Model.Predict uses) is the
// completed point without it, as DC3's NNSolver, and the caller applies
// the test-time correction (dc3.ACOPFCompletion.Correct).
type dc3Net struct {
	mlp      *layers.MLP
	comp     *dc3.ACOPFCompletion
	corr     *dc3.Correction
	lo, span []float64
}

var dc3Consts atomic.Int64

// newDC3Backbone returns the train.BackboneFunc of dc3Net for model m:
// hidden widths width, width, ReLU, weights from seed.
func newDC3Backbone(m *acopf.Model, width int, seed uint64, corr *dc3.Correction) (train.BackboneFunc, *dc3.ACOPFCompletion, error) {
	comp, err := dc3.NewACOPFCompletion(m)
	if err != nil {
		return nil, nil, err
	}
	partial := comp.Partial()
	lo, span := comp.PartialBounds()
	nx, _ := m.Dims()
	return func(g *gorgonia.ExprGraph) (train.Backbone, error) {
		mlp, err := layers.NewMLP(g, []int{nx, width, width, len(partial)}, layers.ReLU, layers.Sigmoid, layers.WithSeed(seed), layers.WithName("dc3acopf"))
		if err != nil {
			return nil, err
		}
		return &dc3Net{mlp: mlp, comp: comp, corr: corr, lo: lo, span: span}, nil
	}, comp, nil
}

func (d *dc3Net) Learnables() gorgonia.Nodes { return d.mlp.Learnables() }

func (d *dc3Net) Forward(x *gorgonia.Node) (*gorgonia.Node, error) {
	z, err := d.mlp.Forward(x)
	if err != nil {
		return nil, err
	}
	n, k := x.Shape()[0], len(d.lo)
	rep := func(v []float64, name string) *gorgonia.Node {
		b := make([]float64, n*k)
		for i := range n {
			copy(b[i*k:], v)
		}
		return gorgonia.NewMatrix(x.Graph(), tensor.Float64, gorgonia.WithShape(n, k),
			gorgonia.WithName(fmt.Sprintf("%s_%d", name, dc3Consts.Add(1))),
			gorgonia.WithValue(tensor.New(tensor.WithShape(n, k), tensor.WithBacking(b))))
	}
	s, err := gorgonia.HadamardProd(z, rep(d.span, "dc3_span"))
	if err != nil {
		return nil, err
	}
	yp, err := gorgonia.Add(s, rep(d.lo, "dc3_lo"))
	if err != nil {
		return nil, err
	}
	y, err := d.comp.Node(x, yp)
	if err != nil || d.corr == nil {
		return y, err
	}
	return d.comp.CorrectNode(x, y, *d.corr)
}

// Predict is the completed point of the network's partial variables for
// each row of x, Newton's method started from the flat start as in the
// graph, without correction.
func (d *dc3Net) Predict(x *mat.Dense) (*mat.Dense, error) {
	z, err := d.mlp.Predict(x)
	if err != nil {
		return nil, err
	}
	n, k := z.Dims()
	yp := mat.NewDense(n, k, nil)
	for i := range n {
		for j, v := range z.RawRowView(i) {
			yp.Set(i, j, d.lo[j]+d.span[j]*v)
		}
	}
	return d.comp.CompleteFlat(x, yp)
}
