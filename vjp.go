package enforce

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/par"
)

// Trace records the iterates of a forward pass that VJP needs: for every
// sample and step, the iterate y_k, the multipliers μ_k = G_k⁻¹c_k, the
// weights W_k⁻¹, the Jacobian B_k and the factorisation of G_k (with
// Implicit gradients, only the final point). A Trace is reused across calls
// without allocating once it has grown to the largest batch and depth.
// The zero value is ready to use.
type Trace struct {
	a     *AdaNP
	rows  int
	x     []float64 // rows·nx copy of the inputs
	steps [][]float64
	eig   [][]bool
}

// recLen is the length of one step record: y, μ, W⁻¹, B, G's factor and
// the clamped eigenvalues.
func (a *AdaNP) recLen() int {
	n, nc := a.n, a.nc
	return n + nc + n + nc*n + nc*nc + nc
}

func (t *Trace) reset(a *AdaNP, x blas64.General, rows int) {
	t.a, t.rows = a, rows
	t.x = resize(t.x, rows*a.nx)
	for s := 0; s < rows; s++ {
		copy(t.x[s*a.nx:(s+1)*a.nx], row(x, s))
	}
	if cap(t.steps) < rows {
		t.steps = append(t.steps[:cap(t.steps)], make([][]float64, rows-cap(t.steps))...)
		t.eig = append(t.eig[:cap(t.eig)], make([][]bool, rows-cap(t.eig))...)
	}
	t.steps, t.eig = t.steps[:rows], t.eig[:rows]
}

// push appends one step record for sample s. A nil d stands for W = I.
func (t *Trace) push(s int, y, mu, d, b []float64, f *factor) {
	a := t.a
	rec := t.steps[s]
	at := len(rec)
	if cap(rec)-at < a.recLen() {
		rec = append(rec[:cap(rec)], make([]float64, a.recLen())...)
	}
	rec = rec[:at+a.recLen()]
	r := rec[at:]
	r = r[copy(r, y):]
	r = r[copy(r, mu):]
	if d == nil {
		for j := range a.n {
			r[j] = 1
		}
		r = r[a.n:]
	} else {
		r = r[copy(r, d):]
	}
	r = r[copy(r, b):]
	r = r[copy(r, f.m):]
	copy(r, f.lam)
	t.steps[s] = rec
	t.eig[s] = append(t.eig[s], f.eig)
}

// pop removes the last step record of sample s.
func (t *Trace) pop(s int) {
	t.steps[s] = t.steps[s][:len(t.steps[s])-t.a.recLen()]
	t.eig[s] = t.eig[s][:len(t.eig[s])-1]
}

// Depth returns the number of recorded steps of sample s.
func (t *Trace) Depth(s int) int { return len(t.eig[s]) }

// Bytes returns the memory held by the trace's records, in bytes.
func (t *Trace) Bytes() int {
	total := 8 * cap(t.x)
	for _, r := range t.steps[:cap(t.steps)] {
		total += 8 * cap(r)
	}
	for _, e := range t.eig[:cap(t.eig)] {
		total += cap(e)
	}
	return total
}

// vjpJob is the state of one backward pass.
type vjpJob struct {
	a         *AdaNP
	tr        *Trace
	grad      blas64.General
	gyhat, gx blas64.General
	wantY     bool
	wantX     bool
	lock      vjpLock
}

// VJP back-propagates through the projection recorded in tr by
// ProjectTrace: given grad = ∂ℓ/∂ỹ (rows×ny) it writes ∂ℓ/∂ŷ into gyhat
// and ∂ℓ/∂x into gx (rows×nx). Either destination may be nil. The gradient
// follows Settings.Grad. Per Unrolled step, with D = W⁻¹,
// w = G⁻¹BDḡ, p = ḡ − Bᵀw, μ = G⁻¹c and δ = DBᵀμ,
//
//	∂ℓ/∂y_k = p − Σ_i μ_i ∇²c_i·Dp + Σ_i w_i ∇²c_i·δ
//	∂ℓ/∂x  += −J_xᵀw − Σ_i μ_i ∇²_xy c_i·Dp + Σ_i w_i ∇²_xy c_i·δ
//
// (the curvature sums are dropped for Projector and Implicit gradients and
// for constraints without HessVec or MixedHessVec). W is held constant.
// The x-gradient needs a constraint that implements JacobianX.
func (a *AdaNP) VJP(tr *Trace, grad, gyhat, gx *mat.Dense) error {
	if tr == nil || tr.a != a {
		return errors.New("enforce: trace was not recorded by this AdaNP")
	}
	if grad == nil {
		return errors.New("enforce: nil gradient")
	}
	if r, c := grad.Dims(); r != tr.rows || c != a.ny {
		return fmt.Errorf("enforce: gradient is %d×%d, want %d×%d", r, c, tr.rows, a.ny)
	}
	j := a.lastVJP.Swap(nil)
	if j == nil {
		j = a.vjps.Get().(*vjpJob)
	}
	defer func() {
		if !a.lastVJP.CompareAndSwap(nil, j) {
			a.vjps.Put(j)
		}
	}()
	j.a, j.tr, j.grad = a, tr, grad.RawMatrix()
	j.gyhat, j.gx, j.wantY, j.wantX = blas64.General{}, blas64.General{}, false, false
	if gyhat != nil {
		if r, c := gyhat.Dims(); r != tr.rows || c != a.ny {
			return fmt.Errorf("enforce: ŷ-gradient destination is %d×%d, want %d×%d", r, c, tr.rows, a.ny)
		}
		j.gyhat, j.wantY = gyhat.RawMatrix(), true
	}
	if gx != nil {
		if !a.hasJX {
			return errors.New("enforce: gradient with respect to x needs a constraint that implements JacobianX")
		}
		if r, c := gx.Dims(); r != tr.rows || c != a.nx {
			return fmt.Errorf("enforce: x-gradient destination is %d×%d, want %d×%d", r, c, tr.rows, a.nx)
		}
		j.gx, j.wantX = gx.RawMatrix(), true
	}
	for s := 0; s < tr.rows; s++ {
		if !allFinite(row(j.grad, s)) {
			return fmt.Errorf("enforce: gradient of sample %d is not finite", s)
		}
	}
	if bh, ok := a.c.(BatchHessVecer); ok && a.s.Grad == Unrolled && a.hasHV {
		j.lock.run(j, bh)
	} else {
		par.For(tr.rows, grain, j)
	}
	j.tr, j.grad, j.gyhat, j.gx = nil, blas64.General{}, blas64.General{}, blas64.General{}
	return nil
}

