package enforce

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/enforce-nn/enforce/internal/colour"
	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/sparse"
)

// The sparse path of AdaNP (Settings.Path, Capabilities.Sparse). It runs
// the per-sample state machine of driver.go unchanged (start, accept,
// finish, the line search and the stopping rules); only the arithmetic of
// a step differs: B is held as its values in the constraint's CSR pattern
// (nnz numbers), G = B·W⁻¹·Bᵀ + εI is factored by the sparse LDLᵀ kernel
// of internal/sparse after one symbolic analysis per AdaNP, and the
// products B·v and Bᵀ·μ run over the nonzeros. A worker's workspace holds
// O(nnz(B) + nnz(L) + nc + ny) numbers; nothing is nc² or nc·ny.

// sparsePath is the read-only state of the sparse path, shared by every
// worker.
type sparsePath struct {
	sj          *SparseJacobian
	rowPtr, col []int
	nnz         int
	gram        *sparse.Gram
	single      bool      // Precision Float32 on a supernodal analysis: L in float32
	ones        []float64 // n ones: W⁻¹ = I, for the kernel
	// rowColour groups the rows of B into sets whose patterns are
	// disjoint (a distance-2 colouring of the rows): Σ_i ∇²c_i·v_i over
	// the rows of one set is one HessVec call (AutoDiagonal gradients).
	rowColour [][]int
	rec       sparseLayout
	// PathAugmented: K's analysis, made at the first projection
	// (prepareAugmented), and the factorisations that fell back to G's.
	augmented    bool
	aug          atomic.Pointer[sparse.Augmented]
	augMu        sync.Mutex
	augFallbacks atomic.Int64
}

// gramSolver is what a step needs of a factorisation of G: solves.
type gramSolver interface {
	Solve(x []float64)
}

// sparseWork is a worker's factors and scratch on the sparse path.
type sparseWork struct {
	f   *sparse.Factor    // float64 factor; made at the first need when f32 or fa is set
	f32 *sparse.Factor    // single-precision factor (sparsePath.single), or nil
	fa  *sparse.AugFactor // PathAugmented: K's factor, made at the first need
	cur gramSolver        // the factor of the last successful factorisation
	ind []float64         // nc, a set's indicator
}

// factor factors G = B·diag(winv)·Bᵀ + εI for B's values vals: in single
// precision first where f32 is set, in float64 where it is not or where
// single precision cannot resolve a pivot (sparse.ErrPrecision). On
// success cur is the factor that holds G; the error is that of the
// float64 factorisation otherwise. The choice depends only on G, so a
// backward pass that factors the same G again makes the same one.
func (w *sparseWork) factor(p *sparsePath, vals, winv []float64, eps float64) error {
	g := p.gram
	w.cur = nil
	factorizations.Add(1)
	if k := p.aug.Load(); k != nil {
		if w.fa == nil {
			w.fa = k.NewFactor()
		}
		err := w.fa.Factor(vals, winv, eps)
		if err == nil {
			w.cur = w.fa
			return nil
		}
		if !errors.Is(err, sparse.ErrAugmented) {
			return err
		}
		p.augFallbacks.Add(1)
	}
	if w.f32 != nil {
		err := w.f32.Factor(vals, winv, eps)
		if err == nil {
			w.cur = w.f32
			return nil
		}
		if !errors.Is(err, sparse.ErrPrecision) {
			return err
		}
	}
	if w.f == nil {
		w.f = g.NewFactor()
	}
	if err := w.f.Factor(vals, winv, eps); err != nil {
		return err
	}
	w.cur = w.f
	return nil
}

// sparseLayout is the layout of a sparse step record: a header (α, 1 if
// the step was bounded by MaxStep, the ε G was factored with, and the θ
// of a damped step, else 0), y, μ,
// then W⁻¹'s diagonal (AutoDiagonal only) and B's values (unless
// Settings.Recompute, or always at a final point).
type sparseLayout struct {
	storeD, storeB bool
	offD, offB     int
	length         int
}

const spHeader = 4

// sparseMethod is the numeric method newSparsePath asks of the kernel:
// sparse.Auto, except in tests that need the supernodal method on small
// systems.
var sparseMethod = sparse.Auto

// sparsePairs is the kernel's Options.EliminatePairs for newSparsePath:
// on, except in tests that compare with the plain factorisation. The rows
// of WithInequalities for a bound on one variable are pair rows (the
// bound's column and its multiplier's).
var sparsePairs = true

