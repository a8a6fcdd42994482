package enforce

import (
	"errors"
	"fmt"
	"math"

	"github.com/enforce-nn/enforce/internal/par"
)

// BatchDiagonal weights (see the constant): the samples of a batch take
// their steps in lockstep, depth by depth, so that the weights of step k
// can be computed from the Jacobians of every sample that takes it. The
// backward pass runs depth by depth too, since the gradient of one sample
// reaches the others through the shared weights.

// batchDiagTrace records, per depth k, the column means m of |B| from which
// the weights of step k were computed and the number of samples averaged.
type batchDiagTrace struct {
	m [][]float64
	n []int
}

func (t *batchDiagTrace) reset() {
	t.m, t.n = t.m[:0], t.n[:0]
}

// push appends the record of the next depth.
func (t *batchDiagTrace) push(m []float64, count int) {
	k := len(t.n)
	if k < cap(t.m) {
		t.m = t.m[:k+1]
	} else {
		t.m = append(t.m, nil)
	}
	t.m[k] = append(t.m[k][:0], m...)
	t.n = append(t.n, count)
}

// rowEval is an EvalBatch for constraints without one: Eval row by row,
// in parallel, for the lockstep driver l, whose act lists the samples of
// the rows evaluated. A panic names the sample.
type rowEval struct {
	a           *AdaNP
	l           *lockstep
	x, y, c, jy []float64
}

func (r *rowEval) eval(rows int, x, y, c, jy []float64) {
	r.x, r.y, r.c, r.jy = x, y, c, jy
	par.For(rows, grain, r)
}

func (r *rowEval) Run(lo, hi int) {
	a := r.a
	n, nx, nc := a.n, a.nx, a.nc
	s := lo
	defer func() {
		if v := recover(); v != nil {
			panic(fmt.Sprintf("Eval of sample %d: %v", r.l.act[s], v))
		}
	}()
	for ; s < hi; s++ {
		a.c.Eval(r.x[s*nx:(s+1)*nx], r.y[s*n:(s+1)*n], r.c[s*nc:(s+1)*nc], r.jy[s*nc*n:(s+1)*nc*n])
	}
}

// runBatchDiagonal projects the whole batch with BatchDiagonal weights.
// Every round, all active samples are evaluated at their trial points and
// accept them, then the weights of the next depth are computed from the
// samples that go on, which then take their step. Without line search and
// single precision (which NewAdaNP rules out for BatchDiagonal) accept
// never asks for another evaluation, so round k holds every sample's step k.
// It returns an error if constraint code panics.
func (l *lockstep) runBatchDiagonal(b *batch, rows int) error {
	a := b.a
	be := a.k.EvalBatch
	if be == nil {
		be = (&rowEval{a: a, l: l}).eval
	}
	l.reset(b, be, rows)
	for s := 0; s < rows; s++ {
		st, _ := l.state(s)
		ok := b.start(s, &st)
		l.sc[s] = st.scalars
		if ok {
			l.act = append(l.act, s)
			l.next[s] = nextEval
		}
	}
	m := make([]float64, a.n)
	d := make([]float64, a.n)
	for len(l.act) > 0 {
		if err := l.evaluate(); err != nil {
			return err
		}
		l.phase = phaseAccept
		par.For(len(l.act), grain, l)
		l.compact()
		if len(l.act) == 0 {
			break
		}
		if count := l.batchMeans(m); count > 0 {
			autoWeights(d, m, 1, a.n) // m ≥ 0: AutoDiagonal's rule on one row m
			b.dcur = d
			if b.record {
				b.tr.bd.push(m, count)
			}
		}
		l.phase = phaseStep
		par.For(len(l.act), grain, l)
		l.compact()
	}
	return nil
}