// Run back-propagates samples [lo, hi).
func (j *vjpJob) Run(lo, hi int) {
	ws := j.a.pool.Get().(*workspace)
	for s := lo; s < hi; s++ {
		j.sample(ws, s)
	}
	j.a.pool.Put(ws)
}

func (j *vjpJob) sample(ws *workspace, s int) {
	a, tr := j.a, j.tr
	g, gx := ws.y, ws.gx // ḡ, the gradient with respect to the current iterate
	j.load(s, g, gx)
	curvY := a.s.Grad == Unrolled && a.hasHV
	for k := len(tr.eig[s]) - 1; k >= 0; k-- {
		yk, mu := j.backStep(ws, s, k, g, gx)
		if curvY {
			xs := tr.x[s*a.nx : (s+1)*a.nx]
			h := a.c.(HessVecer)
			h.HessVec(xs, yk, mu, ws.dp, ws.hv)
			for i, v := range ws.hv {
				g[i] -= v
			}
			h.HessVec(xs, yk, ws.w, ws.delta, ws.hv)
			for i, v := range ws.hv {
				g[i] += v
			}
		}
	}
	j.store(s, g, gx)
}

// load initialises ḡ from the output gradient of sample s (zero for the
// latent variables) and the x-gradient to zero.
func (j *vjpJob) load(s int, g, gx []float64) {
	copy(g, row(j.grad, s))
	clear(g[j.a.ny:])
	clear(gx)
}

// store writes the gradients of sample s.
func (j *vjpJob) store(s int, g, gx []float64) {
	if j.wantY {
		copy(row(j.gyhat, s), g[:j.a.ny])
	}
	if j.wantX {
		copy(row(j.gx, s), gx)
	}
}

// backStep back-propagates sample s through its step k, except for the
// curvature terms in y: it overwrites ḡ (in g) with p = ḡ − Bᵀw, adds the
// step's contribution to the x-gradient gx, and, when Unrolled curvature is
// needed, leaves w, δ = DBᵀμ and Dp in ws.w, ws.delta and ws.dp. It returns
// the step's iterate y_k and multipliers μ_k.
func (j *vjpJob) backStep(ws *workspace, s, k int, g, gx []float64) (yk, mu []float64) {
	a, tr := j.a, j.tr
	n, nc, nx := a.n, a.nc, a.nx
	xs := tr.x[s*nx : (s+1)*nx]
	curvY := a.s.Grad == Unrolled && a.hasHV
	curvX := a.s.Grad == Unrolled && a.hasMHV && j.wantX
	weighted := a.s.Weights != Identity
	recLen := a.recLen()
	r := tr.steps[s][k*recLen : (k+1)*recLen]
	yk, r = r[:n], r[n:]
	mu, r = r[:nc], r[nc:]
	d, r := r[:n], r[n:]
	B, r := r[:nc*n], r[nc*n:]
	f := factor{m: r[:nc*nc], lam: r[nc*nc:], eig: tr.eig[s][k]}
	// w = G⁻¹·B·D·ḡ
	dg := ws.dp
	for i, v := range g {
		if weighted {
			v *= d[i]
		}
		dg[i] = v
	}
	dense.MulVec(ws.w, B, nc, n, dg)
	f.solve(nc, ws.w, ws.tmp)
	// p = ḡ − Bᵀw
	dense.MulTransVec(ws.hv, B, nc, n, ws.w)
	for i, v := range ws.hv {
		g[i] -= v
	}
	if j.wantX {
		a.c.(JacobianXer).JacobianX(xs, yk, ws.jx)
		for i := 0; i < nc; i++ {
			wi := ws.w[i]
			for m := 0; m < nx; m++ {
				gx[m] -= ws.jx[i*nx+m] * wi
			}
		}
	}
	if !curvY && !curvX {
		return yk, mu
	}
	// δ = D·Bᵀ·μ and Dp
	dense.MulTransVec(ws.delta, B, nc, n, mu)
	for i := range g {
		dg[i] = g[i]
		if weighted {
			ws.delta[i] *= d[i]
			dg[i] *= d[i]
		}
	}
	if curvX {
		h := a.c.(MixedHessVecer)
		h.MixedHessVec(xs, yk, mu, dg, ws.gxHV)
		for m, v := range ws.gxHV {
			gx[m] -= v
		}
		h.MixedHessVec(xs, yk, ws.w, ws.delta, ws.gxHV)
		for m, v := range ws.gxHV {
			gx[m] += v
		}
	}
	return yk, mu
}
