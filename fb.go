package enforce

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"
)

// DefaultFBEps is the smoothing ε of the Fischer–Burmeister function used by
// WithInequalities when its epsFB argument is not positive.
const DefaultFBEps = 1e-8

// WithInequalities returns the equality system that AdaNP projects onto to
// enforce the equalities eq(x, y) = 0 together with the inequalities
// g(x, y) ≤ 0, g ∈ ℝ^ng, through the smoothed Fischer–Burmeister
// reformulation of their complementarity conditions. The unknowns are
// extended with one multiplier per inequality, y_ext = (y, λ) ∈ ℝ^(ny+ng),
// and the constraints are
//
//	c_ext(x, y, λ) = (eq(x, y), φ(λ_1, g_1(x, y)), …, φ(λ_ng, g_ng(x, y))) = 0,
//	φ(λ, g) = √(λ² + g² + ε) − λ + g,
//
// which is φ_FB(a, b) = √(a² + b² + ε) − a − b at a = λ, b = −g. The zero set
// of φ is the smoothed complementarity λ > 0, g < 0, λ·g = −ε/2, so g ≤ 0
// holds at every zero; it tends to λ ≥ 0, g ≤ 0, λg = 0 as ε → 0.
//
// ε sets the scale of the smoothing: a zero meets its inequality with the
// margin −g = ε/(2λ), small where the multiplier is large, √(ε/2) at the
// corner λ = −g, and large for an inactive inequality (λ → 0); φ bends
// over a width √ε about the corner λ = g = 0. A larger ε thus moves the
// projection inward by that margin at the active inequalities, and lets the
// Gauss–Newton steps settle which inequalities are active in fewer steps
// where they must release a multiplier that earlier steps made large
// (at g = 0 and λ ≫ √ε, ∂φ/∂λ ≈ −ε/(2λ²) is nearly zero). The multipliers
// grow with the distances projected (projecting ŷ onto y_k − b ≤ 0 alone,
// minimum-norm Newton steps end with λ of the order of ŷ_k − b), so the ε
// that converges fastest
// grows with them; docs/acopf.md measures both effects on power grids. Two inequalities that pin a quantity, g_a = −g_b
// (a variable whose lower and upper bounds are equal), have no common
// zero: φ(λ_a, u) + φ(λ_b, −u) > 0 for all λ_a, λ_b and u, so AdaNP could
// only approach one as the multipliers grow; give such a pair as one
// equality in eq.
//
// The result has Dims (nx, ny+ng, nc_eq+ng), declares ng latent variables,
// so that AdaNP appends λ = 0 and drops λ afterwards, and has
// exact first and second derivatives in (y, λ) and x built from those of eq
// and g. With u = g_j, s = √(λ_j² + u² + ε) and ∇ = ∂/∂y,
//
//	∂φ/∂λ = λ/s − 1,  ∂φ/∂u = u/s + 1,
//	∂²φ/∂λ² = (u² + ε)/s³,  ∂²φ/∂u² = (λ² + ε)/s³,  ∂²φ/∂λ∂u = −λu/s³,
//	∇φ = ∂φ/∂u ∇g_j,
//	∇²φ = ∂²φ/∂u² ∇g_j∇g_jᵀ + ∂φ/∂u ∇²g_j,   ∇∂φ/∂λ = ∂²φ/∂λ∂u ∇g_j,
//
// and the x-derivatives follow by the chain rule through g_j. The result's
// Capabilities have Latent = ng and are built from those of eq (if not nil)
// and g (see Capabilities):
//
//	JacobianX       JacobianX of eq and of g
//	HessVec         HessVec of eq and of g
//	MixedHessVec    MixedHessVec of eq, JacobianX and MixedHessVec of g
//	EvalBatch       EvalBatch or EvalBatch32 of eq or of g (the other sample by sample)
//	EvalBatch32     EvalBatch32 of eq or of g (the other in float64, rounded)
//	HessVecBatch    HessVec, and HessVecBatch or HessVecBatch32 of eq or of g
//	HessVecBatch32  HessVec, and HessVecBatch32 of eq or of g
//	Sparse          Sparse of g (and of eq, or eq's full rows when small):
//	                row neq+j has g_j's pattern and λ_j's column ny+j;
//	                HessVec and MixedHessVec then use g's sparse values
//	                (and JacobianXTVec), never an ng×ny Jacobian
//
// The Jacobian in y_ext is never constant.
//
// eq may be nil, for inequalities alone. If epsFB ≤ 0, DefaultFBEps is used.
// WithInequalities returns an error if g is nil, eq and g differ in nx or
// ny, either has latent variables, or epsFB is NaN or infinite.
func WithInequalities(eq, g Constraint, epsFB float64) (Constraint, error) {
	if math.IsNaN(epsFB) || math.IsInf(epsFB, 0) {
		return nil, fmt.Errorf("enforce: WithInequalities: epsFB = %v, want finite", epsFB)
	}
	if epsFB <= 0 {
		epsFB = DefaultFBEps
	}
	if g == nil {
		return nil, errors.New("enforce: WithInequalities: nil inequality constraint g")
	}
	nx, ny, ng, gk, err := checkConstraintArg(g)
	if err != nil {
		return nil, fmt.Errorf("enforce: WithInequalities: g: %w", err)
	}
	fb := &fbConstraint{g: newPart(g, gk), nx: nx, ny: ny, ng: ng, eps: epsFB}
	// An absent eq has every derivative (all zero).
	eqJX, eqHV, eqMHV := true, true, true
	if eq != nil {
		enx, eny, neq, k, err := checkConstraintArg(eq)
		if err != nil {
			return nil, fmt.Errorf("enforce: WithInequalities: eq: %w", err)
		}
		if enx != nx || eny != ny {
			return nil, fmt.Errorf("enforce: WithInequalities: eq has (nx, ny) = (%d, %d), g has (%d, %d)",
				enx, eny, nx, ny)
		}
		fb.eq, fb.neq = newPart(eq, k), neq
		eqJX, eqHV, eqMHV = k.JacobianX != nil, k.HessVec != nil, k.MixedHessVec != nil
	}
	k := &fb.k
	k.Latent = ng
	k.feasibility, k.feasEq = fb.feasibility, fb.neq
	if eqJX && gk.JacobianX != nil {
		k.JacobianX = fb.jacobianX
	}
	if eqHV && gk.HessVec != nil {
		k.HessVec = fb.hessVec
	}
	if eqMHV && gk.JacobianX != nil && gk.MixedHessVec != nil {
		k.MixedHessVec = fb.mixedHessVec
	}
	for _, p := range []*part{fb.eq, fb.g} {
		if p == nil {
			continue
		}
		if p.hasBatch() {
			k.EvalBatch = fb.evalBatch
		}
		if p.k.EvalBatch32 != nil {
			k.EvalBatch32 = fb.evalBatch32
		}
		if k.HessVec != nil && p.hasHessVecBatch() {
			k.HessVecBatch = fb.hessVecBatch
		}
		if k.HessVec != nil && p.k.HessVecBatch32 != nil {
			k.HessVecBatch32 = fb.hessVecBatch32
		}
	}
	fb.pool.New = func() any {
		// The dense Jacobians are allocated when first needed (dense
		// method calls), not for an evaluation without Jacobian: at the
		// sizes of the sparse path they are gigabytes.
		return &fbScratch{
			g:   make([]float64, ng),
			w:   make([]float64, ng),
			tmp: make([]float64, max(nx, ny)),
		}
	}
	fb.batch.New = func() any { return new(fbBatchScratch) }
	fb.makeSparse()
	return fb, nil
}

