package enforce

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/isfinite"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// This file holds the arithmetic of one NP step, forward and backward, and
// of the implicit gradient. The drivers (driver.go, vjp.go) decide which
// samples take which step and when the constraint is evaluated; every
// number is computed here.
//
// Notation, per sample: B = ∂c/∂y at the iterate y, D = W⁻¹ (diagonal),
// G = B·D·Bᵀ + εI, μ = G⁻¹c, δ = D·Bᵀ·μ. A step is y⁺ = y − α·δ, with α = 1
// for the paper's full step; globalisation (Settings.MaxStep,
// Settings.LineSearch) scales it.

// loPivot is the smallest ratio pivot²/G_jj that Float32 accepts in the
// Cholesky factor of a single-precision G: below it, the rounding of G
// (relative 1e-7 of its entries) would change G⁻¹ by more than ~1 %.
const loPivot = 1e-5

// lineSearchSigma is the Armijo constant of the backtracking line search.
const lineSearchSigma = 1e-4

// maxHalvings bounds the backtracking line search: a step that does not
// decrease the merit after this many halvings stalls the sample.
const maxHalvings = 30

// stallSteps is the number of consecutive steps without a 1% improvement of
// the residual measure after which a sample without line search stalls.
const stallSteps = 10

// jmat is a Jacobian B (nc×n, row-major) for the code that takes either
// precision: in float64, or in float32 for a sample whose last evaluation
// was in single precision (Float32). Exactly one of b and b32 is set. (The
// step itself calls direction or direction32: passing jmat there cost the
// smallest problems 10 % per step.)
type jmat struct {
	b   []float64
	b32 []float32
}

// mulVec writes dst = B·x.
func (j jmat) mulVec(dst []float64, nc, n int, x []float64) {
	if j.b32 != nil {
		dense.MulVec(dst, j.b32, nc, n, x)
		return
	}
	dense.MulVec(dst, j.b, nc, n, x)
}

// copyTo writes B into the float64 dst.
func (j jmat) copyTo(dst []float64) {
	if j.b32 == nil {
		copy(dst, j.b)
		return
	}
	for i, v := range j.b32 {
		dst[i] = float64(v)
	}
}

// weights returns W⁻¹'s diagonal for Jacobian b (float64, or float32 for
// a sample evaluated in single precision), or nil for W = I. For
// BatchDiagonal and TrainableDiagonal weights the caller has written them
// into ws.d (batch.step), except for BatchDiagonal with a constant
// Jacobian, where they are AutoDiagonal's.
func weights[T sgemm.Real](a *AdaNP, ws *workspace, b []T) []float64 {
	switch a.s.Weights {
	case Diagonal:
		copy(ws.d, a.diagInv)
		return ws.d
	case BatchDiagonal, TrainableDiagonal:
		if a.constB == nil {
			return ws.d
		}
		autoWeights(ws.d, b, a.nc, a.n)
		return ws.d
	case AutoDiagonal:
		autoWeights(ws.d, b, a.nc, a.n)
		return ws.d
	}
	return nil
}

// autoWeights writes AutoDiagonal's W⁻¹ diagonal for the nc×n Jacobian b
// into d: with m_k = mean_i |B_ik|, d_k = max(m_k, 1) / max_j max(m_j, 1).
// (The reference builds W = diag(max_j d_j / d_k) and inverts it.)
func autoWeights[T sgemm.Real](d []float64, b []T, nc, n int) {
	top := 0.0
	for k := 0; k < n; k++ {
		var s float64
		for i := 0; i < nc; i++ {
			s += math.Abs(float64(b[i*n+k]))
		}
		d[k] = math.Max(s/float64(nc), 1)
		top = math.Max(top, d[k])
	}
	for k := range d[:n] {
		d[k] /= top
	}
}

