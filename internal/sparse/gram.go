package sparse

import "math"

// Gram is the symbolic analysis of G = B·diag(w)·Bᵀ + εI for a fixed
// sparsity pattern of the nc×ny matrix B: the pattern of G, a fill-reducing
// permutation P, the elimination tree and the pattern of the factor
// P·G·Pᵀ = L·D·Lᵀ, and the map from the products B_ik·w_k·B_jk into the
// stored entries of P·G·Pᵀ, so that numeric assembly costs
// O(Σ_k m_k(m_k+1)/2) for m_k the number of entries of column k of B, with
// no search.
//
// A Gram is read-only after AnalyseGram and may be shared by any number of
// goroutines, each with its own Factor.
type Gram struct {
	sym      *symbolic
	nc, ny   int
	nnzB     int
	nnzG     int   // stored entries of the lower (or upper) triangle of G, diagonal included
	bcp      []int // CSC of B: column k has entries bcp[k]:bcp[k+1]
	bidx     []int32
	pairs    []int32 // for each column k, for p ≤ q, the position in ci of the product
	maxPairs int
	tol      float64
	el       *pairElim // Options.EliminatePairs found pair rows: G is factored through them
}

// AnalyseGram analyses the pattern of B, an nc×ny matrix in compressed
// sparse row form: row i has its column indices in col[rowPtr[i]:rowPtr[i+1]],
// strictly increasing and in [0, ny). rowPtr has length nc+1, rowPtr[0] = 0
// and rowPtr[nc] = len(col). The values B_ij passed later to Factor.Factor
// follow the order of col. G's diagonal is always in the pattern (ε may be
// positive), even for an empty row of B.
//
// An invalid pattern gives an error matching ErrPattern.
func AnalyseGram(nc, ny int, rowPtr, col []int, opt Options) (*Gram, error) {
	return analyseGram(nc, ny, rowPtr, col, opt, true)
}

// Stats are the sizes of a symbolic analysis.
type Stats struct {
	// N is the order of the matrix.
	N int
	// NNZA is the number of entries of its lower triangle, diagonal
	// included.
	NNZA int
	// NNZL is the number of entries of L strictly below its diagonal.
	NNZL int
	// Flops is the multiply–add count of one numeric factorisation,
	// Σ_j c_j(c_j+3)/2 over the column counts c_j of L.
	Flops float64
}

// CountGram returns the Stats of AnalyseGram(nc, ny, rowPtr, col, opt)
// without building the pattern of L or the assembly map: the ordering, the
// elimination tree and the column counts only, in O(nnz(L)) time (O(MaxNNZL)
// with that bound) and O(nnz(G)) memory. It serves to decide whether a
// sparse factorisation pays before paying for it.
func CountGram(nc, ny int, rowPtr, col []int, opt Options) (Stats, error) {
	g, err := analyseGram(nc, ny, rowPtr, col, opt, false)
	if err != nil {
		return Stats{}, err
	}
	return g.Stats(), nil
}