// newSparsePath analyses the pattern of sj for an AdaNP with n outputs
// (latent variables included), or takes share's analysis where share is
// not nil and has the same pattern (a Gram is read-only once analysed).
func newSparsePath(a *AdaNP, sj *SparseJacobian, share *sparsePath) (*sparsePath, error) {
	nc, n := a.nc, a.n
	var g *sparse.Gram
	if share != nil && len(share.ones) == n && slices.Equal(share.rowPtr, sj.RowPtr) && slices.Equal(share.col, sj.Col) {
		g = share.gram
	} else {
		var err error
		g, err = sparse.AnalyseGram(nc, n, sj.RowPtr, sj.Col, sparse.Options{Method: sparseMethod, EliminatePairs: sparsePairs})
		if err != nil {
			return nil, fmt.Errorf("enforce: sparse analysis: %w", err)
		}
	}
	p := &sparsePath{sj: sj, rowPtr: sj.RowPtr, col: sj.Col, nnz: sj.nnz(), gram: g, ones: make([]float64, n)}
	for j := range p.ones {
		p.ones[j] = 1
	}
	if a.s.Weights == AutoDiagonal && a.k.HessVec != nil && a.s.Grad == Unrolled {
		p.rowColour = rowSets(nc, n, p.rowPtr, p.col)
	}
	final := a.s.Grad == Implicit || a.s.Grad == FinalProjector
	l := &p.rec
	l.storeD = a.s.Weights == AutoDiagonal
	l.storeB = !a.s.Recompute || final
	off := spHeader + n + nc
	if l.storeD {
		l.offD, off = off, off+n
	}
	if l.storeB {
		l.offB, off = off, off+p.nnz
	}
	l.length = off
	return p, nil
}

// newSparseWorkspace is newWorkspace for the sparse path: vectors of
// length n and nc, B's values (nnz) and the kernel's factor.
func (a *AdaNP) newSparseWorkspace() *workspace {
	n, nc, nx, nnz := a.n, a.nc, a.nx, a.sp.nnz
	vn := func() []float64 { return make([]float64, n) }
	vc := func() []float64 { return make([]float64, nc) }
	m := max(n, nc)
	ws := &workspace{
		y: vn(), yNew: vn(),
		c: vc(), cNew: vc(),
		b: make([]float64, nnz), dir: vn(),
		d: vn(), mu: vc(), delta: vn(),
		tmp: make([]float64, m), tmpN: make([]float64, m),
		cEval: vc(), bEval: make([]float64, nnz),
		yhatExt: vn(),
		w:       vc(), zeroMu: vc(), unit: vc(),
		gx: make([]float64, nx), gxHV: make([]float64, nx), gxAcc: make([]float64, nx),
		gy: vn(), gp: vn(), p: vn(), dp: vn(), hv: vn(), acc: vn(), bmu: vn(), dt: vn(),
		hMu: vn(), hW: vn(), bbar: make([]float64, nnz),
		u: vn(), r: vn(), z: vn(), pk: vn(), hpk: vn(),
		sp: &sparseWork{ind: vc()},
	}
	if a.s.ChordCG > 0 {
		ws.cgR, ws.cgZ, ws.cgP, ws.cgQ, ws.cgT = make([]float64, a.nc), make([]float64, a.nc), make([]float64, a.nc), make([]float64, a.nc), make([]float64, a.n)
	}
	if a.s.Chord > 0 {
		ws.chordB, ws.chordD = make([]float64, nnz), vn()
	}
	switch {
	case a.sp.single:
		ws.sp.f32 = a.sp.gram.NewFactorSingle()
	case !a.sp.augmented:
		ws.sp.f = a.sp.gram.NewFactor()
	}
	if a.sp.sj.JacobianXTVec == nil && a.k.JacobianX != nil {
		ws.jx = make([]float64, nc*nx)
	}
	ws.st = sampleState{y: ws.y, c: ws.c, yT: ws.yNew, cT: ws.cNew, J: ws.b, delta: ws.dir, swap: true}
	return ws
}

// mulVec writes dst = B·v (dst of length nc) for B's values vals.
func (p *sparsePath) mulVec(dst, vals, v []float64) {
	for i := range len(p.rowPtr) - 1 {
		var s float64
		for q := p.rowPtr[i]; q < p.rowPtr[i+1]; q++ {
			s += vals[q] * v[p.col[q]]
		}
		dst[i] = s
	}
}