// autoDiagonalVJP back-propagates through AutoDiagonal's weights: given
// dbar = ∂ℓ/∂D for D = W⁻¹ computed from b, it writes ∂ℓ/∂B into bbar
// (nc×n) and reports whether any entry is non-zero. With m_k = mean_i |B_ik|,
// d_k = max(m_k, 1), t = max_j d_j and D_k = d_k/t:
//
//	∂ℓ/∂d_k = dbar_k/t − [k = argmax d]·Σ_j dbar_j·d_j/t²,
//	∂ℓ/∂B_ik = ∂ℓ/∂d_k · sign(B_ik)/nc   where m_k > 1 (else 0).
//
// At the kinks (m_k = 1, ties in the maximum, B_ik = 0) it uses the
// one-sided derivative of the branch the forward pass took.
func (a *AdaNP) autoDiagonalVJP(b, dbar, bbar, dt []float64) bool {
	n, nc := a.n, a.nc
	top, arg := 0.0, 0
	for k := 0; k < n; k++ {
		var s float64
		for i := 0; i < nc; i++ {
			s += math.Abs(b[i*n+k])
		}
		dt[k] = math.Max(s/float64(nc), 1)
		if dt[k] > top {
			top, arg = dt[k], k
		}
	}
	var topBar float64
	for k := range dt {
		topBar += dbar[k] * dt[k]
	}
	topBar /= top * top
	any := false
	for k := 0; k < n; k++ {
		g := dbar[k] / top
		if k == arg {
			g -= topBar
		}
		active := dt[k] > 1 // d_k = max(m_k, 1) > 1 exactly when m_k > 1
		for i := 0; i < nc; i++ {
			v := 0.0
			if active {
				switch bik := b[i*n+k]; {
				case bik > 0:
					v = g / float64(nc)
				case bik < 0:
					v = -g / float64(nc)
				}
			}
			bbar[i*n+k] = v
			any = any || v != 0
		}
	}
	return any
}

// factorize forms G = B·diag(d)·Bᵀ + εI (ε = reg) into f and factors it, by
// Cholesky or, when that fails, by the clamped eigendecomposition. It
// reports false only if G is not finite or the eigensolver fails. With lo
// it forms G in single precision first (Float32) and accepts its Cholesky
// factor only if every pivot is above 1e-5 of its diagonal entry; else it
// starts again in float64.
func (a *AdaNP) factorize(f *factor, b, d []float64, ws *workspace, lo bool, reg float64) bool {
	nc := a.nc
	if nc == 1 && scalarFactor(f, b, d, reg) {
		return true
	}
	if lo && nc > 1 {
		if dense.GramChol32(f.m, b, d, nc, a.n, reg, &ws.g32, ws.tmp, loPivot) {
			f.eig = false
			return true
		}
	}
	dense.Gram(f.m, b, d, nc, a.n, reg, &ws.g64)
	if !allFinite(f.m) {
		return false
	}
	f.eig = false
	if dense.Cholesky(f.m, nc, ws.tmp) {
		return true
	}
	// Cholesky overwrote part of G: form it again for the fallback.
	dense.Gram(f.m, b, d, nc, a.n, reg, &ws.g64)
	f.eig = true
	return dense.EigClamp(f.m, nc, reg, 1e-12, f.lam, ws.eigWork)
}

// factorize32 is factorize for a float32 B (Float32, a sample evaluated
// in single precision), always in single precision: it reports false where
// factorize would start again in float64, and the caller then evaluates B
// again in float64 (a B rounded to float32 is not accurate enough for the
// ill-conditioned G that failed the pivot test).
func (a *AdaNP) factorize32(f *factor, b []float32, d []float64, ws *workspace) bool {
	if a.nc == 1 {
		return scalarFactor(f, b, d, a.s.Reg)
	}
	f.eig = false
	return dense.GramChol32(f.m, b, d, a.nc, a.n, a.s.Reg, &ws.g32, ws.tmp, loPivot)
}

