package enforce

import (
	"errors"
	"fmt"
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
	st.chordLeft--
	st.chord = true
	st.chordFrom = norm2(st.c)
	st.alpha0, st.bounded = a.initialStep(st.delta)
	st.alpha = st.alpha0
	trial(st.yT, st.y, st.delta, st.alpha)
	return true
}
