package enforce

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/par"
)

// hessVecBatchFunc is the type of Capabilities.HessVecBatch.
type hessVecBatchFunc = func(rows int, x, y, w, v, out []float64)

// vjpJob is the state of one backward pass.
type vjpJob struct {
	a            *AdaNP
	tr           *Trace
	grad         blas64.General
	gyhat, gx    blas64.General
	wantY, wantX bool
	inexact      []bool
	gain         []float64
	bad          []bool

	// wantT: ∂ℓ/∂θ for TrainableDiagonal weights, accumulated per sample
	// in gth (rows×n).
	wantT bool
	gth   []float64

	panics panicLog

	lock   vjpLock
	linRun linBackward
}

// VJP back-propagates through the projection recorded in tr by
// ProjectTrace: given grad = ∂ℓ/∂ỹ (rows×ny) it writes ∂ℓ/∂ŷ into gyhat
// and ∂ℓ/∂x into gx (rows×nx), both in one pass. Either destination may be
// nil. The gradient follows Settings.Grad; backStep and implicitVJP (in
// step.go) state the formulas. tr.GradStats() then reports whether the
// gradient was exact for every sample and how much it was amplified.
//
// The x-gradient needs a constraint that implements JacobianX. VJP returns
// an error, naming the sample, if a gradient comes out non-finite or
// constraint code panics; it never returns NaN.
func (a *AdaNP) VJP(tr *Trace, grad, gyhat, gx *mat.Dense) error {
	return a.vjp(tr, grad, gyhat, gx, nil)
}

// vjp is VJP, and with gtheta (length ny) VJPTheta.
func (a *AdaNP) vjp(tr *Trace, grad, gyhat, gx *mat.Dense, gtheta []float64) error {
	if a.eqf != nil {
		return a.vjpEqualityFirst(tr, grad, gyhat, gx)
	}
	return a.vjpStage(tr, grad, gyhat, gx, gtheta)
}

// vjpStage is vjp without Settings.EqualitySteps' first stage: through a
// smoothed projection's stages, or one pass.
func (a *AdaNP) vjpStage(tr *Trace, grad, gyhat, gx *mat.Dense, gtheta []float64) error {
	if a.sm != nil {
		return a.vjpSmoothed(tr, grad, gyhat, gx)
	}
	return a.vjpPass(tr, grad, gyhat, gx, gtheta)
}

// checkGrad returns an error unless grad is a rows×ny gradient.
func (a *AdaNP) checkGrad(grad *mat.Dense, rows int) error {
	if grad == nil || grad.IsEmpty() {
		return errors.New("enforce: nil or empty gradient")
	}
	if r, c := grad.Dims(); r != rows || c != a.ny {
		return fmt.Errorf("enforce: gradient is %d×%d, want %d×%d", r, c, rows, a.ny)
	}
	return nil
}

// vjpPass is vjp for one stage.
func (a *AdaNP) vjpPass(tr *Trace, grad, gyhat, gx *mat.Dense, gtheta []float64) error {
	if tr == nil || tr.a != a {
		return errors.New("enforce: trace was not recorded by this AdaNP")
	}
	if err := a.checkGrad(grad, tr.rows); err != nil {
		return err
	}
	j := a.lastVJP.Swap(nil)
	if j == nil {
		j = a.vjps.Get().(*vjpJob)
	}
	defer func() {
		j.tr, j.grad, j.gyhat, j.gx = nil, blas64.General{}, blas64.General{}, blas64.General{}
		if !a.lastVJP.CompareAndSwap(nil, j) {
			a.vjps.Put(j)
		}
	}()
	j.a, j.tr, j.grad = a, tr, grad.RawMatrix()
	j.gyhat, j.gx, j.wantY, j.wantX = blas64.General{}, blas64.General{}, false, false
	if gyhat != nil {
		if r, c := gyhat.Dims(); gyhat.IsEmpty() || r != tr.rows || c != a.ny {
			return fmt.Errorf("enforce: ŷ-gradient destination is %d×%d, want %d×%d", r, c, tr.rows, a.ny)
		}
		j.gyhat, j.wantY = gyhat.RawMatrix(), true
	}
	if gx != nil {
		if !a.hasJX {
			return errors.New("enforce: gradient with respect to x needs a constraint that implements JacobianX")
		}
		if r, c := gx.Dims(); gx.IsEmpty() || r != tr.rows || c != a.nx {
			return fmt.Errorf("enforce: x-gradient destination is %d×%d, want %d×%d", r, c, tr.rows, a.nx)
		}
		j.gx, j.wantX = gx.RawMatrix(), true
	}
	for s := 0; s < tr.rows; s++ {
		if !allFinite(dense.Row(j.grad, s)) {
			return fmt.Errorf("enforce: gradient of sample %d is not finite", s)
		}
	}
	rows := tr.rows
	j.inexact = resize(j.inexact, rows)
	j.gain = resize(j.gain, rows)
	j.bad = resize(j.bad, rows)
	clear(j.inexact)
	clear(j.gain)
	clear(j.bad)
	j.panics.reset()
	j.wantT = gtheta != nil
	if j.wantT {
		j.gth = resize(j.gth, rows*a.n)
		clear(j.gth)
	}
	if a.linVJPBatchable() {
		a.lin.prepare(a)
		j.linRun.j = j
		par.ForBlocks(rows, linRows, &j.linRun)
	} else if a.s.Weights == BatchDiagonal && a.constB == nil && a.s.Grad == Unrolled {
		if err := j.lock.runBatchDiagonal(j); err != nil {
			return err
		}
	} else if bh := a.k.HessVecBatch; bh != nil && a.s.Grad == Unrolled && a.hasHV && !a.rec.recomputeB && a.sp == nil {
		if err := j.lock.run(j, bh); err != nil {
			return err
		}
	} else {
		a.forSamples(rows, j)
	}
	if err := j.reduce(); err != nil {
		return err
	}
	if j.wantT {
		clear(gtheta)
		for s := 0; s < rows; s++ {
			for i, v := range j.gth[s*a.n : s*a.n+a.ny] {
				gtheta[i] += v
			}
		}
		if !allFinite(gtheta) {
			return errors.New("enforce: VJP: the θ-gradient is not finite")
		}
	}
	return nil
}