// batchMeans writes into m the column means of |B| over the samples of act
// that take another step, m_j = Σ_s Σ_i |B_s,ij| / (count·nc), summed in
// sample order, and returns their count.
func (l *lockstep) batchMeans(m []float64) (count int) {
	b := l.b
	a := b.a
	n, nc := a.n, a.nc
	clear(m)
	for _, s := range l.act {
		if !b.continues(&sampleState{scalars: l.sc[s]}) {
			continue
		}
		p := l.pos[s]
		J := l.ja[p*nc*n : (p+1)*nc*n]
		for i := 0; i < nc; i++ {
			for j, v := range J[i*n : (i+1)*n] {
				m[j] += math.Abs(v)
			}
		}
		count++
	}
	if count > 0 {
		scale := 1 / float64(count*nc)
		for j := range m {
			m[j] *= scale
		}
	}
	return count
}

// meansVJP maps dbar = ∂ℓ/∂D for D = W⁻¹ computed from the column means m
// (d_j = max(m_j, 1), t = max_l d_l, D_j = d_j/t) to ∂ℓ/∂m, written into
// mbar, and reports whether any entry is non-zero:
//
//	∂ℓ/∂m_j = [m_j > 1]·(dbar_j/t − [j = argmax d]·Σ_l dbar_l·d_l/t²).
//
// At the kinks it takes the branch of the forward pass, as
// autoDiagonalVJP does.
func meansVJP(m, dbar, mbar []float64) bool {
	top, arg := 0.0, 0
	for j, v := range m {
		if d := math.Max(v, 1); d > top {
			top, arg = d, j
		}
	}
	var topBar float64
	for j, v := range m {
		topBar += dbar[j] * math.Max(v, 1)
	}
	topBar /= top * top
	any := false
	for j, v := range m {
		g := 0.0
		if v > 1 {
			g = dbar[j] / top
			if j == arg {
				g -= topBar
			}
		}
		mbar[j] = g
		any = any || g != 0
	}
	return any
}

// batchDiagVJP is the Unrolled backward pass for BatchDiagonal weights. At
// depth k, from the deepest down, each sample that took step k goes
// through backStep with the weights held fixed and adds its share
// −α·p ⊙ Bᵀμ of ∂ℓ/∂D_k (see backStep); the sum over the samples gives
// ∂ℓ/∂m through meansVJP, and each sample s then receives
// ∂ℓ/∂B_s,ij = sign(B_s,ij)·∂ℓ/∂m_j/(N_k·nc), carried to its iterate by
// Σ_i ∇²c_i·(∂ℓ/∂B_s,i·) (and to x by the mixed second derivatives).
type batchDiagVJP struct {
	j     *vjpJob
	l     *vjpLock // buffers: g, gx (per sample), acc (∂ℓ/∂D per position), act, exact
	k     int
	phase int
	mbar  []float64
	scale float64 // 1/(N_k·nc)
}

const (
	bdBack   = iota // backStep and the sample's share of ∂ℓ/∂D
	bdCouple        // the coupling terms through ∂ℓ/∂m
)

