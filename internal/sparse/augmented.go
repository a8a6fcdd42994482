package sparse

import (
	"errors"
	"math"
	"sync/atomic"
)

// Augmented is the symbolic analysis of the augmented (saddle-point) form
// of a Gram system, for B (nc×ny) with a fixed pattern:
//
//	K = [ diag(1/w)   Bᵀ ]      order ny + nc,
//	    [ B         −δ·I ]
//
// whose Schur complement on the rows of B is −(B·diag(w)·Bᵀ + δI) = −G(δ):
// solving K·[u; v] = [0; r] gives v = −G(δ)⁻¹·r. Where B has rows that
// touch a few columns each but many rows share columns (the
// Fischer–Burmeister rows of line limits on a power grid, each on the four
// voltages of its branch), K factors with far less fill than G: G couples
// every two rows that share a column, K only rows and their columns.
//
// K is symmetric quasi-definite for δ > 0 (Vanderbei 1995): it has an
// LDLᵀ factorisation in any symmetric order, with positive pivots on the
// columns and negative ones on the rows, but eliminating a row before any
// of its columns gives it the pivot −δ and the factor an element growth of
// about 1/δ. The ordering therefore puts each row after its partner
// column, its entry of largest |B_ij| at a representative point: its pivot
// is then at least about B_ij²·w_j. Two such orders are analysed and the
// one with fewer multiply–adds kept: AMD on the quotient graph in which
// each row is merged into its partner (pairOrder), and AMD on K's pattern
// with each row that comes too early moved after its partner
// (constrainRows). The first wins on the PGLib grids' full constraint
// sets (7.1e5, 1.8e6 and 1.7e7 multiply–adds per factorisation on
// case1354_pegase, case2869_pegase and case10000_goc, against 7.7e5, 2.0e6
// and 2.8e7 for the second and G's 1.7e7, 6.3e7 and 3.3e8), the second
// on random patterns and a 5-point mesh, where many rows share a partner.
// The factor is up-looking LDLᵀ (Simplicial, see AugMethod) with the
// signs of the pivots checked, and a row pivot that is still tiny is
// raised (static pivoting). What the order cannot rule out,
// a row whose partner's entry has become tiny since (the multiplier of a
// limit that became active), or a row that depends on earlier ones (its
// pivot is −δ), is left to the solve: AugFactor.Solve uses the factor as
// the preconditioner of conjugate gradients on G itself, to the accuracy
// of a backward-stable solve, and where static pivoting raised a pivot
// AugFactor.Factor runs a probe solve and refuses the factor
// (ErrAugmented) where it does not get there or finds G singular, for the
// caller to factor G directly.
//
// An Augmented is read-only after AnalyseAugmented and may be shared by any
// number of goroutines, each with its own AugFactor.
type Augmented struct {
	sym         *symbolic
	nc, ny      int
	rowPtr, col []int   // B's pattern (copies)
	posW        []int32 // position in ci of column k's diagonal
	posB        []int32 // position in ci of B's entry p
	posR        []int32 // position in ci of row i's diagonal
	inexact     atomic.Int64
}

// InexactSolves returns the number of solves, by every factor of a so
// far, that stopped above a backward error of 1e-10 (their best iterate
// was used).
func (a *Augmented) InexactSolves() int64 { return a.inexact.Load() }

// AugMethod is the numeric method of AnalyseAugmented when Options.Method
// is Auto: Simplicial. The supernodal one works (its supernodes do not mix
// the signs of the pivots, and each block is factored as −L·Lᵀ where they
// are negative), but K's order alternates columns and their rows, so its
// supernodes are narrow: on the PGLib grids' systems it was 1.5–2.5×
// slower than the simplicial factor (2026-12-07, problems/acopf scratch
// measurement, docs/sparse.md).
var AugMethod = Simplicial

// ErrAugmented is returned by AugFactor.Factor when the augmented factor
// cannot stand in for G's: a pivot of the wrong sign (rounding on a nearly
// singular G) or a probe solve whose conjugate gradients do not reach a
// backward-stable solution. The caller factors G directly instead.
var ErrAugmented = errors.New("sparse: the augmented factor cannot stand in for G's")

