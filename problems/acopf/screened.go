package acopf

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// DefaultScreenTol is the tolerance of a Screened projector's check when
// ScreenOptions.Tol is zero: the tolerance of issue 53's tables.
const DefaultScreenTol = 1e-6

// ScreenOptions configures Model.NewScreened.
type ScreenOptions struct {
	// Keep selects the branch-limit rows of the first projection
	// (ConstraintOptions.BranchRows, numbered as BranchLimits numbers
	// them; BranchLimits.Near marks those near binding at given points).
	// It must not be nil.
	Keep func(row int) bool
	// Tol is the check's tolerance: a point above it on any constraint
	// of PGLib's set (Violations: Eq and Ineq) is projected again onto
	// the whole set. Zero means DefaultScreenTol.
	Tol float64
}

// Screened projects onto PGLib's whole constraint set (the power flow,
// the bounds and every branch thermal and angle limit) in two passes:
// first onto the power flow, the bounds and only the branch-limit rows
// that ScreenOptions.Keep selects, which costs each step less (every row
// costs a step time, binding or not); then it checks every point against
// the whole set (Violations) and projects the points above the tolerance
// (a row left out that the point violates, or a sample that did not
// converge) again from their predictions onto the whole set. A point it
// returns is therefore either within the tolerance of the whole set or
// the whole set's own projection of its prediction (which Stats and
// Violations then show unconverged). It has no gradient: it is for
// inference (examples/acopf-learn's -screen). A Screened is safe for
// concurrent use by several goroutines, as its AdaNPs are.
type Screened struct {
	m            *Model
	first, whole *enforce.AdaNP
	tol          float64
	kept, rows   int
}

// ScreenedStats are the statistics of a Screened projection.
type ScreenedStats struct {
	// First is the first projection's, over every sample.
	First enforce.Stats
	// Again lists the samples projected again onto the whole set
	// (increasing), and Whole is that projection's statistics (zero when
	// Again is empty).
	Again []int
	Whole enforce.Stats
	// Kept of Rows branch-limit rows were in the first projection.
	Kept, Rows int
}

// String summarises s in one line.
func (s ScreenedStats) String() string {
	out := fmt.Sprintf("screened: %d of %d branch-limit rows in the first projection, %d of %d points projected again onto the whole set",
		s.Kept, s.Rows, len(s.Again), s.First.Samples)
	if len(s.Again) > 0 {
		out += fmt.Sprintf(" (%v)", s.Whole)
	}
	return out
}

// NewScreened returns a Screened projector onto m's constraint set
// ConstraintWith(o) (o.BranchLimits must be true, o.BranchRows nil: the
// screen is sc.Keep) with AdaNP settings s for both projections. It
// returns an error for a nil sc.Keep, a negative, NaN or infinite sc.Tol,
// o.BranchLimits false or o.BranchRows set, a case without branch limits,
// or an error of ConstraintWith or enforce.NewAdaNP.
func (m *Model) NewScreened(o ConstraintOptions, s enforce.Settings, sc ScreenOptions) (*Screened, error) {
	switch {
	case sc.Keep == nil:
		return nil, fmt.Errorf("acopf: Model.NewScreened: ScreenOptions.Keep is nil")
	case !(sc.Tol >= 0) || math.IsInf(sc.Tol, 1):
		return nil, fmt.Errorf("acopf: Model.NewScreened: ScreenOptions.Tol = %v, want non-negative and finite", sc.Tol)
	case !o.BranchLimits || o.BranchRows != nil:
		return nil, fmt.Errorf("acopf: Model.NewScreened: want ConstraintOptions with BranchLimits and without BranchRows (the screen is ScreenOptions.Keep)")
	}
	nx, _ := m.Dims()
	bl, err := NewBranchLimits(m.Case, nx)
	if err != nil {
		return nil, err
	}
	if bl == nil {
		return nil, fmt.Errorf("acopf: Model.NewScreened: case %q has no branch limits to screen", m.Case.Name)
	}
	p := &Screened{m: m, tol: sc.Tol}
	if p.tol == 0 {
		p.tol = DefaultScreenTol
	}
	_, _, p.rows = bl.Dims()
	if sel := bl.Select(sc.Keep); sel != nil {
		_, _, p.kept = sel.Dims()
	}
	whole, err := m.ConstraintWith(o)
	if err != nil {
		return nil, err
	}
	o.BranchRows = sc.Keep
	first, err := m.ConstraintWith(o)
	if err != nil {
		return nil, err
	}
	if p.whole, err = enforce.NewAdaNP(whole, s); err != nil {
		return nil, err
	}
	if p.first, err = enforce.NewAdaNP(first, s); err != nil {
		return nil, err
	}
	return p, nil
}

// Project projects the rows of yhat at the loads x (as AdaNP.Project).
// It returns an error only where an AdaNP does.
func (p *Screened) Project(x, yhat *mat.Dense) (*mat.Dense, ScreenedStats, error) {
	st := ScreenedStats{Kept: p.kept, Rows: p.rows}
	y, first, err := p.first.Project(x, yhat)
	st.First = first
	if err != nil {
		return nil, st, err
	}
	n, nx := x.Dims()
	_, ny := yhat.Dims()
	for i := range n {
		v := p.m.Violations(x.RawRowView(i), y.RawRowView(i))
		if !(v.Eq() <= p.tol && v.Ineq() <= p.tol) {
			st.Again = append(st.Again, i)
		}
	}
	if len(st.Again) == 0 {
		return y, st, nil
	}
	xs, ys := mat.NewDense(len(st.Again), nx, nil), mat.NewDense(len(st.Again), ny, nil)
	for j, i := range st.Again {
		xs.SetRow(j, x.RawRowView(i))
		ys.SetRow(j, yhat.RawRowView(i))
	}
	y2, whole, err := p.whole.Project(xs, ys)
	st.Whole = whole
	if err != nil {
		return nil, st, err
	}
	for j, i := range st.Again {
		y.SetRow(i, y2.RawRowView(j))
	}
	return y, st, nil
}

// Whole returns the AdaNP of the second projection, onto the whole set.
func (p *Screened) Whole() *enforce.AdaNP { return p.whole }

// First returns the AdaNP of the first projection, onto the screened set.
func (p *Screened) First() *enforce.AdaNP { return p.first }