// mulTransVec writes dst = Bᵀ·u (dst of length n) for B's values vals.
func (p *sparsePath) mulTransVec(dst, vals, u []float64) {
	clear(dst)
	for i := range len(p.rowPtr) - 1 {
		ui := u[i]
		for q := p.rowPtr[i]; q < p.rowPtr[i+1]; q++ {
			dst[p.col[q]] += vals[q] * ui
		}
	}
}

// jacobianXTVec writes out = (∂c/∂x)ᵀ·w at (x, y): with the constraint's
// JacobianXTVec, or through JacobianX's nc×nx matrix in ws.jx.
func (a *AdaNP) jacobianXTVec(ws *workspace, x, y, w, out []float64) {
	if f := a.sp.sj.JacobianXTVec; f != nil {
		f(x, y, w, out)
		return
	}
	a.k.JacobianX(x, y, ws.jx)
	dense.MulTransVec(out, ws.jx, a.nc, a.nx, w)
}

// sparseWeights returns W⁻¹'s diagonal for B's values vals, or nil for
// W = I. AutoDiagonal's column means of |B| are summed over the nonzeros,
// in the order of the dense path's sums (rows in order).
func (a *AdaNP) sparseWeights(ws *workspace, vals []float64) []float64 {
	switch a.s.Weights {
	case Diagonal:
		copy(ws.d, a.diagInv)
		return ws.d
	case AutoDiagonal:
		d := ws.d
		clear(d)
		for q, v := range vals {
			d[a.sp.col[q]] += math.Abs(v)
		}
		top := 0.0
		for k, s := range d {
			d[k] = math.Max(s/float64(a.nc), 1)
			top = math.Max(top, d[k])
		}
		for k := range d {
			d[k] /= top
		}
		return d
	}
	return nil
}

// maxClampTries bounds the retries of a sparse factorisation with a
// larger ε.
const maxClampTries = 8

// sparseFactor factors G = B·diag(d)·Bᵀ + εI for B's values vals into
// ws.sp.cur with ε = reg (Settings.Reg, plus the damping ν of
// Settings.Damping on a damped step). Where G is not numerically positive
// definite (the kernel meets a non-positive pivot: B rank-deficient or
// ill-conditioned) it factors again with ε raised to
// max(Reg, 1e-12·max_j G_jj), then 100 times larger at each failure, up to
// maxClampTries times: the sparse counterpart of the dense path's
// eigenvalue clamp at max(Reg, 1e-12·λ_max), reported the same way
// (clamped, counted in Stats.Clamped and as inexact by GradStats). It
// returns the ε used and reports false if no ε up to the last succeeded or
// G is not finite.
func (a *AdaNP) sparseFactor(ws *workspace, vals, d []float64, reg float64) (eps float64, clamped, ok bool) {
	winv := d
	if winv == nil {
		winv = a.sp.ones
	}
	eps = reg
	if ws.sp.factor(a.sp, vals, winv, eps) == nil {
		return eps, false, true
	}
	top := a.sp.maxGramDiag(vals, winv)
	if !(top > 0) || math.IsInf(top, 1) {
		return 0, false, false
	}
	eps = math.Max(reg, 1e-12*top)
	for range maxClampTries {
		if ws.sp.factor(a.sp, vals, winv, eps) == nil {
			return eps, true, true
		}
		eps *= 100
	}
	return 0, false, false
}

// maxGramDiag returns max_i G_ii = max_i Σ_q B_iq² d_q, without ε.
func (p *sparsePath) maxGramDiag(vals, d []float64) float64 {
	var top float64
	for i := range len(p.rowPtr) - 1 {
		var s float64
		for q := p.rowPtr[i]; q < p.rowPtr[i+1]; q++ {
			v := vals[q]
			s += v * v * d[p.col[q]]
		}
		if s > top || s != s {
			top = s
		}
	}
	return top
}

// sparseDirection computes the NP direction at an iterate with residual c
// and B's values vals: μ = G⁻¹c into ws.mu and δ = D·Bᵀ·μ into delta,
// leaving G's factor in ws.sp.cur. It returns D (nil for W = I) and the ε
// G was factored with, and reports false if G cannot be factored or δ is
// not finite.
func (a *AdaNP) sparseDirection(ws *workspace, c, vals, delta []float64, reg float64) (d []float64, eps float64, clamped, ok bool) {
	d = a.sparseWeights(ws, vals)
	eps, clamped, ok = a.sparseFactor(ws, vals, d, reg)
	if !ok {
		return nil, 0, false, false
	}
	copy(ws.mu, c)
	ws.sp.cur.Solve(ws.mu)
	a.sp.mulTransVec(delta, vals, ws.mu)
	return d, eps, clamped, scaleFinite(delta, d)
}