// fbConstraint is the Constraint returned by WithInequalities.
type fbConstraint struct {
	eq, g   *part // eq may be nil.
	nx, ny  int   // sizes of x and of y, without the multipliers.
	neq, ng int
	eps     float64
	k       Capabilities
	pool    sync.Pool // *fbScratch
	batch   sync.Pool // *fbBatchScratch
}

// denseJ returns the scratch's dense Jacobians of eq and g, allocated on
// first use.
func (s *fbScratch) denseJ(fb *fbConstraint) (jeq, jg []float64) {
	if s.jg == nil {
		s.jeq = make([]float64, fb.neq*fb.ny)
		s.jg = make([]float64, fb.ng*fb.ny)
	}
	return s.jeq, s.jg
}

// denseJX returns the scratch's dense ∂g/∂x, allocated on first use.
func (s *fbScratch) denseJX(fb *fbConstraint) []float64 {
	if s.jgx == nil {
		s.jgx = make([]float64, fb.ng*fb.nx)
	}
	return s.jgx
}

// fbScratch holds the temporaries of one evaluation.
type fbScratch struct {
	jeq []float64 // ∂eq/∂y, neq×ny.
	g   []float64 // g(x, y), ng.
	jg  []float64 // ∂g/∂y, ng×ny.
	jgx []float64 // ∂g/∂x, ng×nx.
	w   []float64 // weights passed to g's second derivatives, ng.
	tmp []float64 // g's second-derivative outputs, max(nx, ny).
}

