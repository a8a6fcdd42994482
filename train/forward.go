package train

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// forward evaluates the backbone from the current weights: x (rows×nx,
// original units) → standardised input → backbone → ŷ in original units.
// A backbone that is a DensePredictor (an MLP: layers.MLP.Predict) runs in
// plain Go; any other runs on a graph built for the call.
func (m *Model) forward(x *mat.Dense) (*mat.Dense, error) {
	z := mat.NewDense(x.RawMatrix().Rows, m.cfg.ny, nil)
	if err := m.forwardTo(z, x); err != nil {
		return nil, err
	}
	return z, nil
}

// forwardTo is forward writing ŷ into z (rows×ny). A DensePredictorTo
// (layers.MLP.PredictTo) writes into z directly; any other backbone's
// result is copied there.
func (m *Model) forwardTo(z, x *mat.Dense) error {
	h := x
	if m.sx != nil {
		h = mat.NewDense(x.RawMatrix().Rows, m.cfg.nx, nil)
		m.sx.Transform(h, x)
	}
	rows := x.RawMatrix().Rows
	switch p := m.net.(type) {
	case DensePredictorTo:
		if err := p.PredictTo(z, h); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	case DensePredictor:
		out, err := p.Predict(h)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		if r, c := out.Dims(); r != rows || c != m.cfg.ny {
			return fmt.Errorf("train: the backbone's Predict returned %d×%d, want %d×%d", r, c, rows, m.cfg.ny)
		}
		z.Copy(out)
	default:
		out, err := m.graphForward(h)
		if err != nil {
			return err
		}
		z.Copy(out)
	}
	if m.sy != nil {
		m.sy.Inverse(z, z)
	}
	return nil
}
