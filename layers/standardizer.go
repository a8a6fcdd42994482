package layers

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/internal/graphguard"
)

// Standardizer maps each column j of a data matrix to zero mean and unit
// variance, z = (v − Mean[j]) / Std[j], and back, v = z·Std[j] + Mean[j].
//
// ENFORCE standardises x and y for the network but evaluates constraints and
// projects in original units: the network reads TransformNode(x) and its
// output goes through InverseNode before the projection.
type Standardizer struct {
	// Mean holds the per-column means.
	Mean []float64
	// Std holds the per-column standard deviations, all positive.
	Std []float64
}

// FitStandardizer computes the per-column mean and population standard
// deviation √((1/n)Σ(v−mean)²) of data (n rows ⩾ 1). A column with zero
// spread gets Std 1, so it is only shifted. It returns an error if data is
// nil or empty or holds a NaN or an infinity, and for a column whose mean
// or standard deviation overflows float64 (values near ±1e308). (A
// computed standard deviation is 0 or at least about 1e-162, so it is
// never below MinStd.) It is FitStandardizerFloor with floor 0.
func FitStandardizer(data *mat.Dense) (*Standardizer, error) {
	return FitStandardizerFloor(data, 0)
}

// DefaultStdFloor is the floor the paper's reference implementation
// applies to the standard deviations of the outputs (never the inputs):
// an output column with σ < 1e-5 is only mean-centred (σ = 1).
const DefaultStdFloor = 1e-5

// FitStandardizerFloor is FitStandardizer with a floor on the spread: a
// column whose standard deviation σ is below floor (σ < floor; σ = floor
// is kept) gets Std 1, so it is only shifted, as a column with zero spread
// always is. The reference implementation floors the outputs at
// DefaultStdFloor, so that a near-constant output (a σ of 1e-21, say) is
// not divided by its spread. floor must be finite and not negative.
func FitStandardizerFloor(data *mat.Dense, floor float64) (*Standardizer, error) {
	if !(floor >= 0) || math.IsInf(floor, 1) {
		return nil, fmt.Errorf("layers: FitStandardizerFloor: floor %v must be finite and not negative", floor)
	}
	if data == nil || data.IsEmpty() {
		return nil, fmt.Errorf("layers: FitStandardizer: empty data")
	}
	r, c := data.Dims()
	s := &Standardizer{Mean: make([]float64, c), Std: make([]float64, c)}
	// Row by row, for sequential reads; every column's sums still run
	// over the rows in order, as a column-by-column loop's would.
	raw := data.RawMatrix()
	mean, std := s.Mean, s.Std // first the sums, then the results
	bad := make([]int, c)      // 1 + the first row with a non-finite value
	for i := range r {
		row := raw.Data[i*raw.Stride : i*raw.Stride+c]
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				if bad[j] == 0 {
					bad[j] = i + 1
				}
			}
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(r)
	}
	for i := range r {
		row := raw.Data[i*raw.Stride : i*raw.Stride+c]
		for j, v := range row {
			d := v - mean[j]
			std[j] += d * d
		}
	}
	// The checks column by column, in the order of a column-by-column
	// loop: its non-finite values, its mean, its standard deviation.
	for j := range c {
		if i := bad[j] - 1; i >= 0 {
			return nil, fmt.Errorf("layers: FitStandardizer: non-finite value %v at (%d, %d)", raw.Data[i*raw.Stride+j], i, j)
		}
		if math.IsInf(mean[j], 0) {
			return nil, fmt.Errorf("layers: FitStandardizer: the mean of column %d overflows float64 (the values are too large; rescale the column)", j)
		}
		sd := math.Sqrt(std[j] / float64(r))
		switch {
		case math.IsInf(sd, 0) || math.IsNaN(sd):
			return nil, fmt.Errorf("layers: FitStandardizer: the standard deviation of column %d overflows float64 (the values are too large; rescale the column)", j)
		case sd == 0 || sd < floor:
			sd = 1
		}
		std[j] = sd
	}
	return s, nil
}

// MinStd is the smallest standard deviation a Standardizer accepts: the
// smallest normal float64, so that 1/Std is finite.
const MinStd = 0x1p-1022

// Dim returns the number of columns the Standardizer was fitted on.
func (s *Standardizer) Dim() int { return len(s.Mean) }

// Validate reports whether Mean and Std have the same positive length, Mean
// is finite and Std is finite and at least MinStd.
func (s *Standardizer) Validate() error {
	if s == nil || len(s.Mean) == 0 || len(s.Mean) != len(s.Std) {
		return fmt.Errorf("layers: Standardizer: Mean and Std must have the same positive length")
	}
	for j := range s.Mean {
		if math.IsNaN(s.Mean[j]) || math.IsInf(s.Mean[j], 0) {
			return fmt.Errorf("layers: Standardizer: Mean[%d] = %v is not finite", j, s.Mean[j])
		}
		if !(s.Std[j] >= MinStd) || math.IsInf(s.Std[j], 0) {
			return fmt.Errorf("layers: Standardizer: Std[%d] = %v is not finite and at least MinStd", j, s.Std[j])
		}
	}
	return nil
}

