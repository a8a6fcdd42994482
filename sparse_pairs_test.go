package enforce

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newSPBounds returns inequalities g_i(x, y) ≤ 0 of one output each,
// y_ks[i]: an spSystem whose rows have one entry (a nonlinear function of
// that output and x), as bounds are. Through WithInequalities each is a
// pair row of the sparse kernel (the output's column and its multiplier's).
func newSPBounds(rnd *rand.Rand, nx, ny int, ks []int) *spSystem {
	s := &spSystem{nx: nx, ny: ny, nc: len(ks), rowPtr: []int{0}}
	for _, k := range ks {
		s.col = append(s.col, k)
		sign := 1.0
		if rnd.IntN(2) == 0 {
			sign = -1
		}
		s.a = append(s.a, sign*(1+rnd.Float64()))
		s.e = append(s.e, rnd.NormFloat64())
		s.rowPtr = append(s.rowPtr, len(s.col))
		s.beta = append(s.beta, 0.1*rnd.NormFloat64())
		s.gamma = append(s.gamma, 0.1*rnd.NormFloat64())
		s.rho = append(s.rho, 0.3*rnd.NormFloat64())
		s.tgt = append(s.tgt, 0.5+0.5*rnd.Float64())
	}
	s.k = Capabilities{
		JacobianX: s.jacobianX, HessVec: s.hessVec, MixedHessVec: s.mixedHessVec,
		Sparse: &SparseJacobian{RowPtr: s.rowPtr, Col: s.col, Eval: s.evalSparse, JacobianXTVec: s.jacobianXTVec},
	}
	return s
}

// pairsProblem returns a sparse system on nx = 2, ny = 14 with bound-like
// inequalities (outputs 0, 5 and 13 with two or three), and rows inputs
// and starts ŷ near its constraint set (a random start projected, then
// perturbed, so that a few Gauss–Newton steps converge).
func pairsProblem(t *testing.T, seed uint64, rows int) (c Constraint, nBounds int, x, yhat *mat.Dense) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 3))
	const nx, ny = 2, 14
	eq := newSPSystem(rnd, nx, ny, 5, 4, 4)
	g := newSPBounds(rnd, nx, ny, []int{0, 0, 3, 5, 5, 5, 8, 9, 13, 13})
	c, err := WithInequalities(eq, g, 0)
	require.NoError(t, err)
	x = randDense(rnd, rows, nx, 0.3)
	a0, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	near, _, err := a0.Project(x, randDense(rnd, rows, ny, 0.5))
	require.NoError(t, err)
	yhat = randDense(rnd, rows, ny, 0.1)
	yhat.Add(yhat, near)
	return c, g.nc, x, yhat
}

// TestSparsePairRows projects a sparse system with bound-like
// inequalities (one output each, some outputs with two or three) on the
// sparse path with the kernel's elimination of pair rows and without it,
// and on the dense path: the same depths, and outputs and gradients that
// agree to 1e-10, for Unrolled (AutoDiagonal weights), Implicit and
// Projector gradients with line search.
func TestSparsePairRows(t *testing.T) {
	c, nBounds, x, yhat := pairsProblem(t, 91, 4)
	rows, ny := yhat.Dims()
	modes := []Settings{
		{Grad: Unrolled, Weights: AutoDiagonal},
		{Grad: Implicit},
		{Grad: Projector, LineSearch: true},
	}
	for _, s0 := range modes {
		t.Run(fmt.Sprintf("%v/%v", s0.Grad, s0.Weights), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(92, 1))
			w := randDense(rnd, rows, ny, 1)
			var ys, gys, gxs [3][]float64
			var sts [3]Stats
			for p, run := range []struct {
				path  Path
				pairs bool
			}{{PathDense, false}, {PathSparse, false}, {PathSparse, true}} {
				old := sparsePairs
				sparsePairs = run.pairs
				s := s0
				s.Path, s.Tol = run.path, 1e-9
				a, err := NewAdaNP(c, s)
				sparsePairs = old
				require.NoError(t, err)
				switch {
				case run.path == PathSparse && run.pairs:
					// g's rows, and any equality row with a private output.
					assert.GreaterOrEqual(t, a.sp.gram.PairRows(), nBounds, "pair rows eliminated")
					info, ok := a.SparseInfo()
					require.True(t, ok)
					assert.Equal(t, a.sp.gram.PairRows(), info.PairRows)
				case run.path == PathSparse:
					assert.Zero(t, a.sp.gram.PairRows())
				}
				y, st, err := a.Project(x, yhat)
				require.NoError(t, err)
				ys[p], sts[p] = y.RawMatrix().Data, st
				gys[p], gxs[p], _ = gtVJP(t, a, x, yhat, w)
			}
			assert.Zero(t, sts[2].NotConverged)
			for p := 1; p < 3; p++ {
				assert.Equal(t, sts[0].Depth, sts[p].Depth)
				assert.Equal(t, sts[0].MeanDepth, sts[p].MeanDepth)
				ctAssertClose(t, ys[0], ys[p], 1e-10, "ỹ")
				ctAssertClose(t, gys[0], gys[p], 1e-10, "∂ℓ/∂ŷ")
				ctAssertClose(t, gxs[0], gxs[p], 1e-10, "∂ℓ/∂x")
			}
		})
	}
}

// TestSparsePairRowsFloat32: with Precision Float32 on a supernodal
// analysis the Schur complement is factored in single precision; the
// projection with and without the elimination converges alike, to points
// within the accuracy of float32 steps.
func TestSparsePairRowsFloat32(t *testing.T) {
	withSupernodal(t, func() {
		c, _, x, yhat := pairsProblem(t, 93, 4)
		var ys [2][]float64
		for p, pairs := range []bool{false, true} {
			old := sparsePairs
			sparsePairs = pairs
			a, err := NewAdaNP(c, Settings{Path: PathSparse, Precision: Float32, Tol: 1e-8})
			sparsePairs = old
			require.NoError(t, err)
			require.True(t, a.sp.single, "single-precision factors")
			assert.Equal(t, pairs, a.sp.gram.PairRows() > 0)
			y, st, err := a.Project(x, yhat)
			require.NoError(t, err)
			assert.Zero(t, st.NotConverged)
			ys[p] = y.RawMatrix().Data
		}
		ctAssertClose(t, ys[0], ys[1], 1e-6, "ỹ")
	})
}
