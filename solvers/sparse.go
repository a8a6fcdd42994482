package solvers

import (
	"errors"
	"fmt"
	"math"
)

// SparseNLP is a smooth nonlinear programme with variable bounds and
// two-sided general constraints,
//
//	min_y f(y)   s.t.   Lower ≤ y ≤ Upper,   GLower ≤ g(y) ≤ GUpper,
//
// y ∈ ℝ^N, g(y) ∈ ℝ^M, whose derivatives are sparse and given in
// triplet (coordinate) form, as interior-point solvers such as IPOPT take
// them. An equality g_i(y) = b is GLower_i = GUpper_i = b; a missing bound
// is ±Inf. Every callback writes into slices the caller owns.
type SparseNLP struct {
	// N is the number of variables and M the number of constraints
	// (N ≥ 1, M ≥ 0).
	N, M int
	// Lower and Upper (length N, or nil for no bounds) bound y.
	Lower, Upper []float64
	// GLower and GUpper (length M) bound g(y).
	GLower, GUpper []float64
	// Objective returns f(y).
	Objective func(y []float64) float64
	// Grad writes ∇f(y) (length N) into grad.
	Grad func(y, grad []float64)
	// Constraints writes g(y) (length M) into g.
	Constraints func(y, g []float64)
	// JacRows and JacCols (of equal length) are the positions of the
	// nonzeros of ∂g/∂y: entry e is at (JacRows[e], JacCols[e]).
	// Positions may repeat; repeated entries are summed.
	JacRows, JacCols []int
	// Jacobian writes the values of ∂g/∂y at y in the order of JacRows
	// into vals.
	Jacobian func(y, vals []float64)
	// HessRows and HessCols are the positions, in the lower triangle
	// (HessRows[e] ≥ HessCols[e]), of the nonzeros of the Hessian of the
	// Lagrangian. Positions may repeat; repeated entries are summed.
	HessRows, HessCols []int
	// Hessian writes the values of σ∇²f(y) + Σ_i λ_i ∇²g_i(y) in the
	// order of HessRows into vals, for the objective factor σ and the
	// multipliers λ (length M).
	Hessian func(y []float64, sigma float64, lambda, vals []float64)
}

// Validate returns an error unless p is well formed and init (length N)
// is finite: sizes, non-nil callbacks, bounds that are not NaN with
// lower ≤ upper, and triplet positions inside the matrices (the
// Hessian's in its lower triangle).
func (p *SparseNLP) Validate(init []float64) error {
	switch {
	case p == nil:
		return errors.New("solvers: nil SparseNLP")
	case p.N < 1 || p.M < 0:
		return fmt.Errorf("solvers: SparseNLP has N = %d, M = %d, want N ≥ 1, M ≥ 0", p.N, p.M)
	case p.Objective == nil || p.Grad == nil || p.Constraints == nil || p.Jacobian == nil || p.Hessian == nil:
		return errors.New("solvers: SparseNLP needs Objective, Grad, Constraints, Jacobian and Hessian")
	case len(init) != p.N:
		return fmt.Errorf("solvers: starting point has length %d, want N = %d", len(init), p.N)
	case len(p.GLower) != p.M || len(p.GUpper) != p.M:
		return fmt.Errorf("solvers: SparseNLP has %d, %d constraint bounds, want M = %d", len(p.GLower), len(p.GUpper), p.M)
	case (p.Lower != nil && len(p.Lower) != p.N) || (p.Upper != nil && len(p.Upper) != p.N):
		return fmt.Errorf("solvers: SparseNLP has %d, %d variable bounds, want N = %d (or nil)", len(p.Lower), len(p.Upper), p.N)
	case len(p.JacRows) != len(p.JacCols):
		return fmt.Errorf("solvers: SparseNLP has %d Jacobian rows and %d columns", len(p.JacRows), len(p.JacCols))
	case len(p.HessRows) != len(p.HessCols):
		return fmt.Errorf("solvers: SparseNLP has %d Hessian rows and %d columns", len(p.HessRows), len(p.HessCols))
	}
	if !allFinite(init) {
		return errors.New("solvers: starting point is not finite")
	}
	checkBounds := func(what string, lo, hi []float64, n int) error {
		for i := range n {
			l, u := math.Inf(-1), math.Inf(1)
			if lo != nil {
				l = lo[i]
			}
			if hi != nil {
				u = hi[i]
			}
			if math.IsNaN(l) || math.IsNaN(u) || l > u || math.IsInf(l, 1) || math.IsInf(u, -1) {
				return fmt.Errorf("solvers: SparseNLP %s bounds [%v, %v] at %d", what, l, u, i)
			}
		}
		return nil
	}
	if err := checkBounds("variable", p.Lower, p.Upper, p.N); err != nil {
		return err
	}
	if err := checkBounds("constraint", p.GLower, p.GUpper, p.M); err != nil {
		return err
	}
	for e, r := range p.JacRows {
		if c := p.JacCols[e]; r < 0 || r >= p.M || c < 0 || c >= p.N {
			return fmt.Errorf("solvers: SparseNLP Jacobian entry %d at (%d, %d) outside %d×%d", e, r, c, p.M, p.N)
		}
	}
	for e, r := range p.HessRows {
		if c := p.HessCols[e]; c < 0 || r >= p.N || c > r {
			return fmt.Errorf("solvers: SparseNLP Hessian entry %d at (%d, %d) outside the lower triangle of %d×%d", e, r, c, p.N, p.N)
		}
	}
	return nil
}

// Violation returns the largest violation at y of the variable and
// constraint bounds: max(0, Lower − y, y − Upper, GLower − g, g − GUpper),
// or +Inf if g(y) is not finite. g (length M) is scratch, or nil.
func (p *SparseNLP) Violation(y, g []float64) float64 {
	if g == nil {
		g = make([]float64, p.M)
	}
	var v float64
	for i, yi := range y {
		if p.Lower != nil {
			v = math.Max(v, p.Lower[i]-yi)
		}
		if p.Upper != nil {
			v = math.Max(v, yi-p.Upper[i])
		}
	}
	p.Constraints(y, g)
	for i, gi := range g {
		if math.IsNaN(gi) || math.IsInf(gi, 0) {
			return math.Inf(1)
		}
		v = math.Max(v, math.Max(p.GLower[i]-gi, gi-p.GUpper[i]))
	}
	return v
}
