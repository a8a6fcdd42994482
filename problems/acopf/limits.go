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
	rows *boxRows
}

// boxRows are rows sign·(y[col] − bound) of a Limits or a Pinned.
type boxRows struct {
	name   string // the type's name, for panics
	nx, ny int
	// col, sign and bound give row r: sign·(y[col] − bound).
	col    []int
	sign   []float64
	bound  []float64
	rowPtr []int
	k      enforce.Capabilities
}

// boundsOf says which bounds newBoxRows takes.
type boundsOf int

const (
	allBounds    boundsOf = iota // every finite bound
	freeBounds                   // the finite bounds of variables with lo < hi
	pinnedBounds                 // one row y − b per variable with lo = hi = b
)

// NewLimits returns the voltage and generation limits of c for inputs of
// length nx (2·nl for PowerFlow's x). It returns an error for a case
// without buses, a negative nx, a NaN bound, or a case without a finite
// bound.
func NewLimits(c *Case, nx int) (*Limits, error) {
	r, err := newBoxRows(c, nx, allBounds)
	if err != nil {
		return nil, err
	}
	if len(r.col) == 0 {
		return nil, fmt.Errorf("acopf: NewLimits: case %q has no finite limit", c.Name)
	}
	return &Limits{rows: r}, nil
}