// scalarFactor is factorize for a single constraint, where G is the number
// ‖B‖²_D + reg (summed in float64, also for a float32 B) and its Cholesky
// factor is √G. It reports false, leaving the general path to handle the
// case, unless G is positive and finite.
func scalarFactor[T sgemm.Real](f *factor, B []T, d []float64, reg float64) bool {
	g := reg
	if d == nil {
		for _, v := range B {
			g += float64(v) * float64(v)
		}
	} else {
		for k, v := range B {
			g += float64(v) * d[k] * float64(v)
		}
	}
	return setScalar(f, g)
}

// setScalar sets f to the factor √g of the 1×1 G = g, and reports false
// unless g is positive and finite.
func setScalar(f *factor, g float64) bool {
	if !(g > 0) || g > math.MaxFloat64 {
		return false
	}
	f.m[0], f.eig = math.Sqrt(g), false
	return true
}

// solve overwrites v with G⁻¹·v.
func (f *factor) solve(nc int, v, tmp []float64) {
	if f.eig {
		dense.EigSolve(f.m, f.lam, nc, v, tmp)
		return
	}
	dense.CholSolve(f.m, nc, v)
}

// direction computes the NP direction at an iterate with residual c and
// Jacobian B, G formed with ε = reg: μ = G⁻¹c into ws.mu and δ = D·Bᵀ·μ into delta. It returns
// D's diagonal (nil for W = I) and G's factor, and reports false if G
// cannot be factored or δ is not finite.
func (a *AdaNP) direction(ws *workspace, c, B, delta []float64, reg float64) (d []float64, f *factor, ok bool) {
	n, nc := a.n, a.nc
	d, f = a.constD, &a.constG
	if a.constB == nil {
		d, f = weights(a, ws, B), &ws.g
		if !a.factorize(f, B, d, ws, a.lo, reg) {
			return nil, nil, false
		}
	}
	a.multipliers(ws, c, f)
	dense.MulTransVec(delta, B, nc, n, ws.mu)
	return d, f, scaleFinite(delta, d)
}

// direction32 is direction for a float32 B (Float32, a sample evaluated in
// single precision). It reports false also where G cannot be factored in
// single precision (see factorize32).
func (a *AdaNP) direction32(ws *workspace, c []float64, B []float32, delta []float64) (d []float64, f *factor, ok bool) {
	d, f = weights(a, ws, B), &ws.g
	if !a.factorize32(f, B, d, ws) {
		return nil, nil, false
	}
	a.multipliers(ws, c, f)
	dense.MulTransVec(delta, B, a.nc, a.n, ws.mu)
	return d, f, scaleFinite(delta, d)
}

// multipliers writes μ = G⁻¹c into ws.mu for G's factor f.
func (a *AdaNP) multipliers(ws *workspace, c []float64, f *factor) {
	if a.nc == 1 && !f.eig {
		ws.mu[0] = c[0] / (f.m[0] * f.m[0]) // G = L², L = √G
		return
	}
	copy(ws.mu, c)
	f.solve(a.nc, ws.mu, ws.tmp)
}

// scaleFinite multiplies delta by d (nil meaning 1) and reports whether
// the result is finite.
func scaleFinite(delta, d []float64) bool {
	if d != nil {
		for j, v := range delta {
			delta[j] = v * d[j]
		}
	}
	return allFinite(delta)
}

// initialStep returns the step length α₀ the step starts from: 1, or
// MaxStep/‖δ‖ when the full step is longer than Settings.MaxStep (then
// bounded is true).
func (a *AdaNP) initialStep(delta []float64) (alpha float64, bounded bool) {
	if a.s.MaxStep > 0 {
		if nrm := norm2(delta); nrm > a.s.MaxStep {
			return a.s.MaxStep / nrm, true
		}
	}
	return 1, false
}

// trial writes yT = y − α·δ.
func trial(yT, y, delta []float64, alpha float64) {
	for j, v := range delta {
		yT[j] = y[j] - alpha*v
	}
}

// merit is ½‖c‖², the merit function of the line search.
func merit(c []float64) float64 {
	var s float64
	for _, v := range c {
		s += v * v
	}
	return s / 2
}

