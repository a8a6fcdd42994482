package acopf

import (
	"fmt"
	"math"

	"github.com/enforce-nn/enforce/solvers"
)

// Formulation selects the constraints of the ACOPF that NLP builds. The
// zero value is PGLib-OPF's formulation (its MODEL.tex).
type Formulation struct {
	// NoFlowLimits drops the thermal limits |S_ft|, |S_tf| ≤ RateA (as
	// DC3's ACOPF does).
	NoFlowLimits bool
	// NoAngleLimits drops the angle-difference limits.
	NoAngleLimits bool
}

// NLP returns the ACOPF of the model's case at loads x (as PowerFlow's
// x) as a solvers.SparseNLP over y (as PowerFlow's y), in PGLib-OPF's
// formulation unless f drops line limits:
//
//	min Σ_j cost_j(Pg_j)
//	s.t. c(x, y) = 0                               (PowerFlow: balances, reference angles)
//	     Vmin ≤ Vm ≤ Vmax, Pmin ≤ Pg ≤ Pmax, Qmin ≤ Qg ≤ Qmax   (variable bounds)
//	     P_ft² + Q_ft² ≤ RateA², P_tf² + Q_tf² ≤ RateA²       (branches with a limit)
//	     AngMin ≤ Va_f − Va_t ≤ AngMax                        (branches with finite limits)
//
// where S_ft = P_ft + jQ_ft = V_f·conj(Yff·V_f + Yft·V_t) is the power
// entering the branch at its From end and S_tf = V_t·conj(Ytf·V_f + Ytt·V_t)
// at its To end (Branch.Admittances). The constraint rows are in this
// order: the 2·nb + nr power-flow equations, the thermal limits (From then
// To end, branch by branch), the angle limits. Derivatives are exact; the
// Hessian of the Lagrangian has repeated positions, which the SparseNLP
// contract sums. The callbacks share scratch space: one solve at a time
// per NLP (build one NLP per goroutine). It returns an error if len(x) is
// not nx.
func (m *Model) NLP(x []float64, f Formulation) (*solvers.SparseNLP, error) {
	nx, ny := m.Dims()
	if len(x) != nx {
		return nil, fmt.Errorf("acopf: Model.NLP: len(x) = %d, want %d", len(x), nx)
	}
	x = append([]float64(nil), x...)
	c := m.Case
	pf := m.pf
	nb, ng := len(c.Buses), len(c.Gens)
	_, _, npf := pf.Dims()
	o := &opf{m: m, x: x, nb: nb, ng: ng, npf: npf}
	for e, br := range c.Branches {
		if !f.NoFlowLimits && !math.IsInf(br.RateA, 1) {
			o.rated = append(o.rated, e)
		}
		if !f.NoAngleLimits && (br.AngMin > -2*math.Pi || br.AngMax < 2*math.Pi) {
			o.angled = append(o.angled, e)
		}
	}
	nr := len(o.rated)
	mrows := npf + 2*nr + len(o.angled)
	p := &solvers.SparseNLP{
		N: ny, M: mrows,
		Lower: make([]float64, ny), Upper: make([]float64, ny),
		GLower: make([]float64, mrows), GUpper: make([]float64, mrows),
		Objective: m.Objective, Grad: m.ObjectiveGrad,
		Constraints: o.constraints, Jacobian: o.jacobian, Hessian: o.hessian,
	}
	for i := range ny {
		p.Lower[i], p.Upper[i] = math.Inf(-1), math.Inf(1)
	}
	for i, b := range c.Buses {
		p.Lower[i], p.Upper[i] = b.Vmin, b.Vmax
	}
	for j, g := range c.Gens {
		p.Lower[2*nb+j], p.Upper[2*nb+j] = g.Pmin, g.Pmax
		p.Lower[2*nb+ng+j], p.Upper[2*nb+ng+j] = g.Qmin, g.Qmax
	}
	for k, e := range o.rated {
		r := c.Branches[e].RateA
		p.GLower[npf+2*k], p.GUpper[npf+2*k] = math.Inf(-1), r*r
		p.GLower[npf+2*k+1], p.GUpper[npf+2*k+1] = math.Inf(-1), r*r
	}
	for k, e := range o.angled {
		br := c.Branches[e]
		p.GLower[npf+2*nr+k], p.GUpper[npf+2*nr+k] = br.AngMin, br.AngMax
	}

	// Jacobian pattern: the power flow's rows, then 4 entries per thermal
	// row and 2 per angle row.
	rowPtr, col := pf.Pattern()
	for i := range npf {
		for q := rowPtr[i]; q < rowPtr[i+1]; q++ {
			p.JacRows, p.JacCols = append(p.JacRows, i), append(p.JacCols, col[q])
		}
	}
	o.nnzPF = len(p.JacRows)
	for k, e := range o.rated {
		br := c.Branches[e]
		for s, idx := range [2][4]int{
			{br.From, br.To, nb + br.From, nb + br.To},
			{br.To, br.From, nb + br.To, nb + br.From},
		} {
			for _, j := range idx {
				p.JacRows, p.JacCols = append(p.JacRows, npf+2*k+s), append(p.JacCols, j)
			}
		}
	}
	for k, e := range o.angled {
		br := c.Branches[e]
		p.JacRows = append(p.JacRows, npf+2*nr+k, npf+2*nr+k)
		p.JacCols = append(p.JacCols, nb+br.From, nb+br.To)
	}

	// Hessian pattern: the objective's diagonal in Pg (and Qg), (Vm_i,
	// Vm_i) per bus, a 4×4 block per off-diagonal admittance entry and
	// per thermal row.
	addBlock := func(idx [4]int) {
		for r := range 4 {
			for s := 0; s <= r; s++ {
				a, b := idx[r], idx[s]
				if a < b {
					a, b = b, a
				}
				p.HessRows, p.HessCols = append(p.HessRows, a), append(p.HessCols, b)
			}
		}
	}
	for j := range ng {
		p.HessRows, p.HessCols = append(p.HessRows, 2*nb+j), append(p.HessCols, 2*nb+j)
		p.HessRows, p.HessCols = append(p.HessRows, 2*nb+ng+j), append(p.HessCols, 2*nb+ng+j)
	}
	for i := range nb {
		p.HessRows, p.HessCols = append(p.HessRows, i), append(p.HessCols, i)
	}
	yb := pf.y
	for i := range nb {
		for e := yb.rowPtr[i]; e < yb.rowPtr[i+1]; e++ {
			if k := yb.col[e]; k != i {
				addBlock([4]int{i, k, nb + i, nb + k})
			}
		}
	}
	for _, e := range o.rated {
		br := c.Branches[e]
		addBlock([4]int{br.From, br.To, nb + br.From, nb + br.To})
		addBlock([4]int{br.To, br.From, nb + br.To, nb + br.From})
	}
	o.cv = make([]float64, npf)
	return p, nil
}

