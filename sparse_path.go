package enforce

import (
	"errors"
	"fmt"
)

// Path selects the linear algebra of AdaNP's projection steps.
type Path int

const (
	// PathAuto, the zero value, takes the sparse path when the constraint
	// declares Capabilities.Sparse and preferSparse's measured rule says
	// it is faster (see docs/sparse.md), and the dense path otherwise
	// (always with BatchDiagonal or TrainableDiagonal weights, which the
	// sparse path does not implement).
	PathAuto Path = iota
	// PathDense forms B (nc×ny) and G (nc×nc) densely and factors G by
	// Cholesky: the fastest path for small systems.
	PathDense
	// PathSparse holds B as its nonzeros in the constraint's pattern and
	// factors G = B·W⁻¹·Bᵀ + εI by a sparse LDLᵀ after one symbolic
	// analysis (fill-reducing ordering, elimination tree, pattern of the
	// factor) shared by every worker; its cost and memory follow the
	// nonzeros of B and of the factor. It needs Capabilities.Sparse:
	// NewAdaNP returns an error for a constraint without it, and for
	// BatchDiagonal or TrainableDiagonal weights.
	//
	// On the sparse path every step is computed in float64 (Precision
	// Float32 is not used there), a G that is not numerically positive
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
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// choosePath validates Settings.Path and, where the sparse path is taken,
// analyses the pattern and sets a.sp.
func (a *AdaNP) choosePath() error {
	sj := a.k.Sparse
	switch a.s.Path {
	case PathAuto, PathDense:
	case PathSparse:
		if sj == nil {
			return errors.New("enforce: Settings.Path is PathSparse but the constraint declares no Capabilities.Sparse")
		}
	default:
		return fmt.Errorf("enforce: unknown %v", a.s.Path)
	}
	if w := a.s.Weights; w == BatchDiagonal || w == TrainableDiagonal {
		// The sparse path implements Identity, Diagonal and AutoDiagonal.
		if a.s.Path == PathSparse {
			return fmt.Errorf("enforce: the sparse path does not implement %v weights", w)
		}
		return nil
	}
	if sj == nil || a.s.Path == PathDense || a.s.Path == PathAuto && !preferSparse(a.nc, a.n, sj.nnz()) {
		return nil
	}
	sp, err := newSparsePath(a, sj)
	if err != nil {
		return err
	}
	a.sp = sp
	a.lo, a.eval32, a.hv32 = false, nil, nil
	a.hasJX = a.k.JacobianX != nil || sj.JacobianXTVec != nil
	return nil
}

// Measured crossover of PathAuto (see docs/sparse.md): the sparse path is
// taken from sparseMinRows constraints up, where B has at most
// sparseMaxDensity of its nc·ny entries nonzero.
const (
	sparseMinRows    = 200
	sparseMaxDensity = 0.05
)

// preferSparse reports whether PathAuto takes the sparse path for nc
// constraints on n outputs whose Jacobian has nnz nonzeros.
func preferSparse(nc, n, nnz int) bool {
	return nc >= sparseMinRows && float64(nnz) <= sparseMaxDensity*float64(nc)*float64(n)
}
