package sparse

import (
	"errors"
	"math"

	"github.com/enforce-nn/enforce/internal/dense"
)

// MaxPairBlock is the most pair rows that Options.EliminatePairs
// eliminates together on one column: a column with more pair rows keeps
// them in the matrix.
const MaxPairBlock = 4

// pairElim is the analysis of G = B·D·Bᵀ + εI (D = diag(w)) by its pair
// rows (Options.EliminatePairs). A pair row r has two entries: a_r in a
// column k and b_r in a column j_r that no other row has. Grouped by k
// into blocks F_t, the pair rows make G's block G_FF block diagonal, with
//
//	G_t = d_k·a·aᵀ + diag(ρ),  ρ_r = b_r²·d_{j_r} + ε
//
// (factored by Cholesky, or held as 1/G_t for a block of one row), and
// couple to the other rows P only through column k:
// G_ir = B_ik·d_k·a_r. Eliminating F first leaves the Schur complement
//
//	S = G_PP − G_PF·G_FF⁻¹·G_FP = B_P·D′·B_Pᵀ + εI,
//	d′_k = d_k − d_k²·aᵀG_t⁻¹a = d_k / (1 + d_k·Σ_r a_r²/ρ_r),
//
// (Sherman–Morrison; d′_k = 0 where some ρ_r = 0 ≠ a_r: the row pins
// variable k), which is the Gram matrix of B_P alone with lowered
// weights, so the inner analysis is that of B_P's pattern: no pair row
// adds a node, fill or a supernode to the sparse factorisation.
type pairElim struct {
	nc, ny int
	inner  *Gram
	pRows  []int32 // P row i is row pRows[i] of B
	pPos   []int32 // entry q of B_P is entry pPos[q] of B
	pCol   []int   // its column
	pPtr   []int   // CSR of B_P
	// Blocks: block t is column bcol[t] with pair rows fr[bp[t]:bp[t+1]],
	// whose entries in column k and in their private column are at
	// posA and posB in B's values, the private column pj.
	bcol           []int32
	bp             []int32
	fr, posA, posB []int32
	pj             []int32
	loff           []int32 // block t's Cholesky factor at loff[t] (m² values); loff[nb] in all
	xp, xrow, xpos []int32 // cross: block t's entries of B_P in column k: xrow (P row), xpos (P entry), for xp[t] ≤ e < xp[t+1]
	stats          Stats
	perm, parent   []int
	nF             int
}

