package train

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/isfinite"
)

// The model's tensors (weights, inputs and labels bound to a graph) hold
// float64 or float32 values, as Config.Precision says; the API and the
// optimiser's bookkeeping see float64. A float32 value converts to float64
// exactly, so copying out and back in loses nothing.

// newTensor returns a zero rows×cols tensor of dtype dt.
func newTensor(dt tensor.Dtype, rows, cols int) *tensor.Dense {
	if dt == tensor.Float32 {
		return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(make([]float32, rows*cols)))
	}
	return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(make([]float64, rows*cols)))
}

// setTensor copies a (rows×cols, the tensor's shape) into t, rounding to
// float32 for a float32 tensor.
func setTensor(t *tensor.Dense, a *mat.Dense) {
	r, c := a.Dims()
	switch d := t.Data().(type) {
	case []float64:
		mat.NewDense(r, c, d).Copy(a)
	case []float32:
		for i := range r {
			row, dst := a.RawRowView(i), d[i*c:(i+1)*c]
			for j, v := range row {
				dst[j] = float32(v)
			}
		}
	default:
		panic(fmt.Sprintf("train: tensor of %T", d)) // not reached: the model makes its tensors
	}
}

// setTensorRow copies v into row i of the rows×len(v) tensor t.
func setTensorRow(t *tensor.Dense, i int, v []float64) {
	switch d := t.Data().(type) {
	case []float64:
		copy(d[i*len(v):(i+1)*len(v)], v)
	case []float32:
		dst := d[i*len(v) : (i+1)*len(v)]
		for j, x := range v {
			dst[j] = float32(x)
		}
	default:
		panic(fmt.Sprintf("train: tensor of %T", d)) // not reached: the model makes its tensors
	}
}

// float64s returns the values of a float64 or float32 slice as a float64
// slice: v itself for a []float64, a converted copy for a []float32, and
// ok false for any other type.
func float64s(v any) (out []float64, ok bool) {
	switch d := v.(type) {
	case []float64:
		return d, true
	case []float32:
		out = make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return out, true
	}
	return nil, false
}

// copyFloat64s copies the values of the float64 or float32 slice src into
// dst, which has its length.
func copyFloat64s(dst []float64, src any) {
	switch d := src.(type) {
	case []float64:
		copy(dst, d)
	case []float32:
		for i, x := range d {
			dst[i] = float64(x)
		}
	default:
		panic(fmt.Sprintf("train: tensor of %T", d)) // not reached: the model makes its tensors
	}
}

// setFloat64s copies src into the float64 or float32 slice dst, rounding
// to float32 for a float32 dst.
func setFloat64s(dst any, src []float64) {
	switch d := dst.(type) {
	case []float64:
		copy(d, src)
	case []float32:
		for i, x := range src {
			d[i] = float32(x)
		}
	default:
		panic(fmt.Sprintf("train: tensor of %T", d)) // not reached: the model makes its tensors
	}
}

// finiteValues reports whether every value of the float64 or float32
// slice v is finite (false for any other type).
func finiteValues(v any) bool {
	switch d := v.(type) {
	case []float64:
		return isfinite.Float64s(d)
	case []float32:
		return isfinite.Float32s(d)
	}
	return false
}

// cloneValues returns a copy of the float64 or float32 slice v.
func cloneValues(v any) any {
	switch d := v.(type) {
	case []float64:
		return append([]float64(nil), d...)
	case []float32:
		return append([]float32(nil), d...)
	}
	panic(fmt.Sprintf("train: tensor of %T", v)) // not reached: the model makes its tensors
}

// copyValues copies src into dst, float64 or float32 slices of one type
// and length.
func copyValues(dst, src any) {
	switch d := dst.(type) {
	case []float64:
		copy(d, src.([]float64))
	case []float32:
		copy(d, src.([]float32))
	default:
		panic(fmt.Sprintf("train: tensor of %T", d)) // not reached: the model makes its tensors
	}
}

// clipNorm scales the float64 or float32 gradients g in place by
// min(1, c/‖g‖₂), the norm over all their entries (Config.ClipNorm),
// computed with the entries scaled by their largest magnitude so that it
// does not overflow.
func clipNorm(g []any, c float64) {
	var big float64
	for _, v := range g {
		switch d := v.(type) {
		case []float64:
			for _, x := range d {
				big = math.Max(big, math.Abs(x))
			}
		case []float32:
			for _, x := range d {
				big = math.Max(big, math.Abs(float64(x)))
			}
		}
	}
	if big == 0 {
		return
	}
	var ss float64
	for _, v := range g {
		switch d := v.(type) {
		case []float64:
			for _, x := range d {
				ss += (x / big) * (x / big)
			}
		case []float32:
			for _, x := range d {
				ss += (float64(x) / big) * (float64(x) / big)
			}
		}
	}
	n := big * math.Sqrt(ss)
	if !(n > c) {
		return
	}
	f := c / n
	for _, v := range g {
		switch d := v.(type) {
		case []float64:
			for i := range d {
				d[i] *= f
			}
		case []float32:
			f32 := float32(f)
			for i := range d {
				d[i] *= f32
			}
		}
	}
}
