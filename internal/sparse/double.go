// Package sparse is, on this branch only, a dense-backed test double of the
// sparse Gram kernel's planned API (branch sparse-kernel), so that the
// AdaNP integration can be written and tested before the kernel lands. It
// is removed when the kernel is merged.
package sparse

import (
	"errors"
	"math"
)

// Options configures AnalyseGram.
type Options struct{}

// Gram is the analysis of G = B·diag(winv)·Bᵀ + εI.
type Gram struct {
	nc, ny      int
	rowPtr, col []int
}

// AnalyseGram analyses the pattern.
func AnalyseGram(nc, ny int, rowPtr, col []int, opt Options) (*Gram, error) {
	return &Gram{nc: nc, ny: ny, rowPtr: rowPtr, col: col}, nil
}

// Factor is a numeric factor.
type Factor struct {
	g *Gram
	m []float64
}

// ErrNotPositive reports a non-positive pivot.
var ErrNotPositive = errors.New("sparse: non-positive pivot")

// NewFactor returns a factor.
func (g *Gram) NewFactor() *Factor { return &Factor{g: g, m: make([]float64, g.nc*g.nc)} }

// Factor factors G.
func (f *Factor) Factor(bvals, winv []float64, eps float64) error {
	g := f.g
	nc := g.nc
	for i := 0; i < nc; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for p := g.rowPtr[i]; p < g.rowPtr[i+1]; p++ {
				for q := g.rowPtr[j]; q < g.rowPtr[j+1]; q++ {
					if g.col[p] == g.col[q] {
						w := 1.0
						if winv != nil {
							w = winv[g.col[p]]
						}
						s += bvals[p] * w * bvals[q]
					}
				}
			}
			if i == j {
				s += eps
			}
			f.m[i*nc+j] = s
		}
	}
	for j := 0; j < nc; j++ {
		d := f.m[j*nc+j]
		for k := 0; k < j; k++ {
			d -= f.m[j*nc+k] * f.m[j*nc+k]
		}
		if !(d > 0) {
			return ErrNotPositive
		}
		d = math.Sqrt(d)
		f.m[j*nc+j] = d
		for i := j + 1; i < nc; i++ {
			s := f.m[i*nc+j]
			for k := 0; k < j; k++ {
				s -= f.m[i*nc+k] * f.m[j*nc+k]
			}
			f.m[i*nc+j] = s / d
		}
	}
	return nil
}

// Solve overwrites x with G⁻¹x.
func (f *Factor) Solve(x []float64) {
	nc := f.g.nc
	for i := 0; i < nc; i++ {
		s := x[i]
		for k := 0; k < i; k++ {
			s -= f.m[i*nc+k] * x[k]
		}
		x[i] = s / f.m[i*nc+i]
	}
	for i := nc - 1; i >= 0; i-- {
		s := x[i]
		for k := i + 1; k < nc; k++ {
			s -= f.m[k*nc+i] * x[k]
		}
		x[i] = s / f.m[i*nc+i]
	}
}