// armijo reports whether a trial with merit mT is accepted after a step of
// length alpha from a point with merit m0 whose merit decreases along δ at
// rate slope = cᵀBδ (positive for a descent direction).
func armijo(mT, m0, slope, alpha float64) bool {
	if !(mT <= mT) || math.IsInf(mT, 0) {
		return false
	}
	if slope > 0 {
		return mT <= m0-lineSearchSigma*alpha*slope
	}
	return mT < m0
}

// backStep is the vector–Jacobian product of one step y⁺ = y − α·δ(y)
// (and of α where Settings.MaxStep bounded it), except the two curvature
// products in y, which the caller adds through finishBackStep so that they
// can be batched. Given ḡ = ∂ℓ/∂y⁺ in g, it computes, with ḡ' = ḡ for a
// full or backtracked step and ḡ' = (I − δ̂δ̂ᵀ)ḡ for a step bounded to
// length MaxStep (δ̂ = δ/‖δ‖),
//
//	w = G⁻¹·B·D·ḡ',  p = ḡ' − Bᵀw,
//	∂ℓ/∂y = ḡ − α·(Bᵀw + Σ_i μ_i ∇²c_i·Dp − Σ_i w_i ∇²c_i·δ + Σ_i ∇²c_i·B̄_i),
//	∂ℓ/∂x −= α·(J_xᵀw + Σ_i μ_i ∇²_xy c_i·Dp − Σ_i w_i ∇²_xy c_i·δ + Σ_i ∇²_xy c_i·B̄_i),
//
// where B̄ = ∂ℓ/∂B through AutoDiagonal's weights (autoDiagonalVJP with
// ∂ℓ/∂D = p ⊙ Bᵀμ; zero for fixed weights). It leaves Bᵀw + Σ_i ∇²c_i·B̄_i
// in ws.acc, Dp in ws.dp, δ in ws.delta and w in ws.w, and adds the whole
// x-term to gx. curv selects the curvature terms (Unrolled with HessVec),
// curvX those in x (MixedHessVec).
func (a *AdaNP) backStep(ws *workspace, st *stepRecord, xs, g, gx []float64, curv, curvX, wantX bool) {
	B, d, mu := st.B, st.d, st.mu
	a.mulBT(ws.delta, B, mu)
	copy(ws.bmu, ws.delta) // Bᵀμ
	if d != nil {
		for i := range ws.delta {
			ws.delta[i] *= d[i]
		}
	}
	gp := ws.gp
	copy(gp, g)
	if st.bounded {
		nrm2 := dot(ws.delta, ws.delta)
		if nrm2 > 0 {
			t := dot(ws.delta, g) / nrm2
			for i, v := range ws.delta {
				gp[i] -= t * v
			}
		}
	}
	dg := ws.dp
	for i, v := range gp {
		if d != nil {
			v *= d[i]
		}
		dg[i] = v
	}
	a.mulB(ws.w, B, dg)
	a.solveG(ws, st.f, ws.w)
	a.mulBT(ws.acc, B, ws.w)
	for i := range gp {
		p := gp[i] - ws.acc[i]
		ws.p[i] = p
		if d != nil {
			p *= d[i]
		}
		dg[i] = p
	}
	xacc := ws.gxAcc
	if wantX {
		a.firstJxTVec(ws, xs, st.y, ws.w, xacc)
	}
	if curvX {
		h := a.k.MixedHessVec
		h(xs, st.y, mu, ws.dp, ws.gxHV)
		for m, v := range ws.gxHV {
			xacc[m] += v
		}
		h(xs, st.y, ws.w, ws.delta, ws.gxHV)
		for m, v := range ws.gxHV {
			xacc[m] -= v
		}
	}
	if st.theta > 0 {
		var jxT func(c, out []float64)
		if wantX {
			jxT = func(c, out []float64) { a.againJxTVec(ws, xs, st.y, c, out) }
		}
		a.dampingVJP(ws, st, func(dst, v []float64) { a.mulB(dst, B, v) }, func(dst, v []float64) { a.mulBT(dst, B, v) }, jxT, ws.acc, xacc)
	}
	if curv && a.s.Weights == AutoDiagonal && a.constB == nil {
		for k := range ws.bmu {
			ws.bmu[k] *= ws.p[k] // ∂ℓ/∂D
		}
		a.autoDiagonalCurvature(ws, xs, st.y, B, xacc, curvX)
	}
	if wantX {
		for m, v := range xacc {
			gx[m] -= st.alpha * v
		}
	}
}

