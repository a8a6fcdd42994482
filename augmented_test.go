package enforce

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fbRowsProblem returns a sparse system whose inequalities touch several
// outputs each (general Fischer–Burmeister rows: a private multiplier
// column beside shared columns, as a power grid's line limits), with
// rows inputs and starts ŷ near its set: the
// general rows are set violated by 0.05 or met with a margin of 0.5 at
// the first sample's point on the equalities, so that some are active at
// the solution.
func fbRowsProblem(t *testing.T, seed uint64, rows int) (c Constraint, x, yhat *mat.Dense) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 5))
	const nx, ny = 2, 16
	eq := newSPSystem(rnd, nx, ny, 6, 4, 4)
	gen := newSPSystem(rnd, nx, ny, 5, 3, 3)
	x = randDense(rnd, rows, nx, 0.3)
	a0, err := NewAdaNP(eq, Settings{Path: PathSparse})
	require.NoError(t, err)
	near, st, err := a0.Project(x, randDense(rnd, rows, ny, 0.5))
	require.NoError(t, err)
	require.True(t, st.Converged(), "%v", st)
	v := make([]float64, gen.nc)
	gen.tgt = make([]float64, gen.nc)
	gen.evalSparse(x.RawRowView(0), near.RawRowView(0), v, nil)
	for i := range v {
		if i%2 == 0 {
			gen.tgt[i] = v[i] - 0.05
		} else {
			gen.tgt[i] = v[i] + 0.5
		}
	}
	c, err = WithInequalities(eq, gen, 1e-6)
	require.NoError(t, err)
	yhat = randDense(rnd, rows, ny, 0.05)
	yhat.Add(yhat, near)
	return c, x, yhat
}

// TestAugmentedMatchesSparse projects random sparse systems (equalities
// alone, every weighting and globalisation; and with general and
// bound-like inequalities) on PathSparse and PathAugmented in every
// gradient mode: the same depths, and outputs and gradients that agree to
// 1e-9; PathAugmented reports itself and its factor's size, and no
// factorisation fell back to G's.
func TestAugmentedMatchesSparse(t *testing.T) {
	type problem struct {
		name    string
		c       Constraint
		x, yhat *mat.Dense
		s       Settings
	}
	var probs []problem
	for _, v := range spSettings {
		rnd := rand.New(rand.NewPCG(13, uint64(len(v.name))))
		const nx, ny, nc, rows = 3, 16, 9, 4
		s := Settings{Tol: 1e-9}
		v.set(&s, ny)
		probs = append(probs, problem{v.name, newSPSystem(rnd, nx, ny, nc, 4, 6), randDense(rnd, rows, nx, 0.5), randDense(rnd, rows, ny, 0.5), s})
	}
	c, x, yhat := fbRowsProblem(t, 3, 4)
	probs = append(probs, problem{"inequalities", c, x, yhat, Settings{Tol: 1e-9, MaxDepth: 200}},
		problem{"inequalities+damping", c, x, yhat, Settings{Tol: 1e-9, MaxDepth: 200, Damping: DefaultDamping}})
	c, _, x, yhat = pairsProblem(t, 5, 4)
	probs = append(probs, problem{"bounds", c, x, yhat, Settings{Tol: 1e-9, MaxDepth: 200, LineSearch: true}})
	for _, mode := range []GradMode{Unrolled, Projector, Implicit, FinalProjector} {
		for _, p := range probs {
			t.Run(fmt.Sprintf("%v/%s", mode, p.name), func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(17, uint64(mode)))
				rows, ny := p.yhat.Dims()
				g := randDense(rnd, rows, ny, 1)
				var ys [2]*mat.Dense
				var sts [2]Stats
				var gys, gxs [2][]float64
				for i, path := range []Path{PathSparse, PathAugmented} {
					s := p.s
					s.Grad, s.Path = mode, path
					a, err := NewAdaNP(p.c, s)
					require.NoError(t, err)
					require.Equal(t, path, a.Path())
					ys[i], sts[i], err = a.Project(p.x, p.yhat)
					t.Logf("%v: %v", path, sts[i])
					require.NoError(t, err)
					gys[i], gxs[i], _ = gtVJP(t, a, p.x, p.yhat, g)
					info, ok := a.SparseInfo()
					require.True(t, ok)
					assert.Equal(t, path == PathAugmented, info.Augmented)
					if path == PathAugmented {
						assert.Positive(t, info.AugNNZL)
						assert.Zero(t, info.AugmentedFallbacks)
						assert.Zero(t, info.AugmentedInexact)
					}
				}
				assert.True(t, sts[1].Converged(), "%+v", sts[1])
				assert.Equal(t, sts[0].Depth, sts[1].Depth)
				assert.Equal(t, sts[0].MeanDepth, sts[1].MeanDepth)
				assert.Equal(t, sts[0].NotConverged, sts[1].NotConverged)
				ctAssertClose(t, ys[0].RawMatrix().Data, ys[1].RawMatrix().Data, 1e-9, "ỹ")
				ctAssertClose(t, gys[0], gys[1], 1e-9, "∂ℓ/∂ŷ")
				ctAssertClose(t, gxs[0], gxs[1], 1e-9, "∂ℓ/∂x")
			})
		}
	}
}

