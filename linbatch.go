package enforce

import (
	"sync"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// The batched projection of a Linear constraint c = C·y − r(x). With a
// constant Jacobian every quantity of a step is linear in the residual, so
// the per-sample products of the step loop become matrix products over a
// block of samples, with operands packed once per AdaNP:
//
//	Δ = Res·K,       K = G⁻¹·C·D          (nc×n)  the directions δ_sᵀ
//	Res = Y·Cᵀ − R,  R = r(X), once        (n×nc)  the residuals c_sᵀ
//	M = Res·G⁻¹                             (nc×nc) the multipliers μ_sᵀ (traces only)
//	W = Ḡ·Kᵀ,  Ḡ ← Ḡ − α·W·C               (backward: w_sᵀ and the projector)
//
// where D = W⁻¹ is the constant diagonal of the weights (I, Diagonal, or
// AutoDiagonal's, computed once from C). Each sample still runs the state
// machine of driver.go (its own depth, tolerance, stall and stop
// decisions) with the scalars of the per-sample path; only the
// arithmetic is grouped. The products run on the package's float64
// kernel (sgemm.MulPacked64), which accumulates every entry over k in the
// same order whatever the number of rows multiplied, and blocks of linRows
// samples are fixed, so the result does not depend on GOMAXPROCS or on
// which other samples are still iterating. The numbers differ from the
// per-sample path's by rounding only: δ = D·Cᵀ·(G⁻¹c) there and c·K here,
// which agree to about cond(G)·1e-16 relative.
//
// When it applies (linBatchable): the constraint is a Linear or a Stack of
// Linears (Capabilities.linear; not a hand-written constraint with a
// constant Jacobian, whose Eval is arbitrary code and whose curvature
// products the batch would not call); G = C·D·Cᵀ + εI has a Cholesky factor (a rank-deficient
// C takes the clamped eigen-solve per sample, whose amplified rounding the
// batch would not reproduce); and no step is bounded by Settings.MaxStep.
// The forward pass also needs LineSearch off (backtracking is a per-sample
// dialogue with the evaluations) and is not used by Check, which takes no
// step. Settings.Precision does not matter: with a constant Jacobian every
// step is float64 in the per-sample path as well (G is factored once in
// float64, and Linear has no single-precision evaluation), and a rejected
// trial, where Float32 re-evaluates the iterate before stopping, ends
// exactly as in Float64 (the sample stops with its last iterate). The
// backward pass serves Unrolled, Projector and FinalProjector, which
// coincide step by step for an affine constraint with fixed weights (the
// curvature terms are zero); Implicit keeps its per-sample conjugate
// gradients.

// linRows is the number of samples multiplied together: a multiple of the
// 2·MR rows of the AVX-512 float64 kernel.
const linRows = 48

// linBatch holds the packed operands of the batched path of an AdaNP.
type linBatch struct {
	l    *linearConstraint
	once sync.Once
	ct   sgemm.Panels64 // Cᵀ, n×nc
	k    sgemm.Panels64 // K = G⁻¹·C·D, nc×n
	kt   sgemm.Panels64 // Kᵀ, n×nc
	c    sgemm.Panels64 // C, nc×n
	ginv sgemm.Panels64 // G⁻¹, nc×nc
	pool sync.Pool      // *linScratch
}

// linBatchable reports whether the batched path can serve a: see the
// comment at the top of this file. The forward pass checks LineSearch
// itself.
func (a *AdaNP) linBatchable(k Capabilities) bool {
	return k.linear != nil && a.constB != nil && !a.constG.eig && a.latent == 0 && a.s.MaxStep == 0
}

// prepare packs the operands, once.
func (lb *linBatch) prepare(a *AdaNP) {
	lb.once.Do(func() {
		n, nc := a.n, a.nc
		C := a.constB
		ct := make([]float64, n*nc)
		for i := 0; i < nc; i++ {
			for j := 0; j < n; j++ {
				ct[j*nc+i] = C[i*n+j]
			}
		}
		lb.ct.Pack(n, nc, ct, nc)
		lb.c.Pack(nc, n, C, n)
		// G⁻¹, column by column, with the factor the per-sample path uses.
		ginv := make([]float64, nc*nc)
		col := make([]float64, nc)
		for j := 0; j < nc; j++ {
			clear(col)
			col[j] = 1
			dense.CholSolve(a.constG.m, nc, col)
			for i, v := range col {
				ginv[i*nc+j] = v
			}
		}
		lb.ginv.Pack(nc, nc, ginv, nc)
		// K = G⁻¹·(C·D), column by column.
		k := make([]float64, nc*n)
		for j := 0; j < n; j++ {
			dj := 1.0
			if a.constD != nil {
				dj = a.constD[j]
			}
			for i := 0; i < nc; i++ {
				col[i] = C[i*n+j] * dj
			}
			dense.CholSolve(a.constG.m, nc, col)
			for i, v := range col {
				k[i*n+j] = v
				ct[j*nc+i] = v // Kᵀ, reusing ct
			}
		}
		lb.k.Pack(nc, n, k, n)
		lb.kt.Pack(n, nc, ct, nc)
		w := max(n, nc)
		lb.pool.New = func() any {
			return &linScratch{
				y:     make([]float64, linRows*n),
				c:     make([]float64, linRows*nc),
				r:     make([]float64, linRows*nc),
				in:    make([]float64, linRows*w),
				out:   make([]float64, linRows*w),
				mu:    make([]float64, linRows*nc),
				pa:    make([]float64, sgemm.WorkLen(linRows, w)-sgemm.MR*sgemm.NR),
				tile:  make([]float64, sgemm.MR*sgemm.NR),
				sc:    make([]scalars, linRows),
				act:   make([]int, 0, linRows),
				depth: make([]int, linRows),
			}
		}
	})
}

// linScratch is one worker's block of samples.
type linScratch struct {
	y, c, r []float64 // linRows×n iterates, ×nc residuals and r(x)
	in, out []float64 // linRows×max(n, nc): a product's rows, and its result
	mu      []float64 // linRows×nc multipliers
	pa      []float64 // in, packed
	tile    []float64
	sc      []scalars
	act     []int // the block's samples still iterating, by position
	depth   []int
	jx      []float64 // linRows×nc×nx: ∂c/∂x, on first use
	gx      []float64 // linRows×nx
}

// mul writes out = in·p for the m rows of in (m×p.K, row-major).
func (sc *linScratch) mul(m int, p *sgemm.Panels64) {
	sgemm.PackA64(m, p.K, sc.in, p.K, sc.pa)
	sgemm.MulPacked64(m, sc.pa, p, 0, p.N, sc.out, p.N, sc.tile)
}

// linForward is the batched forward pass over one batch.
type linForward struct{ b *batch }

// Run projects samples [lo, hi), linRows at a time.
func (f *linForward) Run(lo, hi int) {
	b := f.b
	lb := b.a.lin
	sc := lb.pool.Get().(*linScratch)
	ws := b.a.pool.Get().(*workspace)
	for s0 := lo; s0 < hi; s0 += linRows {
		b.linBlock(ws, sc, s0, min(linRows, hi-s0))
	}
	b.a.pool.Put(ws)
	lb.pool.Put(sc)
}

// linRHS writes r(x_s) into r (zero for a nil RHS) and reports false,
// recording the panic, if the RHS panicked.
func (b *batch) linRHS(s int, r []float64) (ok bool) {
	rhs := b.a.lin.l.r
	if rhs == nil {
		clear(r)
		return true
	}
	defer func() {
		if e := recover(); e != nil {
			b.fail(s, e)
			ok = false
		}
	}()
	rhs(dense.Row(b.x, s), r, nil)
	return true
}

// linBlock projects the m samples from s0 on, with the state machine of
// driver.go (start, accept, step, finish) and the steps' arithmetic as
// products over the samples still iterating.
func (b *batch) linBlock(ws *workspace, sc *linScratch, s0, m int) {
	a := b.a
	lb := a.lin
	n, nc := a.n, a.nc
	act := sc.act[:0]
	for p := 0; p < m; p++ {
		s := s0 + p
		xs, yhat := dense.Row(b.x, s), dense.Row(b.yhat, s)
		if !allFinite(xs) || !allFinite(yhat) {
			b.flags[s] |= flagBadInput
			continue
		}
		if !b.linRHS(s, sc.r[p*nc:(p+1)*nc]) {
			continue
		}
		copy(sc.y[p*n:(p+1)*n], yhat)
		copy(sc.in[len(act)*n:], yhat)
		act = append(act, p)
	}
	// The first evaluation, at ŷ.
	sc.mul(len(act), &lb.ct)
	for q, p := range act {
		c := sc.c[p*nc : (p+1)*nc]
		sub(c, sc.out[q*nc:(q+1)*nc], sc.r[p*nc:(p+1)*nc])
	}
	keep := act[:0]
	for _, p := range act {
		s, c := s0+p, sc.c[p*nc:(p+1)*nc]
		if !allFinite(c) {
			b.flags[s] |= flagBadConstraint
			continue
		}
		b.beforeMax[s], b.beforeSum[s] = absStats(c)
		st := &sc.sc[p]
		*st = scalars{measure: a.s.Measure.reduce(c), jAtY: true}
		st.best = st.measure
		keep = append(keep, p)
	}
	act = keep
	for {
		// Samples that stop; the others' residuals go into in.
		keep = act[:0]
		for _, p := range act {
			st := sampleState{scalars: sc.sc[p]}
			if !b.continues(&st) {
				b.linFinish(ws, sc, s0, p)
				continue
			}
			copy(sc.in[len(keep)*nc:], sc.c[p*nc:(p+1)*nc])
			keep = append(keep, p)
		}
		act = keep
		if len(act) == 0 {
			break
		}
		mAct := len(act)
		if b.record {
			sc.mul(mAct, &lb.ginv)
			copy(sc.mu, sc.out[:mAct*nc])
		}
		sc.mul(mAct, &lb.k) // the directions
		// Trial points, into in.
		keep = act[:0]
		for q, p := range act {
			s, delta := s0+p, sc.out[q*n:(q+1)*n]
			if !allFinite(delta) {
				b.flags[s] |= flagStopped
				b.linFinish(ws, sc, s0, p)
				continue
			}
			y := sc.y[p*n : (p+1)*n]
			if b.record {
				b.tr.push(s, 1, false, a.s.Reg, 0, y, sc.mu[q*nc:(q+1)*nc], a.constD, jmat{b: a.constB}, &a.constG)
			}
			trial(sc.in[len(keep)*n:(len(keep)+1)*n], y, delta, 1)
			keep = append(keep, p)
		}
		act = keep
		if len(act) == 0 {
			break
		}
		// The trials' residuals: take them, or stop.
		sc.mul(len(act), &lb.ct)
		keep = act[:0]
		for q, p := range act {
			s := s0 + p
			cT := sc.out[q*nc : (q+1)*nc]
			sub(cT, cT, sc.r[p*nc:(p+1)*nc])
			if !allFinite(cT) {
				if b.record {
					b.tr.pop(s)
				}
				b.flags[s] |= flagStopped
				b.linFinish(ws, sc, s0, p)
				continue
			}
			copy(sc.y[p*n:(p+1)*n], sc.in[q*n:(q+1)*n])
			copy(sc.c[p*nc:(p+1)*nc], cT)
			st := &sc.sc[p]
			st.depth++
			if m := a.s.Measure.reduce(cT); m < 0.99*st.best {
				st.measure, st.best, st.since = m, m, 0
			} else if st.measure, st.since = m, st.since+1; st.since >= stallSteps && st.depth >= a.s.MinDepth && m > a.s.Tol {
				b.flags[s] |= flagStalled
				b.linFinish(ws, sc, s0, p)
				continue
			}
			keep = append(keep, p)
		}
		act = keep
	}
	sc.act = act[:0]
}

// linFinish is finish for position p of the block from s0.
func (b *batch) linFinish(ws *workspace, sc *linScratch, s0, p int) {
	n, nc := b.a.n, b.a.nc
	st := sampleState{y: sc.y[p*n : (p+1)*n], c: sc.c[p*nc : (p+1)*nc], scalars: sc.sc[p]}
	b.finish(ws, s0+p, &st)
}

// sub writes dst = a − b.
func sub(dst, a, b []float64) {
	for i, v := range a {
		dst[i] = v - b[i]
	}
}

// linBackward is the batched backward pass over one trace.
type linBackward struct{ j *vjpJob }

// Run back-propagates samples [lo, hi), linRows at a time.
func (f *linBackward) Run(lo, hi int) {
	lb := f.j.a.lin
	sc := lb.pool.Get().(*linScratch)
	for s0 := lo; s0 < hi; s0 += linRows {
		f.j.linBlock(sc, s0, min(linRows, hi-s0))
	}
	lb.pool.Put(sc)
}

// linJacobianX writes ∂c/∂x of sample s into jx, and reports false,
// recording the panic, if the constraint's code panicked.
func (j *vjpJob) linJacobianX(s int, jx []float64) (ok bool) {
	defer func() {
		if e := recover(); e != nil {
			j.panics.record(s, e)
			ok = false
		}
	}()
	j.a.k.JacobianX(j.tr.xrow(s), j.tr.recs[s][0][recHeader:recHeader+j.a.n], jx)
	return true
}

// linBlock back-propagates the m samples from s0 on: for each recorded
// step, from the last, ḡ ← ḡ − α·Cᵀw with w = G⁻¹·C·D·ḡ (backStep with
// B = C, fixed weights and zero curvature), and ∂ℓ/∂x −= α·J_xᵀw.
func (j *vjpJob) linBlock(sc *linScratch, s0, m int) {
	a, tr := j.a, j.tr
	lb := a.lin
	n, nc, nx := a.n, a.nc, a.nx
	if j.wantX && len(sc.jx) < linRows*nc*nx {
		sc.jx = make([]float64, linRows*nc*nx)
		sc.gx = make([]float64, linRows*nx)
	}
	exact := a.exactGradient(j.wantX)
	depth := 0
	g := sc.y // the gradients ḡ, linRows×n
	for p := 0; p < m; p++ {
		s := s0 + p
		sc.depth[p] = tr.Depth(s)
		j.load(s, g[p*n:(p+1)*n], nil)
		if j.wantX {
			clear(sc.gx[p*nx : (p+1)*nx])
			// J_x does not depend on y: one evaluation (at the first
			// step's iterate) serves every step.
			if sc.depth[p] > 0 && !j.linJacobianX(s, sc.jx[p*nc*nx:(p+1)*nc*nx]) {
				sc.depth[p] = -1
				continue
			}
		}
		depth = max(depth, sc.depth[p])
	}
	for k := depth - 1; k >= 0; k-- {
		act := sc.act[:0]
		for p := 0; p < m; p++ {
			if sc.depth[p] > k {
				copy(sc.in[len(act)*n:], g[p*n:(p+1)*n])
				act = append(act, p)
			}
		}
		sc.mul(len(act), &lb.kt) // w
		w := sc.mu[:len(act)*nc]
		copy(w, sc.out)
		copy(sc.in, w)
		sc.mul(len(act), &lb.c) // Cᵀw
		for q, p := range act {
			s := s0 + p
			alpha := tr.recs[s][k][0]
			gp, acc := g[p*n:(p+1)*n], sc.out[q*n:(q+1)*n]
			for i, v := range acc {
				gp[i] -= alpha * v
			}
			if j.wantX {
				jx, wq, gx := sc.jx[p*nc*nx:(p+1)*nc*nx], w[q*nc:(q+1)*nc], sc.gx[p*nx:(p+1)*nx]
				for mm := 0; mm < nx; mm++ {
					var v float64
					for i, wi := range wq {
						v += jx[i*nx+mm] * wi
					}
					gx[mm] -= alpha * v
				}
			}
		}
		sc.act = act[:0]
	}
	for p := 0; p < m; p++ {
		if sc.depth[p] < 0 {
			continue
		}
		s := s0 + p
		j.inexact[s] = !exact
		var gx []float64
		if j.wantX {
			gx = sc.gx[p*nx : (p+1)*nx]
		}
		j.store(s, g[p*n:(p+1)*n], gx)
	}
}

// linVJPBatchable reports whether VJP takes the batched path: a
// linBatchable AdaNP with a gradient mode other than Implicit.
func (a *AdaNP) linVJPBatchable() bool {
	return a.lin != nil && !a.perSample && a.s.Grad != Implicit
}

// linForwardBatchable reports whether a forward pass takes the batched
// path.
func (a *AdaNP) linForwardBatchable(noSteps bool) bool {
	return a.lin != nil && !a.perSample && !noSteps && !a.s.LineSearch
}
