package acopf

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/enforce-nn/enforce/solvers"
)

// NearestPointNLP returns the problem that projecting ŷ onto the model's
// constraints at loads x solves, as a solvers.SparseNLP for a reference
// solver (IPOPT through solvers/ipopt):
//
//	min_y ½ Σ_i w_i (y_i − ŷ_i)²
//	s.t.  c(x, y) = 0                                       (PowerFlow)
//	      Vmin ≤ Vm ≤ Vmax, Pmin ≤ Pg ≤ Pmax, Qmin ≤ Qg ≤ Qmax  (Limits, as variable bounds)
//
// with w = 1 when w is nil (the orthogonal projection, AdaNP's Identity
// weights). Its constraints are those of NLP with line limits dropped
// (Formulation{NoFlowLimits: true, NoAngleLimits: true}), which are those
// of Model.Constraint. It returns an error if x, ŷ or w have the wrong
// length, or a weight is not positive and finite.
func (m *Model) NearestPointNLP(x, yhat, w []float64) (*solvers.SparseNLP, error) {
	_, ny := m.Dims()
	if len(yhat) != ny || w != nil && len(w) != ny {
		return nil, fmt.Errorf("acopf: Model.NearestPointNLP: len(ŷ) = %d, len(w) = %d, want %d", len(yhat), len(w), ny)
	}
	p, err := m.NLP(x, Formulation{NoFlowLimits: true, NoAngleLimits: true})
	if err != nil {
		return nil, err
	}
	wt := make([]float64, ny)
	for i := range wt {
		wt[i] = 1
		if w != nil {
			if !(w[i] > 0) || math.IsInf(w[i], 1) {
				return nil, fmt.Errorf("acopf: Model.NearestPointNLP: w[%d] = %v, want positive and finite", i, w[i])
			}
			wt[i] = w[i]
		}
	}
	yh := append([]float64(nil), yhat...)
	p.Objective = func(y []float64) float64 {
		var f float64
		for i, v := range y {
			d := v - yh[i]
			f += wt[i] * d * d
		}
		return f / 2
	}
	p.Grad = func(y, grad []float64) {
		for i, v := range y {
			grad[i] = wt[i] * (v - yh[i])
		}
	}
	// The power flow's curvature from NLP's Hessian with σ = 0 (no
	// generation cost), and σ·W on the diagonal, appended.
	nh := len(p.HessRows)
	for i := range ny {
		p.HessRows, p.HessCols = append(p.HessRows, i), append(p.HessCols, i)
	}
	hess := p.Hessian
	p.Hessian = func(y []float64, sigma float64, lambda, vals []float64) {
		hess(y, 0, lambda, vals[:nh])
		for i := range ny {
			vals[nh+i] = sigma * wt[i]
		}
	}
	return p, nil
}

// Perturbation describes the random operating points Perturb draws
// around a point y: with independent standard normal draws ξ,
//
//	Vm_i ← Vm_i·(1 + Vm·ξ),  Va_i ← Va_i + Va·ξ (radians, every bus),
//	Pg_j ← Pg_j·(1 + PQ·ξ),  Qg_j ← Qg_j·(1 + PQ·ξ),
//
// so that Vm and the injections move by a relative amount and the angles
// by an absolute one (a generator at zero injection stays there).
type Perturbation struct {
	// Vm is the relative standard deviation of the voltage magnitudes,
	// Va the standard deviation of the angles in radians, and PQ the
	// relative standard deviation of the generator injections.
	Vm, Va, PQ float64
}

// Perturb writes into dst (length ny, may be y) the point y of the model
// perturbed by p with draws from rng.
func (m *Model) Perturb(dst, y []float64, p Perturbation, rng *rand.Rand) {
	_, ny := m.Dims()
	if len(y) != ny || len(dst) != ny {
		panic(fmt.Sprintf("acopf: Model.Perturb: len(dst), len(y) = %d, %d, want %d", len(dst), len(y), ny))
	}
	nb := len(m.Case.Buses)
	for i, v := range y {
		switch {
		case i < nb:
			dst[i] = v * (1 + p.Vm*rng.NormFloat64())
		case i < 2*nb:
			dst[i] = v + p.Va*rng.NormFloat64()
		default:
			dst[i] = v * (1 + p.PQ*rng.NormFloat64())
		}
	}
}