// addThetaKKT adds the Implicit ∂ℓ/∂θ of sample s, whose final record
// is rec, after implicitVJP (or its projector fallback) has left
// ∂ℓ/∂ŷ = W·u in g. From the KKT system of the W-nearest point,
// W(y* − ŷ) + Bᵀλ = 0, with ∂W/∂θ_j = W_j·e_j·e_jᵀ,
// ∂ℓ/∂θ_j = −u_j·W_j·(y* − ŷ)_j = u_j·(Bᵀλ)_j, and u = D·g.
func (j *vjpJob) addThetaKKT(s int, rec *stepRecord, ws *workspace, g []float64) {
	a := j.a
	n := a.n
	dense.MulTransVec(ws.hv, rec.B, a.nc, n, rec.mu)
	gt := j.gth[s*n : (s+1)*n]
	for i := range gt {
		gt[i] += rec.d[i] * g[i] * ws.hv[i]
	}
}

// addTheta adds the share of step record rec of sample s to ∂ℓ/∂θ, after
// backStep has left p in ws.p and Bᵀμ in ws.bmu: with D = exp(−θ) and
// ∂ℓ/∂D = −α·p ⊙ Bᵀμ (see backStep), ∂ℓ/∂θ_j = α·p_j·(Bᵀμ)_j·D_j.
func (j *vjpJob) addTheta(s int, rec *stepRecord, ws *workspace) {
	n := j.a.n
	gt := j.gth[s*n : (s+1)*n]
	for i := range gt {
		gt[i] += rec.alpha * ws.p[i] * ws.bmu[i] * rec.d[i]
	}
}

// reduce checks the per-sample results in sample order and fills the
// trace's GradStats.
func (j *vjpJob) reduce() error {
	gs := GradStats{Samples: j.tr.rows}
	j.tr.inexact = resize(j.tr.inexact, j.tr.rows)
	for s := 0; s < j.tr.rows; s++ {
		if msg, ok := j.panics.get(s); ok {
			return fmt.Errorf("enforce: VJP: sample %d: constraint code panicked: %s", s, msg)
		}
		if j.bad[s] {
			return fmt.Errorf("enforce: VJP: sample %d: the gradient is not finite (the projection is not differentiable there; see GradStats)", s)
		}
		if j.inexact[s] {
			gs.Inexact++
		}
		j.tr.inexact[s] = j.inexact[s]
		gs.MaxGain = math.Max(gs.MaxGain, j.gain[s])
		if j.gain[s] > GainWarning {
			gs.Amplified++
		}
	}
	j.tr.grad = gs
	return nil
}

// Run back-propagates samples [lo, hi).
func (j *vjpJob) Run(lo, hi int) {
	ws := j.a.pool.Get().(*workspace)
	for s := lo; s < hi; s++ {
		if !j.runSample(ws, s) {
			ws = j.a.newWorkspace()
		}
	}
	j.a.pool.Put(ws)
}

func (j *vjpJob) runSample(ws *workspace, s int) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			j.panics.record(s, r)
			ok = false
		}
	}()
	j.sample(ws, s)
	return true
}

// curvature reports which curvature terms the mode uses: in y, and in x.
func (j *vjpJob) curvature() (curv, curvX bool) {
	a := j.a
	curv = a.s.Grad == Unrolled && a.hasHV
	curvX = curv && a.hasMHV && j.wantX
	return curv, curvX
}