func analyseGram(nc, ny int, rowPtr, col []int, opt Options, full bool) (*Gram, error) {
	if err := checkPattern(nc, ny, rowPtr, col); err != nil {
		return nil, err
	}
	g := &Gram{nc: nc, ny: ny, nnzB: len(col), tol: opt.pivotTol()}
	if opt.EliminatePairs {
		el, err := analysePairs(nc, ny, rowPtr, col, opt, full)
		if err != nil || el != nil {
			if el != nil {
				g.el, g.nnzG = el, el.stats.NNZA
			}
			return g, err
		}
	}
	// Transpose: column k of B lists its rows (increasing) and positions in col.
	bcp := make([]int, ny+1)
	for _, c := range col {
		bcp[c+1]++
	}
	for k := 0; k < ny; k++ {
		bcp[k+1] += bcp[k]
	}
	bri := make([]int32, len(col))
	bidx := make([]int32, len(col))
	fill := make([]int, ny)
	copy(fill, bcp[:ny])
	for i := 0; i < nc; i++ {
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			c := col[p]
			bri[fill[c]] = int32(i)
			bidx[fill[c]] = int32(p)
			fill[c]++
		}
	}
	adj, err := gramPattern(nc, rowPtr, col, bcp, bri, opt.MaxNNZL)
	if err != nil {
		return nil, err
	}
	sym, err := newSymbolic(adj, &opt, full)
	if err != nil {
		return nil, err
	}
	g.sym = sym
	g.nnzG = adj.ptr[nc]/2 + nc
	if !full {
		return g, nil
	}
	// The scatter map of the products.
	np := 0
	for k := 0; k < ny; k++ {
		m := bcp[k+1] - bcp[k]
		np += m * (m + 1) / 2
	}
	if np > maxIndex {
		return nil, errPattern("%d products in the assembly of G exceed the int32 index range", np)
	}
	pairs := make([]int32, np)
	s := 0
	iperm := g.sym.iperm
	for k := 0; k < ny; k++ {
		rows := bri[bcp[k]:bcp[k+1]]
		for p, rp := range rows {
			a := iperm[rp]
			for _, rq := range rows[p:] {
				b := iperm[rq]
				if a <= b {
					pairs[s] = int32(g.sym.position(a, b))
				} else {
					pairs[s] = int32(g.sym.position(b, a))
				}
				s++
			}
		}
	}
	g.bcp, g.bidx, g.pairs, g.maxPairs = bcp, bidx, pairs, np
	return g, nil
}

// checkPattern validates an nc×ny CSR pattern (AnalyseGram, AnalyseAugmented).
func checkPattern(nc, ny int, rowPtr, col []int) error {
	if nc < 0 || ny < 0 {
		return errPattern("negative dimension %d×%d", nc, ny)
	}
	if nc > maxIndex || ny > maxIndex || len(col) > maxIndex {
		return errPattern("dimension %d×%d with %d entries exceeds the int32 index range", nc, ny, len(col))
	}
	if len(rowPtr) != nc+1 {
		return errPattern("len(rowPtr) = %d, want nc+1 = %d", len(rowPtr), nc+1)
	}
	if rowPtr[0] != 0 || rowPtr[nc] != len(col) {
		return errPattern("rowPtr[0] = %d and rowPtr[nc] = %d, want 0 and len(col) = %d", rowPtr[0], rowPtr[nc], len(col))
	}
	for i := 0; i < nc; i++ {
		if rowPtr[i+1] < rowPtr[i] {
			return errPattern("rowPtr decreases at row %d", i)
		}
		prev := -1
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			c := col[p]
			if c < 0 || c >= ny {
				return errPattern("row %d has column %d outside [0, %d)", i, c, ny)
			}
			if c <= prev {
				return errPattern("row %d: columns not strictly increasing (%d after %d)", i, c, prev)
			}
			prev = c
		}
	}
	return nil
}

// N returns nc, the order of G.
func (g *Gram) N() int { return g.nc }

// NY returns ny, the number of columns of B and the length of w.
func (g *Gram) NY() int { return g.ny }

// Method returns the numeric factorisation chosen (Simplicial or
// Supernodal; Auto resolved).
func (g *Gram) Method() Method {
	if g.el != nil {
		return g.el.inner.Method()
	}
	return g.sym.method
}

// Stats returns the sizes of the analysis.
func (g *Gram) Stats() Stats {
	if g.el != nil {
		return g.el.stats
	}
	return Stats{N: g.nc, NNZA: g.nnzG, NNZL: g.sym.nnz, Flops: g.sym.flops}
}

// PairRows returns the number of pair rows eliminated in closed form
// (Options.EliminatePairs), 0 without.
func (g *Gram) PairRows() int {
	if g.el != nil {
		return g.el.nF
	}
	return 0
}

// NNZB returns the number of entries of B's pattern.
func (g *Gram) NNZB() int { return g.nnzB }

// NNZG returns the number of entries of the lower triangle of G's pattern,
// diagonal included.
func (g *Gram) NNZG() int { return g.nnzG }

