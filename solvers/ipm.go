package solvers

import (
	"math"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// SolveSparse finds a local minimum of the SparseNLP p from init by a
// primal-dual interior-point method in pure Go, for problems of a few
// hundred variables and constraints: it forms the KKT matrix densely and
// factors it by LU, so time grows as (N + S + M)³ per iteration, S the
// number of two-sided (inequality) constraints. It is the pure-Go
// counterpart of solvers/ipopt's Solver.SolveSparse.
//
// Variables with Lower = Upper are fixed at that value and removed; each
// constraint with GLower < GUpper gets a slack s_i with g_i(y) − s_i = 0
// and GLower_i ≤ s_i ≤ GUpper_i. For a barrier parameter μ (from 0.1,
// reduced as in IPOPT, μ ← max(Tol/10, min(μ/5, μ^1.5)), whenever the
// barrier problem is solved to 10μ) each iteration takes the Newton step
// of the primal-dual equations with the exact Hessian of the Lagrangian,
//
//	[W + δI   Jᵀ ] [Δz]     [∇f + Jᵀλ − μ/(z − l) + μ/(u − z)]
//	[J        −δ_c I] [Δλ] = −[c(z)                              ],
//
// W = ∇²L + diag(v_l/(z − l) + v_u/(u − z)), with δ raised until
// Δzᵀ(W + δI)Δz > 0 (an inertia-free curvature test) and δ_c > 0 only
// when the matrix is singular; it keeps 1% of the distance to every
// bound (fraction to the boundary). The step length comes from IPOPT's
// filter line search (Wächter & Biegler 2006) on the pair (θ, φ_μ),
// θ = ‖c‖₁ and φ_μ = f − μΣlog(z − l) − μΣlog(u − z), with up to four
// second-order corrections of a first trial point that increases θ, and,
// where the filter refuses every step, Armijo backtracking on the ℓ₁
// merit function φ_μ + ν‖c‖₁. A step whose every entry is below
// 10·ε·(1 + |z_j|) is taken whole while max|c| ≤ 10⁻⁴ (IPOPT's tiny-step
// rule), and values along a search are compared up to their rounding:
// φ_μ up to 10·ε·|φ_μ|, θ up to 10·ε·(θ + Σ_i |b_i| + Σ_ij |J_ij|·|z_j|),
// the magnitude of the terms that c adds up (b the constants GLower of
// the equality rows, J the Jacobian of c over z). The multipliers λ move
// with the primal step length.
//
// It stops with Success when max|c| ≤ FeasTol and the unscaled
// optimality error max(‖∇f + Jᵀλ − v_l + v_u‖∞, max_i |v_i·dist_i|) ≤ Tol
// (Settings; the defaults as for Solve). Lambda holds the multipliers of
// the M constraints, MaxViolation is p.Violation at Y and Stationarity
// ‖∇f + Jᵀλ − v_l + v_u‖∞. It returns an error only for a malformed
// problem, starting point or Settings.
func SolveSparse(p *SparseNLP, init []float64, settings *Settings) (*Result, error) {
	if err := p.Validate(init); err != nil {
		return nil, err
	}
	s, err := settings.resolve()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	w := newIPM(p, init)
	res := w.solve(s)
	res.Runtime = time.Since(start)
	return res, nil
}

// ipm is the state of an interior-point solve. z = (free y, slacks).
type ipm struct {
	p            *SparseNLP
	y            []float64 // full y, fixed entries set
	free         []int     // indices of free y in y
	slackRow     []int     // constraint row of each slack
	slackOf      []int     // slack index of each row, or -1
	nz, m        int
	z, lo, hi    []float64
	vl, vu       []float64
	dvl, dvu     []float64
	lambda       []float64
	g, grad      []float64
	jvals, hvals []float64
	evals        int
	// The filter of the line search, reset when μ changes, and its
	// bounds θ_max = 10⁴·max(1, θ(z₀)), θ_min = 10⁻⁴·max(1, θ(z₀)).
	filter             []filterEntry
	thetaMax, thetaMin float64
}

func newIPM(p *SparseNLP, init []float64) *ipm {
	w := &ipm{p: p, y: append([]float64(nil), init...), m: p.M}
	bound := func(b []float64, i int, def float64) float64 {
		if b == nil {
			return def
		}
		return b[i]
	}
	var lo, hi []float64
	for i := range p.N {
		l, u := bound(p.Lower, i, math.Inf(-1)), bound(p.Upper, i, math.Inf(1))
		if l == u {
			w.y[i] = l
			continue
		}
		w.free = append(w.free, i)
		lo, hi = append(lo, l), append(hi, u)
	}
	w.slackOf = make([]int, p.M)
	for i := range p.M {
		w.slackOf[i] = -1
		if p.GLower[i] < p.GUpper[i] {
			w.slackOf[i] = len(w.slackRow)
			w.slackRow = append(w.slackRow, i)
			lo, hi = append(lo, p.GLower[i]), append(hi, p.GUpper[i])
		}
	}
	w.nz = len(lo)
	w.lo, w.hi = lo, hi
	w.g, w.grad = make([]float64, p.M), make([]float64, p.N)
	w.jvals, w.hvals = make([]float64, len(p.JacRows)), make([]float64, len(p.HessRows))
	w.z = make([]float64, w.nz)
	for k, i := range w.free {
		w.z[k] = w.y[i]
	}
	p.Constraints(w.y, w.g)
	for k, i := range w.slackRow {
		w.z[len(w.free)+k] = w.g[i]
	}
	// Push z strictly inside its bounds, as IPOPT does (κ = 1e-2).
	for j := range w.z {
		l, u := lo[j], hi[j]
		pl, pu := 1e-2*math.Max(1, math.Abs(l)), 1e-2*math.Max(1, math.Abs(u))
		if !math.IsInf(l, -1) && !math.IsInf(u, 1) {
			pl, pu = math.Min(pl, 1e-2*(u-l)), math.Min(pu, 1e-2*(u-l))
		}
		if !math.IsInf(l, -1) {
			w.z[j] = math.Max(l+pl, w.z[j])
		}
		if !math.IsInf(u, 1) {
			w.z[j] = math.Min(u-pu, w.z[j])
		}
	}
	w.vl, w.vu = make([]float64, w.nz), make([]float64, w.nz)
	w.dvl, w.dvu = make([]float64, w.nz), make([]float64, w.nz)
	w.lambda = make([]float64, p.M)
	return w
}

// setY copies the free part of z into y.
func (w *ipm) setY(z []float64) {
	for k, i := range w.free {
		w.y[i] = z[k]
	}
}

// residual writes c(z) into c: g(y) − GLower for equality rows, g(y) − s
// for rows with a slack.
func (w *ipm) residual(z, c []float64) {
	w.setY(z)
	w.p.Constraints(w.y, w.g)
	w.evals++
	for i := range w.m {
		if k := w.slackOf[i]; k >= 0 {
			c[i] = w.g[i] - z[len(w.free)+k]
		} else {
			c[i] = w.g[i] - w.p.GLower[i]
		}
	}
}

// jacobian writes the dense m×nz Jacobian of c at z (y already set)
// into the first m rows of jac.
func (w *ipm) jacobian(jac *mat.Dense) {
	if w.m == 0 {
		return
	}
	jac.Zero()
	w.p.Jacobian(w.y, w.jvals)
	pos := w.position()
	for e, r := range w.p.JacRows {
		if k := pos[w.p.JacCols[e]]; k >= 0 {
			jac.Set(r, k, jac.At(r, k)+w.jvals[e])
		}
	}
	for k, i := range w.slackRow {
		jac.Set(i, len(w.free)+k, -1)
	}
}

// position maps y indices to z indices (-1 for fixed).
func (w *ipm) position() []int {
	pos := make([]int, w.p.N)
	for i := range pos {
		pos[i] = -1
	}
	for k, i := range w.free {
		pos[i] = k
	}
	return pos
}

// gradient writes ∇f at y over z (zero for slacks) into gz.
func (w *ipm) gradient(gz []float64) {
	w.p.Grad(w.y, w.grad)
	clear(gz)
	for k, i := range w.free {
		gz[k] = w.grad[i]
	}
}

func (w *ipm) solve(s Settings) *Result {
	nz, m := w.nz, w.m
	n := nz + m
	res := &Result{Status: IterationLimit}
	mu, nu := 0.1, 1.0
	for j := range w.z {
		if !math.IsInf(w.lo[j], -1) {
			w.vl[j] = mu / (w.z[j] - w.lo[j])
		}
		if !math.IsInf(w.hi[j], 1) {
			w.vu[j] = mu / (w.hi[j] - w.z[j])
		}
	}
	c := make([]float64, m)
	gz := make([]float64, nz)
	jac := mat.NewDense(max(m, 1), nz, nil)
	hess := mat.NewDense(nz, nz, nil)
	kkt := mat.NewDense(n, n, nil)
	rhs, sol := mat.NewVecDense(n, nil), mat.NewVecDense(n, nil)
	var ls lineSearch
	dz := make([]float64, nz)
	rd := make([]float64, nz)
	pos := w.position()
	delta := 0.0
	var lu mat.LU

	// optError returns the unscaled optimality error of the barrier
	// problem at μ (μ = 0: of the original problem) and the dual
	// infeasibility.
	od := make([]float64, nz)
	optError := func(mu float64) (float64, float64) {
		copy(od, gz)
		for k := range m {
			floats.AddScaled(od, w.lambda[k], jac.RawRowView(k))
		}
		floats.Sub(od, w.vl)
		floats.Add(od, w.vu)
		dual := floats.Norm(od, math.Inf(1))
		comp := 0.0
		for j, zj := range w.z {
			if !math.IsInf(w.lo[j], -1) {
				comp = math.Max(comp, math.Abs((zj-w.lo[j])*w.vl[j]-mu))
			}
			if !math.IsInf(w.hi[j], 1) {
				comp = math.Max(comp, math.Abs((w.hi[j]-zj)*w.vu[j]-mu))
			}
		}
		return math.Max(dual, comp), dual
	}

	for it := 0; it < s.MaxIterations; it++ {
		w.residual(w.z, c)
		w.gradient(gz)
		w.jacobian(jac)
		feas := floats.Norm(c, math.Inf(1))
		e0, _ := optError(0)
		if feas <= s.FeasTol && e0 <= s.Tol {
			res.Status = Success
			break
		}
		if it == 0 {
			theta := floats.Norm(c, 1)
			w.thetaMax, w.thetaMin = 1e4*math.Max(1, theta), 1e-4*math.Max(1, theta)
		}
		for feas <= 10*mu && func() bool { e, _ := optError(mu); return e <= 10*mu }() && mu > s.Tol/10 {
			mu = math.Max(s.Tol/10, math.Min(0.2*mu, math.Pow(mu, 1.5)))
			w.filter = w.filter[:0]
		}
		res.Iterations = it + 1

		// The Hessian of the Lagrangian over z.
		hess.Zero()
		w.p.Hessian(w.y, 1, w.lambda, w.hvals)
		for e, r := range w.p.HessRows {
			a, b := pos[r], pos[w.p.HessCols[e]]
			if a < 0 || b < 0 {
				continue
			}
			hess.Set(a, b, hess.At(a, b)+w.hvals[e])
			if a != b {
				hess.Set(b, a, hess.At(b, a)+w.hvals[e])
			}
		}
		sigma := make([]float64, nz)
		for j, zj := range w.z {
			rd[j] = gz[j]
			if l := w.lo[j]; !math.IsInf(l, -1) {
				sigma[j] += w.vl[j] / (zj - l)
				rd[j] -= mu / (zj - l)
			}
			if u := w.hi[j]; !math.IsInf(u, 1) {
				sigma[j] += w.vu[j] / (u - zj)
				rd[j] += mu / (u - zj)
			}
		}
		for k := range m {
			floats.AddScaled(rd, w.lambda[k], jac.RawRowView(k))
		}
		// Factor with δ raised until the curvature test passes.
		deltaC := 0.0
		var ok bool
		for try := 0; try < 30; try++ {
			kkt.Zero()
			for a := range nz {
				for b := range nz {
					kkt.Set(a, b, hess.At(a, b))
				}
				kkt.Set(a, a, kkt.At(a, a)+sigma[a]+delta)
			}
			for k := range m {
				for j := range nz {
					v := jac.At(k, j)
					kkt.Set(nz+k, j, v)
					kkt.Set(j, nz+k, v)
				}
				kkt.Set(nz+k, nz+k, -deltaC)
			}
			for j := range nz {
				rhs.SetVec(j, -rd[j])
			}
			for k := range m {
				rhs.SetVec(nz+k, -c[k])
			}
			lu.Factorize(kkt)
			if err := lu.SolveVecTo(sol, false, rhs); err != nil && !isCondition(err) || !allFinite(sol.RawVector().Data) {
				deltaC = 1e-8 * math.Pow(math.Max(mu, 1e-12), 0.25)
				delta = math.Max(1e-4, 8*delta)
				continue
			}
			for j := range nz {
				dz[j] = sol.AtVec(j)
			}
			var curv float64
			for a := range nz {
				var row float64
				for b := range nz {
					row += hess.At(a, b) * dz[b]
				}
				curv += dz[a] * (row + (sigma[a]+delta)*dz[a])
			}
			if curv > 1e-8*floats.Dot(dz, dz) || floats.Norm(dz, math.Inf(1)) == 0 {
				ok = true
				break
			}
			if delta == 0 {
				delta = 1e-4
			} else {
				delta *= 8
			}
		}
		if !ok {
			res.Status = NumericalFailure
			break
		}
		delta /= 3
		if delta < 1e-20 {
			delta = 0
		}
		dlam := make([]float64, m)
		for k := range m {
			dlam[k] = sol.AtVec(nz + k)
		}
		tau := math.Max(0.99, 1-mu)
		ls.begin(w, dz, dlam, c, gz, jac, mu, tau)
		ok = ls.tinyStep(w, feas)
		if !ok {
			ok = ls.filterSearch(w, func(cs []float64) ([]float64, []float64) {
				// The second-order correction: the same matrix, the
				// constraints' right-hand side replaced by cs.
				for j := range nz {
					rhs.SetVec(j, -rd[j])
				}
				for k := range m {
					rhs.SetVec(nz+k, -cs[k])
				}
				if err := lu.SolveVecTo(sol, false, rhs); err != nil && !isCondition(err) || !allFinite(sol.RawVector().Data) {
					return nil, nil
				}
				return sol.RawVector().Data[:nz], sol.RawVector().Data[nz:]
			})
			if ok && ls.augment {
				w.filter = append(w.filter, filterEntry{(1 - filterGammaTheta) * ls.theta0, ls.phi0 - filterGammaPhi*ls.theta0})
			}
		}
		if !ok {
			nu = math.Max(nu, 1.1*(floats.Norm(dlam, math.Inf(1))+floats.Norm(w.lambda, math.Inf(1))))
			ok = ls.meritSearch(w, nu)
		}
		if !ok {
			res.Status = LineSearchFailure
			break
		}
		w.take(&ls, mu, tau)
	}
	w.setY(w.z)
	res.Y = append([]float64(nil), w.y...)
	res.Lambda = append([]float64(nil), w.lambda...)
	res.Objective = w.p.Objective(res.Y)
	res.MaxViolation = w.p.Violation(res.Y, nil)
	w.residual(w.z, c)
	w.gradient(gz)
	w.jacobian(jac)
	_, res.Stationarity = optError(0)
	res.FuncEvals = w.evals
	return res
}

// isCondition reports whether err is only gonum's warning of an
// ill-conditioned matrix (the solution is still computed).
func isCondition(err error) bool {
	_, ok := err.(mat.Condition)
	return ok
}