// ReferenceOptions are the IPOPT options (for solvers/ipopt's
// Solver.Options) of the reference solves: honor_original_bounds = no
// returns IPOPT's own final iterate. IPOPT relaxes every bound by 1e-8
// relative (bound_relax_factor) and by default moves the final point back
// inside the original bounds, which, with branch admittances of 10³ p.u.,
// unbalances the power flow by up to 1e-4 p.u.; without that move the
// equalities hold to IPOPT's tolerance and the bounds to 1e-8 relative.
var ReferenceOptions = map[string]string{"honor_original_bounds": "no"}

// FlatStart returns the starting point PowerModels.jl uses: Vm = 1
// clamped into [Vmin, Vmax], Va = 0, and Pg, Qg at the middle of their
// bounds (0 where a bound is infinite).
func (m *Model) FlatStart() []float64 {
	_, ny := m.Dims()
	c := m.Case
	nb, ng := len(c.Buses), len(c.Gens)
	y := make([]float64, ny)
	for i, b := range c.Buses {
		y[i] = math.Max(b.Vmin, math.Min(b.Vmax, 1))
	}
	mid := func(lo, hi float64) float64 {
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return math.Max(lo, math.Min(hi, 0))
		}
		return (lo + hi) / 2
	}
	for j, g := range c.Gens {
		y[2*nb+j] = mid(g.Pmin, g.Pmax)
		y[2*nb+ng+j] = mid(g.Qmin, g.Qmax)
	}
	return y
}

// opf evaluates the constraints of Model.NLP.
type opf struct {
	m             *Model
	x             []float64
	nb, ng, npf   int
	rated, angled []int
	nnzPF         int
	cv            []float64
}

// branchFlow is the power S = P + jQ entering a branch at end i, toward
// end k, with its derivatives in (Vm_i, Vm_k, Va_i, Va_k):
//
//	P = Vm_i²·Gii + Vm_i·Vm_k·a(t),  Q = −Vm_i²·Bii + Vm_i·Vm_k·b(t),  t = Va_i − Va_k,
//
// with Yii = Gii + jBii, Yik = Gik + jBik the branch's admittances and a,
// b from pairTerms.
type branchFlow struct {
	p, q   float64
	dp, dq [4]float64
	hp, hq [4][4]float64
}

// flow computes the branch flow at (vi, vk, ti, tk).
func flow(vi, vk, ti, tk float64, yii, yik complex128) branchFlow {
	s, c := math.Sincos(ti - tk)
	var f branchFlow
	f.p, f.q, f.dp, f.dq = flowJ(vi, vk, s, c, yii, yik)
	gii, bii := real(yii), imag(yii)
	a, bb := pairTermsSC(real(yik), imag(yik), s, c)
	vv := vi * vk
	f.hp = [4][4]float64{
		{2 * gii, a, -vk * bb, vk * bb},
		{a, 0, -vi * bb, vi * bb},
		{-vk * bb, -vi * bb, -vv * a, vv * a},
		{vk * bb, vi * bb, vv * a, -vv * a},
	}
	f.hq = [4][4]float64{
		{-2 * bii, bb, vk * a, -vk * a},
		{bb, 0, vi * a, -vi * a},
		{vk * a, vi * a, -vv * bb, vv * bb},
		{-vk * a, -vi * a, vv * bb, -vv * bb},
	}
	return f
}