var _ Capable = (*fbConstraint)(nil)

// Dims returns nx, the size ny+ng of y_ext = (y, λ) and the number neq+ng of
// constraints.
func (fb *fbConstraint) Dims() (nx, ny, nc int) {
	return fb.nx, fb.ny + fb.ng, fb.neq + fb.ng
}

// Capabilities returns Latent = ng and what eq's and g's capabilities
// give (see WithInequalities).
func (fb *fbConstraint) Capabilities() Capabilities { return fb.k }

// fbPartials holds φ(λ, u) and its first and second partial derivatives.
type fbPartials struct {
	phi, dl, du, dll, duu, dlu float64
}

// partials returns φ(λ, u) = √(λ² + u² + ε) − λ + u and its derivatives,
// computed without cancellation: where λ − u > 0, φ = (ε + 2λu)/(s + λ − u)
// with ε + 2λu fused, so that φ keeps its relative accuracy near its zeros;
// where λ > 0, ∂φ/∂λ = −(u² + ε)/(s(s + λ)); where u < 0,
// ∂φ/∂u = (λ² + ε)/(s(s − u)).
func (fb *fbConstraint) partials(lambda, u float64) fbPartials {
	e := fb.eps
	s := math.Sqrt(lambda*lambda + u*u + e)
	var p fbPartials
	if lambda-u > 0 {
		p.phi = math.FMA(2*lambda, u, e) / (s + lambda - u)
	} else {
		p.phi = s - lambda + u
	}
	if lambda > 0 {
		p.dl = -(u*u + e) / (s * (s + lambda))
	} else {
		p.dl = lambda/s - 1
	}
	if u < 0 {
		p.du = (lambda*lambda + e) / (s * (s - u))
	} else {
		p.du = u/s + 1
	}
	s3 := s * s * s
	p.dll = (u*u + e) / s3
	p.duu = (lambda*lambda + e) / s3
	p.dlu = -lambda * u / s3
	return p
}

// Eval writes c_ext(x, y_ext) into c and, if jy != nil, ∂c_ext/∂y_ext
// ((neq+ng)×(ny+ng), row-major) into jy.
func (fb *fbConstraint) Eval(x, yext, c, jy []float64) {
	nx, nye, nce := fb.Dims()
	checkEvalLen("WithInequalities.Eval", nx, nye, nce, x, yext, c, jy)
	y := yext[:fb.ny]
	s := fb.pool.Get().(*fbScratch)
	defer fb.pool.Put(s)
	var jeq, jg []float64
	if jy != nil {
		jeq, jg = s.denseJ(fb)
	}
	if fb.eq != nil {
		fb.eq.c.Eval(x, y, c[:fb.neq], jeq)
	}
	fb.g.c.Eval(x, y, s.g, jg)
	fbAssemble(fb, yext[fb.ny:], s.g, jeq, jg, c, jy)
}

