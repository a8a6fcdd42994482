package sparse

import (
	"math"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// supernodal is the supernode partition of L and the row structure of each
// supernode, shared read-only by the numeric factors.
//
// A supernode s is a range of columns [super[s], super[s+1]) of L that share
// their structure below the diagonal block; its values are stored as one
// dense column-major m_s×w_s block (w_s columns, m_s = |rows of s|, the w_s
// diagonal rows first), the upper triangle of the diagonal block unused.
type supernodal struct {
	ns    int
	super []int   // first column of each supernode; super[ns] = n
	snode []int32 // supernode of each column
	rp    []int   // rows of supernode s: rows[rp[s]:rp[s+1]]
	rows  []int32
	xp    []int // values of supernode s: x[xp[s]:xp[s+1]]
	// Lower triangle of C by columns, with the position of each entry in
	// the upper-triangular values cx.
	lowP   []int
	lowI   []int32
	lowPos []int32
	maxC   int // size of the update workspace
	// Packing buffers of the packed product (superblas.go): the largest
	// left and right factors of a block that takes it, and the largest
	// panel packed whole as the right factor of its own blocks' updates
	// (factorPanel, float64).
	maxPackA, maxPackB, maxPanelB int
}

// Relaxed amalgamation (as in CHOLMOD's nrelax/zrelax): a child supernode
// is merged into its parent when the result has at most relaxSmall columns,
// or at most relaxMid columns and a fraction of explicit zeros below
// zeroMid, or at most relaxBig columns and below zeroBig.
const (
	relaxSmall = 4
	relaxMid   = 16
	relaxBig   = 48
	zeroMid    = 0.8
	zeroBig    = 0.1
	zeroHuge   = 0.05
)

// newSupernodal partitions the columns of L into fundamental supernodes
// (Liu, Ng & Peyton 1993: column j+1 continues j's supernode when it is j's
// parent, its only child, and has one entry fewer), merges them by relaxed
// amalgamation, and builds the row structures. With neg (the pivots' signs
// of an augmented system), no supernode mixes negative and positive
// pivots.
func newSupernodal(s *symbolic, neg []bool) *supernodal {
	n := s.n
	cnt := make([]int, n)
	for j := 0; j < n; j++ {
		cnt[j] = s.lp[j+1] - s.lp[j]
	}
	nchild := make([]int, n)
	for _, p := range s.parent {
		if p != -1 {
			nchild[p]++
		}
	}
	super := []int{0}
	for j := 1; j < n; j++ {
		if s.parent[j-1] == j && cnt[j-1] == cnt[j]+1 && nchild[j] == 1 && (neg == nil || neg[j-1] == neg[j]) {
			continue
		}
		super = append(super, j)
	}
	if n > 0 {
		super = append(super, n)
	}
	super = relax(super, s.parent, cnt, neg)
	ns := len(super) - 1
	if n == 0 {
		ns = 0
		super = []int{0}
	}
	sn := &supernodal{ns: ns, super: super, snode: make([]int32, n)}
	sn.rp = make([]int, ns+1)
	sn.xp = make([]int, ns+1)
	for t := 0; t < ns; t++ {
		f, l := super[t], super[t+1]
		for j := f; j < l; j++ {
			sn.snode[j] = int32(t)
		}
		m := (l - f) + cnt[l-1]
		sn.rp[t+1] = sn.rp[t] + m
		sn.xp[t+1] = sn.xp[t] + m*(l-f)
	}
	sn.rows = make([]int32, sn.rp[ns])
	for t := 0; t < ns; t++ {
		f, l := super[t], super[t+1]
		r := sn.rows[sn.rp[t]:sn.rp[t+1]]
		for j := f; j < l; j++ {
			r[j-f] = int32(j)
		}
		copy(r[l-f:], s.li[s.lp[l-1]:s.lp[l]])
	}
	for d := 0; d < ns; d++ {
		r := sn.rows[sn.rp[d]:sn.rp[d+1]]
		md := len(r)
		// The blocked Cholesky of d's own panel (factorPanel).
		if wd := super[d+1] - super[d]; wd > panelNB {
			sn.maxPanelB = max(sn.maxPanelB, (md+sgemm.NR-1)/sgemm.NR*sgemm.NR*wd)
		}
		for wd, jb := super[d+1]-super[d], panelNB; jb < wd; jb += panelNB {
			nr, nc := md-jb, min(panelNB, wd-jb)
			if useGEMM(nr, nc, jb) {
				sn.maxPackA = max(sn.maxPackA, packALen(nc, jb))
				sn.maxPackB = max(sn.maxPackB, packBLen(nr, jb))
				sn.maxC = max(sn.maxC, nr*nc)
			}
		}
		for p1 := super[d+1] - super[d]; p1 < md; {
			end := super[sn.snode[r[p1]]+1]
			p2 := p1
			for p2 < md && int(r[p2]) < end {
				p2++
			}
			if c := (md - p1) * (p2 - p1); c > sn.maxC {
				sn.maxC = c
			}
			if wd := super[d+1] - super[d]; useGEMM(md-p1, p2-p1, wd) {
				sn.maxPackA = max(sn.maxPackA, packALen(p2-p1, wd))
				sn.maxPackB = max(sn.maxPackB, packBLen(md-p1, wd))
			}
			p1 = p2
		}
	}
	// Lower triangle of C by columns: the transpose of the upper CSC.
	sn.lowP = make([]int, n+1)
	for _, a := range s.ci {
		sn.lowP[a+1]++
	}
	for j := 0; j < n; j++ {
		sn.lowP[j+1] += sn.lowP[j]
	}
	sn.lowI = make([]int32, len(s.ci))
	sn.lowPos = make([]int32, len(s.ci))
	next := append([]int(nil), sn.lowP[:n]...)
	for b := 0; b < n; b++ {
		for p := s.cp[b]; p < s.cp[b+1]; p++ {
			a := s.ci[p]
			sn.lowI[next[a]] = int32(b)
			sn.lowPos[next[a]] = int32(p)
			next[a]++
		}
	}
	return sn
}

// relax merges each supernode into its parent supernode when they are
// adjacent (the parent of the child's last column is the parent's first
// column) and the merged block stays small or nearly dense; it returns the
// new partition. cnt holds the strict column counts of L.
func relax(super []int, parent []int, cnt []int, neg []bool) []int {
	ns := len(super) - 1
	if ns <= 1 {
		return super
	}
	// zeros[t]: explicit zeros in supernode t's block as it grows.
	first := append([]int(nil), super[:ns]...)
	zeros := make([]float64, ns)
	merged := make([]bool, ns) // merged[t]: t was merged into t+1
	for t := 0; t < ns-1; t++ {
		f, l := first[t], super[t+1]
		pl := super[t+2]
		if parent[l-1] != l || neg != nil && neg[f] != neg[l] {
			continue
		}
		wc, wp := l-f, pl-l
		w := wc + wp
		// In the merged block, column j of the child has w−(j−f) + cnt[pl−1]
		// stored entries (diagonal included) against cnt[j]+1 true ones.
		z := zeros[t+1]
		for j := f; j < l; j++ {
			z += float64(w - (j - f) + cnt[pl-1] - (cnt[j] + 1))
		}
		total := 0.0
		for j := f; j < pl; j++ {
			total += float64(cnt[j] + 1)
		}
		frac := z / (total + z)
		ok := w <= relaxSmall ||
			(w <= relaxMid && frac < zeroMid) ||
			(w <= relaxBig && frac < zeroBig) ||
			frac < zeroHuge
		if !ok {
			continue
		}
		merged[t] = true
		first[t+1] = f
		zeros[t+1] = z
	}
	out := []int{0}
	for t := 0; t < ns; t++ {
		if !merged[t] && t < ns-1 {
			out = append(out, super[t+1])
		}
	}
	return append(out, super[ns])
}

// factorSuper computes C = L·Lᵀ by the left-looking supernodal method
// (Ng & Peyton 1993; Davis §9): for each supernode in order, its block is
// scattered from C, updated by every earlier supernode whose rows meet its
// columns (a dense product, then a scatter by relative row indices), and
// factored by a dense Cholesky of the panel. The blocks are in v's element
// type T; C's values (f.cx) are float64, rounded to T as they are
// scattered.
func factorSuper[T real](f *numeric, v *superValues[T], thr float64) error {
	s := f.s
	sn := s.sn
	super, rows, rp, xp, snode := sn.super, sn.rows, sn.rp, sn.xp, sn.snode
	x, cx, relmap := v.x, f.cx, f.relmap
	head, dnext, dpos := f.head, f.dnext, f.dpos
	for t := range head {
		head[t] = -1
	}
	for t := 0; t < sn.ns; t++ {
		fc, lc := super[t], super[t+1]
		w := lc - fc
		r := rows[rp[t]:rp[t+1]]
		m := len(r)
		X := x[xp[t]:xp[t+1]]
		clear(X)
		for i, row := range r {
			relmap[row] = int32(i)
		}
		for j := fc; j < lc; j++ {
			col := X[(j-fc)*m : (j-fc+1)*m]
			for q := sn.lowP[j]; q < sn.lowP[j+1]; q++ {
				col[relmap[sn.lowI[q]]] = T(cx[sn.lowPos[q]])
			}
		}
		for d32 := head[t]; d32 != -1; {
			d := int(d32)
			nd := dnext[d]
			// An augmented system's update is L_d·S_d·L_dᵀ, S_d = ±I.
			negd := s.neg != nil && s.neg[super[d]]
			dr := rows[rp[d]:rp[d+1]]
			md := len(dr)
			wd := super[d+1] - super[d]
			p1 := int(dpos[d])
			p2 := p1
			for p2 < md && int(dr[p2]) < lc {
				p2++
			}
			nr, nc := md-p1, p2-p1
			c := v.cbuf[:nr*nc]
			if useGEMM(nr, nc, wd) {
				v.gw.gemmUpdate(c, x[xp[d]:xp[d+1]], md, wd, p1, nr, nc)
			} else {
				updateBlock(v.add, c, x[xp[d]:xp[d+1]], md, wd, p1, nr, nc)
			}
			// Scatter by relative indices: row dr[p1+ii] of L_d is row
			// rel[ii] of t's block, and rel[jj] < w its column for jj < nc.
			rel := f.rel[:nr]
			for ii := range rel {
				rel[ii] = relmap[dr[p1+ii]]
			}
			for jj := 0; jj < nc; jj++ {
				rj := int(rel[jj])
				col := X[rj*m : (rj+1)*m]
				cj := c[jj*nr+jj : (jj+1)*nr]
				if negd {
					for ii, r := range rel[jj:] {
						col[r] += cj[ii]
					}
					continue
				}
				if int(rel[nr-1])-rj == nr-1-jj {
					// The rows from jj on are contiguous in t's block.
					col = col[rj : rj+len(cj)]
					for ii, v := range cj {
						col[ii] -= v
					}
					continue
				}
				for ii, r := range rel[jj:] {
					col[r] -= cj[ii]
				}
			}
			if p2 < md {
				dpos[d] = int32(p2)
				u := snode[dr[p2]]
				dnext[d] = head[u]
				head[u] = int32(d)
			}
			d32 = nd
		}
		if s.neg != nil && s.neg[fc] {
			// Negative pivots: −X = L_t·L_tᵀ, so X = L_t·(−I)·L_tᵀ.
			for i := range X {
				X[i] = -X[i]
			}
		}
		if err := factorPanel(f, v, X, m, w, fc, thr); err != nil {
			return err
		}
		if m > w {
			dpos[t] = int32(w)
			u := snode[r[w]]
			dnext[t] = head[u]
			head[u] = int32(t)
		}
	}
	return nil
}

// factorPanel overwrites the m×w column-major panel X of the supernode
// whose first column is fc (its diagonal block on top, the upper triangle
// unused) with its Cholesky factor, left-looking by blocks of panelNB
// columns: each block is first updated by all the columns to its left in
// one product (gemmUpdate when it is large), then factored over its own
// columns by panelColumn. A pivot at most thr is an error; in single
// precision (T float32) a pivot below SingleTol times C's diagonal entry,
// positive or not, is ErrPrecision (float64 decides whether it is
// positive).
func factorPanel[T real](f *numeric, v *superValues[T], X []T, m, w, fc int, thr float64) error {
	single := f.single
	gw := &v.gw
	// With the strided product (float64), the panel's finished columns are
	// packed once, block by block, into gw.pp as the right factor of the
	// later blocks' updates (panels of NR rows, stride w·NR, rows jb… of
	// block jb from panel jb/NR on, since panelNB = NR), instead of packing
	// all the columns left of each block again for its update.
	persist := gw.mulS != nil && w > panelNB && sgemm.HasAsm
	stride := w * sgemm.NR
	for jb := 0; jb < w; jb += panelNB {
		je := min(jb+panelNB, w)
		nr, nc := m-jb, je-jb
		k0 := 0 // panelColumn's first column
		if jb > 0 && useGEMM(nr, nc, jb) {
			c := v.cbuf[:nr*nc]
			if persist {
				gw.packA(X[jb:], m, jb, nc)
				pp := gw.pp[jb/sgemm.NR*stride:]
				for i0 := 0; i0 < nc; i0 += sgemm.MR {
					h := min(sgemm.MR, nc-i0)
					j0 := i0 / sgemm.NR * sgemm.NR
					gw.mulS(h, gw.pa[i0*jb:], pp, jb, nr, stride, j0, nr, c[i0*nr+j0:], nr, gw.tile)
				}
			} else {
				gw.gemmUpdate(c, X, m, jb, jb, nr, nc)
			}
			for jj := 0; jj < nc; jj++ {
				col := X[(jb+jj)*m+jb+jj : (jb+jj+1)*m]
				cj := c[jj*nr+jj : (jj+1)*nr]
				cj = cj[:len(col)]
				for ii, u := range cj {
					col[ii] -= u
				}
			}
			k0 = jb
		}
		for j := jb; j < je; j++ {
			cj := X[j*m : (j+1)*m]
			panelColumn(v.add, cj[j:], X[k0*m:], m, j, j-k0)
			djj := float64(cj[j])
			if f.perturb != nil && f.s.neg[fc+j] && djj < f.perturb[fc+j] && !math.IsNaN(djj) {
				// Static pivoting of an augmented system's row (the
				// panel is negated: its pivots are positive).
				djj = f.perturb[fc+j]
				cj[j] = T(djj)
				f.perturbed++
			}
			if single && !(djj >= SingleTol*f.cx[f.s.cp[fc+j+1]-1]) && !math.IsNaN(djj) {
				// Not resolved in single precision, positive or not.
				return ErrPrecision
			}
			if !(djj > thr) {
				if math.IsNaN(djj) || math.IsInf(djj, 0) {
					return ErrNonFinite
				}
				s := f.s
				return &NotPositiveError{Index: s.perm[fc+j], Step: fc + j, Pivot: djj, MaxDiag: f.maxDiag}
			}
			piv := math.Sqrt(djj)
			cj[j] = T(piv)
			inv := T(1 / piv)
			for i := j + 1; i < m; i++ {
				cj[i] *= inv
			}
		}
		if persist && je < w {
			packPanelColumns(gw.pp, X, m, jb, je, stride)
		}
	}
	return nil
}

// packPanelColumns packs columns jb…je−1 of the m-row column-major panel X,
// rows jb…m−1, into pp: row r of column k at pp[(r/NR)·stride + k·NR +
// r mod NR], rows past m zero (jb is a multiple of NR).
func packPanelColumns[T real](pp, X []T, m, jb, je, stride int) {
	const nr = sgemm.NR
	for p0 := jb; p0 < m; p0 += nr {
		pan := pp[p0/nr*stride:]
		h := min(nr, m-p0)
		for k := jb; k < je; k++ {
			dst := pan[k*nr : k*nr+nr]
			copy(dst[:h], X[k*m+p0:k*m+p0+h])
			clear(dst[h:])
		}
	}
}

// solveSuper overwrites w (permuted order) with C⁻¹w = L⁻ᵀL⁻¹w for the
// factor's blocks x, in float64 arithmetic whatever their type. Per
// supernode t with w_t columns and m_t rows, the forward solve solves the
// diagonal block, accumulates the update of the rows below in a contiguous
// buffer (column by column, two at a time) and subtracts it from w by the
// row indices once; the backward solve gathers w at the rows below once
// and takes dot products with the contiguous columns. So each entry of L
// costs one multiply–add on contiguous memory, and each row index one
// indexed access per supernode rather than one per column.
func solveSuper[T real](f *numeric, x []T, acc accum4[T], w []float64) {
	sn := f.s.sn
	super, rows, rp, xp := sn.super, sn.rows, sn.rp, sn.xp
	for t := 0; t < sn.ns; t++ {
		fc, lc := super[t], super[t+1]
		nw := lc - fc
		r := rows[rp[t]:rp[t+1]]
		m := len(r)
		X := x[xp[t]:xp[t+1]]
		xt := w[fc:lc]
		for j := 0; j < nw; j++ {
			col := X[j*m : j*m+nw]
			xj := xt[j] / float64(col[j])
			xt[j] = xj
			if xj == 0 {
				continue
			}
			for i := j + 1; i < nw; i++ {
				xt[i] -= float64(col[i]) * xj
			}
		}
		if m == nw {
			continue
		}
		u := f.stmp[:m-nw]
		clear(u)
		j := 0
		for ; j+4 <= nw; j += 4 {
			acc(u, X[j*m+nw:(j+1)*m], X[(j+1)*m+nw:(j+2)*m], X[(j+2)*m+nw:(j+3)*m], X[(j+3)*m+nw:(j+4)*m],
				xt[j], xt[j+1], xt[j+2], xt[j+3])
		}
		for ; j < nw; j++ {
			x0 := xt[j]
			c0 := X[j*m+nw : (j+1)*m]
			c0 = c0[:len(u)]
			for i, v := range c0 {
				u[i] += float64(v) * x0
			}
		}
		below := r[nw:]
		below = below[:len(u)]
		for i, ri := range below {
			w[ri] -= u[i]
		}
	}
	if neg := f.s.neg; neg != nil {
		// C = L·S·Lᵀ with S = ±1 by the pivots' signs.
		for k, ng := range neg {
			if ng {
				w[k] = -w[k]
			}
		}
	}
	for t := sn.ns - 1; t >= 0; t-- {
		fc, lc := super[t], super[t+1]
		nw := lc - fc
		r := rows[rp[t]:rp[t+1]]
		m := len(r)
		X := x[xp[t]:xp[t+1]]
		xt := w[fc:lc]
		g := f.stmp[:m-nw]
		below := r[nw:]
		below = below[:len(g)]
		for i, ri := range below {
			g[i] = w[ri]
		}
		for j := nw - 1; j >= 0; j-- {
			col := X[j*m : (j+1)*m]
			cb := col[nw:]
			cb = cb[:len(g)]
			var s0, s1, s2, s3 float64
			i := 0
			for ; i+4 <= len(g); i += 4 {
				s0 += float64(cb[i]) * g[i]
				s1 += float64(cb[i+1]) * g[i+1]
				s2 += float64(cb[i+2]) * g[i+2]
				s3 += float64(cb[i+3]) * g[i+3]
			}
			for ; i < len(g); i++ {
				s0 += float64(cb[i]) * g[i]
			}
			sum := xt[j] - ((s0 + s1) + (s2 + s3))
			for i := j + 1; i < nw; i++ {
				sum -= float64(col[i]) * xt[i]
			}
			xt[j] = sum / float64(col[j])
		}
	}
}

// accum4 adds to the float64 vector u the combination of four columns of
// a factor in T, u += Σ_t a_t·b_t (sgemm.Add4x64 for float64).
type accum4[T real] func(u []float64, a0, a1, a2, a3 []T, b0, b1, b2, b3 float64)

// accum4Go is accum4 in plain Go.
func accum4Go[T real](u []float64, a0, a1, a2, a3 []T, b0, b1, b2, b3 float64) {
	a0, a1, a2, a3 = a0[:len(u)], a1[:len(u)], a2[:len(u)], a3[:len(u)]
	for i := range u {
		u[i] += float64(a0[i])*b0 + float64(a1[i])*b1 + float64(a2[i])*b2 + float64(a3[i])*b3
	}
}

// add4 adds to y the combination of four columns, y += Σ_t a_t·b_t (see
// sgemm.Add4x64, the float64 one).
type add4[T real] func(y, a0, a1, a2, a3 []T, b0, b1, b2, b3 T)

// updateBlock sets the lower trapezoid of the nr×nc column-major block c
// to A·Bᵀ, where A is rows p1…md−1 and B rows p1…p1+nc−1 of the md×wd
// column-major block xd. Two columns of c and four of xd at a time (by
// add), so each entry of c is loaded and stored wd/4 times.
func updateBlock[T real](add add4[T], c, xd []T, md, wd, p1, nr, nc int) {
	c = c[:nr*nc]
	jj := 0
	for ; jj+2 <= nc; jj += 2 {
		d0 := jj*nr + jj
		c0 := c[d0+1 : (jj+1)*nr]
		c1 := c[(jj+1)*nr+jj+1 : (jj+2)*nr]
		c1 = c1[:len(c0)]
		clear(c0)
		clear(c1)
		var diag T
		k := 0
		for ; k+4 <= wd; k += 4 {
			a0 := xd[k*md+p1+jj : (k+1)*md]
			a1 := xd[(k+1)*md+p1+jj : (k+2)*md]
			a2 := xd[(k+2)*md+p1+jj : (k+3)*md]
			a3 := xd[(k+3)*md+p1+jj : (k+4)*md]
			b00, b01, b02, b03 := a0[0], a1[0], a2[0], a3[0]
			b10, b11, b12, b13 := a0[1], a1[1], a2[1], a3[1]
			diag += b00*b00 + b01*b01 + b02*b02 + b03*b03
			t0, t1, t2, t3 := a0[1:], a1[1:], a2[1:], a3[1:]
			add(c0, t0, t1, t2, t3, b00, b01, b02, b03)
			add(c1, t0, t1, t2, t3, b10, b11, b12, b13)
		}
		for ; k < wd; k++ {
			a0 := xd[k*md+p1+jj : (k+1)*md]
			b00, b10 := a0[0], a0[1]
			diag += b00 * b00
			t0 := a0[1:]
			t0 = t0[:len(c0)]
			for ii, v0 := range t0 {
				c0[ii] += v0 * b00
				c1[ii] += v0 * b10
			}
		}
		c[d0] = diag
	}
	for ; jj < nc; jj++ {
		cj := c[jj*nr+jj : (jj+1)*nr]
		clear(cj)
		k := 0
		for ; k+4 <= wd; k += 4 {
			a0 := xd[k*md+p1+jj : (k+1)*md]
			a1 := xd[(k+1)*md+p1+jj : (k+2)*md]
			a2 := xd[(k+2)*md+p1+jj : (k+3)*md]
			a3 := xd[(k+3)*md+p1+jj : (k+4)*md]
			add(cj, a0, a1, a2, a3, a0[0], a1[0], a2[0], a3[0])
		}
		for ; k < wd; k++ {
			a0 := xd[k*md+p1+jj : (k+1)*md]
			b0 := a0[0]
			a0 = a0[:len(cj)]
			for ii := range cj {
				cj[ii] += a0[ii] * b0
			}
		}
	}
}

// panelColumn subtracts from cj (column j of the m×w panel X, rows j…m−1)
// the products of the first nk columns k < nk of X: cj −= X[j:, k]·X[j, k],
// four columns at a time (by add, with the weights negated).
func panelColumn[T real](add add4[T], cj, X []T, m, j, nk int) {
	k := 0
	for ; k+4 <= nk; k += 4 {
		a0 := X[k*m+j : (k+1)*m]
		a1 := X[(k+1)*m+j : (k+2)*m]
		a2 := X[(k+2)*m+j : (k+3)*m]
		a3 := X[(k+3)*m+j : (k+4)*m]
		add(cj, a0, a1, a2, a3, -a0[0], -a1[0], -a2[0], -a3[0])
	}
	for ; k < nk; k++ {
		a0 := X[k*m+j : (k+1)*m]
		b0 := a0[0]
		a0 = a0[:len(cj)]
		for i := range cj {
			cj[i] -= a0[i] * b0
		}
	}
}