// Transform writes (src − Mean)/Std, column by column, into dst. dst and src
// must both have Dim() columns and the same number of rows; they may be the
// same matrix. Like gonum/mat, it panics on a shape mismatch.
func (s *Standardizer) Transform(dst, src *mat.Dense) {
	s.checkDims("Transform", dst, src)
	r, c := src.Dims()
	sr, dr := src.RawMatrix(), dst.RawMatrix()
	mean, std := s.Mean[:c], s.Std[:c]
	for i := range r {
		in, out := sr.Data[i*sr.Stride:][:c], dr.Data[i*dr.Stride:][:c]
		for j, v := range in {
			out[j] = (v - mean[j]) / std[j]
		}
	}
}

// Inverse writes src·Std + Mean, column by column, into dst. dst and src
// must both have Dim() columns and the same number of rows; they may be the
// same matrix. Like gonum/mat, it panics on a shape mismatch.
func (s *Standardizer) Inverse(dst, src *mat.Dense) {
	s.checkDims("Inverse", dst, src)
	r, c := src.Dims()
	sr, dr := src.RawMatrix(), dst.RawMatrix()
	mean, std := s.Mean[:c], s.Std[:c]
	for i := range r {
		in, out := sr.Data[i*sr.Stride:][:c], dr.Data[i*dr.Stride:][:c]
		for j, v := range in {
			out[j] = v*std[j] + mean[j]
		}
	}
}

func (s *Standardizer) checkDims(method string, dst, src *mat.Dense) {
	r, c := src.Dims()
	dr, dc := dst.Dims()
	if c != len(s.Mean) || dr != r || dc != c {
		panic(fmt.Sprintf("layers: Standardizer.%s: dst is %d×%d and src %d×%d, want both n×%d", method, dr, dc, r, c, len(s.Mean)))
	}
}

// TransformNode adds (x − Mean)/Std to g for x of shape (batch, Dim()),
// with Mean and 1/Std as constant vectors broadcast over the batch. The
// result is differentiable with respect to x.
func (s *Standardizer) TransformNode(g *gorgonia.ExprGraph, x *gorgonia.Node) (out *gorgonia.Node, err error) {
	if err := s.checkNode("TransformNode", g, x); err != nil {
		return nil, err
	}
	defer graphguard.Recover(&out, &err, "layers: Standardizer.TransformNode")
	inv := make([]float64, len(s.Std))
	for j, sd := range s.Std {
		inv[j] = 1 / sd
	}
	mean := vectorConstant(g, x.Dtype(), "mean", s.Mean)
	scale := vectorConstant(g, x.Dtype(), "invstd", inv)
	centred, err := gorgonia.BroadcastSub(x, mean, nil, []byte{0})
	if err != nil {
		return nil, fmt.Errorf("layers: Standardizer.TransformNode: %w", err)
	}
	if out, err = gorgonia.BroadcastHadamardProd(centred, scale, nil, []byte{0}); err != nil {
		return nil, fmt.Errorf("layers: Standardizer.TransformNode: %w", err)
	}
	return out, nil
}

// InverseNode adds z·Std + Mean to g for z of shape (batch, Dim()), with Std
// and Mean as constant vectors broadcast over the batch. The result is
// differentiable with respect to z.
func (s *Standardizer) InverseNode(g *gorgonia.ExprGraph, z *gorgonia.Node) (out *gorgonia.Node, err error) {
	if err := s.checkNode("InverseNode", g, z); err != nil {
		return nil, err
	}
	defer graphguard.Recover(&out, &err, "layers: Standardizer.InverseNode")
	std := vectorConstant(g, z.Dtype(), "std", s.Std)
	mean := vectorConstant(g, z.Dtype(), "mean", s.Mean)
	scaled, err := gorgonia.BroadcastHadamardProd(z, std, nil, []byte{0})
	if err != nil {
		return nil, fmt.Errorf("layers: Standardizer.InverseNode: %w", err)
	}
	if out, err = gorgonia.BroadcastAdd(scaled, mean, nil, []byte{0}); err != nil {
		return nil, fmt.Errorf("layers: Standardizer.InverseNode: %w", err)
	}
	return out, nil
}

func (s *Standardizer) checkNode(method string, g *gorgonia.ExprGraph, x *gorgonia.Node) error {
	if err := s.Validate(); err != nil {
		return err
	}
	switch {
	case g == nil || x == nil:
		return fmt.Errorf("layers: Standardizer.%s: nil graph or node", method)
	case x.Graph() != g:
		return fmt.Errorf("layers: Standardizer.%s: node %q is not in the given graph", method, x.Name())
	case !x.IsMatrix() || x.Shape()[1] != len(s.Mean):
		return fmt.Errorf("layers: Standardizer.%s: node %q has shape %v, want (batch, %d)", method, x.Name(), x.Shape(), len(s.Mean))
	}
	if err := graphguard.CheckFloat(x.Dtype()); err != nil {
		return fmt.Errorf("layers: Standardizer.%s: %w", method, err)
	}
	return nil
}
