package enforce

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// perSample hides a constraint's batch interfaces, so that AdaNP takes the
// per-sample path.
type perSample struct{ c Constraint }

func (p perSample) Dims() (int, int, int)             { return p.c.Dims() }
func (p perSample) Eval(x, y, c, jy []float64)        { p.c.Eval(x, y, c, jy) }
func (p perSample) JacobianX(x, y, jx []float64)      { p.c.(JacobianXer).JacobianX(x, y, jx) }
func (p perSample) HessVec(x, y, w, v, out []float64) { p.c.(HessVecer).HessVec(x, y, w, v, out) }
func (p perSample) MixedHessVec(x, y, w, v, out []float64) {
	p.c.(MixedHessVecer).MixedHessVec(x, y, w, v, out)
}

// randomQuadratic is a Quadratic with c_i = yᵀA_i y + C_i·y + d_i − x_i³.
func randomQuadratic(t *testing.T, rnd *rand.Rand, ny, nc int, scale float64) Constraint {
	A := make([]*mat.SymDense, nc)
	for i := range A {
		A[i] = mat.NewSymDense(ny, nil)
		for r := 0; r < ny; r++ {
			for c := r; c < ny; c++ {
				A[i].SetSym(r, c, scale*rnd.NormFloat64()/float64(ny))
			}
		}
	}
	C := randDense(rnd, nc, ny, 1)
	d := make([]float64, nc)
	for i := range d {
		d[i] = 0.1 * rnd.NormFloat64()
	}
	q, err := Quadratic(nc, A, C, d, func(x, r, jx []float64) {
		for i, v := range x {
			r[i] = v * v * v
		}
		if jx != nil {
			clear(jx)
			for i, v := range x {
				jx[i*len(x)+i] = 3 * v * v
			}
		}
	})
	require.NoError(t, err)
	return q
}

func TestLockstepMatchesPerSample(t *testing.T) {
	rnd := rand.New(rand.NewPCG(41, 42))
	q := randomQuadratic(t, rnd, 30, 12, 1)
	_, isBatch := q.(BatchEvaluator)
	require.True(t, isBatch)
	const rows = 70
	x := randDense(rnd, rows, 12, 0.3)
	yhat := randDense(rnd, rows, 30, 0.2)
	grad := randDense(rnd, rows, 30, 1)
	for _, s := range []Settings{{Tol: 1e-10}, {MinDepth: 3, MaxDepth: 3}, {Tol: 1e-9, Measure: MeanAbs, Grad: Implicit}, {Weights: AutoDiagonal, Grad: Projector}} {
		lock, err := NewAdaNP(q, s)
		require.NoError(t, err)
		ref, err := NewAdaNP(perSample{q}, s)
		require.NoError(t, err)
		var tl, tp Trace
		yl, yp := mat.NewDense(rows, 30, nil), mat.NewDense(rows, 30, nil)
		sl, err := lock.ProjectTrace(yl, x, yhat, &tl)
		require.NoError(t, err)
		sp, err := ref.ProjectTrace(yp, x, yhat, &tp)
		require.NoError(t, err)
		assert.True(t, mat.EqualApprox(yl, yp, 1e-12), "%+v", s)
		assert.Equal(t, sp.Depth, sl.Depth)
		assert.Equal(t, sp.MeanDepth, sl.MeanDepth)
		assert.Equal(t, sp.NotConverged, sl.NotConverged)
		assert.InDelta(t, sp.After.Max, sl.After.Max, 1e-14)
		gl, gp := mat.NewDense(rows, 30, nil), mat.NewDense(rows, 30, nil)
		xl, xp := mat.NewDense(rows, 12, nil), mat.NewDense(rows, 12, nil)
		require.NoError(t, lock.VJP(&tl, grad, gl, xl))
		require.NoError(t, ref.VJP(&tp, grad, gp, xp))
		assert.True(t, mat.EqualApprox(gl, gp, 1e-10), "%+v", s)
		assert.True(t, mat.EqualApprox(xl, xp, 1e-10), "%+v", s)
	}
}

func TestLockstepGradientMatchesFiniteDifferences(t *testing.T) {
	rnd := rand.New(rand.NewPCG(43, 44))
	q := randomQuadratic(t, rnd, 8, 3, 1)
	p, err := NewAdaNP(q, Settings{MinDepth: 4, MaxDepth: 4})
	require.NoError(t, err)
	require.True(t, p.ExactGradient())
	const rows = 3
	x := randDense(rnd, rows, 3, 0.3)
	yhat := randDense(rnd, rows, 8, 0.2)
	a := randDense(rnd, rows, 8, 1)
	npCheckVJP(t, p, x, yhat, a)
}

// explodingQuadratic becomes non-finite beyond |y| > 5, to exercise the
// lockstep path's undo of a step it cannot evaluate.
type explodingQuadratic struct{ Constraint }

func (e explodingQuadratic) EvalBatch(rows int, x, y, c, jy []float64) {
	e.Constraint.(BatchEvaluator).EvalBatch(rows, x, y, c, jy)
	_, ny, nc := e.Dims()
	for s := 0; s < rows; s++ {
		for _, v := range y[s*ny : (s+1)*ny] {
			if v > 5 || v < -5 {
				c[s*nc] = nan()
			}
		}
	}
}

func TestLockstepUndoesNonFiniteSteps(t *testing.T) {
	rnd := rand.New(rand.NewPCG(45, 46))
	q := randomQuadratic(t, rnd, 6, 2, 30)
	p, err := NewAdaNP(explodingQuadratic{q}, Settings{Tol: 1e-12})
	require.NoError(t, err)
	x := randDense(rnd, 40, 2, 3)
	yhat := randDense(rnd, 40, 6, 1)
	yhat.Apply(func(_, _ int, v float64) float64 { return max(-4, min(4, v)) }, yhat)
	y, st, err := p.Project(x, yhat)
	require.NoError(t, err)
	require.Positive(t, st.Stopped, "the test needs a step that leaves |y| ≤ 5")
	assert.True(t, allFinite(y.RawMatrix().Data))
	for s := 0; s < 40; s++ {
		for _, v := range y.RawRowView(s) {
			assert.LessOrEqual(t, v*v, 25.0)
		}
	}
}

func TestImplicitTraceMemoryIsFlatInDepth(t *testing.T) {
	rnd := rand.New(rand.NewPCG(47, 48))
	q := randomQuadratic(t, rnd, 20, 8, 1)
	x := randDense(rnd, 30, 8, 0.3)
	yhat := randDense(rnd, 30, 20, 0.2)
	bytes := func(mode GradMode, depth int) int {
		p, err := NewAdaNP(q, Settings{MinDepth: depth, MaxDepth: depth, Grad: mode})
		require.NoError(t, err)
		var tr Trace
		_, err = p.ProjectTrace(mat.NewDense(30, 20, nil), x, yhat, &tr)
		require.NoError(t, err)
		return tr.Bytes()
	}
	assert.Equal(t, bytes(Implicit, 1), bytes(Implicit, 8))
	assert.Greater(t, bytes(Unrolled, 8), 4*bytes(Unrolled, 1))
}