// analysePairs finds the pair rows of B's (validated) pattern and
// analyses the rest; it returns nil, nil when there are none.
func analysePairs(nc, ny int, rowPtr, col []int, opt Options, full bool) (*pairElim, error) {
	if opt.Ordering == Given || nc == 0 {
		return nil, nil
	}
	cnt := make([]int32, ny)
	for _, c := range col {
		cnt[c]++
	}
	// Candidate pair rows by their shared column.
	kOf := make([]int32, nc)
	perK := make([]int32, ny)
	for i := 0; i < nc; i++ {
		kOf[i] = -1
		p := rowPtr[i]
		if rowPtr[i+1]-p != 2 {
			continue
		}
		c0, c1 := col[p], col[p+1]
		switch {
		case cnt[c1] == 1:
			kOf[i] = int32(c0)
		case cnt[c0] == 1:
			kOf[i] = int32(c1)
		default:
			continue
		}
		perK[kOf[i]]++
	}
	e := &pairElim{nc: nc, ny: ny}
	isF := make([]bool, nc)
	bstart := make([]int32, ny) // block start in fr, by column; -1 for none
	for k := range bstart {
		bstart[k] = -1
	}
	nF := 0
	for k := 0; k < ny; k++ {
		if m := perK[k]; m > 0 && m <= MaxPairBlock {
			bstart[k] = int32(len(e.bcol))
			e.bcol = append(e.bcol, int32(k))
			e.bp = append(e.bp, int32(nF))
			nF += int(m)
		}
	}
	if nF == 0 {
		return nil, nil
	}
	e.bp = append(e.bp, int32(nF))
	e.nF = nF
	nb := len(e.bcol)
	e.fr = make([]int32, nF)
	e.posA = make([]int32, nF)
	e.posB = make([]int32, nF)
	e.pj = make([]int32, nF)
	fill := make([]int32, nb)
	for i := 0; i < nc; i++ {
		k := kOf[i]
		if k < 0 || bstart[k] < 0 {
			continue
		}
		t := bstart[k]
		u := e.bp[t] + fill[t]
		fill[t]++
		isF[i] = true
		p := rowPtr[i]
		e.fr[u] = int32(i)
		if col[p] == int(k) {
			e.posA[u], e.posB[u], e.pj[u] = int32(p), int32(p+1), int32(col[p+1])
		} else {
			e.posA[u], e.posB[u], e.pj[u] = int32(p+1), int32(p), int32(col[p])
		}
	}
	e.loff = make([]int32, nb+1)
	for t := 0; t < nb; t++ {
		m := e.bp[t+1] - e.bp[t]
		e.loff[t+1] = e.loff[t] + m*m
	}
	// B_P.
	nP := nc - nF
	e.pRows = make([]int32, 0, nP)
	e.pPtr = make([]int, 1, nP+1)
	for i := 0; i < nc; i++ {
		if isF[i] {
			continue
		}
		e.pRows = append(e.pRows, int32(i))
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			e.pPos = append(e.pPos, int32(p))
			e.pCol = append(e.pCol, col[p])
		}
		e.pPtr = append(e.pPtr, len(e.pPos))
	}
	// Cross entries: B_P's entries in the blocks' columns, by block.
	e.xp = make([]int32, nb+1)
	for _, c := range e.pCol {
		if t := bstart[c]; t >= 0 {
			e.xp[t+1]++
		}
	}
	for t := 0; t < nb; t++ {
		e.xp[t+1] += e.xp[t]
	}
	e.xrow = make([]int32, e.xp[nb])
	e.xpos = make([]int32, e.xp[nb])
	xf := append([]int32(nil), e.xp[:nb]...)
	for i := 0; i < nP; i++ {
		for q := e.pPtr[i]; q < e.pPtr[i+1]; q++ {
			if t := bstart[e.pCol[q]]; t >= 0 {
				e.xrow[xf[t]], e.xpos[xf[t]] = int32(i), int32(q)
				xf[t]++
			}
		}
	}
	// The pair rows' part of the factor's sizes: row u of block t (m rows,
	// p P rows in column k) has m−1−u later rows of its block and the p P
	// rows below it in L.
	var fs Stats
	for t := 0; t < nb; t++ {
		m, p := int(e.bp[t+1]-e.bp[t]), int(e.xp[t+1]-e.xp[t])
		fs.NNZA += m*(m+1)/2 + m*p
		for u := 0; u < m; u++ {
			c := m - 1 - u + p
			fs.NNZL += c
			fs.Flops += float64(c) * float64(c+3) / 2
		}
	}
	iopt := opt
	iopt.EliminatePairs = false
	if opt.MaxNNZL > 0 {
		if fs.NNZL > opt.MaxNNZL {
			return nil, &TooLargeError{NNZL: fs.NNZL, Rows: nF, N: nc, Limit: opt.MaxNNZL}
		}
		iopt.MaxNNZL = max(opt.MaxNNZL-fs.NNZL, 1) // 0 would mean no bound; checked below
	}
	inner, err := analyseGram(nP, ny, e.pPtr, e.pCol, iopt, full)
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return nil, &TooLargeError{NNZL: tl.NNZL + fs.NNZL, Rows: tl.Rows + nF, N: nc, Limit: opt.MaxNNZL}
		}
		return nil, err
	}
	e.inner = inner
	is := inner.Stats()
	if opt.MaxNNZL > 0 && is.NNZL+fs.NNZL > opt.MaxNNZL {
		return nil, &TooLargeError{NNZL: is.NNZL + fs.NNZL, Rows: nc, N: nc, Limit: opt.MaxNNZL}
	}
	e.stats = Stats{N: nc, NNZA: is.NNZA + fs.NNZA, NNZL: is.NNZL + fs.NNZL, Flops: is.Flops + fs.Flops}
	// The whole G's order (pair rows first, block by block) and tree.
	ip, ipar := inner.sym.perm, inner.sym.parent
	e.perm = make([]int, nc)
	e.parent = make([]int, nc)
	for u, r := range e.fr {
		e.perm[u] = int(r)
	}
	for k, i := range ip {
		e.perm[nF+k] = int(e.pRows[i])
		if pa := ipar[k]; pa >= 0 {
			e.parent[nF+k] = nF + pa
		} else {
			e.parent[nF+k] = -1
		}
	}
	iperm := inner.sym.iperm
	for t := 0; t < nb; t++ {
		last := int(e.bp[t+1]) - 1
		for u := int(e.bp[t]); u < last; u++ {
			e.parent[u] = u + 1
		}
		e.parent[last] = -1
		for x := e.xp[t]; x < e.xp[t+1]; x++ {
			s := nF + iperm[e.xrow[x]]
			if e.parent[last] < 0 || s < e.parent[last] {
				e.parent[last] = s
			}
		}
	}
	return e, nil
}