// NNZL returns the number of entries of L strictly below its unit diagonal.
func (g *Gram) NNZL() int {
	if g.el != nil {
		return g.el.stats.NNZL
	}
	return g.sym.nnzL()
}

// Flops returns the floating-point multiply–add count of one numeric
// factorisation, Σ_j c_j(c_j+3)/2 over the column counts c_j of L (strict
// lower part), excluding assembly.
func (g *Gram) Flops() float64 {
	if g.el != nil {
		return g.el.stats.Flops
	}
	return g.sym.flops
}

// Perm returns a copy of the permutation: row Perm()[k] of G is eliminated
// at step k.
func (g *Gram) Perm() []int {
	if g.el != nil {
		return append([]int(nil), g.el.perm...)
	}
	return append([]int(nil), g.sym.perm...)
}

// Parent returns a copy of the elimination tree of P·G·Pᵀ: Parent()[k] is
// the parent of step k, or -1 at a root.
func (g *Gram) Parent() []int {
	if g.el != nil {
		return append([]int(nil), g.el.parent...)
	}
	return append([]int(nil), g.sym.parent...)
}

// Factor is one worker's numeric factor P·(B·diag(w)·Bᵀ + εI)·Pᵀ = L·D·Lᵀ
// (Simplicial) or L·Lᵀ (Supernodal) of a Gram pattern and its workspaces: O(nnz(L) + nnz(P·G·Pᵀ) + n) memory, no
// allocation by Factor or Solve. It is not safe for concurrent use; give each
// goroutine its own.
type Factor struct {
	g *Gram
	numeric
	el *elimFactor // the pair rows' part and the Schur complement's factor (Options.EliminatePairs)
}

// NewFactor returns a Factor for g's pattern with the pivot tolerance of
// the Options g was analysed with.
func (g *Gram) NewFactor() *Factor {
	if g.el != nil {
		return g.el.newFactor(g, false)
	}
	return &Factor{g: g, numeric: newNumeric(g.sym, g.tol, false)}
}

// NewFactorSingle returns a Factor like NewFactor's whose factor L, when g
// uses the supernodal method, is computed and stored in single precision
// (float32): the dense products of its blocks run on the float32 kernel
// (twice the lanes of the float64 one; BenchmarkSPMesh measures what that
// gains) and L's values take half the bytes. G is still assembled in float64 (and rounded
// once to float32), and Solve still works on float64 vectors, reading L's
// float32 entries, so a solution carries L's rounding only: a relative
// error of about cond(G)·6e-8 (a Newton step computed with it is an
// inexact one). Factor returns ErrPrecision where a pivot is too small for
// single precision (see SingleTol); the caller then factors in float64.
// For a simplicial analysis (Method() Simplicial) the factor is float64,
// as NewFactor's: Single reports which one was made.
func (g *Gram) NewFactorSingle() *Factor {
	if g.el != nil {
		return g.el.newFactor(g, true)
	}
	return &Factor{g: g, numeric: newNumeric(g.sym, g.tol, g.sym.sn != nil)}
}

// Single reports whether f's factor is stored in single precision.
func (f *Factor) Single() bool {
	if f.el != nil {
		return f.el.inner.single
	}
	return f.single
}

// Factor assembles G = B·diag(winv)·Bᵀ + eps·I from the values of B (bvals,
// in the order of the col slice given to AnalyseGram) in the permuted order
// and factors it. winv has length ny and must be positive and finite; eps ≥ 0.
//
// It returns a *NotPositiveError (errors.Is ErrNotPositive) when a pivot is
// not above PivotTol·MaxDiag(): G is then singular or too ill-conditioned
// for the tolerance (B rank-deficient and eps = 0, typically) and the caller
// may retry with a larger eps, such as 1e-12·MaxDiag(); ErrNonFinite for a
// NaN or infinite value or a winv or eps out of its domain. After an error,
// Solve panics until a Factor succeeds. Factor panics if len(bvals) or
// len(winv) differ from NNZB() and NY().
func (f *Factor) Factor(bvals, winv []float64, eps float64) error {
	g := f.g
	if len(bvals) != g.nnzB {
		panic("sparse: Factor: len(bvals) != NNZB()")
	}
	if len(winv) != g.ny {
		panic("sparse: Factor: len(winv) != NY()")
	}
	f.ok = false
	if f.el != nil {
		return f.el.factor(bvals, winv, eps)
	}
	return f.assemble(bvals, winv, eps, false)
}

