package enforce

import (
	"fmt"

	"github.com/enforce-nn/enforce/internal/sparse"
)

// Path selects the linear algebra of AdaNP's projection steps.
type Path int

const (
	// PathAuto, the zero value, takes the sparse path when the constraint
	// declares Capabilities.Sparse (or is a Func of at least 16
	// equations whose pattern NewAdaNP detects, see Func), has at most
	// half of B's entries in
	// its pattern, and the dense path's multiply–adds per step are at
	// least the sparse path's
	// (counted after the symbolic analysis: a measured crossover, see
	// docs/sparse-benchmarks.md); the dense path otherwise, and always with
	// BatchDiagonal or TrainableDiagonal weights, which the sparse path
	// does not implement.
	PathAuto Path = iota
	// PathDense forms B (nc×ny) and G (nc×nc) densely and factors G by
	// Cholesky: the fastest path for small systems.
	PathDense
	// PathSparse holds B as its nonzeros in the constraint's pattern and
	// factors G = B·W⁻¹·Bᵀ + εI by a sparse LDLᵀ after one symbolic
	// analysis (fill-reducing ordering, elimination tree, pattern of the
	// factor) shared by every worker; its cost and memory follow the
	// nonzeros of B and of the factor. It needs Capabilities.Sparse or a
	// Func (whose pattern it detects): NewAdaNP returns an error for any
	// other constraint, for a Func whose detection fails, and for
	// BatchDiagonal or TrainableDiagonal weights.
	//
	// On the sparse path every step is computed in float64 except, with
	// Precision Float32, the numeric factorisation of G where the symbolic
	// analysis chose the supernodal method (large factors, where dense
	// products dominate): L is then computed and stored in float32 (half
	// the memory; BenchmarkSparseMeshPrecision measures the time) and the
	// solves read it in float64 arithmetic, so each step is an inexact
	// Newton step with a relative error of about cond(G)·6e-8; a G that
	// single precision cannot resolve (a pivot below sparse.SingleTol of
	// its diagonal entry) is factored in float64 instead, and the
	// backward pass makes the same choice for the same G. G, the
	// residuals, the tolerance test and every Stats field stay float64.
	// A G that is not numerically positive
	// definite is factored again with a larger ε instead of the dense
	// path's eigenvalue clamp (counted in Stats.Clamped all the same: see
	// sparseFactor), gradients with respect to x use
	// SparseJacobian.JacobianXTVec (else JacobianX), and an Unrolled trace
	// stores per sample and step the iterate y (ny + latent numbers), μ
	// (nc), ε, W⁻¹'s diagonal with AutoDiagonal weights (ny + latent) and,
	// unless Settings.Recompute, B's values (nnz): O(nnz + nc + ny), never
	// G's factor, which VJP computes again for each step (its fill can
	// exceed nnz(B) many times, and one more numeric factorisation per step
	// costs less than the forward pass already did).
	PathSparse
	// PathAugmented is PathSparse whose solves with G go through the
	// augmented system K = [W Bᵀ; B −δI] instead of G's own factor
	// (internal/sparse.Augmented): K couples each row only with its
	// columns, where G couples every two rows that share a column, so on
	// systems whose rows share columns many times over (the line limits of
	// a power grid, four rows on the same four voltages) K's factor has a
	// small fraction of G's fill. K is ordered once per AdaNP, at its
	// first projection, from B's values at the first sample's starting
	// point (each row after its column of largest |B_ij| there, which
	// keeps the pivots away from zero); each solve runs conjugate
	// gradients on G preconditioned by K's factor to the accuracy of a
	// backward-stable solve, and a step whose factor cannot get there
	// factors G itself (SparseInfo.AugmentedFallbacks counts them). The
	// steps are those of PathSparse up to rounding, every gradient mode
	// included; everything else is as for PathSparse. K's factor is
	// simplicial (no dense blocks): where G's is supernodal and K's flops
	// are not much smaller, PathSparse is faster (measure with SparseInfo
	// and docs/sparse-benchmarks.md).
	PathAugmented
)