// fbAssemble writes, for one sample with multipliers λ, the residuals φ_j
// into c[neq:] (c[:neq] holds eq's already) and, if jy is not nil, the
// Jacobian ∂c_ext/∂y_ext into jy from eq's Jacobian jeq (neq×ny) and g's
// values and Jacobian jg (ng×ny).
func fbAssemble[T float32 | float64](fb *fbConstraint, lambda, g []float64, jeq, jg []T, c []float64, jy []T) {
	ny, nye := fb.ny, fb.ny+fb.ng
	if jy != nil {
		clear(jy)
		for i := range fb.neq {
			copy(jy[i*nye:i*nye+ny], jeq[i*ny:(i+1)*ny])
		}
	}
	for j, u := range g {
		p := fb.partials(lambda[j], u)
		c[fb.neq+j] = p.phi
		if jy != nil {
			row := jy[(fb.neq+j)*nye : (fb.neq+j+1)*nye]
			for k, v := range jg[j*ny : (j+1)*ny] {
				row[k] = T(p.du * float64(v))
			}
			row[ny+j] = T(p.dl)
		}
	}
}

// jacobianX writes ∂c_ext/∂x ((neq+ng)×nx, row-major) into jx: the rows of
// ∂eq/∂x, then ∂φ/∂u ∂g_j/∂x.
func (fb *fbConstraint) jacobianX(x, yext, jx []float64) {
	nx, nye, nce := fb.Dims()
	checkJacobianXLen("WithInequalities.JacobianX", nx, nye, nce, x, yext, jx)
	y, lambda := yext[:fb.ny], yext[fb.ny:]
	if fb.eq != nil {
		fb.eq.k.JacobianX(x, y, jx[:fb.neq*nx])
	}
	s := fb.pool.Get().(*fbScratch)
	defer fb.pool.Put(s)
	fb.g.c.Eval(x, y, s.g, nil)
	jgx := jx[fb.neq*nx:]
	fb.g.k.JacobianX(x, y, jgx)
	for j, u := range s.g {
		floats.Scale(fb.partials(lambda[j], u).du, jgx[j*nx:(j+1)*nx])
	}
}

// hessVec writes out = Σ_i w_i ∇²c_ext,i v over y_ext = (y, λ), with
// v = (v_y, v_λ) and out = (out_y, out_λ) of length ny+ng:
//
//	out_y = Σ_i w_eq,i ∇²eq_i v_y + Σ_j w_j [a_j ∇g_j + ∂φ/∂u ∇²g_j v_y],
//	out_λj = w_j (∂²φ/∂λ∂u ∇g_j·v_y + ∂²φ/∂λ² v_λj),
//	a_j = ∂²φ/∂u² ∇g_j·v_y + ∂²φ/∂λ∂u v_λj,
//
// where w_j is the weight of φ_j.
func (fb *fbConstraint) hessVec(x, yext, w, v, out []float64) {
	nx, nye, nce := fb.Dims()
	checkHessVecLen("WithInequalities.HessVec", nx, nye, nce, nye, x, yext, w, v, out)
	ny := fb.ny
	y := yext[:ny]
	vy := v[:ny]
	outY := out[:ny]
	if fb.eq != nil {
		fb.eq.k.HessVec(x, y, w[:fb.neq], vy, outY)
	} else {
		clear(outY)
	}
	s := fb.pool.Get().(*fbScratch)
	defer fb.pool.Put(s)
	_, jg := s.denseJ(fb)
	fb.g.c.Eval(x, y, s.g, jg)
	fb.curvature(yext[ny:], s.g, jg, w[fb.neq:], v, out, s.w)
	tmp := s.tmp[:ny]
	fb.g.k.HessVec(x, y, s.w, vy, tmp)
	for k, t := range tmp {
		outY[k] += t
	}
}

