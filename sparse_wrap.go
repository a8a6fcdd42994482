package enforce

import (
	"sync"

	"github.com/enforce-nn/enforce/internal/dense"
)

// Stack and WithInequalities keep Capabilities.Sparse by construction
// (stack.go and fb.go call makeSparse when they build a wrapper).

// maxDenseRows is the largest number of entries (rows × ny) of the parts
// without a sparse pattern that a sparse wrapper takes in as full rows
// when it also has sparse parts: a small dense part (a few coupling
// equations over every output) keeps the wrapper sparse, a large one makes
// it dense.
const maxDenseRows = 1 << 16

// sparsePart is a wrapper part's sparse view: its pattern and values, and
// (∂c/∂x)ᵀw where the part can compute it.
type sparsePart struct {
	p        *part
	sj       *SparseJacobian
	jxt      func(x, y, w, out []float64) // nil if the part has no x-derivative
	nnz      int
	jxPool   sync.Pool // *[]float64, nc·nx, for a part with JacobianX only
	fullRows bool      // a dense part taken in as full rows
}

// newSparsePart returns p's sparse view: its own pattern, or full rows
// (row-major dense Jacobian values are the values of the full-row pattern
// in pattern order).
func newSparsePart(p *part) *sparsePart {
	sp := &sparsePart{p: p, sj: p.k.Sparse}
	if sp.sj == nil {
		sp.fullRows = true
		rp := make([]int, p.nc+1)
		col := make([]int, p.nc*p.ny)
		for i := range p.nc {
			rp[i+1] = (i + 1) * p.ny
			for j := range p.ny {
				col[i*p.ny+j] = j
			}
		}
		c := p.c
		sp.sj = &SparseJacobian{RowPtr: rp, Col: col, Eval: c.Eval}
	}
	sp.nnz = sp.sj.nnz()
	switch {
	case sp.sj.JacobianXTVec != nil:
		sp.jxt = sp.sj.JacobianXTVec
	case p.k.JacobianX != nil:
		nc, nx := p.nc, p.nx
		sp.jxPool.New = func() any {
			b := make([]float64, nc*nx)
			return &b
		}
		sp.jxt = func(x, y, w, out []float64) {
			b := sp.jxPool.Get().(*[]float64)
			p.k.JacobianX(x, y, *b)
			dense.MulTransVec(out, *b, nc, nx, w)
			sp.jxPool.Put(b)
		}
	}
	return sp
}

// sparseParts returns the sparse views of parts when at least one part is
// sparse and the others' full rows hold at most maxDenseRows entries, and
// nil otherwise.
func sparseParts(parts ...*part) []*sparsePart {
	anySparse, dense := false, 0
	for _, p := range parts {
		if p == nil {
			continue
		}
		if p.k.Sparse != nil {
			anySparse = true
		} else {
			dense += p.nc * p.ny
		}
	}
	if !anySparse || dense > maxDenseRows {
		return nil
	}
	sps := make([]*sparsePart, len(parts))
	for i, p := range parts {
		if p != nil {
			sps[i] = newSparsePart(p)
		}
	}
	return sps
}

// makeSparse sets the Stack's Capabilities.Sparse: the parts' patterns as
// block rows (see sparseParts for parts without a pattern), their values
// one after another, and (∂c/∂x)ᵀw as the sum of the parts' over their
// blocks of w, where every part has an x-derivative.
func (s *stackConstraint) makeSparse() {
	sps := sparseParts(s.parts...)
	if sps == nil {
		return
	}
	rp := []int{0}
	var col []int
	voff := make([]int, len(sps)+1)
	jxt := true
	for p, sp := range sps {
		for i := range sp.p.nc {
			lo, hi := sp.sj.RowPtr[i], sp.sj.RowPtr[i+1]
			col = append(col, sp.sj.Col[lo:hi]...)
			rp = append(rp, len(col))
		}
		voff[p+1] = voff[p] + sp.nnz
		jxt = jxt && sp.jxt != nil
	}
	sj := &SparseJacobian{RowPtr: rp, Col: col}
	sj.Eval = func(x, y, c, vals []float64) {
		for p, sp := range sps {
			var v []float64
			if vals != nil {
				v = vals[voff[p]:voff[p+1]]
			}
			sp.sj.Eval(x, y, c[s.off[p]:s.off[p+1]], v)
		}
	}
	if jxt {
		sj.JacobianXTVec = func(x, y, w, out []float64) {
			s.sumParts(out, func(p int, dst []float64) {
				sps[p].jxt(x, y, w[s.off[p]:s.off[p+1]], dst)
			})
		}
	}
	s.k.Sparse = sj
}

