package layers

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/isfinite"
)

// ApplyValues applies the activation to every value of z in place, in plain
// Go: the same function Apply adds to a graph (ReLU maps only negative
// values to 0, so ReLU(−0) = −0 as in gorgonia).
func (a Activation) ApplyValues(z []float64) {
	switch a {
	case ReLU:
		for i, v := range z {
			if v < 0 {
				z[i] = 0
			}
		}
	case Tanh:
		for i, v := range z {
			z[i] = math.Tanh(v)
		}
	case Sigmoid:
		for i, v := range z {
			z[i] = 1 / (1 + math.Exp(-v))
		}
	}
}

// Predict evaluates the layer a(xW + b) in plain Go, without a graph, from
// the current values of W and b, for x of shape (rows, in); it returns a
// new (rows, out) matrix. A float32 layer computes in float64 from its
// weights converted to float64, so its results agree with the float32
// graph only to float32 rounding.
//
// It returns an error for a nil or empty x, a wrong number of columns, a
// non-finite value in x, or an output that is not finite (overflow).
func (d *Dense) Predict(x *mat.Dense) (*mat.Dense, error) {
	if err := checkPredictInput("Dense.Predict", x, d.in); err != nil {
		return nil, err
	}
	out := d.predict(x)
	if err := checkFinite(out); err != nil {
		return nil, fmt.Errorf("layers: Dense.Predict: the output %w (the weights or inputs are too large)", err)
	}
	return out, nil
}

// predict returns a(xW + b) for x with d.in columns.
func (d *Dense) predict(x *mat.Dense) *mat.Dense {
	rows, _ := x.Dims()
	w, b := d.float64Weights()
	z := mat.NewDense(rows, d.out, nil)
	xr := x.RawMatrix()
	data := z.RawMatrix().Data
	// The product on enforce's float64 kernel, as the float64 graphs'
	// (internal/fastblas), rather than gonum's Dgemm.
	blas64.Dgemm(blas.NoTrans, blas.NoTrans, rows, d.out, d.in, 1, xr.Data, xr.Stride, w, d.out, 0, data, d.out)
	for r := range rows {
		row := data[r*d.out : (r+1)*d.out]
		for j := range row {
			row[j] += b[j]
		}
		d.act.ApplyValues(row)
	}
	return z
}

// float64Weights returns W (row-major) and b as float64 slices: the nodes'
// own backing slices for a float64 layer (no copy), converted copies for a
// float32 layer.
func (d *Dense) float64Weights() (w, b []float64) {
	if v, ok := d.w.Value().Data().([]float64); ok {
		return v, d.b.Value().Data().([]float64)
	}
	return nodeFloat64s(d.w), nodeFloat64s(d.b)
}

// Predict evaluates the network in plain Go, without a graph, from the
// current weights, for x of shape (rows, Sizes()[0]); it returns a new
// (rows, Sizes()[len−1]) matrix. It computes what Forward's graph
// computes, so the two agree to rounding: a float64 MLP layer by layer
// with enforce's float64 matrix product (the one gorgonia's float64 graphs
// use in the default build); a float32 MLP in float32 arithmetic (x
// rounded to float32) on enforce's single-precision matrix product, the
// one gorgonia's float32 graphs use in the default build, with the rows
// split over the cores and each block of rows carried through every layer
// while it is in cache. It is deterministic, returns the same bits whatever
// GOMAXPROCS is, and is safe for concurrent use while the weights do not
// change. It returns an error under the conditions of
// Dense.Predict.
func (m *MLP) Predict(x *mat.Dense) (*mat.Dense, error) {
	if err := checkPredictInput("MLP.Predict", x, m.sizes[0]); err != nil {
		return nil, err
	}
	rows, _ := x.Dims()
	h := mat.NewDense(rows, m.sizes[len(m.sizes)-1], nil)
	return h, m.predictTo(h, x, "MLP.Predict")
}

// PredictTo is Predict writing its result into dst, which must be a
// (rows, Sizes()[len−1]) matrix: the same values, bit for bit, without
// allocating the output. A float32 MLP then allocates nothing that grows
// with the batch, which serves predictions made in a loop (see
// train.Model.BackboneTo for what it saves). On an error dst may hold
// partial results.
func (m *MLP) PredictTo(dst, x *mat.Dense) error {
	if err := checkPredictInput("MLP.PredictTo", x, m.sizes[0]); err != nil {
		return err
	}
	rows, _ := x.Dims()
	if dst == nil {
		return errors.New("layers: MLP.PredictTo: nil destination")
	}
	if r, c := dst.Dims(); r != rows || c != m.sizes[len(m.sizes)-1] {
		return fmt.Errorf("layers: MLP.PredictTo: destination is %d×%d, want %d×%d", r, c, rows, m.sizes[len(m.sizes)-1])
	}
	return m.predictTo(dst, x, "MLP.PredictTo")
}

// predictTo evaluates the network for the checked x into dst, of the
// output's shape.
func (m *MLP) predictTo(dst, x *mat.Dense, method string) error {
	if m.Dtype() == tensor.Float32 {
		m.predict32(dst, x)
	} else {
		h := x
		for _, l := range m.layers {
			h = l.predict(h)
		}
		dst.Copy(h)
	}
	if err := checkFinite(dst); err != nil {
		return fmt.Errorf("layers: %s: the output %w (the weights or inputs are too large)", method, err)
	}
	return nil
}

// checkPredictInput checks that x is a non-empty finite matrix with cols
// columns.
func checkPredictInput(method string, x *mat.Dense, cols int) error {
	if x == nil || x.IsEmpty() {
		return fmt.Errorf("layers: %s: nil or empty input", method)
	}
	if _, c := x.Dims(); c != cols {
		return fmt.Errorf("layers: %s: input has %d columns, want %d", method, c, cols)
	}
	if err := checkFinite(x); err != nil {
		return fmt.Errorf("layers: %s: the input %w", method, err)
	}
	return nil
}

// checkFinite returns an error naming the first non-finite entry of a.
func checkFinite(a *mat.Dense) error {
	r, c := a.Dims()
	for i := range r {
		if isfinite.Float64s(a.RawRowView(i)) { // AVX2 where there is one; the loop below names the entry
			continue
		}
		for j, v := range a.RawRowView(i) {
			if v-v != 0 { // NaN for a NaN or an infinity, 0 otherwise
				return fmt.Errorf("holds %v at (%d, %d) of %d×%d", v, i, j, r, c)
			}
		}
	}
	return nil
}