// curvature adds, for one sample, the terms of hessVec that come from φ's
// second derivatives to out = (out_y, out_λ) (writing out_λ), given g's
// values and Jacobian jg and φ's weights wg, and writes into wG the
// weights w_j ∂φ/∂u of g's own curvature.
func (fb *fbConstraint) curvature(lambda, g, jg, wg, v, out, wG []float64) {
	ny := fb.ny
	vy, vl := v[:ny], v[ny:]
	outY := out[:ny]
	for j, u := range g {
		p := fb.partials(lambda[j], u)
		grad := jg[j*ny : (j+1)*ny]
		gv := floats.Dot(grad, vy)
		a := wg[j] * (p.duu*gv + p.dlu*vl[j])
		for k, gk := range grad {
			outY[k] += a * gk
		}
		out[ny+j] = wg[j] * (p.dlu*gv + p.dll*vl[j])
		wG[j] = wg[j] * p.du
	}
}

// mixedHessVec writes out_k = Σ_i w_i Σ_j ∂²c_ext,i/∂x_k∂y_ext,j v_j
// (length nx), with v = (v_y, v_λ):
//
//	out = Σ_i w_eq,i ∇²_xy eq_i v_y + Σ_j w_j [a_j ∂g_j/∂x + ∂φ/∂u ∇²_xy g_j v_y],
//
// with a_j as in hessVec.
func (fb *fbConstraint) mixedHessVec(x, yext, w, v, out []float64) {
	nx, nye, nce := fb.Dims()
	checkHessVecLen("WithInequalities.MixedHessVec", nx, nye, nce, nx, x, yext, w, v, out)
	ny := fb.ny
	y, lambda := yext[:ny], yext[ny:]
	vy, vl := v[:ny], v[ny:]
	if fb.eq != nil {
		fb.eq.k.MixedHessVec(x, y, w[:fb.neq], vy, out)
	} else {
		clear(out)
	}
	s := fb.pool.Get().(*fbScratch)
	defer fb.pool.Put(s)
	_, jg := s.denseJ(fb)
	jgx := s.denseJX(fb)
	fb.g.c.Eval(x, y, s.g, jg)
	fb.g.k.JacobianX(x, y, jgx)
	wg := w[fb.neq:]
	for j, u := range s.g {
		p := fb.partials(lambda[j], u)
		gv := floats.Dot(jg[j*ny:(j+1)*ny], vy)
		a := wg[j] * (p.duu*gv + p.dlu*vl[j])
		for k, gk := range jgx[j*nx : (j+1)*nx] {
			out[k] += a * gk
		}
		s.w[j] = wg[j] * p.du
	}
	tmp := s.tmp[:nx]
	fb.g.k.MixedHessVec(x, y, s.w, vy, tmp)
	for k, t := range tmp {
		out[k] += t
	}
}

// feasibility writes the equality residuals eq(x, y) and the inequality
// violations max(g_j(x, y), 0) into r, for AdaNP.Check: the
// Fischer–Burmeister residual depends on multipliers that y does not
// carry.
func (fb *fbConstraint) feasibility(x, y, r []float64) {
	if fb.eq != nil {
		fb.eq.c.Eval(x, y, r[:fb.neq], nil)
	}
	fb.g.c.Eval(x, y, r[fb.neq:], nil)
	for j := fb.neq; j < len(r); j++ {
		r[j] = math.Max(r[j], 0)
	}
}

// fbBatchScratch holds the batched methods' temporaries, grown on demand:
// y and v without multipliers, eq's and g's values, Jacobians and
// weights, and the y-part of a curvature product.
type fbBatchScratch struct {
	y, v, ceq, jeq, g, jg, weq, wG, outY, tmp []float64
	jeq32, jg32                               []float32
}

