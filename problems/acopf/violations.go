package acopf

import (
	"math"
	"math/cmplx"
)

// Violation is how far an operating point is from PGLib-OPF's constraint
// set (its MODEL.tex: the power flow, the voltage and generation bounds,
// the branch thermal limits and the angle-difference limits), constraint
// kind by kind, whatever system was projected. Every field is zero at a
// feasible point; a NaN in the point makes NaN every field whose
// constraints it enters (PowerFlow for any variable the balance depends
// on), never zero.
type Violation struct {
	// PowerFlow is max|c| of PowerFlow: the largest active or reactive
	// imbalance at a bus in p.u. (and the reference buses' angle errors,
	// in radians).
	PowerFlow float64
	// Bounds is the largest excess over a voltage or generation bound,
	// max(y_k − hi_k, lo_k − y_k, 0) over the finite bounds of Limits, in
	// p.u. (a pinned variable's |y_k − b_k|).
	Bounds float64
	// Thermal is the largest excess of a branch flow over its rating,
	// max(|S| − RateA, 0) over both ends of every branch with a finite
	// RateA, in p.u.
	Thermal float64
	// Angle is the largest excess of an angle difference over its limits,
	// max(Va_f − Va_t − AngMax, AngMin − (Va_f − Va_t), 0) over the limits
	// inside (−2π, 2π), in radians.
	Angle float64
}

// Eq returns the largest violation of an equality, PowerFlow.
func (v Violation) Eq() float64 { return v.PowerFlow }

// Ineq returns the largest violation of an inequality: the largest of
// Bounds, Thermal (p.u.) and Angle (radians), each in its rows' natural
// unit as the projection's tolerance treats them.
func (v Violation) Ineq() float64 {
	return worse(worse(v.Bounds, v.Thermal), v.Angle)
}

// worse returns the larger of a and b, or NaN if either is NaN.
func worse(a, b float64) float64 {
	if b > a || math.IsNaN(b) {
		return b
	}
	return a
}

// Violations returns the violation of every constraint of PGLib-OPF's
// formulation at (x, y) (loads and operating point laid out as for
// PowerFlow), whichever of them a projection enforced: the flows are
// computed in complex arithmetic, S_ft = V_f·conj(Yff·V_f + Yft·V_t) and
// S_tf = V_t·conj(Ytf·V_f + Ytt·V_t) with Branch.Admittances, and the
// angle differences as Va_f − Va_t. It costs O(nb + nbranch) time and
// memory (one evaluation of the power flow into a vector of its nc rows
// and one pass over the bounds and the branches; no matrix). It panics if
// len(x) ≠ nx or len(y) ≠ ny.
func (m *Model) Violations(x, y []float64) Violation {
	m.checkY("Violations", y)
	_, _, npf := m.pf.Dims()
	c := make([]float64, npf)
	m.pf.Eval(x, y, c, nil)
	var v Violation
	for _, r := range c {
		v.PowerFlow = worse(v.PowerFlow, math.Abs(r))
	}
	_ = eachBound(m.Case, func(col int, lo, hi float64) error {
		v.Bounds = worse(v.Bounds, worse(y[col]-hi, lo-y[col]))
		return nil
	})
	nb := len(m.Case.Buses)
	for _, br := range m.Case.Branches {
		f, t := br.From, br.To
		if !math.IsInf(br.RateA, 1) {
			yff, yft, ytf, ytt := br.Admittances()
			vf, vt := cmplx.Rect(y[f], y[nb+f]), cmplx.Rect(y[t], y[nb+t])
			sf := vf * cmplx.Conj(yff*vf+yft*vt)
			st := vt * cmplx.Conj(ytf*vf+ytt*vt)
			v.Thermal = worse(v.Thermal, worse(cmplx.Abs(sf), cmplx.Abs(st))-br.RateA)
		}
		d := y[nb+f] - y[nb+t]
		if br.AngMax < 2*math.Pi {
			v.Angle = worse(v.Angle, d-br.AngMax)
		}
		if br.AngMin > -2*math.Pi {
			v.Angle = worse(v.Angle, br.AngMin-d)
		}
	}
	return v
}
