package enforce

import (
	"errors"
	"math"
)

// This file holds the step control of Settings.Damping (Levenberg–
// Marquardt steps with an adaptive θ) shared by the dense and sparse
// paths: the driver calls damp before a step's factorisation,
// prepareSearch after its direction, and adaptDamping when a step is
// accepted; backStep calls dampingVJP on both paths.

// Bounds and factors of θ's adaptation.
const (
	dampingMin    = 1e-12 // θ is not divided below this
	dampingGrow   = 4     // θ's factor after a poor step
	dampingLowRho = 0.25  // ρ below this: a poor step
	dampingHiRho  = 0.75  // ρ above this: a good step
)

// search reports whether steps are backtracked (LineSearch, or Damping,
// which implies it).
func (a *AdaNP) search() bool { return a.s.LineSearch || a.s.Damping > 0 }

// checkDamping rejects Settings.Damping where it cannot act as documented.
func (a *AdaNP) checkDamping(k Capabilities) error {
	if a.s.Damping == 0 {
		return nil
	}
	if k.ConstantJacobian != nil {
		return errors.New("enforce: Settings.Damping has no effect on a constraint with a constant Jacobian (one full step solves it): leave it zero")
	}
	if a.lo && a.sp == nil {
		return errors.New("enforce: Settings.Damping does not support Precision Float32 on the dense path")
	}
	return nil
}

// damp returns the ε of the next step's G for a sample at iterate st:
// Settings.Reg, plus ν = θ·‖c‖₂ (stored in st.nu) on a damped step.
func (st *sampleState) damp(a *AdaNP) float64 {
	if a.s.Damping == 0 {
		return a.s.Reg
	}
	st.nu = st.theta * norm2(st.c)
	return a.s.Reg + st.nu
}

// prepareSearch records, for the backtracking of a step with direction δ
// and bd = B·δ, the merit ½‖c‖² at y, its decrease rate cᵀBδ along δ, and
// ‖Bδ‖², with which the linearisation predicts the decrease
// α·cᵀBδ − ½α²‖Bδ‖² of a step of length α.
func (st *sampleState) prepareSearch(bd []float64) {
	st.m0 = merit(st.c)
	st.slope = dot(st.c, bd)
	st.quad = dot(bd, bd)
}

// adaptDamping updates θ after an accepted step with merit mT at the
// trial point: ×4 when the ratio ρ of actual to predicted decrease of
// ½‖c‖² (for the step length the line search accepted) was below ¼ or no
// decrease was predicted, ÷4 (down to dampingMin) when ρ was above ¾.
// Backtracking alone does not raise θ: the line search has already
// shortened the step, and raising θ for it as well (the rule before
// 2026-12-07) let θ·‖c‖ settle above G's small eigenvalues near the set,
// where steps then crawl (docs/numerics.md, "The damping's rule").
func (st *sampleState) adaptDamping(mT float64) {
	pred := st.alpha*st.slope - 0.5*st.alpha*st.alpha*st.quad
	rho := (st.m0 - mT) / pred
	switch {
	case !(pred > 0) || rho < dampingLowRho:
		st.theta *= dampingGrow
	case rho > dampingHiRho:
		st.theta = math.Max(st.theta/dampingGrow, dampingMin)
	}
}

// dampingVJP adds to the backward pass of a damped step (st.theta > 0)
// the terms of ν = θ·‖c‖₂'s dependence on y and x. With w = G⁻¹·B·D·ḡ'
// in ws.w (backStep), ∂δ/∂ν = −D·Bᵀ·G⁻¹·μ, so ḡ'ᵀ·∂δ/∂ν = −wᵀμ, and
// ∇_y ν = θ·Bᵀc/‖c‖, ∇_x ν = θ·J_xᵀc/‖c‖: it subtracts
// κ·Bᵀc from acc and κ·J_xᵀc from xacc (both later scaled by −α), with
// κ = θ·wᵀμ/‖c‖. c is recovered from the record as G·μ =
// B·D·Bᵀμ + ε·μ, with Bᵀμ in bmu. mulVec and mulTransVec apply B and
// Bᵀ (dense or sparse); jxT, when x-gradients are wanted, writes J_xᵀc.
func (a *AdaNP) dampingVJP(ws *workspace, st *stepRecord, mulVec, mulTransVec func(dst, v []float64), jxT func(c, out []float64), acc, xacc []float64) {
	c, t := ws.cEval, ws.tmpN[:a.n]
	for i, v := range ws.bmu {
		if st.d != nil {
			v *= st.d[i]
		}
		t[i] = v
	}
	mulVec(c, t)
	for i, m := range st.mu {
		c[i] += st.eps * m
	}
	nrm := norm2(c)
	if !(nrm > 0) {
		return
	}
	kappa := st.theta * dot(ws.w, st.mu) / nrm
	mulTransVec(t, c)
	for i, v := range t {
		acc[i] -= kappa * v
	}
	if jxT != nil {
		jxT(c, ws.gxHV)
		for m, v := range ws.gxHV {
			xacc[m] -= kappa * v
		}
	}
}