// AnalyseAugmented analyses the augmented system of B's pattern (given as
// for AnalyseGram) and orders each row after its partner column: where
// vals (B's values at a representative point, in col's order) is not nil,
// its column of largest |B_ij|; with vals nil, the first of its columns
// that the fewest rows share (its private column, one no other row has,
// where it has one). Of the two orders described at Augmented, it keeps
// the one with fewer multiply–adds.
// Options.Ordering must be AMD (the zero value); Options.Method is
// AugMethod when Auto; PivotTol and EliminatePairs are ignored (the pivots
// are checked by sign). An invalid pattern gives an error matching
// ErrPattern, a factor over Options.MaxNNZL a *TooLargeError.
func AnalyseAugmented(nc, ny int, rowPtr, col []int, vals []float64, opt Options) (*Augmented, error) {
	if err := checkPattern(nc, ny, rowPtr, col); err != nil {
		return nil, err
	}
	if vals != nil && len(vals) != len(col) {
		return nil, errPattern("len(vals) = %d, want nnz(B) = %d", len(vals), len(col))
	}
	if opt.Ordering != AMD {
		return nil, errPattern("AnalyseAugmented orders by AMD only")
	}
	n := ny + nc
	if n > maxIndex || 2*len(col) > maxIndex {
		return nil, errPattern("augmented order %d with %d entries exceeds the int32 index range", n, 2*len(col))
	}
	adj := augmentedAdjacency(nc, ny, rowPtr, col)
	dense := opt.Dense
	if dense == 0 {
		dense = DefaultDense
	}
	method := opt.Method
	if method == 0 {
		method = AugMethod
	}
	// Two orders, each row after its partner; the one with fewer
	// multiply–adds is kept (neither is better on every family).
	partner := partners(ny, nc, rowPtr, col, vals)
	var sym *symbolic
	var firstErr error
	for _, perm := range [][]int{pairOrder(ny, nc, rowPtr, col, partner, dense), constrainRows(amdOrder(adj, dense), ny, nc, partner)} {
		neg := make([]bool, n)
		for k, i := range perm {
			neg[k] = i >= ny
		}
		sopt := Options{Ordering: Given, Perm: perm, Method: method, MaxNNZL: opt.MaxNNZL, neg: neg}
		s, err := newSymbolic(adj, &sopt, true)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if sym == nil || s.flops < sym.flops {
			sym = s
		}
	}
	if sym == nil {
		return nil, firstErr
	}
	a := &Augmented{
		sym: sym, nc: nc, ny: ny,
		rowPtr: append([]int(nil), rowPtr...), col: append([]int(nil), col...),
		posW: make([]int32, ny), posB: make([]int32, len(col)), posR: make([]int32, nc),
	}
	for k := 0; k < ny; k++ {
		b := sym.iperm[k]
		a.posW[k] = int32(sym.position(b, b))
	}
	for i := 0; i < nc; i++ {
		r := sym.iperm[ny+i]
		a.posR[i] = int32(sym.position(r, r))
		for p := rowPtr[i]; p < rowPtr[i+1]; p++ {
			c := sym.iperm[col[p]]
			lo, hi := min(r, c), max(r, c)
			a.posB[p] = int32(sym.position(lo, hi))
		}
	}
	return a, nil
}

// augmentedAdjacency returns K's pattern without its diagonal, both
// triangles: column k's neighbours are the rows ny+i that hold it, row
// i's its columns.
func augmentedAdjacency(nc, ny int, rowPtr, col []int) *adjacency {
	return edgeAdjacency(ny+nc, func(yield func(a, b int)) {
		for i := 0; i < nc; i++ {
			for _, c := range col[rowPtr[i]:rowPtr[i+1]] {
				yield(c, ny+i)
			}
		}
	})
}

