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
// The result has Dims (nx, ny+ng, nc_eq+ng), implements Latent with
// Latent() = ng, so that AdaNP appends λ = 0 and drops λ afterwards, and has
// exact first and second derivatives in (y, λ) and x built from those of eq
// and g. With u = g_j, s = √(λ_j² + u² + ε) and ∇ = ∂/∂y,
//
//	∂φ/∂λ = λ/s − 1,  ∂φ/∂u = u/s + 1,
//	∂²φ/∂λ² = (u² + ε)/s³,  ∂²φ/∂u² = (λ² + ε)/s³,  ∂²φ/∂λ∂u = −λu/s³,
//	∇φ = ∂φ/∂u ∇g_j,
//	∇²φ = ∂²φ/∂u² ∇g_j∇g_jᵀ + ∂φ/∂u ∇²g_j,   ∇∂φ/∂λ = ∂²φ/∂λ∂u ∇g_j,
//
// and the x-derivatives follow by the chain rule through g_j. The optional
// methods are present on the type; the result is a Provider, and a
// capability is provided when eq (if not nil) and g supply what it needs:
//
//	CapJacobianX     JacobianX of eq and of g
//	CapHessVec       HessVec of eq and of g
//	CapMixedHessVec  MixedHessVec of eq, JacobianX and MixedHessVec of g
//
// The Jacobian in y_ext is never constant. Calling a method whose
// capability is not provided panics.
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
	nx, ny, ng, err := checkConstraintArg(g)
	if err != nil {
		return nil, fmt.Errorf("enforce: WithInequalities: g: %w", err)
	}
	fb := &fbConstraint{g: g, nx: nx, ny: ny, ng: ng, eps: epsFB}
	if eq != nil {
		enx, eny, neq, err := checkConstraintArg(eq)
		if err != nil {
			return nil, fmt.Errorf("enforce: WithInequalities: eq: %w", err)
		}
		if enx != nx || eny != ny {
			return nil, fmt.Errorf("enforce: WithInequalities: eq has (nx, ny) = (%d, %d), g has (%d, %d)",
				enx, eny, nx, ny)
		}
		fb.eq, fb.neq = eq, neq
	}
	neq := fb.neq
	fb.pool.New = func() any {
		return &fbScratch{
			jeq: make([]float64, neq*ny),
			g:   make([]float64, ng),
			jg:  make([]float64, ng*ny),
			jgx: make([]float64, ng*nx),
			w:   make([]float64, ng),
			tmp: make([]float64, max(nx, ny)),
		}
	}
	return fb, nil
}

// fbConstraint is the Constraint returned by WithInequalities.
type fbConstraint struct {
	eq, g   Constraint // eq may be nil.
	nx, ny  int        // sizes of x and of y, without the multipliers.
	neq, ng int
	eps     float64
	pool    sync.Pool // *fbScratch
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

var (
	_ JacobianXer    = (*fbConstraint)(nil)
	_ HessVecer      = (*fbConstraint)(nil)
	_ MixedHessVecer = (*fbConstraint)(nil)
	_ Latent         = (*fbConstraint)(nil)
	_ Provider       = (*fbConstraint)(nil)
)

// Dims returns nx, the size ny+ng of y_ext = (y, λ) and the number neq+ng of
// constraints.
func (fb *fbConstraint) Dims() (nx, ny, nc int) {
	return fb.nx, fb.ny + fb.ng, fb.neq + fb.ng
}

// Latent returns ng, the number of multipliers λ at the end of y_ext.
func (fb *fbConstraint) Latent() int { return fb.ng }

// Provides reports whether eq and g supply what the capability needs.
func (fb *fbConstraint) Provides(capability Capability) bool {
	eqHas := func(c Capability) bool { return fb.eq == nil || Provides(fb.eq, c) }
	switch capability {
	case CapJacobianX:
		return eqHas(CapJacobianX) && Provides(fb.g, CapJacobianX)
	case CapHessVec:
		return eqHas(CapHessVec) && Provides(fb.g, CapHessVec)
	case CapMixedHessVec:
		return eqHas(CapMixedHessVec) && Provides(fb.g, CapJacobianX) && Provides(fb.g, CapMixedHessVec)
	}
	return false
}

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
	ny := fb.ny
	y, lambda := yext[:ny], yext[ny:]
	s := fb.pool.Get().(*fbScratch)
	defer fb.pool.Put(s)
	var jg []float64
	if jy != nil {
		clear(jy)
		jg = s.jg
	}
	if fb.eq != nil {
		var jeq []float64
		if jy != nil {
			jeq = s.jeq
		}
		fb.eq.Eval(x, y, c[:fb.neq], jeq)
		if jy != nil {
			for i := range fb.neq {
				copy(jy[i*nye:i*nye+ny], jeq[i*ny:(i+1)*ny])
			}
		}
	}
	fb.g.Eval(x, y, s.g, jg)
	for j, u := range s.g {
		p := fb.partials(lambda[j], u)
		c[fb.neq+j] = p.phi
		if jy != nil {
			row := jy[(fb.neq+j)*nye : (fb.neq+j+1)*nye]
			for k, v := range jg[j*ny : (j+1)*ny] {
				row[k] = p.du * v
			}
			row[ny+j] = p.dl
		}
	}
}

