package solvers

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The constants of the filter line search, IPOPT's defaults (Wächter &
// Biegler, "On the implementation of an interior-point filter line-search
// algorithm for large-scale nonlinear programming", Math. Program. 106,
// 2006, §2.3–2.4).
const (
	filterGammaTheta = 1e-5 // γ_θ: sufficient decrease of θ
	filterGammaPhi   = 1e-8 // γ_φ: sufficient decrease of φ
	filterDelta      = 1.0  // δ of the switching condition
	filterSTheta     = 1.1  // s_θ of the switching condition
	filterSPhi       = 2.3  // s_φ of the switching condition
	filterEta        = 1e-8 // η_φ: Armijo's constant on φ
	filterGammaAlpha = 0.05 // γ_α: the safety factor of α_min
	socKappa         = 0.99 // κ_soc: the decrease of θ each correction must give
	socMax           = 4    // p_max: the most second-order corrections
	meritEta         = 1e-4 // Armijo's constant on the ℓ₁ merit function
	maxBacktracks    = 40   // the most halvings of α in one search
)

// filterEntry is a pair (θ, φ) of the filter: a trial point whose θ and φ
// are both no smaller than an entry's is refused.
type filterEntry struct{ theta, phi float64 }

// lineSearch is one iteration's search along the Newton direction (dz,
// dlam) from z, for the barrier parameter mu and the fraction to the
// boundary tau. On success zTry holds the accepted point, alpha the step
// length and stepZ, stepLam the direction it was taken along (the Newton
// direction or a second-order correction).
type lineSearch struct {
	dz, dlam []float64
	c        []float64 // c(z)
	mu, tau  float64
	// theta0 = ‖c(z)‖₁, phi0 = φ_μ(z) and dphi = ∇φ_μ(z)ᵀdz, φ_μ the
	// barrier function f − μΣlog(z − l) − μΣlog(u − z).
	theta0, phi0, dphi float64
	// thetaTol is the rounding tolerance of comparisons of θ: see
	// thetaRounding.
	thetaTol float64
	alphaMax float64

	alpha          float64
	stepZ, stepLam []float64
	zTry           []float64
	ctry, csoc     []float64
	// augment says that the accepted step must enter the filter (it was
	// not an Armijo step on φ under the switching condition).
	augment bool
}

// leq reports a ≤ b up to rounding relative to base, as IPOPT compares
// the values of its line search: a − b ≤ 10·ε·|base|.
func leq(a, b, base float64) bool {
	return a-b <= 10*eps*math.Abs(base)
}

// eps is the machine epsilon of float64.
const eps = 0x1p-52

// thetaRounding returns the rounding error to allow in comparisons of
// θ = ‖c‖₁ at z: 10·ε·(θ + Σ_i(|b_i| + Σ_j |J_ij|·|z_j|)), J the m×nz
// Jacobian of c at z and b_i the constant subtracted in row i (GLower_i
// of an equality row). Σ_j |J_ij|·|z_j| estimates the magnitude of the
// terms that c_i adds up (a monomial term contributes its degree times
// its magnitude where no other term of the same derivative cancels it),
// so 10·ε of the sum is what the evaluation of c can round by. IPOPT's
// tolerance, 10·ε·θ, allows nothing where the terms cancel: at a
// feasible point θ is that rounding itself, and whether a trial point
// rounds to a larger or a smaller θ would decide the search.
func (w *ipm) thetaRounding(jac *mat.Dense, theta float64) float64 {
	scale := theta
	for i := range w.m {
		if w.slackOf[i] < 0 {
			scale += math.Abs(w.p.GLower[i])
		}
		for j, a := range jac.RawRowView(i) {
			scale += math.Abs(a * w.z[j])
		}
	}
	return 10 * eps * scale
}

