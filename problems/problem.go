package problems

import (
	"fmt"

	"github.com/enforce-nn/enforce"
)

// Problem is a benchmark problem: inputs x ∈ ℝ^nx, predictions y ∈ ℝ^ny,
// equality constraints c(x, y) = 0 and inequality constraints g(x, y) ≤ 0.
type Problem interface {
	// Name returns a short identifier such as "distillation".
	Name() string
	// Dims returns the sizes of x and y.
	Dims() (nx, ny int)
	// Equalities returns c(x, y) = 0, or nil when there are none.
	Equalities() enforce.Constraint
	// Inequalities returns g(x, y) ≤ 0 as a Constraint whose Eval writes
	// g, or nil when there are none.
	Inequalities() enforce.Constraint
	// Constraint returns the system AdaNP projects onto: the equalities,
	// or enforce.WithInequalities(eq, g, FBEpsilon) when there are
	// inequalities.
	Constraint() (enforce.Constraint, error)
}

// FBEpsilon is the smoothing ε_FB of the Fischer–Burmeister function
// √(λ² + g² + ε_FB) − λ + g used by every Problem's Constraint: 1e-8, as in
// the paper and the reference implementation.
const FBEpsilon = enforce.DefaultFBEps

// Every benchmark implements Problem.
var (
	_ Problem = FittingEquality{}
	_ Problem = Cusp{}
	_ Problem = FittingInequality{}
	_ Problem = (*NonconvexLinear)(nil)
	_ Problem = (*NonconvexQuadratic)(nil)
	_ Problem = Distillation{}
	_ Problem = Pooling{}
)

// combine returns eq, or eq extended with g by Fischer–Burmeister.
func combine(eq, g enforce.Constraint) (enforce.Constraint, error) {
	if g == nil {
		return eq, nil
	}
	return enforce.WithInequalities(eq, g, FBEpsilon)
}

// checkEval panics when the slices passed to Eval have the wrong lengths.
func checkEval(name string, x, y, c, jy []float64, nx, ny, nc int) {
	if len(x) != nx || len(y) != ny || len(c) != nc || (jy != nil && len(jy) != nc*ny) {
		panic(fmt.Sprintf("problems: %s.Eval: got len(x)=%d len(y)=%d len(c)=%d len(jy)=%d, want %d, %d, %d, %d",
			name, len(x), len(y), len(c), len(jy), nx, ny, nc, nc*ny))
	}
}

// checkJacobianX panics when the slices passed to JacobianX have the
// wrong lengths.
func checkJacobianX(name string, x, y, jx []float64, nx, ny, nc int) {
	if len(x) != nx || len(y) != ny || len(jx) != nc*nx {
		panic(fmt.Sprintf("problems: %s.JacobianX: got len(x)=%d len(y)=%d len(jx)=%d, want %d, %d, %d",
			name, len(x), len(y), len(jx), nx, ny, nc*nx))
	}
}

// checkHess panics when the slices passed to HessVec (nout = ny) or
// MixedHessVec (nout = nx) have the wrong lengths.
func checkHess(name string, x, y, w, v, out []float64, nx, ny, nc, nout int) {
	if len(x) != nx || len(y) != ny || len(w) != nc || len(v) != ny || len(out) != nout {
		panic(fmt.Sprintf("problems: %s: got len(x)=%d len(y)=%d len(w)=%d len(v)=%d len(out)=%d, want %d, %d, %d, %d, %d",
			name, len(x), len(y), len(w), len(v), len(out), nx, ny, nc, ny, nout))
	}
}
