package train

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/layers"
)

// forward evaluates the backbone in plain Go: x (rows×nx, original units)
// → standardised input → MLP → ŷ in original units. It reads the weights
// from the model's parameter tensors, so it always sees the latest values;
// it is deterministic (gonum's matrix product, a fixed order of
// operations) and allocates only its result and one matrix per layer.
func (m *Model) forward(x *mat.Dense) *mat.Dense {
	h := x
	if m.sx != nil {
		h = mat.NewDense(x.RawMatrix().Rows, m.cfg.nx, nil)
		m.sx.Transform(h, x)
	}
	ls := m.mlp.Layers()
	for i, l := range ls {
		in, out := l.Dims()
		w := mat.NewDense(in, out, m.params[2*i].Data().([]float64))
		b := m.params[2*i+1].Data().([]float64)
		rows, _ := h.Dims()
		z := mat.NewDense(rows, out, nil)
		z.Mul(h, w)
		act := m.cfg.Hidden
		if i == len(ls)-1 {
			act = m.cfg.Output
		}
		data := z.RawMatrix().Data
		for r := range rows {
			row := data[r*out : (r+1)*out]
			for j := range row {
				row[j] += b[j]
			}
			activate(act, row)
		}
		h = z
	}
	if m.sy != nil {
		m.sy.Inverse(h, h)
	}
	return h
}

// activate applies a to every value of z in place.
func activate(a layers.Activation, z []float64) {
	switch a {
	case layers.ReLU:
		for i, v := range z {
			if v < 0 {
				z[i] = 0
			}
		}
	case layers.Tanh:
		for i, v := range z {
			z[i] = math.Tanh(v)
		}
	case layers.Sigmoid:
		for i, v := range z {
			z[i] = 1 / (1 + math.Exp(-v))
		}
	}
}