// begin prepares the search along (dz, dlam) at w.z, where c = c(w.z),
// gz = ∇f over z and jac the Jacobian of c over z.
func (ls *lineSearch) begin(w *ipm, dz, dlam, c, gz []float64, jac *mat.Dense, mu, tau float64) {
	ls.dz, ls.dlam, ls.c, ls.mu, ls.tau = dz, dlam, c, mu, tau
	if len(ls.zTry) != len(dz) {
		ls.zTry = make([]float64, len(dz))
	}
	if len(ls.ctry) != len(c) {
		ls.ctry, ls.csoc = make([]float64, len(c)), make([]float64, len(c))
	}
	ls.alphaMax = w.maxStep(w.z, dz, tau)
	ls.theta0 = floats.Norm(c, 1)
	ls.thetaTol = w.thetaRounding(jac, ls.theta0)
	w.setY(w.z)
	ls.phi0 = w.p.Objective(w.y) + mu*w.logBarrier(w.z)
	ls.dphi = 0
	for j, zj := range w.z {
		d := gz[j]
		if l := w.lo[j]; !math.IsInf(l, -1) {
			d -= mu / (zj - l)
		}
		if u := w.hi[j]; !math.IsInf(u, 1) {
			d += mu / (u - zj)
		}
		ls.dphi += d * dz[j]
	}
	ls.augment = false
}

// accept records z + alpha·stepZ (already in zTry) as the step taken.
func (ls *lineSearch) accept(alpha float64, stepZ, stepLam []float64) {
	ls.alpha, ls.stepZ, ls.stepLam = alpha, stepZ, stepLam
}

// tinyStep takes the full step without a search when every |dz_j| is
// below 10·ε·(1 + |z_j|) and max|c| = feas ≤ 10⁻⁴ (IPOPT's tiny-step
// rule): the merit values along such a step differ by rounding only, so a
// search would shorten the step, and with it the multipliers' step, for
// nothing.
func (ls *lineSearch) tinyStep(w *ipm, feas float64) bool {
	if feas > 1e-4 {
		return false
	}
	for j, d := range ls.dz {
		if math.Abs(d) >= 10*eps*(1+math.Abs(w.z[j])) {
			return false
		}
	}
	copy(ls.zTry, w.z)
	floats.AddScaled(ls.zTry, ls.alphaMax, ls.dz)
	ls.accept(ls.alphaMax, ls.dz, ls.dlam)
	return true
}

// acceptable is the filter's test of a trial point with barrier value phi
// and ‖c‖₁ = theta reached with the step length alpha (of the Newton
// direction, also for its second-order corrections). armijo reports
// whether the point was accepted by Armijo's rule under the switching
// condition (an f-type step, which leaves the filter as it is). θ is
// compared with θ₀ and with the filter's entries up to thetaTol, φ with
// φ₀ up to 10·ε·|φ₀|.
func (ls *lineSearch) acceptable(w *ipm, alpha, phi, theta float64) (ok, armijo bool) {
	if math.IsInf(phi, 1) || theta > w.thetaMax {
		return false, false
	}
	for _, e := range w.filter {
		if theta-e.theta >= ls.thetaTol && phi >= e.phi {
			return false, false
		}
	}
	switching := ls.dphi < 0 && alpha*math.Pow(-ls.dphi, filterSPhi) > filterDelta*math.Pow(ls.theta0, filterSTheta)
	armijo = leq(phi, ls.phi0+filterEta*alpha*ls.dphi, ls.phi0)
	if ls.theta0 <= w.thetaMin && switching {
		return armijo, armijo
	}
	ok = theta-(1-filterGammaTheta)*ls.theta0 <= ls.thetaTol || leq(phi, ls.phi0-filterGammaPhi*ls.theta0, ls.phi0)
	return ok, ok && switching && armijo
}