// pairOrder returns the elimination order of K: AMD on the quotient graph
// of K's pattern in which each row of B is merged into its partner column
// (partner[i], −1 for a row without columns), so that the order eliminates
// each column followed at once by the rows it partners and AMD's fill
// estimates see them as they will be eliminated. Rows without columns
// come last.
func pairOrder(ny, nc int, rowPtr, col []int, partner []int, dense float64) []int {
	// The quotient graph on the ny columns: row i joins its partner p to
	// each of its other columns (a pair that two rows join, once).
	order := amdOrder(edgeAdjacency(ny, func(yield func(a, b int)) {
		for i, p := range partner {
			for _, c := range col[rowPtr[i]:rowPtr[i+1]] {
				if c != p {
					yield(p, c)
				}
			}
		}
	}), dense)
	// Each column, then the rows it partners (in increasing order), then
	// the rows without columns.
	head := make([]int32, ny) // column → first row it partners, plus one
	next := make([]int32, nc) // row → next row with the same partner, plus one
	perm := make([]int, 0, ny+nc)
	var empty []int
	for i := nc - 1; i >= 0; i-- {
		if p := partner[i]; p >= 0 {
			next[i] = head[p]
			head[p] = int32(i + 1)
		}
	}
	for i, p := range partner {
		if p < 0 {
			empty = append(empty, ny+i)
		}
	}
	for _, k := range order {
		perm = append(perm, k)
		for r := head[k]; r != 0; r = next[r-1] {
			perm = append(perm, ny+int(r-1))
		}
	}
	return append(perm, empty...)
}

// constrainRows returns order with each row of B (node ny+i) that comes
// before its partner column moved to just after it; the relative order of
// everything else is kept. A row without columns stays where it is.
func constrainRows(order []int, ny, nc int, partner []int) []int {
	pos := make([]int, ny+nc)
	for t, k := range order {
		pos[k] = t
	}
	head := make([]int32, ny) // column → first row waiting on it, plus one
	next := make([]int32, nc) // row → next row waiting on the same column, plus one
	out := make([]int, 0, ny+nc)
	for _, k := range order {
		if k < ny {
			out = append(out, k)
			for r := head[k]; r != 0; r = next[r-1] {
				out = append(out, ny+int(r-1))
			}
			continue
		}
		i := k - ny
		p := partner[i]
		if p < 0 || pos[p] < pos[k] {
			out = append(out, k)
			continue
		}
		next[i] = head[p]
		head[p] = int32(i + 1)
	}
	return out
}

// partners returns each row's partner column: its column of largest
// |vals|, or with vals nil the first of its columns that the fewest rows
// share (a private column, such as the multiplier of a
// Fischer–Burmeister row, where it has one); −1 for a row without
// columns.
func partners(ny, nc int, rowPtr, col []int, vals []float64) []int {
	var cnt []int32
	if vals == nil {
		cnt = make([]int32, ny)
		for _, c := range col {
			cnt[c]++
		}
	}
	partner := make([]int, nc)
	for i := range partner {
		lo, hi := rowPtr[i], rowPtr[i+1]
		partner[i] = -1
		if lo == hi {
			continue
		}
		partner[i] = col[lo]
		if vals == nil {
			for _, c := range col[lo:hi] {
				if cnt[c] < cnt[partner[i]] {
					partner[i] = c
				}
			}
			continue
		}
		best := math.Abs(vals[lo])
		for p := lo + 1; p < hi; p++ {
			if v := math.Abs(vals[p]); v > best {
				best, partner[i] = v, col[p]
			}
		}
	}
	return partner
}

// Stats returns the sizes of K's analysis (N = ny + nc).
func (a *Augmented) Stats() Stats {
	return Stats{N: a.sym.n, NNZA: len(a.sym.ci), NNZL: a.sym.nnzL(), Flops: a.sym.flops}
}

