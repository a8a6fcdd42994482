package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
)

// ErrConstraintMismatch is the error (wrapped) of Load, LoadFile,
// LoadBackbone, Restore and Resume when the constraint given differs from
// the one the model was saved with, as the file's fingerprint shows.
var ErrConstraintMismatch = errors.New("the constraint differs from the one the model was saved with")

// Fingerprint parameters: probePoints points, values compared with the
// relative tolerance fingerprintTol.
const (
	probePoints = 3
	// fingerprintTol is the relative tolerance of the comparison of the
	// saved and recomputed values: far above the rounding that another
	// CPU or compiler may give the same Go code (fused multiply–adds,
	// about 1e-16 of the terms), far below any change of the
	// constraint's coefficients worth telling apart.
	fingerprintTol = 1e-9
	// streamProbe is the PCG stream of the probe points.
	streamProbe uint64 = 0x7072_6f62
)

// fingerprint records c(x, y) and two products with the Jacobian
// B = ∂c/∂y at a few probe points (x, y), so that Load can tell a
// constraint of the same sizes but other values from the one the model
// was trained with. The products B·v and Bᵀ·w, with v and w fixed random
// vectors stored with the point, stand for B in O(nc + ny) numbers
// instead of nc·ny (evalProbe computes them from B's nonzeros when the
// constraint declares its pattern).
type fingerprint struct {
	Points []probe `json:"points"`
}

// probe is one probe point and the constraint's values there. Y includes
// the constraint's latent variables (zeros).
type probe struct {
	X   []float64 `json:"x"`
	Y   []float64 `json:"y"`
	V   []float64 `json:"v"`
	W   []float64 `json:"w"`
	C   []float64 `json:"c"`
	BV  []float64 `json:"bv"`
	BtW []float64 `json:"btw"`
}

// newFingerprint evaluates c at probePoints deterministic points: x and y
// drawn uniformly from [−1, 1] and, when the model has a standardisation,
// mapped to original units (mean + std·u), so that the points lie where
// the data do. A point where c or B is not finite is skipped (JSON cannot
// hold it); it returns nil when no point is left or c panics.
func newFingerprint(c enforce.Constraint, sj *enforce.SparseJacobian, sx, sy *layers.Standardizer) (fp *fingerprint) {
	defer func() {
		if recover() != nil {
			fp = nil
		}
	}()
	nx, n, nc := c.Dims()
	latent := enforce.CapabilitiesOf(c).Latent
	rng := rand.New(rand.NewPCG(uint64(nx)<<32|uint64(n), streamProbe))
	draw := func(k int, s *layers.Standardizer) []float64 {
		v := make([]float64, k)
		for i := range v {
			v[i] = 2*rng.Float64() - 1
			if s != nil && i < s.Dim() {
				v[i] = s.Mean[i] + s.Std[i]*v[i]
			}
		}
		return v
	}
	fp = &fingerprint{}
	for range probePoints {
		p := probe{X: draw(nx, sx), Y: draw(n, sy), V: draw(n, nil), W: draw(nc, nil)}
		clear(p.Y[n-latent:])
		p.C, p.BV, p.BtW = evalProbe(c, sj, p.X, p.Y, p.V, p.W)
		if allFinite(p.C) && allFinite(p.BV) && allFinite(p.BtW) {
			fp.Points = append(fp.Points, p)
		}
	}
	if len(fp.Points) == 0 {
		return nil
	}
	return fp
}