// The operations of backStep that differ between the dense path (B a
// dense nc×n matrix, G's factor in the record) and the sparse path (B's
// values in a.sp's pattern, G's factor in ws.sp.cur).

// mulB writes dst = B·v.
func (a *AdaNP) mulB(dst, B, v []float64) {
	if a.sp != nil {
		a.sp.mulVec(dst, B, v)
		return
	}
	dense.MulVec(dst, B, a.nc, a.n, v)
}

// mulBT writes dst = Bᵀ·v.
func (a *AdaNP) mulBT(dst, B, v []float64) {
	if a.sp != nil {
		a.sp.mulTransVec(dst, B, v)
		return
	}
	dense.MulTransVec(dst, B, a.nc, a.n, v)
}

// solveG overwrites v with G⁻¹·v, G's factor being f on the dense path
// and ws.sp.cur on the sparse path (where f is nil).
func (a *AdaNP) solveG(ws *workspace, f *factor, v []float64) {
	if a.sp != nil {
		ws.sp.cur.Solve(v)
		return
	}
	f.solve(a.nc, v, ws.tmp)
}

// firstJxTVec writes out = J_xᵀ·w at (x, y); on the dense path it leaves
// J_x in ws.jx for againJxTVec.
func (a *AdaNP) firstJxTVec(ws *workspace, x, y, w, out []float64) {
	if a.sp != nil {
		a.jacobianXTVec(ws, x, y, w, out)
		return
	}
	nc, nx := a.nc, a.nx
	a.k.JacobianX(x, y, ws.jx)
	clear(out)
	for i := 0; i < nc; i++ {
		wi := w[i]
		for m := 0; m < nx; m++ {
			out[m] += ws.jx[i*nx+m] * wi
		}
	}
}

// againJxTVec writes out = J_xᵀ·w at the (x, y) of the last firstJxTVec.
func (a *AdaNP) againJxTVec(ws *workspace, x, y, w, out []float64) {
	if a.sp != nil {
		a.jacobianXTVec(ws, x, y, w, out)
		return
	}
	dense.MulTransVec(out, ws.jx, a.nc, a.nx, w)
}

// autoDiagonalCurvature adds Σ_i ∇²c_i·B̄_i to ws.acc and, with curvX,
// Σ_i ∇²_xy c_i·B̄_i to xacc, B̄ = ∂ℓ/∂B through AutoDiagonal's weights
// for ∂ℓ/∂D in ws.bmu: one HessVec per row with a nonzero B̄_i on the
// dense path, one per set of rows with disjoint patterns on the sparse
// path (rowSetCurvature).
func (a *AdaNP) autoDiagonalCurvature(ws *workspace, xs, y, B, xacc []float64, curvX bool) {
	if a.sp != nil {
		if a.autoDiagonalVJPSparse(B, ws.bmu, ws.bbar, ws.dt) {
			a.rowSetCurvature(ws, xs, y, ws.bbar, xacc, curvX)
		}
		return
	}
	if !a.autoDiagonalVJP(B, ws.bmu, ws.bbar, ws.dt) {
		return
	}
	n := a.n
	for i := 0; i < a.nc; i++ {
		bi := ws.bbar[i*n : (i+1)*n]
		if allZero(bi) {
			continue
		}
		clear(ws.unit)
		ws.unit[i] = 1
		a.k.HessVec(xs, y, ws.unit, bi, ws.hv)
		for k, v := range ws.hv {
			ws.acc[k] += v
		}
		if curvX {
			a.k.MixedHessVec(xs, y, ws.unit, bi, ws.gxHV)
			for m, v := range ws.gxHV {
				xacc[m] += v
			}
		}
	}
}

