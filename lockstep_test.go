package enforce

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// perSample hides a constraint's batched capabilities, so that AdaNP takes the
// per-sample path.
type perSample struct{ c Constraint }

func (p perSample) Dims() (int, int, int)             { return p.c.Dims() }
func (p perSample) Eval(x, y, c, jy []float64)        { p.c.Eval(x, y, c, jy) }
func (p perSample) JacobianX(x, y, jx []float64)      { CapabilitiesOf(p.c).JacobianX(x, y, jx) }
func (p perSample) HessVec(x, y, w, v, out []float64) { CapabilitiesOf(p.c).HessVec(x, y, w, v, out) }
func (p perSample) MixedHessVec(x, y, w, v, out []float64) {
	CapabilitiesOf(p.c).MixedHessVec(x, y, w, v, out)
}
func (p perSample) Capabilities() Capabilities {
	return Capabilities{JacobianX: p.JacobianX, HessVec: p.HessVec, MixedHessVec: p.MixedHessVec}
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
	require.NotNil(t, CapabilitiesOf(q).EvalBatch)
	const rows = 70
	x := randDense(rnd, rows, 12, 0.3)
	yhat := randDense(rnd, rows, 30, 0.2)
	grad := randDense(rnd, rows, 30, 1)
	for _, s := range []Settings{
		{Tol: 1e-10}, {MinDepth: 3, MaxDepth: 3}, {Tol: 1e-9, Measure: MeanAbs, Grad: Implicit},
		{Weights: AutoDiagonal, Grad: Projector}, {Grad: FinalProjector},
		{Weights: AutoDiagonal, LineSearch: true, MaxStep: 0.3, Tol: 1e-10},
		{Recompute: true, LineSearch: true, Tol: 1e-10},
	} {
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

func (e explodingQuadratic) Capabilities() Capabilities {
	return Capabilities{EvalBatch: e.EvalBatch}
}

func (e explodingQuadratic) EvalBatch(rows int, x, y, c, jy []float64) {
	CapabilitiesOf(e.Constraint).EvalBatch(rows, x, y, c, jy)
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

// TestTraceMemoryAtPaperScale checks the per-step trace memory at the
// paper's largest size, batch 833 with N_O = 200 and N_C = 150, against
// the paper's float32 figure M_train/n = 4·BS·(N_O+1)·(N_C+N_O) = 0.23 GB:
// a constant Jacobian (Linear) is never copied, and Recompute keeps only
// the iterates and multipliers of a nonlinear (Quadratic) system. The
// traces are recorded on a few rows and scaled to 833.
func TestTraceMemoryAtPaperScale(t *testing.T) {
	const ny, nc, batch, rows = 200, 150, 833, 4
	paper := 4.0 * batch * (ny + 1) * (nc + ny)
	rnd := rand.New(rand.NewPCG(49, 50))
	lin, err := Linear(nc, randDense(rnd, nc, ny, 1), nil)
	require.NoError(t, err)
	quad := randomQuadratic(t, rnd, ny, nc, 0.1)
	perStep := func(c Constraint, s Settings) float64 {
		p, err := NewAdaNP(c, s)
		require.NoError(t, err)
		bytes := func(depth int) float64 {
			s := s
			s.MinDepth, s.MaxDepth = depth, depth
			p, err := NewAdaNP(c, s)
			require.NoError(t, err)
			var tr Trace
			_, err = p.ProjectTrace(mat.NewDense(rows, ny, nil), randDense(rnd, rows, nc, 0.1), randDense(rnd, rows, ny, 0.1), &tr)
			require.NoError(t, err)
			return float64(tr.Bytes())
		}
		_ = p
		return (bytes(3) - bytes(1)) / 2 / rows * batch
	}
	linear := perStep(lin, Settings{})
	full := perStep(quad, Settings{})
	recompute := perStep(quad, Settings{Recompute: true})
	t.Logf("per step at (833, 200, 150): Linear %.3g B, Quadratic %.3g B, Quadratic+Recompute %.3g B, paper %.3g B", linear, full, recompute, paper)
	assert.Less(t, linear, 0.02*paper)
	assert.Less(t, recompute, 0.02*paper)
	assert.Greater(t, full, paper) // B and G's factor stored: more than the paper's formula
}

// TestRecomputeGivesTheSameGradient: recomputing B and G in the backward
// pass changes memory, not numbers.
func TestRecomputeGivesTheSameGradient(t *testing.T) {
	rnd := rand.New(rand.NewPCG(51, 52))
	q := randomQuadratic(t, rnd, 12, 5, 0.5)
	x := randDense(rnd, 40, 5, 0.3)
	yhat := randDense(rnd, 40, 12, 0.5)
	grad := randDense(rnd, 40, 12, 1)
	for _, w := range []Weighting{Identity, AutoDiagonal} {
		var gys, gxs []*mat.Dense
		for _, rec := range []bool{false, true} {
			p, err := NewAdaNP(q, Settings{Weights: w, Recompute: rec, Tol: 1e-10})
			require.NoError(t, err)
			var tr Trace
			_, err = p.ProjectTrace(mat.NewDense(40, 12, nil), x, yhat, &tr)
			require.NoError(t, err)
			gy, gx := mat.NewDense(40, 12, nil), mat.NewDense(40, 5, nil)
			require.NoError(t, p.VJP(&tr, grad, gy, gx))
			gys, gxs = append(gys, gy), append(gxs, gx)
		}
		assert.True(t, mat.EqualApprox(gys[0], gys[1], 1e-12), "%v", w)
		assert.True(t, mat.EqualApprox(gxs[0], gxs[1], 1e-12), "%v", w)
	}
}

// jacobianNaN wraps a Quadratic so that ∂c/∂y (but not c) is NaN where
// some |y_j| > 3: a new iterate with finite c and a non-finite Jacobian.
type jacobianNaN struct{ Constraint }

func (e jacobianNaN) poison(y, jy []float64) {
	for _, v := range y {
		if v > 3 || v < -3 {
			jy[0] = nan()
		}
	}
}

func (e jacobianNaN) Eval(x, y, c, jy []float64) {
	e.Constraint.Eval(x, y, c, jy)
	if jy != nil {
		e.poison(y, jy)
	}
}

type jacobianNaNBatch struct{ jacobianNaN }

func (e jacobianNaNBatch) Capabilities() Capabilities {
	return Capabilities{EvalBatch: e.EvalBatch}
}

func (e jacobianNaNBatch) EvalBatch(rows int, x, y, c, jy []float64) {
	CapabilitiesOf(e.Constraint).EvalBatch(rows, x, y, c, jy)
	_, ny, nc := e.Dims()
	for s := 0; s < rows; s++ {
		e.poison(y[s*ny:(s+1)*ny], jy[s*nc*ny:(s+1)*nc*ny])
	}
}

// TestSchedulersAgreeOnNonFiniteJacobian: the review found that the
// per-sample and lockstep paths disagreed on such an iterate (one undid
// the step, the other kept it). With one driver they take the same
// decisions, and the step is undone.
func TestSchedulersAgreeOnNonFiniteJacobian(t *testing.T) {
	rnd := rand.New(rand.NewPCG(53, 54))
	q := randomQuadratic(t, rnd, 6, 2, 30)
	x := randDense(rnd, 40, 2, 3)
	yhat := randDense(rnd, 40, 6, 1)
	yhat.Apply(func(_, _ int, v float64) float64 { return max(-2.5, min(2.5, v)) }, yhat)
	for _, s := range []Settings{{Tol: 1e-12}, {Tol: 1e-12, LineSearch: true}} {
		pl, err := NewAdaNP(jacobianNaNBatch{jacobianNaN{q}}, s)
		require.NoError(t, err)
		pp, err := NewAdaNP(jacobianNaN{perSample{q}}, s)
		require.NoError(t, err)
		yl, sl, err := pl.Project(x, yhat)
		require.NoError(t, err)
		yp, sp, err := pp.Project(x, yhat)
		require.NoError(t, err)
		// Quadratic's batched and per-sample evaluations round differently
		// (one matrix product against per-sample products): the decisions
		// agree, the values to rounding.
		assert.True(t, mat.EqualApprox(yl, yp, 1e-10))
		assert.Equal(t, sp.Depth, sl.Depth)
		assert.Equal(t, sp.MeanDepth, sl.MeanDepth)
		assert.Equal(t, sp.Stopped, sl.Stopped)
		assert.Equal(t, sp.Stalled, sl.Stalled)
		assert.Equal(t, sp.NotConverged, sl.NotConverged)
		if !s.LineSearch {
			require.Positive(t, sl.Stopped, "the test needs such an iterate")
		}
		for i := 0; i < 40; i++ {
			for _, v := range yl.RawRowView(i) {
				assert.LessOrEqual(t, math.Abs(v), 3.0)
			}
		}
	}
}

// batchSpy records the EvalBatch calls of a constraint; with panics set
// its EvalBatch panics.
type batchSpy struct {
	Constraint
	calls, withJ int
	panics       bool
}

func (b *batchSpy) Capabilities() Capabilities {
	return Capabilities{EvalBatch: b.EvalBatch}
}

func (b *batchSpy) EvalBatch(rows int, x, y, c, jy []float64) {
	b.calls++
	if jy != nil {
		b.withJ++
	}
	if b.panics {
		panic("batchSpy")
	}
	CapabilitiesOf(b.Constraint).EvalBatch(rows, x, y, c, jy)
}

// TestCheckBatchMatchesPerSample checks that Check evaluates a constraint
// with EvalBatch by one call without Jacobians, and reports what the
// per-sample path reports: the same samples above the tolerance and the
// same residuals to rounding, for contiguous matrices and for views; that
// a panicking EvalBatch falls back to Eval; and that a non-finite ŷ is the
// same error.
func TestCheckBatchMatchesPerSample(t *testing.T) {
	rnd := rand.New(rand.NewPCG(47, 48))
	const ny, nc, rows = 30, 12, 70
	q := randomQuadratic(t, rnd, ny, nc, 1)
	x := randDense(rnd, rows, nc, 0.3)
	y := randDense(rnd, rows, ny, 0.2)
	// A tolerance halfway between two middle per-sample maxima, so that
	// rounding cannot move a sample across it.
	maxima := make([]float64, rows)
	c := make([]float64, nc)
	for s := range rows {
		q.Eval(x.RawRowView(s), y.RawRowView(s), c, nil)
		for _, v := range c {
			maxima[s] = math.Max(maxima[s], math.Abs(v))
		}
	}
	sorted := append([]float64(nil), maxima...)
	sort.Float64s(sorted)
	tol := (sorted[rows/2-1] + sorted[rows/2]) / 2
	require.Less(t, sorted[rows/2-1], sorted[rows/2])

	ref, err := NewAdaNP(perSample{q}, Settings{Tol: tol})
	require.NoError(t, err)
	want, err := ref.Check(x, y)
	require.NoError(t, err)
	require.Equal(t, rows/2, want.NotConverged)

	spy := &batchSpy{Constraint: q}
	a, err := NewAdaNP(spy, Settings{Tol: tol})
	require.NoError(t, err)
	same := func(name string, got Stats) {
		t.Helper()
		assert.Equal(t, want.NotConverged, got.NotConverged, name)
		assert.Equal(t, want.Missed, got.Missed, name)
		assert.Zero(t, got.Depth, name)
		assert.InDelta(t, want.Before.Max, got.Before.Max, 1e-13, name)
		assert.InDelta(t, want.Before.Mean, got.Before.Mean, 1e-13, name)
		assert.Equal(t, got.Before, got.After, name)
	}
	got, err := a.Check(x, y)
	require.NoError(t, err)
	same("contiguous", got)
	assert.Equal(t, 1, spy.calls, "one EvalBatch call for the batch")
	assert.Zero(t, spy.withJ, "Check needs no Jacobians")

	// Views with strides wider than their columns.
	wx, wy := mat.NewDense(rows, nc+3, nil), mat.NewDense(rows, ny+5, nil)
	xv, yv := wx.Slice(0, rows, 2, 2+nc).(*mat.Dense), wy.Slice(0, rows, 1, 1+ny).(*mat.Dense)
	xv.Copy(x)
	yv.Copy(y)
	got, err = a.Check(xv, yv)
	require.NoError(t, err)
	same("views", got)
	assert.Equal(t, 2, spy.calls)

	// A panicking EvalBatch: the per-sample path, the same result.
	spy.panics = true
	got, err = a.Check(x, y)
	require.NoError(t, err)
	same("EvalBatch panics", got)
	spy.panics = false

	// A non-finite ŷ: the per-sample path's error.
	bad := mat.DenseCopyOf(y)
	bad.Set(5, 3, math.NaN())
	_, errRef := ref.Check(x, bad)
	_, errGot := a.Check(x, bad)
	require.Error(t, errGot)
	assert.Equal(t, errRef.Error(), errGot.Error())
}