// assemble checks the values, assembles G and factors it; zeroW admits
// zero weights (a pairElim's Schur complement, where a pair row pins its
// variable).
func (f *Factor) assemble(bvals, winv []float64, eps float64, zeroW bool) error {
	g := f.g
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return ErrNonFinite
	}
	for _, v := range bvals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ErrNonFinite
		}
	}
	cx := f.cx
	clear(cx)
	pairs := g.pairs
	bidx := g.bidx
	s := 0
	for k := 0; k < g.ny; k++ {
		w := winv[k]
		if !(w > 0 || zeroW && w == 0) || math.IsInf(w, 1) {
			return ErrNonFinite
		}
		t0, t1 := g.bcp[k], g.bcp[k+1]
		for p := t0; p < t1; p++ {
			v := bvals[bidx[p]] * w
			for q := p; q < t1; q++ {
				cx[pairs[s]] += v * bvals[bidx[q]]
				s++
			}
		}
	}
	if eps != 0 {
		cp := f.s.cp
		for b := 0; b < g.nc; b++ {
			cx[cp[b+1]-1] += eps
		}
	}
	return f.factor()
}

// MaxDiag returns max_i G_ii (eps included) of the last Factor call that
// got as far as the factorisation.
func (f *Factor) MaxDiag() float64 {
	if f.el != nil {
		return f.el.maxDiag
	}
	return f.maxDiag
}

// Solve overwrites x, of length N(), with G⁻¹x using the last successful
// Factor. It allocates nothing and may be called any number of times per
// Factor. It panics if len(x) != N() or no Factor has succeeded.
func (f *Factor) Solve(x []float64) {
	if f.el != nil {
		f.el.solve(x)
		return
	}
	f.solve(x)
}

// bytes returns the memory held by the analysis.
func (g *Gram) bytes() int {
	if g.el != nil {
		return g.el.bytes()
	}
	return g.sym.bytes() + 8*len(g.bcp) + 4*len(g.bidx) + 4*len(g.pairs)
}

// gramPattern returns the pattern of G = B·Bᵀ without its diagonal, the
// union of the cliques of the columns of B, from B by rows (rowPtr, col)
// and by columns (bcp, bri). Since L has at least the entries of G's lower
// triangle, it stops with a *TooLargeError (Rows = 0) before allocating
// when those exceed maxL > 0.
func gramPattern(nc int, rowPtr, col, bcp []int, bri []int32, maxL int) (*adjacency, error) {
	mark := make([]int, nc)
	ptr := make([]int, nc+1)
	var idx []int32
	for pass := 0; pass < 2; pass++ {
		for i := range mark {
			mark[i] = -1
		}
		if pass == 1 {
			idx = make([]int32, ptr[nc])
		}
		for i := 0; i < nc; i++ {
			mark[i] = i
			t := ptr[i]
			for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
				c := col[p]
				for _, r := range bri[bcp[c]:bcp[c+1]] {
					if mark[r] != i {
						mark[r] = i
						if pass == 1 {
							idx[t] = r
						}
						t++
					}
				}
			}
			if pass == 0 {
				ptr[i+1] = t
				if t > maxIndex {
					return nil, errPattern("G has more than %d entries", maxIndex)
				}
			}
		}
		if pass == 0 && maxL > 0 && ptr[nc]/2 > maxL {
			return nil, &TooLargeError{NNZL: ptr[nc] / 2, Rows: 0, N: nc, Limit: maxL}
		}
	}
	return &adjacency{n: nc, ptr: ptr, idx: idx}, nil
}
