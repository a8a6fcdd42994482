package acopf

import (
	"fmt"
	"math"
	"sync"

	"github.com/enforce-nn/enforce"
)

// BranchLimits is the branch thermal and angle-difference limits of a
// Case, PGLib-OPF's line constraints (MODEL.tex), as an inequality
// constraint g(x, y) ≤ 0 for enforce.WithInequalities, with y laid out as
// for PowerFlow. Its rows are, in this order,
//
//	(P_ft² + Q_ft² − RateA²)/(2·RateA), (P_tf² + Q_tf² − RateA²)/(2·RateA)
//	    for each branch with a finite RateA, in branch order,
//	(Va_f − Va_t) − AngMax, AngMin − (Va_f − Va_t)
//	    for each branch, the first if AngMax < 2π and the second if
//	    AngMin > −2π (±2π is the case files' "no limit"),
//
// where S_ft = P_ft + jQ_ft = V_f·conj(Yff·V_f + Yft·V_t) is the power
// entering the branch at its From bus f and S_tf = V_t·conj(Ytf·V_f +
// Ytt·V_t) at its To bus t (Branch.Admittances: the π model with tap
// ratio, phase shift and line charging of PowerFlow and NLP, whose
// thermal rows P² + Q² ≤ RateA² these are).
//
// The thermal rows keep PGLib's squared form, which is smooth where the
// flow vanishes, divided by 2·RateA: (|S|² − R²)/(2R) = (|S| − R)·(1 +
// (|S| − R)/(2R)), so a row is the flow's excess |S| − R over its rating
// in p.u. to first order, in the units of Limits' rows, and the
// projection's absolute tolerance τ on it (1e-6, say) lets |S| exceed R by
// about τ p.u. (1e-4 MVA on a 100 MVA base) whatever the rating; its
// gradient, (P·∇P + Q·∇Q)/R, is ∇|S| where the limit is active. The angle
// rows are in radians.
//
// g does not depend on x. Every row touches only the four voltages of its
// branch (Vm_f, Vm_t, Va_f, Va_t; the angle rows Va_f and Va_t): the
// Capabilities declare that pattern (Sparse), zero JacobianX, JacobianXTVec
// and MixedHessVec, and the exact HessVec,
//
//	∇²g = (∇P∇Pᵀ + P·∇²P + ∇Q∇Qᵀ + Q·∇²Q)/R
//
// for a thermal row and zero for an angle row.
type BranchLimits struct {
	nx, nb, ny int
	// ends lists the thermal rows, one per rated branch end.
	ends []branchEnd
	// angle rows: sign·(Va_from − Va_to) − bound.
	angFrom, angTo []int
	angSign        []float64
	angBound       []float64
	rowPtr, col    []int
	k              enforce.Capabilities
	valsPool       sync.Pool
}

// branchEnd is the thermal row of one end of a rated branch: the flow
// entering the branch at bus i toward bus k, with the admittances Yii and
// Yik of that end, and perm mapping the flow's derivative order (Vm_i,
// Vm_k, Va_i, Va_k) to positions in the row's sorted pattern.
type branchEnd struct {
	i, k     int
	yii, yik complex128
	rate     float64
	perm     [4]int
}