// JacobianX writes ∂c_ext/∂x ((neq+ng)×nx, row-major) into jx: the rows of
// ∂eq/∂x, then ∂φ/∂u ∂g_j/∂x.
func (fb *fbConstraint) JacobianX(x, yext, jx []float64) {
	nx, nye, nce := fb.Dims()
	checkJacobianXLen("WithInequalities.JacobianX", nx, nye, nce, x, yext, jx)
	y, lambda := yext[:fb.ny], yext[fb.ny:]
	if fb.eq != nil {
		fb.needs(fb.eq, CapJacobianX, "JacobianX", "eq").(JacobianXer).JacobianX(x, y, jx[:fb.neq*nx])
	}
	gx := fb.needs(fb.g, CapJacobianX, "JacobianX", "g").(JacobianXer)
	s := fb.pool.Get().(*fbScratch)
	defer fb.pool.Put(s)
	fb.g.Eval(x, y, s.g, nil)
	jgx := jx[fb.neq*nx:]
	gx.JacobianX(x, y, jgx)
	for j, u := range s.g {
		floats.Scale(fb.partials(lambda[j], u).du, jgx[j*nx:(j+1)*nx])
	}
}

// HessVec writes out = Σ_i w_i ∇²c_ext,i v over y_ext = (y, λ), with
// v = (v_y, v_λ) and out = (out_y, out_λ) of length ny+ng:
//
//	out_y = Σ_i w_eq,i ∇²eq_i v_y + Σ_j w_j [a_j ∇g_j + ∂φ/∂u ∇²g_j v_y],
//	out_λj = w_j (∂²φ/∂λ∂u ∇g_j·v_y + ∂²φ/∂λ² v_λj),
//	a_j = ∂²φ/∂u² ∇g_j·v_y + ∂²φ/∂λ∂u v_λj,
//
// where w_j is the weight of φ_j.
func (fb *fbConstraint) HessVec(x, yext, w, v, out []float64) {
	nx, nye, nce := fb.Dims()
	checkHessVecLen("WithInequalities.HessVec", nx, nye, nce, nye, x, yext, w, v, out)
	ny := fb.ny
	y, lambda := yext[:ny], yext[ny:]
	vy, vl := v[:ny], v[ny:]
	outY := out[:ny]
	if fb.eq != nil {
		fb.needs(fb.eq, CapHessVec, "HessVec", "eq").(HessVecer).HessVec(x, y, w[:fb.neq], vy, outY)
	} else {
		clear(outY)
	}
	gh := fb.needs(fb.g, CapHessVec, "HessVec", "g").(HessVecer)
	s := fb.pool.Get().(*fbScratch)
	defer fb.pool.Put(s)
	fb.g.Eval(x, y, s.g, s.jg)
	wg := w[fb.neq:]
	for j, u := range s.g {
		p := fb.partials(lambda[j], u)
		grad := s.jg[j*ny : (j+1)*ny]
		gv := floats.Dot(grad, vy)
		a := wg[j] * (p.duu*gv + p.dlu*vl[j])
		for k, gk := range grad {
			outY[k] += a * gk
		}
		out[ny+j] = wg[j] * (p.dlu*gv + p.dll*vl[j])
		s.w[j] = wg[j] * p.du
	}
	tmp := s.tmp[:ny]
	gh.HessVec(x, y, s.w, vy, tmp)
	for k, t := range tmp {
		outY[k] += t
	}
}

