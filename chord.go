package enforce

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
)

// chordRate is the decrease of ‖c‖₂ a chord step must give to be kept
// (Settings.Chord): ‖c(y + δ)‖₂ ≤ chordRate·‖c(y)‖₂.
const chordRate = 0.5

// factorizations counts the sparse path's numeric factorisations of G, for
// the tests and benchmarks that measure what Settings.Chord saves.
var factorizations atomic.Int64

// checkChord rejects Settings.Chord where it cannot act as documented
// (BatchDiagonal and TrainableDiagonal weights are rejected before: the
// first by their gradient modes, the second by the sparse path).
func (a *AdaNP) checkChord() error {
	if a.s.Chord == 0 {
		return nil
	}
	switch {
	case a.sp == nil:
		return errors.New("enforce: Settings.Chord is implemented on the sparse path (a constraint with Capabilities.Sparse, Path Auto or Sparse)")
	case a.s.Grad == Unrolled || a.s.Grad == Projector:
		return fmt.Errorf("enforce: Settings.Chord supports the Implicit and FinalProjector gradients, which depend only on the final point, not %v (chord steps are not recorded for unrolling)", a.s.Grad)
	}
	return nil
}

// keepFactor stores, after a fresh sparse step's factorisation, what the
// chord steps that follow reuse with it: B's values and W⁻¹'s diagonal d
// (nil: the identity).
func (b *batch) keepFactor(ws *workspace, st *sampleState, vals, d []float64) {
	copy(ws.chordB, vals)
	st.chordD = d != nil
	if d != nil {
		copy(ws.chordD, d)
	}
	st.chordLeft = b.a.s.Chord
}

// chordStep computes, for sample s at iterate st, a chord step with the
// factor of the last fresh step (still in ws.sp.cur): δ = D_j·B_jᵀ·G_j⁻¹·c(y),
// B_j, D_j and G_j those of the step that factored it. It reports false
// if δ is not finite (a fresh step is then taken).
func (b *batch) chordStep(ws *workspace, st *sampleState) bool {
	a := b.a
	if a.s.ChordCG > 0 {
		if !b.cgStep(ws, st) {
			return false
		}
	} else {
		copy(ws.mu, st.c)
		ws.sp.cur.Solve(ws.mu)
		a.sp.mulTransVec(st.delta, ws.chordB, ws.mu)
		var d []float64
		if st.chordD {
			d = ws.chordD
		}
		if !scaleFinite(st.delta, d) {
			return false
		}
	}
	st.chordLeft--
	st.chord = true
	st.chordFrom = norm2(st.c)
	st.alpha0, st.bounded = a.initialStep(st.delta)
	st.alpha = st.alpha0
	trial(st.yT, st.y, st.delta, st.alpha)
	return true
}

// cgForcing caps the forcing term η of Settings.ChordCG's solves.
const cgForcing = 0.1

// cgStep computes, for Settings.ChordCG, the inexact Newton direction at
// iterate st: μ solving G(y)·μ = c(y), G(y) = B·D·Bᵀ + εI with B the
// Jacobian at y (st.J), by conjugate gradients preconditioned by the
// stored factor (ws.sp.cur), to ‖G(y)μ − c‖₂ ≤ min(cgForcing, √‖c‖₂)·‖c‖₂,
// and δ = D·Bᵀ·μ into st.delta. It reports false where the Jacobian at y
// is not at hand, the solve does not reach the forcing term within
// ChordCG iterations, a curvature pᵀGp is not positive, or δ is not
// finite: a fresh step is then taken.
func (b *batch) cgStep(ws *workspace, st *sampleState) bool {
	a := b.a
	if !st.jAtY || st.J == nil {
		return false
	}
	vals := st.J
	d := a.sparseWeights(ws, vals)
	shift := st.damp(a)
	cn := norm2(st.c)
	target := math.Min(cgForcing, math.Sqrt(cn)) * cn
	mu, r, z, p, q, t := ws.mu, ws.cgR, ws.cgZ, ws.cgP, ws.cgQ, ws.cgT
	clear(mu)
	copy(r, st.c)
	copy(z, r)
	ws.sp.cur.Solve(z)
	copy(p, z)
	rz := dot(r, z)
	done := false
	for range a.s.ChordCG {
		// q = G(y)·p = B·D·Bᵀ·p + shift·p.
		a.sp.mulTransVec(t, vals, p)
		if d != nil {
			for k := range t {
				t[k] *= d[k]
			}
		}
		a.sp.mulVec(q, vals, t)
		for i := range q {
			q[i] += shift * p[i]
		}
		pq := dot(p, q)
		if !(pq > 0) || math.IsInf(pq, 1) {
			return false
		}
		alpha := rz / pq
		for i := range mu {
			mu[i] += alpha * p[i]
			r[i] -= alpha * q[i]
		}
		if norm2(r) <= target {
			done = true
			break
		}
		copy(z, r)
		ws.sp.cur.Solve(z)
		rzNew := dot(r, z)
		beta := rzNew / rz
		rz = rzNew
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	if !done {
		return false
	}
	a.sp.mulTransVec(st.delta, vals, mu)
	return scaleFinite(st.delta, d)
}