// NewBranchLimits returns the thermal and angle-difference limits of c
// for inputs of length nx (2·nl for PowerFlow's x), or nil when c has
// neither (every RateA infinite and every angle limit ±2π, as in DC3's
// case57). It returns an error for a case without buses, a negative nx, a
// rated or angle-limited branch whose ends are the same bus, a RateA that
// is NaN or not positive (+Inf means no limit), and angle limits with
// AngMin ≥ AngMax or NaN.
func NewBranchLimits(c *Case, nx int) (*BranchLimits, error) {
	nb, ng := len(c.Buses), len(c.Gens)
	if nb == 0 || nx < 0 {
		return nil, fmt.Errorf("acopf: NewBranchLimits: case %q with %d buses, nx = %d", c.Name, nb, nx)
	}
	bl := &BranchLimits{nx: nx, nb: nb, ny: 2*nb + 2*ng}
	for e, br := range c.Branches {
		rated := !math.IsInf(br.RateA, 1)
		hi, lo := br.AngMax < 2*math.Pi, br.AngMin > -2*math.Pi
		if !(br.RateA > 0) {
			return nil, fmt.Errorf("acopf: NewBranchLimits: branch %d of case %q has RateA = %v, want positive (+Inf for no limit)", e, c.Name, br.RateA)
		}
		if !(br.AngMin < br.AngMax) {
			return nil, fmt.Errorf("acopf: NewBranchLimits: branch %d of case %q has AngMin, AngMax = %v, %v, want AngMin < AngMax", e, c.Name, br.AngMin, br.AngMax)
		}
		if (rated || hi || lo) && br.From == br.To {
			return nil, fmt.Errorf("acopf: NewBranchLimits: branch %d of case %q has a limit and both ends at bus %d", e, c.Name, c.Buses[br.From].ID)
		}
		if rated {
			yff, yft, ytf, ytt := br.Admittances()
			bl.ends = append(bl.ends,
				newBranchEnd(br.From, br.To, yff, yft, br.RateA),
				newBranchEnd(br.To, br.From, ytt, ytf, br.RateA))
		}
		if hi {
			bl.addAngle(br.From, br.To, 1, br.AngMax)
		}
		if lo {
			bl.addAngle(br.From, br.To, -1, -br.AngMin)
		}
	}
	if len(bl.ends)+len(bl.angFrom) == 0 {
		return nil, nil
	}
	bl.build()
	return bl, nil
}

// Near sets keep[r] for every row r of bl with g_r(x, y) > −margin (a
// thermal row whose flow is within about margin p.u. of its rating, or
// above it; an angle row within margin rad of its limit) and leaves the
// other entries of keep as they are, so that calls at several points mark
// the rows near binding at any of them (for Select and
// ConstraintOptions.BranchRows). It panics if len(keep) is not bl's row
// count, if x or y has the wrong length, or if margin is negative or NaN.
func (bl *BranchLimits) Near(x, y []float64, margin float64, keep []bool) {
	_, _, nc := bl.Dims()
	if len(keep) != nc {
		panic(fmt.Sprintf("acopf: BranchLimits.Near: len(keep) = %d, want %d", len(keep), nc))
	}
	if !(margin >= 0) {
		panic(fmt.Sprintf("acopf: BranchLimits.Near: margin = %v, want non-negative", margin))
	}
	g := make([]float64, nc)
	bl.checkLens("Near", x, y, g)
	bl.eval(y, g, nil)
	for r, v := range g {
		if v > -margin {
			keep[r] = true
		}
	}
}

// build sets the pattern, the values' pool and the capabilities from the
// rows.
func (bl *BranchLimits) build() {
	nb := bl.nb
	bl.rowPtr = []int{0}
	for _, end := range bl.ends {
		lo, hi := min(end.i, end.k), max(end.i, end.k)
		bl.col = append(bl.col, lo, hi, nb+lo, nb+hi)
		bl.rowPtr = append(bl.rowPtr, len(bl.col))
	}
	for r, f := range bl.angFrom {
		t := bl.angTo[r]
		bl.col = append(bl.col, nb+min(f, t), nb+max(f, t))
		bl.rowPtr = append(bl.rowPtr, len(bl.col))
	}
	nnz := len(bl.col)
	bl.valsPool.New = func() any { s := make([]float64, nnz); return &s }
	zero := func(x, y, w, v, out []float64) { clear(out) }
	bl.k = enforce.Capabilities{
		JacobianX:    func(x, y, jx []float64) { clear(jx) },
		HessVec:      bl.hessVec,
		MixedHessVec: zero,
		Sparse: &enforce.SparseJacobian{
			RowPtr:        bl.rowPtr,
			Col:           bl.col,
			Eval:          bl.EvalSparse,
			JacobianXTVec: func(x, y, w, out []float64) { clear(out) },
		},
	}
}