// finishBackStep completes backStep: g ← g − α·(acc + hMu − hW), with
// hMu = Σ_i μ_i ∇²c_i·Dp and hW = Σ_i w_i ∇²c_i·δ (nil when curvature is
// not used).
func finishBackStep(g, acc, hMu, hW []float64, alpha float64) {
	if hMu == nil {
		for i, v := range acc {
			g[i] -= alpha * v
		}
		return
	}
	for i, v := range acc {
		g[i] -= alpha * (v + hMu[i] - hW[i])
	}
}

// implicitVJP is the implicit-function-theorem gradient of the point y*
// of the record st, seen as the W-nearest point to ŷ on the constraint set:
// the KKT conditions W(y* − ŷ) + Bᵀλ = 0, c(x, y*) = 0 define y*(ŷ, x), and
// with H = W + Σ_i λ_i ∇²c_i,
//
//	[H Bᵀ; B 0]·[u; v] = [ḡ; 0],   ∂ℓ/∂ŷ = W·u,
//	∂ℓ/∂x = −(Σ_i λ_i ∇²_xy c_i·u + J_xᵀ·v).
//
// u is found by conjugate gradients on the null space of B, preconditioned
// with the projector D·(I − BᵀG⁻¹B·D) that the forward step uses, which
// needs one HessVec per iteration and no memory beyond the final point
// (on the sparse path the projector and the x-term solve with G's sparse
// factor in ws.sp.cur). It overwrites g with ∂ℓ/∂ŷ, adds to gx, and reports false when it
// could not solve (negative curvature: y* is not a local minimiser of the
// distance, or no convergence), leaving g and gx unchanged.
func (a *AdaNP) implicitVJP(ws *workspace, st *stepRecord, xs, g, gx []float64, wantX bool) bool {
	n := a.n
	hv := a.k.HessVec
	u, r, z, p, hp := ws.u, ws.r, ws.z, ws.pk, ws.hpk
	clear(u)
	for i, v := range g {
		r[i] = -v
	}
	a.projectDual(ws, st, r, z)
	for i, v := range z {
		p[i] = -v
	}
	rz := dot(r, z)
	zz0 := dot(z, z)
	if rz < 0 {
		return false
	}
	// Stop when the preconditioned residual z (the W-projected gradient of
	// the reduced quadratic) is 1e-12 of its initial size.
	for it := 0; dot(z, z) > 1e-24*zz0; it++ {
		if it > 2*n+20 {
			return false
		}
		a.hessLagrangian(hv, ws, st, xs, p, hp)
		php := dot(p, hp)
		if !(php > 0) {
			return false
		}
		alpha := rz / php
		for i := range u {
			u[i] += alpha * p[i]
			r[i] += alpha * hp[i]
		}
		a.projectDual(ws, st, r, z)
		// r·z = ‖z‖²_W ≥ 0 in exact arithmetic; rounding near
		// convergence can make it slightly negative.
		rzNew := dot(r, z)
		if math.IsNaN(rzNew) {
			return false
		}
		rzNew = math.Max(rzNew, 0)
		if rzNew == 0 && dot(z, z) > 1e-24*zz0 {
			return false // r·z lost to rounding before z converged
		}
		beta := rzNew / rz
		rz = rzNew
		for i := range p {
			p[i] = -z[i] + beta*p[i]
		}
	}
	if wantX {
		// v = G⁻¹·B·D·(ḡ − H·u)
		a.hessLagrangian(hv, ws, st, xs, u, hp)
		for i := range hp {
			v := g[i] - hp[i]
			if st.d != nil {
				v *= st.d[i]
			}
			hp[i] = v
		}
		if a.sp != nil {
			a.sp.mulVec(ws.w, st.B, hp)
			ws.sp.cur.Solve(ws.w)
			a.jacobianXTVec(ws, xs, st.y, ws.w, ws.gxHV)
			for m, v := range ws.gxHV {
				gx[m] -= v
			}
		} else {
			dense.MulVec(ws.w, st.B, a.nc, n, hp)
			st.f.solve(a.nc, ws.w, ws.tmp)
			a.k.JacobianX(xs, st.y, ws.jx)
			for i := 0; i < a.nc; i++ {
				for m := 0; m < a.nx; m++ {
					gx[m] -= ws.jx[i*a.nx+m] * ws.w[i]
				}
			}
		}
		if a.hasMHV {
			a.k.MixedHessVec(xs, st.y, st.mu, u, ws.gxHV)
			for m, v := range ws.gxHV {
				gx[m] -= v
			}
		}
	}
	for i, v := range u {
		if st.d != nil {
			v /= st.d[i]
		}
		g[i] = v
	}
	return true
}