// bytes returns the memory held by the analysis.
func (e *pairElim) bytes() int {
	return e.inner.bytes() + 4*(len(e.pRows)+len(e.pPos)+len(e.bcol)+len(e.bp)+len(e.fr)+
		len(e.posA)+len(e.posB)+len(e.pj)+len(e.loff)+len(e.xp)+len(e.xrow)+len(e.xpos)) +
		8*(len(e.pCol)+len(e.pPtr)+len(e.perm)+len(e.parent))
}

// elimFactor is a Factor's numeric state for a pairElim analysis.
type elimFactor struct {
	e       *pairElim
	inner   *Factor
	vp, wp  []float64 // B_P's values and the weights D′
	xv      []float64 // the cross entries' values, in cross order
	xP      []float64 // the P part of a right-hand side
	a       []float64 // per pair row: a_r
	dk      []float64 // per block: d_k
	l       []float64 // the blocks' Cholesky factors (lower, row-major m×m)
	z       []float64 // MaxPairBlock scratch
	maxDiag float64
	ok      bool
}

func (e *pairElim) newFactor(g *Gram, single bool) *Factor {
	inner := e.inner.NewFactor()
	if single {
		inner = e.inner.NewFactorSingle()
	}
	return &Factor{g: g, el: &elimFactor{
		e: e, inner: inner,
		vp: make([]float64, len(e.pPos)), xv: make([]float64, len(e.xpos)), wp: make([]float64, e.ny), xP: make([]float64, len(e.pRows)),
		a: make([]float64, e.nF), dk: make([]float64, len(e.bcol)), l: make([]float64, e.loff[len(e.bcol)]),
		z: make([]float64, MaxPairBlock),
	}}
}

// factor is Factor.Factor for a pairElim analysis.
func (f *elimFactor) factor(bvals, winv []float64, eps float64) error {
	e := f.e
	f.ok = false
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return ErrNonFinite
	}
	for _, w := range winv {
		if !(w > 0) || math.IsInf(w, 1) {
			return ErrNonFinite
		}
	}
	copy(f.wp, winv)
	for q, p := range e.pPos {
		f.vp[q] = bvals[p]
	}
	for c, q := range e.xpos {
		f.xv[c] = f.vp[q]
	}
	// The largest diagonal entry of G, over the pair rows and the others.
	maxd := 0.0
	for i := range e.pRows {
		s := eps
		for q := e.pPtr[i]; q < e.pPtr[i+1]; q++ {
			v := f.vp[q]
			s += v * v * winv[e.pCol[q]]
		}
		if s > maxd || s != s {
			maxd = s
		}
	}
	for t, k := range e.bcol {
		for u := e.bp[t]; u < e.bp[t+1]; u++ {
			a, b := bvals[e.posA[u]], bvals[e.posB[u]]
			f.a[u] = a
			s := a*a*winv[k] + b*b*winv[e.pj[u]] + eps
			if s > maxd || s != s {
				maxd = s
			}
		}
	}
	if math.IsNaN(maxd) || math.IsInf(maxd, 0) {
		return ErrNonFinite
	}
	f.maxDiag = maxd
	thr := f.inner.tol * maxd
	// Each block's G_t = d_k·a·aᵀ + diag(ρ) by Cholesky, and d′_k.
	for t, k := range e.bcol {
		u0, u1 := int(e.bp[t]), int(e.bp[t+1])
		m := u1 - u0
		d := winv[k]
		f.dk[t] = d
		l := f.l[e.loff[t] : int(e.loff[t])+m*m]
		q := 0.0
		for u := 0; u < m; u++ {
			au := f.a[u0+u]
			b := bvals[e.posB[u0+u]]
			rho := b*b*winv[e.pj[u0+u]] + eps
			for v := 0; v <= u; v++ {
				l[u*m+v] = d * au * f.a[u0+v]
			}
			l[u*m+u] += rho
			q += au * au / rho
		}
		g0 := l[0]
		if err := f.blockCholesky(t, l, m, thr); err != nil {
			return err
		}
		if m == 1 {
			// The common block, one bound: solve reads 1/G_t.
			l[0] = 1 / g0
		}
		// q = Σ a²/ρ is +Inf where a row pins the variable (ρ = 0 ≠ a).
		f.wp[k] = d / (1 + d*q)
	}
	f.inner.maxFloor = maxd
	if err := f.inner.assemble(f.vp, f.wp, eps, true); err != nil {
		var np *NotPositiveError
		if errors.As(err, &np) {
			return &NotPositiveError{Index: int(e.pRows[np.Index]), Step: e.nF + np.Step, Pivot: np.Pivot, MaxDiag: maxd}
		}
		return err
	}
	f.ok = true
	return nil
}