// flowJ is flow's value and first derivatives, given s, c = sin t, cos t
// (t = ti − tk): what the thermal rows' values and Jacobian need.
func flowJ(vi, vk, s, c float64, yii, yik complex128) (p, q float64, dp, dq [4]float64) {
	gii, bii := real(yii), imag(yii)
	a, bb := pairTermsSC(real(yik), imag(yik), s, c)
	p = vi*vi*gii + vi*vk*a
	q = -vi*vi*bii + vi*vk*bb
	dp = [4]float64{2*vi*gii + vk*a, vi * a, -vi * vk * bb, vi * vk * bb}
	dq = [4]float64{-2*vi*bii + vk*bb, vi * bb, vi * vk * a, -vi * vk * a}
	return p, q, dp, dq
}

// ends returns the flows at both ends of branch e at y.
func (o *opf) ends(e int, y []float64) (from, to branchFlow) {
	br := o.m.Case.Branches[e]
	yff, yft, ytf, ytt := br.Admittances()
	nb, f, t := o.nb, br.From, br.To
	return flow(y[f], y[t], y[nb+f], y[nb+t], yff, yft), flow(y[t], y[f], y[nb+t], y[nb+f], ytt, ytf)
}

func (o *opf) constraints(y, g []float64) {
	o.m.pf.eval(o.x, y, g[:o.npf], nil)
	nr := len(o.rated)
	for k, e := range o.rated {
		from, to := o.ends(e, y)
		g[o.npf+2*k] = from.p*from.p + from.q*from.q
		g[o.npf+2*k+1] = to.p*to.p + to.q*to.q
	}
	for k, e := range o.angled {
		br := o.m.Case.Branches[e]
		g[o.npf+2*nr+k] = y[o.nb+br.From] - y[o.nb+br.To]
	}
}

func (o *opf) jacobian(y, vals []float64) {
	o.m.pf.eval(o.x, y, o.cv, vals[:o.nnzPF])
	q := o.nnzPF
	for _, e := range o.rated {
		from, to := o.ends(e, y)
		for _, f := range []branchFlow{from, to} {
			for r := range 4 {
				vals[q] = 2 * (f.p*f.dp[r] + f.q*f.dq[r])
				q++
			}
		}
	}
	for range o.angled {
		vals[q], vals[q+1] = 1, -1
		q += 2
	}
}

func (o *opf) hessian(y []float64, sigma float64, lambda, vals []float64) {
	nb, ng := o.nb, o.ng
	c := o.m.Case
	q := 0
	for j, g := range c.Gens {
		_, _, d2 := g.Cost.Eval(y[2*nb+j])
		vals[q] = sigma * d2
		vals[q+1] = 0
		if g.QCost != nil {
			_, _, d2 := g.QCost.Eval(y[2*nb+ng+j])
			vals[q+1] = sigma * d2
		}
		q += 2
	}
	yb := o.m.pf.y
	for i := range nb {
		d := yb.diag[i]
		vals[q] = 2 * (lambda[i]*yb.g[d] - lambda[nb+i]*yb.b[d])
		q++
	}
	put := func(h *[4][4]float64, wp float64, hp *[4][4]float64, wq float64, hq *[4][4]float64) {
		for r := range 4 {
			for s := 0; s <= r; s++ {
				vals[q] = wp*hp[r][s] + wq*hq[r][s]
				if h != nil {
					vals[q] += h[r][s]
				}
				q++
			}
		}
	}
	for i := range nb {
		for e := yb.rowPtr[i]; e < yb.rowPtr[i+1]; e++ {
			k := yb.col[e]
			if k == i {
				continue
			}
			f := flow(y[i], y[k], y[nb+i], y[nb+k], 0, complex(yb.g[e], yb.b[e]))
			put(nil, lambda[i], &f.hp, lambda[nb+i], &f.hq)
		}
	}
	// |S|² = P² + Q²: ∇² = 2(∇P∇Pᵀ + P∇²P + ∇Q∇Qᵀ + Q∇²Q).
	for k, e := range o.rated {
		from, to := o.ends(e, y)
		for s, f := range []branchFlow{from, to} {
			w := lambda[o.npf+2*k+s]
			var h [4][4]float64
			for r := range 4 {
				for t := range 4 {
					h[r][t] = 2 * w * (f.dp[r]*f.dp[t] + f.dq[r]*f.dq[t])
				}
			}
			put(&h, 2*w*f.p, &f.hp, 2*w*f.q, &f.hq)
		}
	}
}