// fbSparse is the sparse form of a WithInequalities system: eq's rows,
// then row neq+j with g_j's pattern and the column ny+j of λ_j.
type fbSparse struct {
	fb     *fbConstraint
	eq, g  *sparsePart // eq may be nil
	nnzEq  int
	hasJXT bool
	pool   sync.Pool // *fbSparseScratch
}

// fbSparseScratch holds g's values and Jacobian values, weights and an
// output of length max(nx, ny).
type fbSparseScratch struct {
	g, gvals, w, a, tmp []float64
}

// makeSparse sets the Fischer–Burmeister system's Capabilities.Sparse when
// g (and eq, if any) is sparse (see sparseParts), and replaces HessVec and
// MixedHessVec by versions that use g's sparse Jacobian values, which cost
// O(nnz) instead of a dense ng×ny Jacobian. The pattern of row neq+j is
// g_j's pattern followed by λ_j's column ny+j (∂φ_j/∂λ_j); the values are
// ∂φ/∂u·∂g_j/∂y and ∂φ/∂λ. (∂c/∂x)ᵀw is eq's (∂eq/∂x)ᵀw_eq plus g's
// (∂g/∂x)ᵀ(w_g ⊙ ∂φ/∂u).
func (fb *fbConstraint) makeSparse() {
	sps := sparseParts(fb.eq, fb.g)
	if sps == nil {
		return
	}
	f := &fbSparse{fb: fb, eq: sps[0], g: sps[1]}
	ny, ng := fb.ny, fb.ng
	rp := []int{0}
	var col []int
	if f.eq != nil {
		col = append(col, f.eq.sj.Col...)
		rp = append(rp, f.eq.sj.RowPtr[1:]...)
		f.nnzEq = f.eq.nnz
	}
	for j := range ng {
		lo, hi := f.g.sj.RowPtr[j], f.g.sj.RowPtr[j+1]
		col = append(col, f.g.sj.Col[lo:hi]...)
		col = append(col, ny+j)
		rp = append(rp, len(col))
	}
	nnzG := f.g.nnz
	nx := fb.nx
	f.pool.New = func() any {
		return &fbSparseScratch{
			g: make([]float64, ng), gvals: make([]float64, nnzG),
			w: make([]float64, ng), a: make([]float64, ng), tmp: make([]float64, max(nx, ny)),
		}
	}
	sj := &SparseJacobian{RowPtr: rp, Col: col, Eval: f.eval}
	f.hasJXT = f.g.jxt != nil && (f.eq == nil || f.eq.jxt != nil)
	if f.hasJXT {
		sj.JacobianXTVec = f.jacobianXTVec
	}
	k := &fb.k
	k.Sparse = sj
	if (fb.eq == nil || fb.eq.k.HessVec != nil) && fb.g.k.HessVec != nil {
		k.HessVec = f.hessVec
	}
	if (fb.eq == nil || fb.eq.k.MixedHessVec != nil) && fb.g.k.MixedHessVec != nil && f.g.jxt != nil {
		k.MixedHessVec = f.mixedHessVec
	}
}

// eval writes c_ext and, if vals is not nil, its Jacobian's values in the
// pattern.
func (f *fbSparse) eval(x, yext, c, vals []float64) {
	fb := f.fb
	y, lambda := yext[:fb.ny], yext[fb.ny:]
	s := f.pool.Get().(*fbSparseScratch)
	defer f.pool.Put(s)
	var veq, gvals []float64
	if vals != nil {
		veq, gvals = vals[:f.nnzEq], s.gvals
	}
	if f.eq != nil {
		f.eq.sj.Eval(x, y, c[:fb.neq], veq)
	}
	f.g.sj.Eval(x, y, s.g, gvals)
	rp := f.g.sj.RowPtr
	q := f.nnzEq
	for j, u := range s.g {
		p := fb.partials(lambda[j], u)
		c[fb.neq+j] = p.phi
		if vals != nil {
			for r := rp[j]; r < rp[j+1]; r++ {
				vals[q] = p.du * gvals[r]
				q++
			}
			vals[q] = p.dl
			q++
		}
	}
}

