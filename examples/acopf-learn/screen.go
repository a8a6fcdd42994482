package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/problems/acopf/dataset"
)

// screenTol is the check of a screened projection's points: a point above
// it on any constraint of PGLib's whole set (acopf.Model.Violations) is
// projected again onto the whole set. It is the tables' tolerance.
const screenTol = 1e-6

// screenKeep returns the branch-limit rows of m that -screen keeps in the
// rows' projection: those within margin of binding (above −margin) at
// any of the labelled samples (the training optima), and how many of how
// many rows that is. It returns nil (every row) for margin 0, and an
// error for a negative or non-finite margin or a case without branch
// limits.
func screenKeep(m *acopf.Model, samples []dataset.Sample, margin float64) (keep []bool, kept, rows int, err error) {
	if margin == 0 {
		return nil, 0, 0, nil
	}
	if !(margin > 0) || math.IsInf(margin, 1) {
		return nil, 0, 0, fmt.Errorf("-screen %v: want a positive margin (p.u. and rad), or 0 for none", margin)
	}
	nx, _ := m.Dims()
	bl, err := acopf.NewBranchLimits(m.Case, nx)
	if err != nil {
		return nil, 0, 0, err
	}
	if bl == nil {
		return nil, 0, 0, fmt.Errorf("-screen: %s has no branch limits to screen", m.Case.Name)
	}
	_, _, rows = bl.Dims()
	keep = make([]bool, rows)
	n := 0
	for _, s := range samples {
		if s.Y != nil {
			bl.Near(s.X, s.Y, margin, keep)
			n++
		}
	}
	if n == 0 {
		return nil, 0, 0, fmt.Errorf("-screen: no labelled sample to screen the branch limits at")
	}
	for _, k := range keep {
		if k {
			kept++
		}
	}
	return keep, kept, rows, nil
}

// rowProjector projects a row's predictions onto PGLib's whole set:
// rowProjection's AdaNP; with -screen, first the same projection onto the
// power flow, the bounds and only the branch-limit rows screenKeep kept,
// then each point that violates the whole set by more than screenTol
// (a row left out, or a sample that did not converge) again from its
// prediction onto the whole set.
type rowProjector struct {
	m        *acopf.Model
	whole    *enforce.AdaNP
	screened *enforce.AdaNP // nil without -screen
	kept     int            // branch-limit rows in screened
	rows     int            // of this many
}

// screening is the branch-limit rows -screen keeps (screenKeep): keep
// (nil: no screening), kept of rows.
type screening struct {
	keep       []bool
	kept, rows int
}

// newRowProjector returns the rowProjector of a row with the projection
// weights diag (nil: W = I) and the screening sc.
func newRowProjector(o options, m *acopf.Model, diag []float64, sc screening) (*rowProjector, error) {
	keep := sc.keep
	k, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbeps, BranchLimits: true})
	if err != nil {
		return nil, err
	}
	p := &rowProjector{m: m, kept: sc.kept, rows: sc.rows}
	if p.whole, err = rowProjection(o, k, diag); err != nil {
		return nil, err
	}
	if keep == nil {
		return p, nil
	}
	ks, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbeps, BranchLimits: true, BranchRows: func(r int) bool { return keep[r] }})
	if err != nil {
		return nil, err
	}
	if p.screened, err = rowProjection(o, ks, diag); err != nil {
		return nil, err
	}
	return p, nil
}

// project projects yhat at the loads x. It returns the points, the
// statistics of the first projection (the screened one with -screen), a
// note on the second ("" without -screen) and an error only where AdaNP
// returns one.
func (p *rowProjector) project(x, yhat *mat.Dense) (*mat.Dense, enforce.Stats, string, error) {
	if p.screened == nil {
		y, st, err := p.whole.Project(x, yhat)
		return y, st, "", err
	}
	y, st, err := p.screened.Project(x, yhat)
	if err != nil {
		return nil, st, "", err
	}
	n, nx := x.Dims()
	_, ny := yhat.Dims()
	var again []int
	for i := range n {
		v := p.m.Violations(x.RawRowView(i), y.RawRowView(i))
		if !(v.Eq() <= screenTol && v.Ineq() <= screenTol) {
			again = append(again, i)
		}
	}
	note := fmt.Sprintf("screened: %d of %d branch-limit rows in the first projection, %d of %d points projected again onto the whole set", p.kept, p.rows, len(again), n)
	if len(again) == 0 {
		return y, st, note, nil
	}
	xs, ys := mat.NewDense(len(again), nx, nil), mat.NewDense(len(again), ny, nil)
	for j, i := range again {
		xs.SetRow(j, x.RawRowView(i))
		ys.SetRow(j, yhat.RawRowView(i))
	}
	y2, st2, err := p.whole.Project(xs, ys)
	if err != nil {
		return nil, st, "", err
	}
	for j, i := range again {
		y.SetRow(i, y2.RawRowView(j))
	}
	return y, st, note + fmt.Sprintf(" (%v)", st2), nil
}