func (j *vjpJob) sample(ws *workspace, s int) {
	a, tr := j.a, j.tr
	g, gx := ws.gy, ws.gx
	j.load(s, g, gx)
	xs := tr.xrow(s)
	exact := j.a.exactGradient(j.wantX)
	var rec stepRecord
	switch a.s.Grad {
	case Implicit:
		if tr.Depth(s) == 1 {
			if !tr.recordAt(ws, s, 0, &rec) {
				j.bad[s] = true
				return
			}
			if rec.alpha > kktTol || tr.eig[s][0] || !a.hasHV {
				exact = false
			}
			if !a.hasHV || !a.implicitVJP(ws, &rec, xs, g, gx, j.wantX) {
				exact = false
				a.projectorVJP(ws, &rec, xs, g, gx, j.wantX)
			}
			if j.wantT {
				j.addThetaKKT(s, &rec, ws, g)
			}
		} else {
			exact = false
		}
	default:
		curv, curvX := j.curvature()
		for k := tr.Depth(s) - 1; k >= 0; k-- {
			if !tr.recordAt(ws, s, k, &rec) {
				j.bad[s] = true
				return
			}
			if tr.eig[s][k] {
				exact = false
			}
			a.backStep(ws, &rec, xs, g, gx, curv, curvX, j.wantX)
			if j.wantT {
				j.addTheta(s, &rec, ws)
			}
			if curv {
				h := a.k.HessVec
				h(xs, rec.y, rec.mu, ws.dp, ws.hMu)
				h(xs, rec.y, ws.w, ws.delta, ws.hW)
				finishBackStep(g, ws.acc, ws.hMu, ws.hW, rec.alpha)
			} else {
				finishBackStep(g, ws.acc, nil, nil, rec.alpha)
			}
		}
	}
	j.inexact[s] = !exact
	j.store(s, g, gx)
}

// projectorVJP is the curvature-free gradient at a final point:
// ∂ℓ/∂ŷ = ḡ − Bᵀw with w = G⁻¹BDḡ, and ∂ℓ/∂x −= J_xᵀw.
func (a *AdaNP) projectorVJP(ws *workspace, rec *stepRecord, xs, g, gx []float64, wantX bool) {
	clear(ws.zeroMu)
	r := *rec
	r.mu, r.alpha, r.bounded = ws.zeroMu, 1, false
	a.backStep(ws, &r, xs, g, gx, false, false, wantX)
	finishBackStep(g, ws.acc, nil, nil, 1)
}

// kktTol is the relative KKT residual (see kktMultipliers) above which an
// Implicit gradient is reported inexact: the computed point is then not
// the nearest point whose derivative the implicit gradient is.
const kktTol = 1e-6

// load initialises ḡ from the output gradient of sample s (zero for the
// latent variables) and the x-gradient to zero.
func (j *vjpJob) load(s int, g, gx []float64) {
	copy(g, dense.Row(j.grad, s))
	clear(g[j.a.ny:])
	clear(gx)
}

// store writes the gradients of sample s, and its gain and finiteness.
func (j *vjpJob) store(s int, g, gx []float64) {
	ny := j.a.ny
	in := norm2(dense.Row(j.grad, s))
	out := norm2(g[:ny])
	if in > 0 {
		j.gain[s] = out / in
	}
	if !allFinite(g[:ny]) || !allFinite(gx) {
		j.bad[s] = true
		return
	}
	if j.wantY {
		copy(dense.Row(j.gyhat, s), g[:ny])
	}
	if j.wantX {
		copy(dense.Row(j.gx, s), gx)
	}
}

// vjpLock back-propagates a batch in lockstep when the constraint computes
// curvature products for many samples at once (Capabilities.HessVecBatch): at step k,
// every sample deeper than k goes through backStep in parallel, then two
// batched products supply the curvature terms, then finishBackStep. Per
// sample, the arithmetic is that of vjpJob.sample.
type vjpLock struct {
	j         *vjpJob
	bh        hessVecBatchFunc
	g, gx     []float64 // rows×n and rows×nx gradients
	act       []int     // samples deeper than k
	k         int
	finish    bool
	xa, ya    []float64 // per position: x_s, y_k
	mu, w     []float64 // μ_k, w
	dp, delta []float64 // Dp, δ
	acc       []float64 // Bᵀw (+ weight terms)
	alpha     []float64
	hMu, hW   []float64 // Σ μ_i ∇²c_i·Dp, Σ w_i ∇²c_i·δ
	exact     []bool
}