// gather writes the first ny of every row of src (rows×(ny+ng)) into dst
// (rows×ny).
func (fb *fbConstraint) gather(rows int, src, dst []float64) {
	ny, nye := fb.ny, fb.ny+fb.ng
	for r := range rows {
		copy(dst[r*ny:(r+1)*ny], src[r*nye:r*nye+ny])
	}
}

// checkBatchLen panics with a clear message unless x, y_ext and c hold rows
// samples and jy, unless jyLen < 0, holds rows Jacobians.
func (fb *fbConstraint) checkBatchLen(method string, rows int, x, yext, c []float64, jyLen int) {
	nx, nye, nce := fb.Dims()
	if rows < 0 || len(x) != rows*nx || len(yext) != rows*nye || len(c) != rows*nce || (jyLen >= 0 && jyLen != rows*nce*nye) {
		panic(fmt.Sprintf("enforce: WithInequalities.%s: rows=%d len(x)=%d len(y)=%d len(c)=%d len(jy)=%d, want %d, %d, %d, %d",
			method, rows, len(x), len(yext), len(c), jyLen, rows*nx, rows*nye, rows*nce, rows*nce*nye))
	}
}

// evalBatch evaluates rows samples: eq and g each with its own EvalBatch or
// sample by sample, then φ sample by sample.
func (fb *fbConstraint) evalBatch(rows int, x, yext, c, jy []float64) {
	jyLen := -1
	if jy != nil {
		jyLen = len(jy)
	}
	fb.checkBatchLen("EvalBatch", rows, x, yext, c, jyLen)
	sc := fb.batch.Get().(*fbBatchScratch)
	defer fb.batch.Put(sc)
	ny, neq, ng := fb.ny, fb.neq, fb.ng
	y := grow(&sc.y, rows*ny)
	fb.gather(rows, yext, y)
	var jeq, jg []float64
	ceq := grow(&sc.ceq, rows*neq)
	if jy != nil {
		jeq, jg = grow(&sc.jeq, rows*neq*ny), grow(&sc.jg, rows*ng*ny)
	}
	if fb.eq != nil {
		fb.eq.evalBatch(rows, x, y, ceq, jeq)
	}
	g := grow(&sc.g, rows*ng)
	fb.g.evalBatch(rows, x, y, g, jg)
	fbAssembleBatch(fb, rows, yext, ceq, g, jeq, jg, c, jy)
}

// evalBatch32 is evalBatch with the Jacobians in float32: eq and g with
// their EvalBatch32 where they have it, in float64 with the Jacobians
// rounded where not.
func (fb *fbConstraint) evalBatch32(rows int, x, yext, c []float64, jy []float32) {
	fb.checkBatchLen("EvalBatch32", rows, x, yext, c, len(jy))
	sc := fb.batch.Get().(*fbBatchScratch)
	defer fb.batch.Put(sc)
	ny, neq, ng := fb.ny, fb.neq, fb.ng
	y := grow(&sc.y, rows*ny)
	fb.gather(rows, yext, y)
	ceq, jeq := grow(&sc.ceq, rows*neq), grow(&sc.jeq32, rows*neq*ny)
	if fb.eq != nil {
		fb.eq.evalBatch32(rows, x, y, ceq, jeq)
	}
	g, jg := grow(&sc.g, rows*ng), grow(&sc.jg32, rows*ng*ny)
	fb.g.evalBatch32(rows, x, y, g, jg)
	fbAssembleBatch(fb, rows, yext, ceq, g, jeq, jg, c, jy)
}