// Select returns the limits made of some of bl's rows: a branch's two
// thermal rows where keep is true for either of them (they share their
// evaluation), and each angle row where keep is true for it, in bl's
// order, with bl's row indices (bl.Dims's numbering) passed to keep. It
// returns nil when no row is kept.
func (bl *BranchLimits) Select(keep func(row int) bool) *BranchLimits {
	out := &BranchLimits{nx: bl.nx, nb: bl.nb, ny: bl.ny}
	for r := 0; r < len(bl.ends); r += 2 {
		if keep(r) || keep(r+1) {
			out.ends = append(out.ends, bl.ends[r], bl.ends[r+1])
		}
	}
	nt := len(bl.ends)
	for a := range bl.angFrom {
		if keep(nt + a) {
			out.addAngle(bl.angFrom[a], bl.angTo[a], bl.angSign[a], bl.angBound[a])
		}
	}
	if len(out.ends)+len(out.angFrom) == 0 {
		return nil
	}
	out.build()
	return out
}

// newBranchEnd returns the thermal row of the flow entering a branch at
// bus i toward bus k ≠ i.
func newBranchEnd(i, k int, yii, yik complex128, rate float64) branchEnd {
	perm := [4]int{0, 1, 2, 3}
	if i > k {
		perm = [4]int{1, 0, 3, 2}
	}
	return branchEnd{i: i, k: k, yii: yii, yik: yik, rate: rate, perm: perm}
}

// addAngle appends the row sign·(Va_f − Va_t) − bound.
func (bl *BranchLimits) addAngle(f, t int, sign, bound float64) {
	bl.angFrom, bl.angTo = append(bl.angFrom, f), append(bl.angTo, t)
	bl.angSign, bl.angBound = append(bl.angSign, sign), append(bl.angBound, bound)
}

// Dims returns (nx, ny, ng) with ng = 2·(rated branches) + (angle rows).
func (bl *BranchLimits) Dims() (nx, ny, nc int) {
	return bl.nx, bl.ny, len(bl.ends) + len(bl.angFrom)
}

// Rows returns the number of thermal rows (two per rated branch) and of
// angle rows.
func (bl *BranchLimits) Rows() (thermal, angle int) { return len(bl.ends), len(bl.angFrom) }

// Capabilities returns zero JacobianX and MixedHessVec, HessVec, and
// Sparse (with a zero JacobianXTVec).
func (bl *BranchLimits) Capabilities() enforce.Capabilities { return bl.k }

// Pattern returns the sparsity pattern of ∂g/∂y in compressed sparse
// rows (see enforce.SparseJacobian): four entries per thermal row, two per
// angle row. The slices must not be modified.
func (bl *BranchLimits) Pattern() (rowPtr, col []int) { return bl.rowPtr, bl.col }

// Eval writes g(x, y) into c and, if jy is not nil, ∂g/∂y (nc×ny,
// row-major) into jy.
func (bl *BranchLimits) Eval(x, y, c, jy []float64) {
	_, ny, nc := bl.Dims()
	bl.checkLens("Eval", x, y, c)
	if jy == nil {
		bl.eval(y, c, nil)
		return
	}
	if len(jy) != nc*ny {
		panic(fmt.Sprintf("acopf: BranchLimits.Eval: len(jy) = %d, want %d", len(jy), nc*ny))
	}
	vp := bl.valsPool.Get().(*[]float64)
	vals := *vp
	bl.eval(y, c, vals)
	clear(jy)
	for i := range nc {
		for p := bl.rowPtr[i]; p < bl.rowPtr[i+1]; p++ {
			jy[i*ny+bl.col[p]] = vals[p]
		}
	}
	bl.valsPool.Put(vp)
}

// EvalSparse writes g(x, y) into c and, when vals is not nil, the values
// of ∂g/∂y in the order of Pattern into vals (length nnz). It is the Eval
// of the SparseJacobian the Capabilities declare.
func (bl *BranchLimits) EvalSparse(x, y, c, vals []float64) {
	bl.checkLens("EvalSparse", x, y, c)
	if vals != nil && len(vals) != len(bl.col) {
		panic(fmt.Sprintf("acopf: BranchLimits.EvalSparse: len(vals) = %d, want nnz = %d", len(vals), len(bl.col)))
	}
	bl.eval(y, c, vals)
}

