package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/problems/acopf/dataset"
)

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
// rowProjection's AdaNP, or with -screen an acopf.Screened projector with
// the same settings (first onto the power flow, the bounds and the
// branch-limit rows screenKeep kept, then every point that violates the
// whole set by more than acopf.DefaultScreenTol (1e-6, the tables' tolerance) again from its prediction onto the
// whole set).
type rowProjector struct {
	whole    *enforce.AdaNP  // without -screen
	screened *acopf.Screened // with -screen
}

// newRowProjector returns the rowProjector of a row with the projection
// weights diag (nil: W = I) and the branch-limit rows keep of screenKeep
// (nil: no screening).
func newRowProjector(o options, m *acopf.Model, diag []float64, keep []bool) (*rowProjector, error) {
	co := acopf.ConstraintOptions{FBEps: o.fbeps, BranchLimits: true}
	if keep == nil {
		k, err := m.ConstraintWith(co)
		if err != nil {
			return nil, err
		}
		a, err := rowProjection(o, k, diag)
		return &rowProjector{whole: a}, err
	}
	p, err := m.NewScreened(co, rowSettings(o, diag), acopf.ScreenOptions{Keep: func(r int) bool { return keep[r] }})
	return &rowProjector{screened: p}, err
}

// project projects yhat at the loads x. It returns the points, the
// statistics of the first projection (the screened one with -screen), a
// note on the screening ("" without -screen) and an error only where AdaNP
// returns one.
func (p *rowProjector) project(x, yhat *mat.Dense) (*mat.Dense, enforce.Stats, string, error) {
	if p.screened == nil {
		y, st, err := p.whole.Project(x, yhat)
		return y, st, "", err
	}
	y, st, err := p.screened.Project(x, yhat)
	return y, st.First, st.String(), err
}