// filterSearch backtracks from alphaMax by halving until the filter
// accepts the trial point, trying up to socMax second-order corrections
// when the first trial point is refused with a larger θ than z's: each
// solves the Newton system again (soc, with the constraints' right-hand
// side replaced by cs = α·cs + c(trial), starting from cs = c(z)) and
// corrects the step, so that steps whose linearisation misses the
// constraints' curvature (the Maratos effect) are not cut short. It
// reports false when α falls below IPOPT's α_min or maxBacktracks
// halvings are spent.
func (ls *lineSearch) filterSearch(w *ipm, soc func(cs []float64) (dz, dlam []float64)) bool {
	alphaMin := filterGammaTheta
	if ls.dphi < 0 {
		alphaMin = math.Min(alphaMin, filterGammaPhi*ls.theta0/(-ls.dphi))
		if ls.theta0 <= w.thetaMin {
			alphaMin = math.Min(alphaMin, filterDelta*math.Pow(ls.theta0, filterSTheta)/math.Pow(-ls.dphi, filterSPhi))
		}
	}
	alphaMin *= filterGammaAlpha
	alpha := ls.alphaMax
	for try := 0; try < maxBacktracks && alpha >= alphaMin; try++ {
		copy(ls.zTry, w.z)
		floats.AddScaled(ls.zTry, alpha, ls.dz)
		phi, theta := w.barrier(ls.zTry, ls.mu, ls.ctry)
		if ok, armijo := ls.acceptable(w, alpha, phi, theta); ok {
			ls.accept(alpha, ls.dz, ls.dlam)
			ls.augment = !armijo
			return true
		}
		if try == 0 && theta >= ls.theta0 && !math.IsInf(theta, 1) && ls.correct(w, soc, theta) {
			return true
		}
		alpha /= 2
	}
	return false
}

// correct tries the second-order corrections of the first trial point
// z + alphaMax·dz, whose ‖c‖₁ is theta and c is in ctry.
func (ls *lineSearch) correct(w *ipm, soc func(cs []float64) (dz, dlam []float64), theta float64) bool {
	copy(ls.csoc, ls.ctry)
	floats.AddScaled(ls.csoc, ls.alphaMax, ls.c)
	thetaOld := theta
	for range socMax {
		dzs, dlams := soc(ls.csoc)
		if dzs == nil {
			return false
		}
		as := w.maxStep(w.z, dzs, ls.tau)
		copy(ls.zTry, w.z)
		floats.AddScaled(ls.zTry, as, dzs)
		phi, th := w.barrier(ls.zTry, ls.mu, ls.ctry)
		if ok, armijo := ls.acceptable(w, ls.alphaMax, phi, th); ok {
			ls.accept(as, append([]float64(nil), dzs...), append([]float64(nil), dlams...))
			ls.augment = !armijo
			return true
		}
		if th > socKappa*thetaOld {
			return false
		}
		thetaOld = th
		floats.Scale(as, ls.csoc)
		floats.Add(ls.csoc, ls.ctry)
	}
	return false
}

// meritSearch is the fallback when the filter refuses every trial point:
// Armijo backtracking on the ℓ₁ merit function φ_μ + ν‖c‖₁, whose
// directional derivative along dz is dphi − ν‖c‖₁.
func (ls *lineSearch) meritSearch(w *ipm, nu float64) bool {
	m0 := ls.phi0 + nu*ls.theta0
	dm := math.Min(ls.dphi-nu*ls.theta0, 0)
	alpha := ls.alphaMax
	for range maxBacktracks {
		copy(ls.zTry, w.z)
		floats.AddScaled(ls.zTry, alpha, ls.dz)
		phi, theta := w.barrier(ls.zTry, ls.mu, ls.ctry)
		if leq(phi+nu*theta, m0+meritEta*alpha*dm, m0) {
			ls.accept(alpha, ls.dz, ls.dlam)
			return true
		}
		alpha /= 2
	}
	return false
}