// checkLens panics when x, y or c have the wrong lengths.
func (bl *BranchLimits) checkLens(method string, x, y, c []float64) {
	nx, ny, nc := bl.Dims()
	if len(x) != nx || len(y) != ny || len(c) != nc {
		panic(fmt.Sprintf("acopf: BranchLimits.%s: len(x), len(y), len(c) = %d, %d, %d, want %d, %d, %d",
			method, len(x), len(y), len(c), nx, ny, nc))
	}
}

// flowAt returns the flow of end at y (see flow).
func (bl *BranchLimits) flowAt(end *branchEnd, y []float64) branchFlow {
	nb := bl.nb
	return flow(y[end.i], y[end.k], y[nb+end.i], y[nb+end.k], end.yii, end.yik)
}

// eval computes g and, if vals is not nil, the Jacobian's values in
// pattern order.
func (bl *BranchLimits) eval(y, c, vals []float64) {
	nb := bl.nb
	for r := 0; r < len(bl.ends); r += 2 {
		// The two ends of a branch (newBranchLimits appends them in
		// pairs): one sine and cosine, as sin(−t), cos(−t) = −sin t, cos t
		// exactly (and t = Va_i − Va_k is exactly −(Va_k − Va_i)).
		from := &bl.ends[r]
		s, co := math.Sincos(y[nb+from.i] - y[nb+from.k])
		bl.thermalRow(r, from, y, s, co, c, vals)
		bl.thermalRow(r+1, &bl.ends[r+1], y, -s, co, c, vals)
	}
	nt := len(bl.ends)
	for a, fr := range bl.angFrom {
		to, s := bl.angTo[a], bl.angSign[a]
		c[nt+a] = s*(y[nb+fr]-y[nb+to]) - bl.angBound[a]
		if vals != nil {
			p := bl.rowPtr[nt+a]
			if fr < to {
				vals[p], vals[p+1] = s, -s
			} else {
				vals[p], vals[p+1] = -s, s
			}
		}
	}
}

// thermalRow writes thermal row r, of branch end end, and its Jacobian's
// values when vals is not nil; s, co are the sine and cosine of its
// angle difference Va_i − Va_k.
func (bl *BranchLimits) thermalRow(r int, end *branchEnd, y []float64, s, co float64, c, vals []float64) {
	p, q, dp, dq := flowJ(y[end.i], y[end.k], s, co, end.yii, end.yik)
	c[r] = (p*p + q*q - end.rate*end.rate) / (2 * end.rate)
	if vals != nil {
		row := vals[bl.rowPtr[r]:bl.rowPtr[r+1]]
		for d, pos := range end.perm {
			row[pos] = (p*dp[d] + q*dq[d]) / end.rate
		}
	}
}

// hessVec writes out = Σ_r w_r ∇²_yy g_r · v: only the thermal rows are
// nonlinear, with ∇²g·d = (∇P·(∇P·d) + P·∇²P·d + ∇Q·(∇Q·d) + Q·∇²Q·d)/R
// on the four voltages d of the row's branch end.
func (bl *BranchLimits) hessVec(x, y, w, v, out []float64) {
	nb := bl.nb
	clear(out)
	for r := range bl.ends {
		if w[r] == 0 {
			continue
		}
		end := &bl.ends[r]
		f := bl.flowAt(end, y)
		idx := [4]int{end.i, end.k, nb + end.i, nb + end.k}
		var d [4]float64
		for j, k := range idx {
			d[j] = v[k]
		}
		var gp, gq float64
		for j := range 4 {
			gp += f.dp[j] * d[j]
			gq += f.dq[j] * d[j]
		}
		s := w[r] / end.rate
		for j, k := range idx {
			var hp, hq float64
			for l := range 4 {
				hp += f.hp[j][l] * d[l]
				hq += f.hq[j][l] * d[l]
			}
			out[k] += s * (f.dp[j]*gp + f.p*hp + f.dq[j]*gq + f.q*hq)
		}
	}
}
