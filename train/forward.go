package train

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// forwardTo evaluates the backbone from the current weights: x (rows×nx,
// original units) → standardised input → backbone → ŷ in original units.
// A backbone that is a DensePredictor (an MLP: layers.MLP.Predict) runs in
// plain Go; any other runs on a graph built for the call. It writes ŷ
// into z (rows×ny), or, for a nil z, into a matrix of its own, which it
// returns: a new one for a DensePredictorTo (layers.MLP.PredictTo), the
// backbone's own output otherwise, so that no output is copied unless the
// caller asked for it in z.
func (m *Model) forwardTo(z, x *mat.Dense) (*mat.Dense, error) {
	h := x
	rows := x.RawMatrix().Rows
	if m.sx != nil {
		n := rows * m.cfg.nx
		if m.mlp != nil {
			bp, _ := m.stdBufs.Get().(*[]float64)
			if bp == nil || cap(*bp) < n {
				b := make([]float64, n)
				bp = &b
			}
			defer m.stdBufs.Put(bp)
			h = mat.NewDense(rows, m.cfg.nx, (*bp)[:n])
		} else {
			h = mat.NewDense(rows, m.cfg.nx, nil)
		}
		m.sx.Transform(h, x)
	}
	var out *mat.Dense
	switch p := m.net.(type) {
	case DensePredictorTo:
		if z == nil {
			z = mat.NewDense(rows, m.cfg.ny, nil)
		}
		if err := p.PredictTo(z, h); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	case DensePredictor:
		var err error
		if out, err = p.Predict(h); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		if r, c := out.Dims(); r != rows || c != m.cfg.ny {
			return nil, fmt.Errorf("train: the backbone's Predict returned %d×%d, want %d×%d", r, c, rows, m.cfg.ny)
		}
	default:
		var err error
		if out, err = m.graphForward(h); err != nil {
			return nil, err
		}
	}
	switch {
	case out == nil: // written into z
	case z == nil:
		z = out
	default:
		z.Copy(out)
	}
	if m.sy != nil {
		m.sy.Inverse(z, z)
	}
	return z, nil
}