// String returns the path's name.
func (p Path) String() string {
	switch p {
	case PathAuto:
		return "auto path"
	case PathDense:
		return "dense path"
	case PathSparse:
		return "sparse path"
	case PathAugmented:
		return "sparse path (augmented system)"
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// choosePath validates Settings.Path and, where the sparse path is taken,
// analyses the pattern and sets a.sp.
func (a *AdaNP) choosePath(share *sparsePath) error {
	switch a.s.Path {
	case PathAuto, PathDense, PathSparse, PathAugmented:
	default:
		return fmt.Errorf("enforce: unknown %v", a.s.Path)
	}
	sparseOnly := a.s.Path == PathSparse || a.s.Path == PathAugmented
	if w := a.s.Weights; w == BatchDiagonal || w == TrainableDiagonal {
		// The sparse path implements Identity, Diagonal and AutoDiagonal.
		if sparseOnly {
			return fmt.Errorf("enforce: the sparse path does not implement %v weights", w)
		}
		return nil
	}
	sj, detected := a.k.Sparse, a.detectedPattern()
	if detected != nil {
		sj = detected.caps.Sparse
	}
	if sj == nil && sparseOnly {
		if _, ok := a.c.(*funcConstraint); ok {
			return fmt.Errorf("enforce: Settings.Path is %v but the pattern of the Func constraint's Jacobian could not be detected (f is not finite or panics at every probe point): declare it with SparseFunc", pathName(a.s.Path))
		}
		return fmt.Errorf("enforce: Settings.Path is %v but the constraint declares no Capabilities.Sparse", pathName(a.s.Path))
	}
	if sj == nil || a.s.Path == PathDense || a.s.Path == PathAuto && !worthAnalysing(a.nc, a.n, sj.nnz()) {
		return nil
	}
	sp, err := newSparsePath(a, sj, share)
	if err != nil {
		return err
	}
	if a.s.Path == PathAuto && !preferSparse(a.nc, a.n, sp.gram) {
		return nil
	}
	if detected != nil {
		// The Func takes the sparse path as the SparseFunc of its
		// detected pattern: compressed Jacobians and HessVec.
		a.orig, a.c, a.k = a.c, detected, detected.caps
		a.hasHV, a.hasMHV = a.k.HessVec != nil, a.k.MixedHessVec != nil
	}
	a.sp = sp
	sp.single = a.s.Precision == Float32 && sp.gram.Method() == sparse.Supernodal
	sp.augmented = a.s.Path == PathAugmented
	a.lo, a.eval32, a.hv32 = false, nil, nil
	a.hasJX = a.k.JacobianX != nil || sj.JacobianXTVec != nil
	return nil
}

// pathName returns the identifier of a sparse-only Path for messages.
func pathName(p Path) string {
	if p == PathAugmented {
		return "PathAugmented"
	}
	return "PathSparse"
}

// detectedPattern returns the Func constraint a.c with its detected
// pattern (funcConstraint.detectPattern) when the path may be sparse:
// Settings.Path PathSparse, or PathAuto with at least funcDetectMinRows
// equations; nil otherwise, for any other constraint, or when the
// detection fails.
func (a *AdaNP) detectedPattern() *sparseFunc {
	fc, ok := a.c.(*funcConstraint)
	if !ok || a.s.Path == PathDense || a.s.Path == PathAuto && fc.nc < funcDetectMinRows {
		return nil
	}
	return fc.detectPattern()
}

// PathAuto's rule, measured by BenchmarkPathCrossover (docs/sparse-benchmarks.md):
// with more than half of B's entries in the pattern, the dense path is
// taken without a symbolic analysis; otherwise the pattern is analysed,
// and the sparse path is taken where the dense path's multiply–adds per
// step (G = B·W⁻¹·Bᵀ over the lower triangle, its Cholesky factor and a
// dense Jacobian, nc²·ny/2 + nc³/6 + nc·ny) are at least sparseGain times
// the sparse path's (the numeric factorisation, Gram.Flops, plus G's
// entries, two solves and three products with B:
// flops + nnz(G) + 2·nnz(L) + 3·nnz(B)). On a quiet machine, after the
// supernodal kernel moved its large blocks onto the package's float64
// GEMM, the sparse path was as fast or faster than the dense one for every
// benchmarked constraint with at most half of B's entries in its pattern,
// from 4 rows up; with full patterns the dense path won.
const (
	sparseMinRows = 1
	sparseGain    = 1
)

// worthAnalysing reports whether PathAuto analyses the pattern of a
// Jacobian of nc rows, n columns and nnz nonzeros.
func worthAnalysing(nc, n, nnz int) bool {
	return nc >= sparseMinRows && 2*nnz <= nc*n
}

// preferSparse reports whether PathAuto takes the sparse path for the
// analysed pattern g (see sparseGain).
func preferSparse(nc, n int, g *sparse.Gram) bool {
	fc, fn := float64(nc), float64(n)
	dense := fc*fc*fn/2 + fc*fc*fc/6 + fc*fn
	sp := g.Flops() + float64(g.NNZG()+2*g.NNZL()+3*g.NNZB())
	return dense >= sparseGain*sp
}

// SparseInfo describes the sparse path's symbolic analysis of
// G = B·W⁻¹·Bᵀ: what each numeric factorisation costs and stores.
type SparseInfo struct {
	NNZB       int     // nonzeros of B = ∂c/∂y in the declared pattern (latent columns included)
	NNZG       int     // entries of G's lower triangle, diagonal included
	NNZL       int     // entries of the factor L below its diagonal
	Flops      float64 // multiply–adds of one numeric factorisation
	Supernodal bool    // the supernodal Cholesky (dense blocks); else the up-looking LDLᵀ
	Single     bool    // L computed and stored in float32 (Precision Float32 on a supernodal analysis)
	// PairRows counts the rows eliminated in closed form before the
	// sparse factorisation: rows with two entries, one in a column no
	// other row has, as WithInequalities makes of a bound on one output
	// (docs/sparse-benchmarks.md). NNZL and Flops count the whole factor, these
	// rows first.
	PairRows int
	// Augmented reports PathAugmented; AugNNZL and AugFlops are the
	// entries of K's factor below its diagonal and the multiply–adds of
	// one factorisation, zero until the first projection orders K, and
	// AugmentedFallbacks counts the factorisations so far that fell back to
	// G's own factor (ErrAugmented: K's could not give a backward-stable
	// solve), AugmentedInexact the solves so far that stopped above a
	// backward error of 1e-10 (their best iterate was used; where a
	// factorisation raised no pivot it is not probed, and its solves are
	// checked only as they run).
	Augmented          bool
	AugNNZL            int
	AugFlops           float64
	AugmentedFallbacks int64
	AugmentedInexact   int64
}

// SparseInfo returns the sparse path's analysis, and false when a takes
// the dense path.
func (a *AdaNP) SparseInfo() (SparseInfo, bool) {
	if a.sp == nil {
		return SparseInfo{}, false
	}
	g := a.sp.gram
	info := SparseInfo{
		NNZB: g.NNZB(), NNZG: g.NNZG(), NNZL: g.NNZL(), Flops: g.Flops(),
		Supernodal: g.Method() == sparse.Supernodal, Single: a.sp.single,
		PairRows: g.PairRows(), Augmented: a.sp.augmented,
	}
	// Smoothing and EqualitySteps project through stages, AdaNPs of their
	// own: K's sizes are those of the first stage that ordered it (the
	// plain attempt's, as a's own system), the fallbacks those of all.
	for _, b := range a.withStages() {
		if b.sp == nil {
			continue
		}
		info.AugmentedFallbacks += b.sp.augFallbacks.Load()
		if k := b.sp.aug.Load(); k != nil {
			info.AugmentedInexact += k.InexactSolves()
			if info.AugNNZL == 0 {
				st := k.Stats()
				info.AugNNZL, info.AugFlops = st.NNZL, st.Flops
			}
		}
	}
	return info, true
}

// withStages returns a and the AdaNPs of its stages (Settings.Smoothing,
// SmoothingLadder, EqualitySteps), the plain attempt first.
func (a *AdaNP) withStages() []*AdaNP {
	var all []*AdaNP
	if sm := a.sm; sm != nil {
		for _, b := range append(append([]*AdaNP{sm.first}, sm.stages()...), sm.second) {
			if b != nil {
				all = append(all, b.withStages()...)
			}
		}
	}
	if a.eqf != nil && a.eqf.eq != nil {
		all = append(all, a.eqf.eq.withStages()...)
	}
	return append([]*AdaNP{a}, all...)
}

// Path returns the path a's steps take: PathSparse, PathAugmented or
// PathDense (never PathAuto: what Settings.Path = PathAuto chose for this
// constraint).
func (a *AdaNP) Path() Path {
	if a.sp != nil && a.sp.augmented {
		return PathAugmented
	}
	if a.sp != nil {
		return PathSparse
	}
	return PathDense
}

// SparseJacobian returns the sparse Jacobian the projection's sparse path
// evaluates: the constraint's declared Capabilities.Sparse, or, for a
// Func, the pattern NewAdaNP detected (see Func). It returns nil where
// the projection takes the dense path. Code that evaluates ∂c/∂y of a
// large constraint outside the projection (train's fingerprint) uses it
// to stay in O(nnz) memory.
func (a *AdaNP) SparseJacobian() *SparseJacobian {
	if a.sp == nil {
		return nil
	}
	return a.sp.sj
}