// TestAugmentedGOMAXPROCS: K is ordered from the batch's first sample, not
// from whichever worker factors first, so the results do not depend on the
// number of threads.
func TestAugmentedGOMAXPROCS(t *testing.T) {
	c, x, yhat := fbRowsProblem(t, 11, 12)
	var outs [2]*mat.Dense
	for i, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		a, err := NewAdaNP(c, Settings{Path: PathAugmented})
		require.NoError(t, err)
		outs[i], _, err = a.Project(x, yhat)
		runtime.GOMAXPROCS(old)
		require.NoError(t, err)
	}
	assert.Equal(t, outs[0].RawMatrix().Data, outs[1].RawMatrix().Data)
}

// TestAugmentedRankDeficient: where G is singular at ε = 0 (two equal
// rows), K's solves cannot reach a backward-stable solution, the step
// falls back to G's factor and its clamp as on PathSparse: the same
// clamped counts, and the fallbacks are counted.
func TestAugmentedRankDeficient(t *testing.T) {
	rnd := rand.New(rand.NewPCG(61, 1))
	sys := newSPSystem(rnd, 1, 6, 3, 3, 2)
	lo1, hi1 := sys.rowPtr[1], sys.rowPtr[2]
	sys.col = append(sys.col[:sys.rowPtr[2]], sys.col[lo1:hi1]...)
	sys.a = append(sys.a[:sys.rowPtr[2]], sys.a[lo1:hi1]...)
	sys.e = append(sys.e[:sys.rowPtr[2]], sys.e[lo1:hi1]...)
	sys.rowPtr[3] = len(sys.col)
	sys.beta[2], sys.gamma[2], sys.rho[2], sys.tgt[2] = sys.beta[1], sys.gamma[1], sys.rho[1], sys.tgt[1]
	sys.k.Sparse.Col = sys.col
	x := randDense(rnd, 2, 1, 0.5)
	yhat := randDense(rnd, 2, 6, 0.5)
	var sts [2]Stats
	for i, path := range []Path{PathSparse, PathAugmented} {
		a, err := NewAdaNP(sys, Settings{Path: path, Tol: 1e-8})
		require.NoError(t, err)
		_, st, err := a.Project(x, yhat)
		require.NoError(t, err)
		assert.True(t, st.Converged(), "%v: %+v", path, st)
		sts[i] = st
		if path == PathAugmented {
			info, _ := a.SparseInfo()
			assert.Positive(t, info.AugmentedFallbacks)
		}
	}
	assert.Equal(t, sts[0].Clamped, sts[1].Clamped)
	assert.Equal(t, sts[0].Depth, sts[1].Depth)
}

// TestAugmentedPathErrors: PathAugmented needs what PathSparse needs, and
// its errors name it.
func TestAugmentedPathErrors(t *testing.T) {
	_, err := NewAdaNP(struct{ Constraint }{gtTwo(t)}, Settings{Path: PathAugmented})
	assert.ErrorContains(t, err, "PathAugmented")
	assert.ErrorContains(t, err, "Capabilities.Sparse")
	sys := newSPSystem(rand.New(rand.NewPCG(1, 1)), 1, 6, 3, 3, 2)
	_, err = NewAdaNP(sys, Settings{Path: PathAugmented, Weights: BatchDiagonal})
	assert.ErrorContains(t, err, "does not implement")
	assert.Equal(t, "sparse path (augmented system)", PathAugmented.String())
	a, err := NewAdaNP(sys, Settings{Path: PathAugmented})
	require.NoError(t, err)
	info, _ := a.SparseInfo()
	assert.True(t, info.Augmented)
	assert.Zero(t, info.AugNNZL, "K is ordered at the first projection")
}

// TestSmoothingStagesShareAnalysis: the stages of Settings.Smoothing (the
// plain attempt, a ladder rung, the smoothed stage and the last stage)
// reuse the AdaNP's analysis of G, one Gram instead of one per stage, on
// both sparse paths, and the projection converges as before.
func TestSmoothingStagesShareAnalysis(t *testing.T) {
	c, x, yhat := fbRowsProblem(t, 3, 4)
	for _, p := range []Path{PathSparse, PathAugmented} {
		a, err := NewAdaNP(c, Settings{Path: p, Damping: DefaultDamping, Smoothing: 1e-2, SmoothingLadder: []float64{1e-4}, MaxDepth: 200})
		require.NoError(t, err)
		stages := a.withStages()
		require.Len(t, stages, 5, "%v", p)
		for i, b := range stages {
			require.NotNil(t, b.sp, "%v: stage %d", p, i)
			assert.Same(t, a.sp.gram, b.sp.gram, "%v: stage %d", p, i)
		}
		_, st, err := a.Project(x, yhat)
		require.NoError(t, err)
		assert.True(t, st.Converged(), "%v: %v", p, st)
	}
}