// Augmented-solve constants. AugDelta is δ/min_i G_ii (over the nonzero
// G_ii) where the caller's ε is smaller: K's regularisation, which makes it quasi-definite; the
// preconditioner is then G(δ)⁻¹, and conjugate gradients remove the
// difference from G(ε). augStop and augAccept bound the normwise backward
// error ‖G·μ − x‖∞ / (‖|G|‖∞·‖μ‖∞ + ‖x‖∞) at which the iteration stops and
// below which a solution counts as exact; augMaxIter bounds the
// iterations of one solve.
const (
	AugDelta   = 1e-10
	augPerturb = 1.5e-8
	augStop    = 1e-15
	augAccept  = 1e-10
	augMaxIter = 12
	// augSingular: a probe solve with ‖x‖₂ < augSingular·max_i G_ii·‖μ‖₂
	// shows cond(G) > 1/augSingular, where G's own factor decides (its
	// clamp raises ε).
	augSingular = 1e-14
)

// AugFactor is one worker's factor of an Augmented pattern, standing in for
// a Factor of G = B·diag(w)·Bᵀ + εI: Factor factors K for B's values,
// Solve overwrites x with G⁻¹x. It allocates nothing after NewFactor and is
// not safe for concurrent use.
type AugFactor struct {
	a *Augmented
	numeric
	bvals, winv    []float64 // the last Factor's B and w (copies: Solve applies G)
	eps, gInf      float64   // ε, and ‖|G|‖∞ (|B|·W·|B|ᵀ row sums, plus ε)
	gmax           float64   // max_i G_ii, ε included
	k              []float64 // n: a right-hand side of K
	t              []float64 // ny
	mu, r, z, p, q []float64 // nc: the conjugate-gradient vectors
	m              []float64 // nc: the current iterate
	rhs            []float64 // nc
	inexact        int
}

// NewFactor returns a worker's factor for a.
func (a *Augmented) NewFactor() *AugFactor {
	nc, n := a.nc, a.sym.n
	f := &AugFactor{
		a: a, numeric: newNumeric(a.sym, 0, false),
		bvals: make([]float64, len(a.col)), winv: make([]float64, a.ny),
		k: make([]float64, n), t: make([]float64, a.ny),
		mu: make([]float64, nc), r: make([]float64, nc), z: make([]float64, nc),
		p: make([]float64, nc), q: make([]float64, nc), rhs: make([]float64, nc), m: make([]float64, nc),
	}
	f.numeric.perturb = make([]float64, n)
	return f
}

