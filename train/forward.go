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
	h := x
	if m.sx != nil {
		h = mat.NewDense(x.RawMatrix().Rows, m.cfg.nx, nil)
		m.sx.Transform(h, x)
	}
	var z *mat.Dense
	var err error
	if p, ok := m.net.(DensePredictor); ok {
		if z, err = p.Predict(h); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		if r, c := z.Dims(); r != x.RawMatrix().Rows || c != m.cfg.ny {
			return nil, fmt.Errorf("train: the backbone's Predict returned %d×%d, want %d×%d", r, c, x.RawMatrix().Rows, m.cfg.ny)
		}
	} else if z, err = m.graphForward(h); err != nil {
		return nil, err
	}
	if m.sy != nil {
		m.sy.Inverse(z, z)
	}
	return z, nil
}
