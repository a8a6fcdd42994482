package acopf

import (
	"fmt"
	"math"

	"github.com/enforce-nn/enforce"
)

// Limits is the box of the voltage magnitudes and generator injections of
// a Case as an inequality constraint g(x, y) ≤ 0 for
// enforce.WithInequalities, with y laid out as for PowerFlow. Its rows are,
// in this order and leaving out every bound that is infinite,
//
//	Vm_i − Vmax_i, Vmin_i − Vm_i   for each bus i,
//	Pg_j − Pmax_j, Pmin_j − Pg_j   for each generator j,
//	Qg_j − Qmax_j, Qmin_j − Qg_j   for each generator j.
//
// g does not depend on x; its Jacobian has one ±1 per row (declared in
// Capabilities.Sparse) and its second derivatives are zero.
type Limits struct {
	nx, ny int
	// col, sign and bound give row r: sign·(y[col] − bound).
	col    []int
	sign   []float64
	bound  []float64
	rowPtr []int
	k      enforce.Capabilities
}

// NewLimits returns the voltage and generation limits of c for inputs of
// length nx (2·nl for PowerFlow's x). It returns an error for a case
// without buses, a negative nx, or a NaN bound.
func NewLimits(c *Case, nx int) (*Limits, error) {
	nb, ng := len(c.Buses), len(c.Gens)
	if nb == 0 || nx < 0 {
		return nil, fmt.Errorf("acopf: NewLimits: case %q with %d buses, nx = %d", c.Name, nb, nx)
	}
	l := &Limits{nx: nx, ny: 2*nb + 2*ng}
	add := func(col int, lo, hi float64) error {
		if math.IsNaN(lo) || math.IsNaN(hi) {
			return fmt.Errorf("acopf: NewLimits: NaN bound of variable %d", col)
		}
		if !math.IsInf(hi, 1) {
			l.col, l.sign, l.bound = append(l.col, col), append(l.sign, 1), append(l.bound, hi)
		}
		if !math.IsInf(lo, -1) {
			l.col, l.sign, l.bound = append(l.col, col), append(l.sign, -1), append(l.bound, lo)
		}
		return nil
	}
	for i, b := range c.Buses {
		if err := add(i, b.Vmin, b.Vmax); err != nil {
			return nil, err
		}
	}
	for j, g := range c.Gens {
		if err := add(2*nb+j, g.Pmin, g.Pmax); err != nil {
			return nil, err
		}
	}
	for j, g := range c.Gens {
		if err := add(2*nb+ng+j, g.Qmin, g.Qmax); err != nil {
			return nil, err
		}
	}
	if len(l.col) == 0 {
		return nil, fmt.Errorf("acopf: NewLimits: case %q has no finite limit", c.Name)
	}
	l.rowPtr = make([]int, len(l.col)+1)
	for r := range l.col {
		l.rowPtr[r+1] = r + 1
	}
	zero := func(x, y, w, v, out []float64) { clear(out) }
	l.k = enforce.Capabilities{
		JacobianX:    func(x, y, jx []float64) { clear(jx) },
		HessVec:      zero,
		MixedHessVec: zero,
		Sparse: &enforce.SparseJacobian{
			RowPtr:        l.rowPtr,
			Col:           l.col,
			Eval:          l.evalSparse,
			JacobianXTVec: func(x, y, w, out []float64) { clear(out) },
		},
	}
	return l, nil
}

// Dims returns (nx, ny, ng) with ng the number of finite bounds.
func (l *Limits) Dims() (nx, ny, nc int) { return l.nx, l.ny, len(l.col) }

// Capabilities returns zero JacobianX, HessVec and MixedHessVec, and Sparse.
func (l *Limits) Capabilities() enforce.Capabilities { return l.k }

// Eval writes g(x, y) into c and, if jy is not nil, ∂g/∂y (nc×ny) into jy.
func (l *Limits) Eval(x, y, c, jy []float64) {
	l.check(x, y, c)
	l.evalSparse(x, y, c, nil)
	if jy != nil {
		if len(jy) != len(l.col)*l.ny {
			panic(fmt.Sprintf("acopf: Limits.Eval: len(jy) = %d, want %d", len(jy), len(l.col)*l.ny))
		}
		clear(jy)
		for r, j := range l.col {
			jy[r*l.ny+j] = l.sign[r]
		}
	}
}

// evalSparse writes g and, if vals is not nil, the ±1 of each row.
func (l *Limits) evalSparse(x, y, c, vals []float64) {
	for r, j := range l.col {
		c[r] = l.sign[r] * (y[j] - l.bound[r])
	}
	if vals != nil {
		copy(vals, l.sign)
	}
}

// check panics when x, y or c have the wrong lengths.
func (l *Limits) check(x, y, c []float64) {
	if len(x) != l.nx || len(y) != l.ny || len(c) != len(l.col) {
		panic(fmt.Sprintf("acopf: Limits.Eval: len(x), len(y), len(c) = %d, %d, %d, want %d, %d, %d",
			len(x), len(y), len(c), l.nx, l.ny, len(l.col)))
	}
}