// Factor factors K for B's values bvals, the weights winv (G's w) and
// G's ε, as Factor.Factor does G. K's δ is max(ε, AugDelta·min_i G_ii)
// (over the nonzero G_ii); a row pivot above −augPerturb·min_i G_ii is
// replaced by that value (static pivoting), which
// the solves' conjugate gradients correct. It returns ErrNonFinite as
// Factor.Factor does, and ErrAugmented where a pivot has the wrong sign,
// or, where static pivoting raised a pivot (a row that depends on earlier
// ones among them), where a probe solve (x_i = 1 + sin(i)/2) does not reach the accuracy
// of a backward-stable one or finds cond(G) above 1e14
// (‖x‖₂ < 1e-14·max_i G_ii·‖μ‖₂): the caller then factors G itself, which
// decides as it always does. (G's own factor refuses a pivot below
// DefaultPivotTol·max_i G_ii, which happens at better-conditioned G too:
// PathAugmented raises ε on fewer steps than PathSparse.)
func (f *AugFactor) Factor(bvals, winv []float64, eps float64) error {
	a := f.a
	if len(bvals) != len(a.col) {
		panic("sparse: AugFactor.Factor: len(bvals) != nnz(B)")
	}
	if len(winv) != a.ny {
		panic("sparse: AugFactor.Factor: len(winv) != NY()")
	}
	f.ok = false
	if !(eps >= 0) || math.IsInf(eps, 1) {
		return ErrNonFinite
	}
	// ‖|G|‖∞ and max G_ii, with B's values checked on the way: t holds
	// |B|ᵀ·1 (its sums in the order of B's entries).
	t := f.t
	clear(t)
	col := a.col[:len(bvals)]
	for p, v := range bvals {
		if v-v != 0 { // NaN or ±Inf
			return ErrNonFinite
		}
		t[col[p]] += math.Abs(v)
	}
	for _, w := range winv {
		if !(w > 0) || math.IsInf(w, 1) {
			return ErrNonFinite
		}
	}
	copy(f.bvals, bvals)
	copy(f.winv, winv)
	f.eps = eps
	gInf, gmax := 0.0, 0.0
	gmin := math.Inf(1)
	rowPtr := a.rowPtr
	for i := 0; i < a.nc; i++ {
		var s, d float64
		p0, p1 := rowPtr[i], rowPtr[i+1]
		for p, b := range bvals[p0:p1] {
			c := col[p0+p]
			w := winv[c]
			s += math.Abs(b) * w * t[c]
			d += b * b * w
		}
		// As math.Max and math.Min: a NaN in s is kept (t may overflow,
		// and 0·Inf is NaN); d ≥ 0 is never NaN.
		if v := s + eps; v > gInf || v != v {
			gInf = v
		}
		if v := d + eps; v > gmax {
			gmax = v
		}
		if d > 0 && d < gmin {
			gmin = d
		}
	}
	f.gInf, f.gmax = gInf, gmax
	if math.IsInf(f.gInf, 0) || math.IsNaN(f.gInf) {
		return ErrNonFinite
	}
	if math.IsInf(gmin, 1) {
		gmin = 1
	}
	delta := math.Max(eps, AugDelta*gmin)
	for i := range a.nc {
		f.numeric.perturb[a.sym.iperm[a.ny+i]] = augPerturb * gmin
	}
	f.numeric.perturbed = 0
	cx := f.cx
	clear(cx)
	for k, w := range winv {
		cx[a.posW[k]] = 1 / w
	}
	for p, b := range bvals {
		cx[a.posB[p]] = b
	}
	for i := range a.nc {
		cx[a.posR[i]] = -delta
	}
	if err := f.numeric.factor(); err != nil {
		if errors.Is(err, ErrNotPositive) {
			return ErrAugmented
		}
		return err
	}
	if f.numeric.perturbed == 0 {
		// Every row pivot is at least its partner's share: no row
		// depends on earlier ones (a dependent row's pivot is −δ, which
		// static pivoting raises) and the factor is as accurate as its
		// order makes it. The solves check themselves (Inexact).
		f.inexact = 0
		return nil
	}
	// Probe: a solve of G·μ = r for an r with every component (not in
	// the range of a singular G) must converge.
	for i := range f.rhs {
		f.rhs[i] = 1 + 0.5*math.Sin(float64(i))
	}
	if !f.pcg(f.rhs, f.mu) || math.Sqrt(dot(f.rhs, f.rhs)) < augSingular*f.gmax*math.Sqrt(dot(f.mu, f.mu)) {
		// Not solved, or solved by a μ so large that cond(G) > 1e14
		// (‖x‖/‖μ‖ bounds G's smallest eigenvalue from above): G's
		// factor decides, and raises ε where its pivots fail, as on
		// PathSparse.
		f.ok = false
		return ErrAugmented
	}
	f.inexact = 0
	return nil
}

// MaxDiag returns max_i G_ii (ε included) of the last Factor call.
func (f *AugFactor) MaxDiag() float64 { return f.gmax }

// Inexact returns the number of solves since the last Factor whose
// solution did not reach the accuracy of a backward-stable solve (the best
// iterate was returned).
func (f *AugFactor) Inexact() int { return f.inexact }

// Solve overwrites x, of length N(), with G⁻¹x for the G of the last
// successful Factor: conjugate gradients on G preconditioned by K's
// factor, to a normwise backward error of 1e-15 or for at most 12
// iterations; a solution whose backward error is then above 1e-12 is
// counted by Inexact. It panics if len(x) != N() or no Factor has
// succeeded.
func (f *AugFactor) Solve(x []float64) {
	if len(x) != f.a.nc {
		panic("sparse: AugFactor.Solve: len(x) != N()")
	}
	if !f.ok {
		panic("sparse: AugFactor.Solve without a successful Factor")
	}
	copy(f.rhs, x)
	if !f.pcg(f.rhs, x) {
		f.inexact++
		f.a.inexact.Add(1)
	}
}

