package enforce

import (
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/enforce-nn/enforce/internal/dense"
)

// Trace records what VJP needs of a forward pass made by ProjectTrace: per
// sample and step, the iterate y_k, the multipliers μ_k = G_k⁻¹c_k and the
// step length α_k, and, unless they can be had otherwise, the weights
// W_k⁻¹ (AutoDiagonal, BatchDiagonal, TrainableDiagonal), the Jacobian
// B_k and the factorisation of G_k.
// A constant Jacobian (Linear) and its factor are never copied, and with
// Settings.Recompute neither B_k nor G_k's factor is stored: VJP evaluates
// and factors them again. With Implicit and FinalProjector gradients a
// sample keeps one record, at its final point, whatever its depth. On the
// sparse path (PathSparse) a record holds B's nonzeros instead of B and
// never G's factor, which VJP computes again (see PathSparse).
//
// A Trace is reused across calls without allocating once it has grown to
// the largest batch and depth. The zero value is ready to use.
type Trace struct {
	a     *AdaNP
	rows  int
	x     []float64     // rows·nx copy of the inputs
	recs  [][][]float64 // per sample, its step records (reused across calls)
	depth []int         // per sample, the number of records in use
	eig   [][]bool
	grad  GradStats
	// inexact holds, per sample, whether the last VJP's gradient was
	// inexact; stages holds the traces of a smoothed projection's stages
	// (Settings.Smoothing).
	inexact []bool
	stages  *stageTraces
	// eqStage is the trace of Settings.EqualitySteps' equality stage.
	eqStage *Trace
	// bd holds, for BatchDiagonal weights, per depth k: the column means
	// m of |B| over the samples that took step k, and their number.
	bd batchDiagTrace
}

// layout is the layout of one step record: a header (α, 1 if the step
// was bounded by MaxStep, the ε G was formed with, and the θ of a damped
// step, else 0), y, μ, then the optional parts.
type layout struct {
	n, nc         int
	storeD        bool
	storeB        bool
	storeF        bool
	offD, offB    int
	offF, offLam  int
	length        int
	recomputeB    bool
	finalOnly     bool
	recordsFinalY bool
}

const recHeader = 4

func (a *AdaNP) newLayout() layout {
	n, nc := a.n, a.nc
	l := layout{n: n, nc: nc}
	l.finalOnly = a.s.Grad == Implicit || a.s.Grad == FinalProjector
	varying := a.constB == nil
	switch a.s.Weights {
	case AutoDiagonal, BatchDiagonal, TrainableDiagonal:
		l.storeD = varying
	}
	l.storeB = varying && (!a.s.Recompute || l.finalOnly)
	l.storeF = l.storeB
	l.recomputeB = varying && !l.storeB
	off := recHeader + n + nc
	if l.storeD {
		l.offD, off = off, off+n
	}
	if l.storeB {
		l.offB, off = off, off+nc*n
	}
	if l.storeF {
		l.offF, off = off, off+nc*nc
		l.offLam, off = off, off+nc
	}
	l.length = off
	return l
}

// stepRecord is one step record, parsed: views into the trace or the
// workspace.
type stepRecord struct {
	y, mu, d, B []float64
	f           *factor
	alpha       float64
	bounded     bool
	// eps is the ε G was formed with (Settings.Reg plus a damped step's
	// ν) and theta the θ of a damped step (0 otherwise).
	eps, theta float64
}

func (t *Trace) reset(a *AdaNP, x blas64.General, rows int) {
	t.a, t.rows = a, rows
	t.grad = GradStats{}
	t.bd.reset()
	t.x = resize(t.x, rows*a.nx)
	for s := 0; s < rows; s++ {
		copy(t.x[s*a.nx:(s+1)*a.nx], dense.Row(x, s))
	}
	if cap(t.recs) < rows {
		t.recs = append(t.recs[:cap(t.recs)], make([][][]float64, rows-cap(t.recs))...)
		t.eig = append(t.eig[:cap(t.eig)], make([][]bool, rows-cap(t.eig))...)
	}
	t.recs, t.eig = t.recs[:rows], t.eig[:rows]
	t.depth = resize(t.depth, rows)
	clear(t.depth)
	for s := range t.eig {
		t.eig[s] = t.eig[s][:0]
	}
}

// nextRecord appends a step record of the given length for sample s and
// returns it, reusing the slice of an earlier pass where it has that length.
func (t *Trace) nextRecord(s, length int) []float64 {
	k := t.depth[s]
	if k == len(t.recs[s]) {
		t.recs[s] = append(t.recs[s], nil)
	}
	r := t.recs[s][k]
	if len(r) != length {
		r = make([]float64, length)
		t.recs[s][k] = r
	}
	t.depth[s] = k + 1
	return r
}