// MixedHessVec writes out_k = Σ_i w_i Σ_j ∂²c_ext,i/∂x_k∂y_ext,j v_j
// (length nx), with v = (v_y, v_λ):
//
//	out = Σ_i w_eq,i ∇²_xy eq_i v_y + Σ_j w_j [a_j ∂g_j/∂x + ∂φ/∂u ∇²_xy g_j v_y],
//
// with a_j as in HessVec.
func (fb *fbConstraint) MixedHessVec(x, yext, w, v, out []float64) {
	nx, nye, nce := fb.Dims()
	checkHessVecLen("WithInequalities.MixedHessVec", nx, nye, nce, nx, x, yext, w, v, out)
	ny := fb.ny
	y, lambda := yext[:ny], yext[ny:]
	vy, vl := v[:ny], v[ny:]
	if fb.eq != nil {
		fb.needs(fb.eq, CapMixedHessVec, "MixedHessVec", "eq").(MixedHessVecer).MixedHessVec(x, y, w[:fb.neq], vy, out)
	} else {
		clear(out)
	}
	gx := fb.needs(fb.g, CapJacobianX, "MixedHessVec", "g").(JacobianXer)
	gm := fb.needs(fb.g, CapMixedHessVec, "MixedHessVec", "g").(MixedHessVecer)
	s := fb.pool.Get().(*fbScratch)
	defer fb.pool.Put(s)
	fb.g.Eval(x, y, s.g, s.jg)
	gx.JacobianX(x, y, s.jgx)
	wg := w[fb.neq:]
	for j, u := range s.g {
		p := fb.partials(lambda[j], u)
		gv := floats.Dot(s.jg[j*ny:(j+1)*ny], vy)
		a := wg[j] * (p.duu*gv + p.dlu*vl[j])
		for k, gk := range s.jgx[j*nx : (j+1)*nx] {
			out[k] += a * gk
		}
		s.w[j] = wg[j] * p.du
	}
	tmp := s.tmp[:nx]
	gm.MixedHessVec(x, y, s.w, vy, tmp)
	for k, t := range tmp {
		out[k] += t
	}
}

// needs returns c, after checking that it provides the capability that
// method requires; it panics otherwise.
func (fb *fbConstraint) needs(c Constraint, capability Capability, method, name string) Constraint {
	if !Provides(c, capability) {
		panic(fmt.Sprintf("enforce: WithInequalities.%s: %s does not provide the capability (check Provides first)", method, name))
	}
	return c
}

// feasibilityChecker is implemented by constraint systems whose residual
// c is not the measure of feasibility a user checks: WithInequalities'
// system, whose Fischer–Burmeister residual depends on multipliers that
// Check does not have. AdaNP.Check reports feasibility's r instead.
type feasibilityChecker interface {
	// feasibility writes the feasibility residual at (x, y), y without
	// latent variables, into r (length nc).
	feasibility(x, y, r []float64)
}

var _ feasibilityChecker = (*fbConstraint)(nil)

// feasibility writes the equality residuals eq(x, y) and the inequality
// violations max(g_j(x, y), 0) into r.
func (fb *fbConstraint) feasibility(x, y, r []float64) {
	if fb.eq != nil {
		fb.eq.Eval(x, y, r[:fb.neq], nil)
	}
	fb.g.Eval(x, y, r[fb.neq:], nil)
	for j := fb.neq; j < len(r); j++ {
		r[j] = math.Max(r[j], 0)
	}
}