// jacobianXTVec writes out = (∂c_ext/∂x)ᵀw.
func (f *fbSparse) jacobianXTVec(x, yext, w, out []float64) {
	fb := f.fb
	y, lambda := yext[:fb.ny], yext[fb.ny:]
	s := f.pool.Get().(*fbSparseScratch)
	defer f.pool.Put(s)
	f.g.sj.Eval(x, y, s.g, nil)
	for j, u := range s.g {
		s.w[j] = w[fb.neq+j] * fb.partials(lambda[j], u).du
	}
	f.g.jxt(x, y, s.w, out)
	if f.eq != nil {
		tmp := s.tmp[:fb.nx]
		f.eq.jxt(x, y, w[:fb.neq], tmp)
		for k, t := range tmp {
			out[k] += t
		}
	}
}

// hessVec is fbConstraint.hessVec with g's Jacobian as sparse values.
func (f *fbSparse) hessVec(x, yext, w, v, out []float64) {
	fb := f.fb
	nx, nye, nce := fb.Dims()
	checkHessVecLen("WithInequalities.HessVec", nx, nye, nce, nye, x, yext, w, v, out)
	ny := fb.ny
	y, lambda := yext[:ny], yext[ny:]
	vy, vl := v[:ny], v[ny:]
	outY := out[:ny]
	if fb.eq != nil {
		fb.eq.k.HessVec(x, y, w[:fb.neq], vy, outY)
	} else {
		clear(outY)
	}
	s := f.pool.Get().(*fbSparseScratch)
	defer f.pool.Put(s)
	f.g.sj.Eval(x, y, s.g, s.gvals)
	rp, col := f.g.sj.RowPtr, f.g.sj.Col
	wg := w[fb.neq:]
	for j, u := range s.g {
		p := fb.partials(lambda[j], u)
		var gv float64
		for r := rp[j]; r < rp[j+1]; r++ {
			gv += s.gvals[r] * vy[col[r]]
		}
		a := wg[j] * (p.duu*gv + p.dlu*vl[j])
		for r := rp[j]; r < rp[j+1]; r++ {
			outY[col[r]] += a * s.gvals[r]
		}
		out[ny+j] = wg[j] * (p.dlu*gv + p.dll*vl[j])
		s.w[j] = wg[j] * p.du
	}
	tmp := s.tmp[:ny]
	fb.g.k.HessVec(x, y, s.w, vy, tmp)
	for k, t := range tmp {
		outY[k] += t
	}
}

// mixedHessVec is fbConstraint.mixedHessVec with Σ_j a_j ∂g_j/∂x computed
// as (∂g/∂x)ᵀa.
func (f *fbSparse) mixedHessVec(x, yext, w, v, out []float64) {
	fb := f.fb
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
	s := f.pool.Get().(*fbSparseScratch)
	defer f.pool.Put(s)
	f.g.sj.Eval(x, y, s.g, s.gvals)
	rp, col := f.g.sj.RowPtr, f.g.sj.Col
	wg := w[fb.neq:]
	for j, u := range s.g {
		p := fb.partials(lambda[j], u)
		var gv float64
		for r := rp[j]; r < rp[j+1]; r++ {
			gv += s.gvals[r] * vy[col[r]]
		}
		s.a[j] = wg[j] * (p.duu*gv + p.dlu*vl[j])
		s.w[j] = wg[j] * p.du
	}
	tmp := s.tmp[:nx]
	f.g.jxt(x, y, s.a, tmp)
	for k, t := range tmp {
		out[k] += t
	}
	fb.g.k.MixedHessVec(x, y, s.w, vy, tmp)
	for k, t := range tmp {
		out[k] += t
	}
}