// hessLagrangian writes out = (W + Σ_i λ_i ∇²c_i)·v at the record's point,
// with λ stored in st.mu.
func (a *AdaNP) hessLagrangian(h func(x, y, w, v, out []float64), ws *workspace, st *stepRecord, xs, v, out []float64) {
	h(xs, st.y, st.mu, v, out)
	for i, vi := range v {
		if st.d != nil {
			vi /= st.d[i]
		}
		out[i] += vi
	}
}

// projectDual writes z = D·(r − Bᵀ·G⁻¹·B·D·r): the solution of
// [W Bᵀ; B 0]·[z; ·] = [r; 0]. It also replaces r by r − Bᵀ·G⁻¹·B·D·r,
// which has the same z in exact arithmetic: the residual update of Gould,
// Hribar and Nocedal (2001). Without it r tends to a vector of range(Bᵀ)
// as large as the initial residual, and the rounding of that projection
// (cond(G)·1e-16 of ‖r‖) would keep z from falling below it, stalling the
// conjugate gradients that use z.
func (a *AdaNP) projectDual(ws *workspace, st *stepRecord, r, z []float64) {
	for i, v := range r {
		if st.d != nil {
			v *= st.d[i]
		}
		z[i] = v
	}
	a.mulB(ws.w, st.B, z)
	a.solveG(ws, st.f, ws.w)
	a.mulBT(ws.hv, st.B, ws.w)
	for i := range z {
		v := r[i] - ws.hv[i]
		r[i] = v
		if st.d != nil {
			v *= st.d[i]
		}
		z[i] = v
	}
}

// kktMultipliers writes λ = −G⁻¹·B·(y* − ŷ) into lam, the multipliers for
// which W(y* − ŷ) + Bᵀλ is smallest in the W⁻¹-norm, and returns the
// relative size of what is left, ‖D(W(y*−ŷ) + Bᵀλ)‖ / max(‖y* − ŷ‖, 1): zero
// exactly when y* is a KKT point of the nearest-point problem.
func (a *AdaNP) kktMultipliers(ws *workspace, y, yhat, B, d []float64, f *factor, lam []float64) float64 {
	for i := range y {
		ws.p[i] = y[i] - yhat[i]
	}
	a.mulB(lam, B, ws.p)
	a.solveG(ws, f, lam)
	for i := range lam {
		lam[i] = -lam[i]
	}
	a.mulBT(ws.hv, B, lam)
	var res float64
	for i := range ws.p {
		v := ws.p[i]
		if d != nil {
			v = ws.p[i] + d[i]*ws.hv[i]
		} else {
			v += ws.hv[i]
		}
		res += v * v
	}
	return math.Sqrt(res) / math.Max(norm2(ws.p), 1)
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// norm2 is the Euclidean norm, computed without overflow.
func norm2(v []float64) float64 { return floats.Norm(v, 2) }

func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// allFinite reports whether no element of v is NaN or ±Inf (for which
// x − x is NaN).
func allFinite[T sgemm.Real](v []T) bool {
	switch v := any(v).(type) {
	case []float64:
		return isfinite.Float64s(v) // AVX2 where there is one
	case []float32:
		return isfinite.Float32s(v)
	}
	for _, x := range v {
		if x-x != 0 {
			return false
		}
	}
	return true
}