// runBatchDiagonal runs the backward pass of a BatchDiagonal trace.
func (l *vjpLock) runBatchDiagonal(j *vjpJob) error {
	a, tr := j.a, j.tr
	rows, n, nx := tr.rows, a.n, a.nx
	l.j = j
	l.g = resize(l.g, rows*n)
	l.gx = resize(l.gx, rows*nx)
	l.acc = resize(l.acc, rows*n)
	l.act = resize(l.act, rows)[:0]
	l.exact = resize(l.exact, rows)
	depth := 0
	exact := a.exactGradient(j.wantX)
	for s := 0; s < rows; s++ {
		j.load(s, l.g[s*n:(s+1)*n], l.gx[s*nx:(s+1)*nx])
		depth = max(depth, tr.Depth(s))
		l.exact[s] = exact
	}
	if depth > len(tr.bd.n) {
		return errors.New("enforce: VJP: the trace holds no batch-diagonal weights (it was not recorded by ProjectTrace)")
	}
	bv := &batchDiagVJP{j: j, l: l, mbar: make([]float64, n)}
	dsum := make([]float64, n)
	curv, _ := j.curvature()
	for bv.k = depth - 1; bv.k >= 0; bv.k-- {
		l.act = l.act[:0]
		for s := 0; s < rows; s++ {
			if tr.Depth(s) > bv.k {
				l.act = append(l.act, s)
			}
		}
		m := len(l.act)
		if m != tr.bd.n[bv.k] {
			// A sample that weighed in step k did not take it (its G
			// could not be factored, or its trial point was not finite):
			// its part of the coupling is not differentiated.
			for s := range l.exact {
				l.exact[s] = false
			}
		}
		bv.phase = bdBack
		par.For(m, grain, bv)
		if !curv {
			continue
		}
		clear(dsum)
		for p := 0; p < m; p++ {
			for i, v := range l.acc[p*n : (p+1)*n] {
				dsum[i] += v
			}
		}
		if !meansVJP(tr.bd.m[bv.k], dsum, bv.mbar) {
			continue
		}
		bv.scale = 1 / float64(tr.bd.n[bv.k]*a.nc)
		bv.phase = bdCouple
		par.For(m, grain, bv)
	}
	l.storeAll(j, rows, n, nx)
	return nil
}

// Run processes positions [lo, hi) of act in the current phase.
func (bv *batchDiagVJP) Run(lo, hi int) {
	a := bv.j.a
	ws := a.pool.Get().(*workspace)
	for p := lo; p < hi; p++ {
		if !bv.runSample(ws, p) {
			ws = a.newWorkspace()
		}
	}
	a.pool.Put(ws)
}

func (bv *batchDiagVJP) runSample(ws *workspace, p int) (ok bool) {
	j, l := bv.j, bv.l
	a, tr := j.a, j.tr
	n, nc, nx := a.n, a.nc, a.nx
	s := l.act[p]
	dbar := l.acc[p*n : (p+1)*n]
	defer func() {
		if r := recover(); r != nil {
			j.panics.record(s, r)
			clear(dbar)
			ok = false
		}
	}()
	g, gx := l.g[s*n:(s+1)*n], l.gx[s*nx:(s+1)*nx]
	xs := tr.xrow(s)
	var rec stepRecord
	tr.record(ws, s, bv.k, &rec)
	curv, curvX := j.curvature()
	if bv.phase == bdBack {
		if tr.eig[s][bv.k] {
			l.exact[s] = false
		}
		a.backStep(ws, &rec, xs, g, gx, curv, curvX, j.wantX)
		for i := range dbar {
			dbar[i] = -rec.alpha * ws.p[i] * ws.bmu[i]
		}
		if curv {
			h := a.k.HessVec
			h(xs, rec.y, rec.mu, ws.dp, ws.hMu)
			h(xs, rec.y, ws.w, ws.delta, ws.hW)
			finishBackStep(g, ws.acc, ws.hMu, ws.hW, rec.alpha)
		} else {
			finishBackStep(g, ws.acc, nil, nil, rec.alpha)
		}
		return true
	}
	bi := ws.dt
	for i := 0; i < nc; i++ {
		any := false
		for c, v := range rec.B[i*n : (i+1)*n] {
			u := 0.0
			switch {
			case v > 0:
				u = bv.mbar[c] * bv.scale
			case v < 0:
				u = -bv.mbar[c] * bv.scale
			}
			bi[c] = u
			any = any || u != 0
		}
		if !any {
			continue
		}
		clear(ws.unit)
		ws.unit[i] = 1
		a.k.HessVec(xs, rec.y, ws.unit, bi, ws.hv)
		for c, v := range ws.hv {
			g[c] += v
		}
		if curvX {
			a.k.MixedHessVec(xs, rec.y, ws.unit, bi, ws.gxHV)
			for c, v := range ws.gxHV {
				gx[c] += v
			}
		}
	}
	return true
}