// pushSparse appends a sparse step record for sample s.
func (t *Trace) pushSparse(s int, alpha float64, bounded bool, eps, theta float64, clamped bool, y, mu, d, vals []float64) {
	a := t.a
	l := &a.sp.rec
	r := t.nextRecord(s, l.length)
	r[0], r[1], r[2], r[3] = alpha, 0, eps, theta
	if bounded {
		r[1] = 1
	}
	copy(r[spHeader:], y)
	copy(r[spHeader+a.n:], mu)
	if l.storeD {
		copy(r[l.offD:l.offD+a.n], d)
	}
	if l.storeB {
		copy(r[l.offB:l.offB+a.sp.nnz], vals)
	}
	t.eig[s] = append(t.eig[s], clamped)
}

// recordSparse parses record k of sample s into st, evaluating B again
// where it was not stored, and factors G again into ws.sp.cur with the ε of
// the forward pass (the backward pass refactors rather than storing
// factors, whose fill can exceed nnz(B) many times). It reports false if
// G cannot be factored with that ε.
func (t *Trace) recordSparse(ws *workspace, s, k int, st *stepRecord) bool {
	a := t.a
	l := &a.sp.rec
	r := t.recs[s][k]
	st.alpha = r[0]
	st.bounded = r[1] != 0
	eps := r[2]
	st.eps, st.theta = eps, r[3]
	st.y = r[spHeader : spHeader+a.n]
	st.mu = r[spHeader+a.n : spHeader+a.n+a.nc]
	if l.storeB {
		st.B = r[l.offB : l.offB+a.sp.nnz]
	} else {
		a.sp.sj.Eval(t.xrow(s), st.y, ws.cNew, ws.b)
		st.B = ws.b
	}
	if l.storeD {
		st.d = r[l.offD : l.offD+a.n]
	} else {
		st.d = a.sparseWeights(ws, st.B)
	}
	winv := st.d
	if winv == nil {
		winv = a.sp.ones
	}
	st.f = nil
	return ws.sp.factor(a.sp, st.B, winv, eps) == nil
}

// rowSets partitions the nc rows of a CSR pattern over n columns into sets
// of rows with pairwise disjoint column sets: a distance-2 colouring of
// the rows, as the column colouring of the transpose.
func rowSets(nc, n int, rowPtr, col []int) [][]int {
	// Transpose: the rows of Bᵀ are the columns of B.
	tp := make([]int, n+1)
	for _, j := range col {
		tp[j+1]++
	}
	for j := range n {
		tp[j+1] += tp[j]
	}
	tc := make([]int, len(col))
	next := append([]int(nil), tp[:n]...)
	for i := range nc {
		for q := rowPtr[i]; q < rowPtr[i+1]; q++ {
			j := col[q]
			tc[next[j]] = i
			next[j]++
		}
	}
	colours, k := colour.Columns(n, nc, tp, tc, colour.Natural)
	sets := make([][]int, k)
	for i, c := range colours {
		sets[c] = append(sets[c], i)
	}
	return sets
}

// prepareAugmented orders K (PathAugmented) at the first projection, from
// B's values at the first sample's starting point (x, y with its latent
// variables): each row comes after its column of largest |B_ij| there. B
// not finite there, or an Eval that panics (the projection then reports
// it, naming the sample), gives the structural order (a row after the
// first of its columns that the fewest rows share: its private column,
// where it has one).
// It does nothing once K is ordered, or off PathAugmented.
func (a *AdaNP) prepareAugmented(x, y []float64) error {
	p := a.sp
	if p == nil || !p.augmented || p.aug.Load() != nil {
		return nil
	}
	p.augMu.Lock()
	defer p.augMu.Unlock()
	if p.aug.Load() != nil {
		return nil
	}
	vals := augmentedValues(p, x, y, a.nc)
	k, err := sparse.AnalyseAugmented(a.nc, a.n, p.rowPtr, p.col, vals, sparse.Options{})
	if err != nil {
		return fmt.Errorf("enforce: analysis of the augmented system: %w", err)
	}
	p.aug.Store(k)
	return nil
}

// augmentedValues returns B's values at (x, y), or nil where they are not
// finite or the constraint's Eval panics.
func augmentedValues(p *sparsePath, x, y []float64, nc int) (vals []float64) {
	defer func() {
		if recover() != nil {
			vals = nil
		}
	}()
	vals = make([]float64, p.nnz)
	p.sj.Eval(x, y, make([]float64, nc), vals)
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
	}
	return vals
}