// push appends a step record for sample s. A nil d stands for fixed
// weights, which are not stored; a float32 Jacobian is stored in float64.
func (t *Trace) push(s int, alpha float64, bounded bool, eps, theta float64, y, mu, d []float64, b jmat, f *factor) {
	l := &t.a.rec
	r := t.nextRecord(s, l.length)
	r[0] = alpha
	r[1] = 0
	if bounded {
		r[1] = 1
	}
	r[2], r[3] = eps, theta
	copy(r[recHeader:], y)
	copy(r[recHeader+l.n:], mu)
	if l.storeD {
		copy(r[l.offD:l.offD+l.n], d)
	}
	if l.storeB {
		b.copyTo(r[l.offB : l.offB+l.nc*l.n])
	}
	if l.storeF {
		copy(r[l.offF:], f.m)
		copy(r[l.offLam:], f.lam)
	}
	t.eig[s] = append(t.eig[s], f.eig)
}

// setAlpha sets the step length of the last record of sample s.
func (t *Trace) setAlpha(s int, alpha float64) {
	t.recs[s][t.depth[s]-1][0] = alpha
}

// pop removes the last step record of sample s.
func (t *Trace) pop(s int) {
	t.depth[s]--
	t.eig[s] = t.eig[s][:len(t.eig[s])-1]
}

// recordAt parses record k of sample s into st on a's path (record or
// recordSparse); it reports false where the sparse path cannot factor G
// again.
func (t *Trace) recordAt(ws *workspace, s, k int, st *stepRecord) bool {
	if t.a.sp != nil {
		return t.recordSparse(ws, s, k, st)
	}
	t.record(ws, s, k, st)
	return true
}

// record parses record k of sample s into st, evaluating and factoring
// what was not stored into ws.
func (t *Trace) record(ws *workspace, s, k int, st *stepRecord) {
	a := t.a
	l := &a.rec
	r := t.recs[s][k]
	st.alpha = r[0]
	st.bounded = r[1] != 0
	st.eps, st.theta = r[2], r[3]
	st.y = r[recHeader : recHeader+l.n]
	st.mu = r[recHeader+l.n : recHeader+l.n+l.nc]
	switch {
	case l.storeB:
		st.B = r[l.offB : l.offB+l.nc*l.n]
	case a.constB != nil:
		st.B = a.constB
	default:
		a.c.Eval(t.xrow(s), st.y, ws.cNew, ws.b)
		st.B = ws.b
	}
	switch {
	case l.storeD:
		st.d = r[l.offD : l.offD+l.n]
	case a.constB != nil:
		st.d = a.constD
	case a.s.Weights == AutoDiagonal:
		st.d = weights(a, ws, st.B)
	case a.s.Weights == Diagonal:
		st.d = a.diagInv
	default:
		st.d = nil
	}
	switch {
	case l.storeF:
		ws.rf = factor{m: r[l.offF : l.offF+l.nc*l.nc], lam: r[l.offLam : l.offLam+l.nc], eig: t.eig[s][k]}
		st.f = &ws.rf
	case a.constB != nil:
		st.f = &a.constG
	default:
		a.factorize(&ws.g, st.B, st.d, ws, false, st.eps)
		st.f = &ws.g
	}
}

func (t *Trace) xrow(s int) []float64 { return t.x[s*t.a.nx : (s+1)*t.a.nx] }

// Depth returns the number of recorded steps of sample s.
func (t *Trace) Depth(s int) int { return t.depth[s] }

// Bytes returns the memory held by the trace's records, in bytes,
// including records kept from earlier, deeper passes for reuse.
func (t *Trace) Bytes() int {
	total := 8 * cap(t.x)
	for _, rs := range t.recs[:cap(t.recs)] {
		for _, r := range rs {
			total += 8 * cap(r)
		}
	}
	for _, e := range t.eig[:cap(t.eig)] {
		total += cap(e)
	}
	if st := t.stages; st != nil {
		total += st.first.Bytes() + st.pre.Bytes() + st.second.Bytes()
		for i := range st.ladder {
			total += st.ladder[i].Bytes()
		}
	}
	return total
}

// GradStats returns the statistics of the last VJP through this trace.
func (t *Trace) GradStats() GradStats { return t.grad }

// GradStats describes the gradient computed by one VJP call.
type GradStats struct {
	Samples int
	// Inexact counts samples whose gradient is not the exact derivative of
	// the computed map: a step took the eigenvalue-clamped solve (its
	// clamp is not differentiated), the constraint lacks the curvature
	// (HessVec, or MixedHessVec for x) the mode needs, an Implicit
	// gradient fell back to the final projector (the converged point is
	// not a strict local nearest point), or, for Implicit, the computed
	// point is not a KKT point of the nearest-point problem (then the
	// gradient is that of the nearest point, not of the computed one).
	Inexact int
	// MaxGain is the largest ratio ‖∂ℓ/∂ŷ‖/‖∂ℓ/∂ỹ‖ over the samples: how
	// much the projection amplified the gradient.
	MaxGain float64
	// Amplified counts samples whose gain exceeds GainWarning, the sign of
	// a nearly singular Jacobian somewhere along the iteration.
	Amplified int
}

// GainWarning is the gradient gain above which GradStats.Amplified counts
// a sample.
const GainWarning = 1e6

// Exact reports whether every sample's gradient was exact.
func (g GradStats) Exact() bool { return g.Inexact == 0 }