// fbAssembleBatch is fbAssemble for rows samples, with eq's values ceq
// (rows×neq) and Jacobians jeq, and g's values g (rows×ng) and Jacobians jg.
func fbAssembleBatch[T float32 | float64](fb *fbConstraint, rows int, yext, ceq, g []float64, jeq, jg []T, c []float64, jy []T) {
	ny, neq, ng := fb.ny, fb.neq, fb.ng
	nye, nce := ny+ng, neq+ng
	for r := range rows {
		cs := c[r*nce : (r+1)*nce]
		copy(cs, ceq[r*neq:(r+1)*neq])
		var jeqs, jgs, jys []T
		if jy != nil {
			jeqs, jgs = jeq[r*neq*ny:(r+1)*neq*ny], jg[r*ng*ny:(r+1)*ng*ny]
			jys = jy[r*nce*nye : (r+1)*nce*nye]
		}
		fbAssemble(fb, yext[r*nye+ny:(r+1)*nye], g[r*ng:(r+1)*ng], jeqs, jgs, cs, jys)
	}
}

// hessVecBatch writes hessVec for rows samples, with eq's and g's batched
// curvature products where they have them.
func (fb *fbConstraint) hessVecBatch(rows int, x, yext, w, v, out []float64) {
	fb.hessVecBatchWith(rows, x, yext, w, v, out, (*part).hessVecBatch)
}

// hessVecBatch32 is hessVecBatch with eq's and g's HessVecBatch32 where
// they have it.
func (fb *fbConstraint) hessVecBatch32(rows int, x, yext, w, v, out []float64) {
	fb.hessVecBatchWith(rows, x, yext, w, v, out, (*part).hessVecBatch32)
}

// hessVecBatchWith is hessVecBatch with hv as eq's and g's batched product.
func (fb *fbConstraint) hessVecBatchWith(rows int, x, yext, w, v, out []float64,
	hv func(p *part, rows int, x, y, w, v, out []float64)) {
	nx, nye, nce := fb.Dims()
	if rows < 0 || len(x) != rows*nx || len(yext) != rows*nye || len(w) != rows*nce || len(v) != rows*nye || len(out) != rows*nye {
		panic(fmt.Sprintf("enforce: WithInequalities.HessVecBatch: rows=%d len(x)=%d len(y)=%d len(w)=%d len(v)=%d len(out)=%d",
			rows, len(x), len(yext), len(w), len(v), len(out)))
	}
	sc := fb.batch.Get().(*fbBatchScratch)
	defer fb.batch.Put(sc)
	ny, neq, ng := fb.ny, fb.neq, fb.ng
	y, vy := grow(&sc.y, rows*ny), grow(&sc.v, rows*ny)
	fb.gather(rows, yext, y)
	fb.gather(rows, v, vy)
	outY := grow(&sc.outY, rows*ny)
	if fb.eq != nil {
		weq := grow(&sc.weq, rows*neq)
		for r := range rows {
			copy(weq[r*neq:(r+1)*neq], w[r*nce:r*nce+neq])
		}
		hv(fb.eq, rows, x, y, weq, vy, outY)
	} else {
		clear(outY)
	}
	g, jg := grow(&sc.g, rows*ng), grow(&sc.jg, rows*ng*ny)
	fb.g.evalBatch(rows, x, y, g, jg)
	wG := grow(&sc.wG, rows*ng)
	for r := range rows {
		os := out[r*nye : (r+1)*nye]
		copy(os[:ny], outY[r*ny:(r+1)*ny])
		fb.curvature(yext[r*nye+ny:(r+1)*nye], g[r*ng:(r+1)*ng], jg[r*ng*ny:(r+1)*ng*ny],
			w[r*nce+neq:(r+1)*nce], v[r*nye:(r+1)*nye], os, wG[r*ng:(r+1)*ng])
	}
	tmp := grow(&sc.tmp, rows*ny)
	hv(fb.g, rows, x, y, wG, vy, tmp)
	for r := range rows {
		os := out[r*nye : r*nye+ny]
		for k, t := range tmp[r*ny : (r+1)*ny] {
			os[k] += t
		}
	}
}