// blockCholesky overwrites the lower triangle of block t's m×m row-major
// G_t in l with its Cholesky factor; a pivot not above thr is a
// *NotPositiveError naming its pair row (the threshold of the whole G's
// factorisation, unlike internal/dense's relative one).
func (f *elimFactor) blockCholesky(t int, l []float64, m int, thr float64) error {
	e := f.e
	u0 := int(e.bp[t])
	for j := 0; j < m; j++ {
		for c := 0; c < j; c++ {
			l[j*m+j] -= l[j*m+c] * l[j*m+c]
		}
		if piv := l[j*m+j]; !(piv > thr) {
			if math.IsNaN(piv) {
				return ErrNonFinite
			}
			return &NotPositiveError{Index: int(e.fr[u0+j]), Step: u0 + j, Pivot: piv, MaxDiag: f.maxDiag}
		}
		l[j*m+j] = math.Sqrt(l[j*m+j])
		for r := j + 1; r < m; r++ {
			s := l[r*m+j]
			for c := 0; c < j; c++ {
				s -= l[r*m+c] * l[j*m+c]
			}
			l[r*m+j] = s / l[j*m+j]
		}
	}
	return nil
}

// blockSolve overwrites z with G_t⁻¹z for a block of m = len(z) > 1 rows
// (solve takes a block of one row, held as 1/G_t, in line).
func (f *elimFactor) blockSolve(t int, z []float64) {
	m := len(z)
	dense.CholSolve(f.l[f.e.loff[t]:int(f.e.loff[t])+m*m], m, z)
}

// solve is Factor.Solve for a pairElim analysis: block elimination,
//
//	S·μ_P = x_P − G_PF·G_FF⁻¹·x_F,  μ_F = G_FF⁻¹·(x_F − G_FP·μ_P).
func (f *elimFactor) solve(x []float64) {
	e := f.e
	if len(x) != e.nc {
		panic("sparse: Solve: len(x) != N()")
	}
	if !f.ok {
		panic("sparse: Solve without a successful Factor")
	}
	xP := f.xP
	for i, r := range e.pRows {
		xP[i] = x[r]
	}
	xv, xrow, xp := f.xv, e.xrow, e.xp
	for t := range e.bcol {
		u0, u1 := int(e.bp[t]), int(e.bp[t+1])
		var s float64
		if u1-u0 == 1 {
			s = f.a[u0] * x[e.fr[u0]] * f.l[e.loff[t]]
		} else {
			zt := f.z[:u1-u0]
			for u := u0; u < u1; u++ {
				zt[u-u0] = x[e.fr[u]]
			}
			f.blockSolve(t, zt)
			for u := u0; u < u1; u++ {
				s += f.a[u] * zt[u-u0]
			}
		}
		s *= f.dk[t]
		if s == 0 {
			continue
		}
		for c := xp[t]; c < xp[t+1]; c++ {
			xP[xrow[c]] -= xv[c] * s
		}
	}
	f.inner.Solve(xP)
	for t := range e.bcol {
		u0, u1 := int(e.bp[t]), int(e.bp[t+1])
		s := 0.0
		for c := xp[t]; c < xp[t+1]; c++ {
			s += xv[c] * xP[xrow[c]]
		}
		s *= f.dk[t]
		if u1-u0 == 1 {
			r := e.fr[u0]
			x[r] = (x[r] - f.a[u0]*s) * f.l[e.loff[t]]
			continue
		}
		zt := f.z[:u1-u0]
		for u := u0; u < u1; u++ {
			zt[u-u0] = x[e.fr[u]] - f.a[u]*s
		}
		f.blockSolve(t, zt)
		for u := u0; u < u1; u++ {
			x[e.fr[u]] = zt[u-u0]
		}
	}
	for i, r := range e.pRows {
		x[r] = xP[i]
	}
}