func (l *vjpLock) run(j *vjpJob, bh hessVecBatchFunc) (err error) {
	a, tr := j.a, j.tr
	rows, n, nc, nx := tr.rows, a.n, a.nc, a.nx
	l.j, l.bh = j, bh
	l.g = resize(l.g, rows*n)
	l.gx = resize(l.gx, rows*nx)
	l.act = resize(l.act, rows)[:0]
	for _, buf := range []*[]float64{&l.ya, &l.dp, &l.delta, &l.hMu, &l.hW, &l.acc} {
		*buf = resize(*buf, rows*n)
	}
	l.xa = resize(l.xa, rows*nx)
	l.mu = resize(l.mu, rows*nc)
	l.w = resize(l.w, rows*nc)
	l.alpha = resize(l.alpha, rows)
	l.exact = resize(l.exact, rows)
	depth := 0
	exact := j.a.exactGradient(j.wantX)
	for s := 0; s < rows; s++ {
		j.load(s, l.g[s*n:(s+1)*n], l.gx[s*nx:(s+1)*nx])
		depth = max(depth, tr.Depth(s))
		l.exact[s] = exact
	}
	for l.k = depth - 1; l.k >= 0; l.k-- {
		l.act = l.act[:0]
		for s := 0; s < rows; s++ {
			if tr.Depth(s) > l.k {
				l.act = append(l.act, s)
			}
		}
		m := len(l.act)
		l.finish = false
		par.For(m, grain, l)
		if err := l.products(m); err != nil {
			return err
		}
		l.finish = true
		par.For(m, grain, l)
	}
	l.storeAll(j, rows, n, nx)
	return nil
}

// storeAll hands the gradients of the rows samples to j, except those of
// samples whose user code panicked.
func (l *vjpLock) storeAll(j *vjpJob, rows, n, nx int) {
	for s := 0; s < rows; s++ {
		j.inexact[s] = !l.exact[s]
		if _, failed := j.panics.get(s); !failed {
			j.store(s, l.g[s*n:(s+1)*n], l.gx[s*nx:(s+1)*nx])
		}
	}
}

// products computes the two batched curvature products of the m samples
// of act, turning a panic into an error.
func (l *vjpLock) products(m int) (err error) {
	a := l.j.a
	n, nc, nx := a.n, a.nc, a.nx
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("enforce: VJP: HessVecBatch panicked on a batch of %d samples: %v", m, r)
		}
	}()
	hv := l.bh
	if a.hv32 != nil {
		hv = a.hv32 // Float32: the curvature products in single precision
	}
	hv(m, l.xa[:m*nx], l.ya[:m*n], l.mu[:m*nc], l.dp[:m*n], l.hMu[:m*n])
	hv(m, l.xa[:m*nx], l.ya[:m*n], l.w[:m*nc], l.delta[:m*n], l.hW[:m*n])
	return nil
}

// Run processes positions [lo, hi) of act: backStep of step k, or
// (finish) finishBackStep with the batched products.
func (l *vjpLock) Run(lo, hi int) {
	a := l.j.a
	n := a.n
	if l.finish {
		for p := lo; p < hi; p++ {
			s := l.act[p]
			finishBackStep(l.g[s*n:(s+1)*n], l.acc[p*n:(p+1)*n], l.hMu[p*n:(p+1)*n], l.hW[p*n:(p+1)*n], l.alpha[p])
		}
		return
	}
	ws := a.pool.Get().(*workspace)
	for p := lo; p < hi; p++ {
		if !l.runSample(ws, p) {
			ws = a.newWorkspace()
		}
	}
	a.pool.Put(ws)
}

func (l *vjpLock) runSample(ws *workspace, p int) (ok bool) {
	j := l.j
	a, tr := j.a, j.tr
	n, nc, nx := a.n, a.nc, a.nx
	s := l.act[p]
	defer func() {
		if r := recover(); r != nil {
			j.panics.record(s, r)
			clear(l.acc[p*n : (p+1)*n])
			ok = false
		}
	}()
	var rec stepRecord
	tr.record(ws, s, l.k, &rec)
	if tr.eig[s][l.k] {
		l.exact[s] = false
	}
	curv, curvX := j.curvature()
	xs := tr.xrow(s)
	a.backStep(ws, &rec, xs, l.g[s*n:(s+1)*n], l.gx[s*nx:(s+1)*nx], curv, curvX, j.wantX)
	if j.wantT {
		j.addTheta(s, &rec, ws)
	}
	copy(l.xa[p*nx:(p+1)*nx], xs)
	copy(l.ya[p*n:(p+1)*n], rec.y)
	copy(l.mu[p*nc:(p+1)*nc], rec.mu)
	copy(l.w[p*nc:(p+1)*nc], ws.w)
	copy(l.dp[p*n:(p+1)*n], ws.dp)
	copy(l.delta[p*n:(p+1)*n], ws.delta)
	copy(l.acc[p*n:(p+1)*n], ws.acc)
	l.alpha[p] = rec.alpha
	return true
}