// maxStep returns the largest α ≤ 1 that keeps z + α·dz at least the
// fraction 1 − tau of its distance to every bound away from it.
func (w *ipm) maxStep(z, dz []float64, tau float64) float64 {
	alpha := 1.0
	for j, zj := range z {
		if l := w.lo[j]; !math.IsInf(l, -1) && dz[j] < 0 {
			alpha = math.Min(alpha, -tau*(zj-l)/dz[j])
		}
		if u := w.hi[j]; !math.IsInf(u, 1) && dz[j] > 0 {
			alpha = math.Min(alpha, tau*(u-zj)/dz[j])
		}
	}
	return alpha
}

// logBarrier returns −Σlog(z − l) − Σlog(u − z) over the finite bounds,
// or +Inf when z is not strictly inside them.
func (w *ipm) logBarrier(z []float64) float64 {
	var bar float64
	for j, zj := range z {
		if l := w.lo[j]; !math.IsInf(l, -1) {
			if zj <= l {
				return math.Inf(1)
			}
			bar -= math.Log(zj - l)
		}
		if u := w.hi[j]; !math.IsInf(u, 1) {
			if zj >= u {
				return math.Inf(1)
			}
			bar -= math.Log(u - zj)
		}
	}
	return bar
}

// barrier returns the barrier function φ_μ(z) = f − μΣlog(z − l) −
// μΣlog(u − z) and θ(z) = ‖c(z)‖₁, with c(z) written into c; both are
// +Inf outside the bounds or where f or c is not finite.
func (w *ipm) barrier(z []float64, mu float64, c []float64) (phi, theta float64) {
	bar := w.logBarrier(z)
	if math.IsInf(bar, 1) {
		return bar, bar
	}
	w.residual(z, c)
	phi, theta = w.p.Objective(w.y)+mu*bar, floats.Norm(c, 1)
	if math.IsNaN(phi) || math.IsInf(phi, 0) || math.IsNaN(theta) || math.IsInf(theta, 0) {
		return math.Inf(1), math.Inf(1)
	}
	return phi, theta
}

// take moves to the point the search accepted: z ← zTry, λ ← λ +
// α·stepLam, and the bound multipliers by their primal-dual step for
// stepZ, kept by the fraction to the boundary positive and within a
// factor 10¹⁰ of μ/dist (IPOPT's κ_Σ).
func (w *ipm) take(ls *lineSearch, mu, tau float64) {
	alphaV := 1.0
	for j, zj := range w.z {
		w.dvl[j], w.dvu[j] = 0, 0
		if l := w.lo[j]; !math.IsInf(l, -1) {
			w.dvl[j] = mu/(zj-l) - w.vl[j] - w.vl[j]/(zj-l)*ls.stepZ[j]
			if w.dvl[j] < 0 {
				alphaV = math.Min(alphaV, -tau*w.vl[j]/w.dvl[j])
			}
		}
		if u := w.hi[j]; !math.IsInf(u, 1) {
			w.dvu[j] = mu/(u-zj) - w.vu[j] + w.vu[j]/(u-zj)*ls.stepZ[j]
			if w.dvu[j] < 0 {
				alphaV = math.Min(alphaV, -tau*w.vu[j]/w.dvu[j])
			}
		}
	}
	copy(w.z, ls.zTry)
	floats.AddScaled(w.lambda, ls.alpha, ls.stepLam)
	for j := range w.z {
		w.vl[j] += alphaV * w.dvl[j]
		w.vu[j] += alphaV * w.dvu[j]
		if l := w.lo[j]; !math.IsInf(l, -1) {
			d := w.z[j] - l
			w.vl[j] = math.Max(mu/(1e10*d), math.Min(1e10*mu/d, w.vl[j]))
		}
		if u := w.hi[j]; !math.IsInf(u, 1) {
			d := u - w.z[j]
			w.vu[j] = math.Max(mu/(1e10*d), math.Min(1e10*mu/d, w.vu[j]))
		}
	}
}