// newBoxRows returns the rows of c's bounds that which selects.
func newBoxRows(c *Case, nx int, which boundsOf) (*boxRows, error) {
	nb, ng := len(c.Buses), len(c.Gens)
	if nb == 0 || nx < 0 {
		return nil, fmt.Errorf("acopf: NewLimits: case %q with %d buses, nx = %d", c.Name, nb, nx)
	}
	l := &boxRows{name: "Limits", nx: nx, ny: 2*nb + 2*ng}
	if which == pinnedBounds {
		l.name = "Pinned"
	}
	row := func(col int, sign, b float64) {
		l.col, l.sign, l.bound = append(l.col, col), append(l.sign, sign), append(l.bound, b)
	}
	add := func(col int, lo, hi float64) error {
		if math.IsNaN(lo) || math.IsNaN(hi) {
			return fmt.Errorf("acopf: NewLimits: NaN bound of variable %d", col)
		}
		pinned := lo == hi && !math.IsInf(lo, 0)
		switch {
		case which == pinnedBounds:
			if pinned {
				row(col, 1, lo)
			}
			return nil
		case which == freeBounds && pinned:
			return nil
		}
		if !math.IsInf(hi, 1) {
			row(col, 1, hi)
		}
		if !math.IsInf(lo, -1) {
			row(col, -1, lo)
		}
		return nil
	}
	if err := eachBound(c, add); err != nil {
		return nil, err
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
func (l *Limits) Dims() (nx, ny, nc int) { return l.rows.dims() }

// Capabilities returns zero JacobianX, HessVec and MixedHessVec, and Sparse.
func (l *Limits) Capabilities() enforce.Capabilities { return l.rows.k }

// Eval writes g(x, y) into c and, if jy is not nil, ∂g/∂y (nc×ny) into jy.
func (l *Limits) Eval(x, y, c, jy []float64) { l.rows.eval(x, y, c, jy) }

// Pinned is the equality part of a Case's voltage and generation limits:
// the variables whose lower and upper bounds are equal and finite (a
// generator with Pmin = Pmax, such as a synchronous condenser with
// Pmin = Pmax = 0, or one with Qmin = Qmax), as the constraint
//
//	y_k − b_k = 0   for each pinned variable k, b_k its bound,
//
// in the order of Limits' rows, with y laid out as for PowerFlow. Like
// Limits it does not depend on x, its Jacobian has one 1 per row
// (declared in Capabilities.Sparse) and its second derivatives are zero.
//
// Model.Constraint takes these rows as equalities: the two rows
// y_k − b_k ≤ 0 and b_k − y_k ≤ 0 of a pinned variable have no common
// zero of the smoothed Fischer–Burmeister equations of
// enforce.WithInequalities (each zero has g < 0 strictly), so AdaNP could
// only approach one as their multipliers grow without bound.
type Pinned struct {
	rows *boxRows
}

// NewPinned returns the pinned variables of c for inputs of length nx, or
// nil when c has none. It returns an error for a case without buses, a
// negative nx or a NaN bound.
func NewPinned(c *Case, nx int) (*Pinned, error) {
	r, err := newBoxRows(c, nx, pinnedBounds)
	if err != nil || len(r.col) == 0 {
		return nil, err
	}
	return &Pinned{rows: r}, nil
}

// Dims returns (nx, ny, np) with np the number of pinned variables.
func (p *Pinned) Dims() (nx, ny, nc int) { return p.rows.dims() }

// Capabilities returns zero JacobianX, HessVec and MixedHessVec, and Sparse.
func (p *Pinned) Capabilities() enforce.Capabilities { return p.rows.k }

// Eval writes y_k − b_k of each pinned variable into c and, if jy is not
// nil, the Jacobian (np×ny) into jy.
func (p *Pinned) Eval(x, y, c, jy []float64) { p.rows.eval(x, y, c, jy) }

func (l *boxRows) dims() (nx, ny, nc int) { return l.nx, l.ny, len(l.col) }

// eval writes the rows and, if jy is not nil, their dense Jacobian.
func (l *boxRows) eval(x, y, c, jy []float64) {
	l.check(x, y, c)
	l.evalSparse(x, y, c, nil)
	if jy != nil {
		if len(jy) != len(l.col)*l.ny {
			panic(fmt.Sprintf("acopf: %s.Eval: len(jy) = %d, want %d", l.name, len(jy), len(l.col)*l.ny))
		}
		clear(jy)
		for r, j := range l.col {
			jy[r*l.ny+j] = l.sign[r]
		}
	}
}

// evalSparse writes the rows and, if vals is not nil, the ±1 of each row.
func (l *boxRows) evalSparse(x, y, c, vals []float64) {
	for r, j := range l.col {
		c[r] = l.sign[r] * (y[j] - l.bound[r])
	}
	if vals != nil {
		copy(vals, l.sign)
	}
}

// check panics when x, y or c have the wrong lengths.
func (l *boxRows) check(x, y, c []float64) {
	if len(x) != l.nx || len(y) != l.ny || len(c) != len(l.col) {
		panic(fmt.Sprintf("acopf: %s.Eval: len(x), len(y), len(c) = %d, %d, %d, want %d, %d, %d",
			l.name, len(x), len(y), len(c), l.nx, l.ny, len(l.col)))
	}
}

// Box returns the voltage and generation limits as bounds on y, for
// enforce.NewInterior with the power flow (PowerFlow): Vmin ≤ Vm ≤ Vmax,
// Pmin ≤ Pg ≤ Pmax and Qmin ≤ Qg ≤ Qmax as in Limits (a variable with
// equal bounds is pinned), and no bound on the angles.
func (m *Model) Box() enforce.Box {
	_, ny := m.Dims()
	b := enforce.Box{Lo: make([]float64, ny), Hi: make([]float64, ny)}
	for k := range b.Lo {
		b.Lo[k], b.Hi[k] = math.Inf(-1), math.Inf(1)
	}
	_ = eachBound(m.Case, func(col int, lo, hi float64) error {
		b.Lo[col], b.Hi[col] = lo, hi
		return nil
	})
	return b
}

// eachBound calls f with the column of y and the bounds of every bounded
// variable of c, in Limits' order (Vm, then Pg, then Qg), and returns the
// first error f returns.
func eachBound(c *Case, f func(col int, lo, hi float64) error) error {
	nb, ng := len(c.Buses), len(c.Gens)
	for i, b := range c.Buses {
		if err := f(i, b.Vmin, b.Vmax); err != nil {
			return err
		}
	}
	for j, g := range c.Gens {
		if err := f(2*nb+j, g.Pmin, g.Pmax); err != nil {
			return err
		}
	}
	for j, g := range c.Gens {
		if err := f(2*nb+ng+j, g.Qmin, g.Qmax); err != nil {
			return err
		}
	}
	return nil
}