// precond writes z = G(δ)⁻¹·r through K: K·[u; v] = [0; r] gives
// v = −G(δ)⁻¹·r.
func (f *AugFactor) precond(z, r []float64) {
	ny := f.a.ny
	k := f.k
	clear(k[:ny])
	copy(k[ny:], r)
	f.numeric.solve(k)
	for i, v := range k[ny:] {
		z[i] = -v
	}
}

// mulG writes q = G·v = B·diag(w)·Bᵀ·v + ε·v.
func (f *AugFactor) mulG(q, v []float64) {
	a := f.a
	t := f.t
	clear(t)
	for i := 0; i < a.nc; i++ {
		vi := v[i]
		for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
			t[a.col[p]] += f.bvals[p] * vi
		}
	}
	for k, w := range f.winv {
		t[k] *= w
	}
	for i := 0; i < a.nc; i++ {
		s := f.eps * v[i]
		for p := a.rowPtr[i]; p < a.rowPtr[i+1]; p++ {
			s += f.bvals[p] * t[a.col[p]]
		}
		q[i] = s
	}
}

// backward returns ‖r‖∞ / (‖|G|‖∞·‖μ‖∞ + ‖x‖∞).
func (f *AugFactor) backward(r, mu, x []float64) float64 {
	var rn, mn, xn float64
	mu, x = mu[:len(r)], x[:len(r)]
	for i, v := range r {
		// As math.Max: a NaN is kept.
		if a := math.Abs(v); a > rn || a != a {
			rn = a
		}
		if a := math.Abs(mu[i]); a > mn || a != a {
			mn = a
		}
		if a := math.Abs(x[i]); a > xn || a != a {
			xn = a
		}
	}
	den := f.gInf*mn + xn
	if den == 0 {
		return 0
	}
	return rn / den
}

// pcg solves G·μ = x into mu (x is not modified and may be f.rhs, not
// mu) and reports whether the backward error of the result is at most
// augAccept. It returns the best iterate met: it stops at a backward
// error of augStop, after augMaxIter iterations, or after three that do
// not halve the best backward error.
func (f *AugFactor) pcg(x, mu []float64) bool {
	r, z, p, q, m := f.r, f.z, f.p, f.q, f.m
	clear(m)
	copy(r, x)
	f.precond(z, r)
	copy(p, z)
	rz := dot(r, z)
	best := math.Inf(1)
	copy(mu, m)
	stall := 0
	for it := 0; it < augMaxIter; it++ {
		f.mulG(q, p)
		pq := dot(p, q)
		if !(pq > 0) || !(rz > 0) {
			break
		}
		alpha := rz / pq
		for i := range m {
			m[i] += alpha * p[i]
		}
		// The true residual, every iteration after the first (where
		// m = α·p, so G·m is α·q): the recursion's drifts below rounding
		// level after the first iterations.
		if it == 0 {
			for i := range r {
				r[i] = x[i] - alpha*q[i]
			}
		} else {
			f.mulG(q, m)
			for i := range r {
				r[i] = x[i] - q[i]
			}
		}
		be := f.backward(r, m, x)
		if be < best {
			if be > 0.5*best {
				stall++
			} else {
				stall = 0
			}
			best = be
			copy(mu, m)
		} else {
			stall++
		}
		if be <= augStop || stall >= 3 {
			break
		}
		f.precond(z, r)
		rz1 := dot(r, z)
		beta := rz1 / rz
		rz = rz1
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	return best <= augAccept
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// BackwardError returns the normwise backward error
// ‖G·μ − x‖∞ / (‖|G|‖∞·‖μ‖∞ + ‖x‖∞) of mu as a solution of G·μ = x for
// the G of the last Factor call (it allocates).
func (f *AugFactor) BackwardError(x, mu []float64) float64 {
	q := make([]float64, len(x))
	f.mulG(q, mu)
	for i := range q {
		q[i] = x[i] - q[i]
	}
	return f.backward(q, mu, x)
}