// evalProbe returns c(x, y), B·v and Bᵀ·w. A constraint that declares
// its Jacobian's sparsity pattern (enforce.Capabilities.Sparse), or whose
// model's AdaNP detected one (sj, from AdaNP.SparseJacobian: a Func on the
// sparse path), is evaluated in that pattern, in O(nc + ny + nnz) memory and time; any
// other through its dense nc×ny Jacobian. Both sum the products of a row
// of B·v and of a column of Bᵀ·w in the same order (columns, then rows,
// increasing), so they give the same values for the same Jacobian: a
// file saved with one evaluation checks with the other.
func evalProbe(c enforce.Constraint, sj *enforce.SparseJacobian, x, y, v, w []float64) (cv, bv, btw []float64) {
	_, n, nc := c.Dims()
	cv, bv, btw = make([]float64, nc), make([]float64, nc), make([]float64, n)
	if s := sparseOf(c, sj); s != nil {
		vals := make([]float64, s.RowPtr[nc])
		s.Eval(x, y, cv, vals)
		for i := range nc {
			for p := s.RowPtr[i]; p < s.RowPtr[i+1]; p++ {
				j, b := s.Col[p], vals[p]
				bv[i] += b * v[j]
				btw[j] += b * w[i]
			}
		}
		return cv, bv, btw
	}
	jy := make([]float64, nc*n)
	c.Eval(x, y, cv, jy)
	for i := range nc {
		row := jy[i*n : (i+1)*n]
		for j, b := range row {
			bv[i] += b * v[j]
			btw[j] += b * w[i]
		}
	}
	return cv, bv, btw
}

// check returns an error wrapping ErrConstraintMismatch unless c
// reproduces the saved values at every probe point to within
// fingerprintTol of the larger magnitude of each compared vector. A nil
// fingerprint (a file written before fingerprints, or a constraint not
// finite at any probe point) checks nothing.
func (fp *fingerprint) check(c enforce.Constraint, sj *enforce.SparseJacobian) (err error) {
	if fp == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: evaluating it at a probe point panicked: %v", ErrConstraintMismatch, r)
		}
	}()
	nx, n, nc := c.Dims()
	for k, p := range fp.Points {
		if len(p.X) != nx || len(p.Y) != n || len(p.V) != n || len(p.W) != nc || len(p.C) != nc || len(p.BV) != nc || len(p.BtW) != n {
			return fmt.Errorf("the file's constraint fingerprint has probe point %d of other sizes", k)
		}
		cv, bv, btw := evalProbe(c, sj, p.X, p.Y, p.V, p.W)
		for _, cmp := range []struct {
			what      string
			got, want []float64
		}{{"c", cv, p.C}, {"∂c/∂y·v", bv, p.BV}, {"(∂c/∂y)ᵀ·w", btw, p.BtW}} {
			if i, ok := closeVec(cmp.got, cmp.want); !ok {
				return fmt.Errorf("%w: at the file's probe point %d, %s[%d] is %.17g, the file records %.17g",
					ErrConstraintMismatch, k, cmp.what, i, cmp.got[i], cmp.want[i])
			}
		}
	}
	return nil
}

// closeVec reports whether a and b agree to within fingerprintTol of the
// larger of their largest magnitudes, and otherwise the first index where
// they do not.
func closeVec(a, b []float64) (int, bool) {
	scale := 0.0
	for i := range a {
		scale = max(scale, math.Abs(a[i]), math.Abs(b[i]))
	}
	for i := range a {
		if d := math.Abs(a[i] - b[i]); !(d <= fingerprintTol*scale) {
			return i, false
		}
	}
	return 0, true
}

// sparseOf returns the sparse Jacobian to evaluate c with: the one c
// declares, else sj (nil: the dense Jacobian).
func sparseOf(c enforce.Constraint, sj *enforce.SparseJacobian) *enforce.SparseJacobian {
	if s := enforce.CapabilitiesOf(c).Sparse; s != nil {
		return s
	}
	return sj
}

// sparseJacobian returns the sparse Jacobian of m's projections where
// they take the sparse path (nil otherwise): the pattern its constraint
// declares or the one NewAdaNP detected for a Func.
func (m *Model) sparseJacobian() *enforce.SparseJacobian {
	for _, a := range []*enforce.AdaNP{m.InferAdaNP(), m.TrainAdaNP()} {
		if a != nil {
			if sj := a.SparseJacobian(); sj != nil {
				return sj
			}
		}
	}
	return nil
}
