package enforce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// Tests of the BatchDiagonal and TrainableDiagonal weightings (the
// reference's options 3 and 7).

// wtSystem is a nonlinear test system with random inputs and predictions.
type wtSystem struct {
	name   string
	c      Constraint
	nx, ny int
	yScale float64
}

func wtSystems(t *testing.T) []wtSystem {
	rnd := rand.New(rand.NewPCG(5, 6))
	const qy, qc = 5, 2
	A := make([]*mat.SymDense, qc)
	for i := range A {
		A[i] = ctRandSym(rnd, qy)
	}
	q, err := Quadratic(qc, A, ctRandDense(rnd, qc, qy), ctRandVec(rnd, qc, -1, 1), ctCubeRHS)
	require.NoError(t, err)
	return []wtSystem{
		{"circle", gtCircle(t), 1, 2, 1},
		{"two", gtTwo(t), 2, 4, 0.5},
		{"two/far", gtTwo(t), 2, 4, 3},
		{"circle+ineq", gtCircleIneq(t), 2, 2, 1},
		{"quadratic", q, qc, qy, 1}, // EvalBatch and HessVecBatch
	}
}

// wtInputs returns x (last column a radius away from 0), ŷ and the loss
// weights a of ℓ = Σ a ⊙ ỹ.
func wtInputs(rnd *rand.Rand, sys wtSystem, rows int) (x, yhat, a *mat.Dense) {
	x = randDense(rnd, rows, sys.nx, 0.5)
	for i := 0; i < rows; i++ {
		x.Set(i, sys.nx-1, 1+math.Abs(x.At(i, sys.nx-1)))
	}
	return x, randDense(rnd, rows, sys.ny, sys.yScale), randDense(rnd, rows, sys.ny, 1)
}

// TestBatchDiagonalUnrolledIsExact checks Unrolled gradients with
// batch-averaged weights against finite differences of the whole batch's
// loss (which see the coupling between samples), for ŷ and x, with fixed
// and adaptive depths, bounded steps and recomputation.
func TestBatchDiagonalUnrolledIsExact(t *testing.T) {
	settings := []struct {
		name string
		s    Settings
	}{
		{"fixed", Settings{MinDepth: 3, MaxDepth: 3}},
		{"adaptive", Settings{Tol: 1e-4}},
		{"maxstep", Settings{MinDepth: 3, MaxDepth: 3, MaxStep: 0.3}},
		{"maxstep+recompute", Settings{MinDepth: 2, MaxDepth: 4, Tol: 1e-3, MaxStep: 0.5, Recompute: true}},
	}
	for _, sys := range wtSystems(t) {
		for _, set := range settings {
			t.Run(sys.name+"/"+set.name, func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(7, uint64(len(sys.name))))
				s := set.s
				s.Weights = BatchDiagonal
				p, err := NewAdaNP(sys.c, s)
				require.NoError(t, err)
				assert.True(t, p.ExactGradient())
				x, yhat, a := wtInputs(rnd, sys, 4)
				gy, gx, gs := gtVJP(t, p, x, yhat, a)
				wy, wx := gtFD(t, p, x, yhat, a)
				assert.Less(t, relErr(gy, wy), 2e-5, "ŷ-gradient\n got %v\nwant %v", gy, wy)
				assert.Less(t, relErr(gx, wx), 2e-5, "x-gradient\n got %v\nwant %v", gx, wx)
				assert.True(t, gs.Exact(), "%+v", gs)
			})
		}
	}
}

// TestBatchDiagonalCouplesSamples checks that with batch-averaged weights
// a sample's projection depends on the rest of its batch, and its
// gradient reaches the other samples: the loss of sample 0 alone has a
// non-zero gradient with respect to sample 1's ŷ.
func TestBatchDiagonalCouplesSamples(t *testing.T) {
	p, err := NewAdaNP(gtTwo(t), Settings{Weights: BatchDiagonal, MinDepth: 2, MaxDepth: 2})
	require.NoError(t, err)
	x := mat.NewDense(2, 2, []float64{0.3, -0.7, -0.2, 1.1})
	yhat := mat.NewDense(2, 4, []float64{2.2, -1.5, 0.4, 1.2, -0.4, 2.5, 1.5, -3})
	both, _, err := p.Project(x, yhat)
	require.NoError(t, err)
	alone, _, err := p.Project(mat.DenseCopyOf(x.Slice(0, 1, 0, 2)), mat.DenseCopyOf(yhat.Slice(0, 1, 0, 4)))
	require.NoError(t, err)
	assert.Greater(t, floatsDist(both.RawRowView(0), alone.RawRowView(0)), 1e-3, "sample 0 does not depend on sample 1")

	a := mat.NewDense(2, 4, []float64{1, -0.5, 0.25, 2, 0, 0, 0, 0})
	gy, _, gs := gtVJP(t, p, x, yhat, a)
	assert.True(t, gs.Exact())
	assert.Greater(t, norm2(gy[4:]), 1e-3, "no gradient reaches sample 1")
	wy, _ := gtFD(t, p, x, yhat, a)
	assert.Less(t, relErr(gy, wy), 2e-5, "got %v want %v", gy, wy)
}

func floatsDist(a, b []float64) float64 {
	var d float64
	for i, v := range a {
		d = math.Max(d, math.Abs(v-b[i]))
	}
	return d
}

// TestBatchDiagonalFirstStep checks one step against the reference's
// formula written out: m_j = mean over samples and constraints of |B_ij|,
// W⁻¹ = diag(max(m_j, 1)/max_l max(m_l, 1)), ỹ = ŷ − W⁻¹Bᵀ(BW⁻¹Bᵀ)⁻¹c,
// for the circle y1² + y2² = x², where B = 2y.
func TestBatchDiagonalFirstStep(t *testing.T) {
	p, err := NewAdaNP(gtCircle(t), Settings{Weights: BatchDiagonal, MinDepth: 1, MaxDepth: 1})
	require.NoError(t, err)
	x := mat.NewDense(3, 1, []float64{1, 2, 1.5})
	yhat := mat.NewDense(3, 2, []float64{0.2, 1.5, -0.3, 2.5, 1, 0.1})
	got, _, err := p.Project(x, yhat)
	require.NoError(t, err)
	var m [2]float64
	for s := 0; s < 3; s++ {
		for j := 0; j < 2; j++ {
			m[j] += math.Abs(2*yhat.At(s, j)) / 3
		}
	}
	d := [2]float64{math.Max(m[0], 1), math.Max(m[1], 1)}
	top := math.Max(d[0], d[1])
	d[0], d[1] = d[0]/top, d[1]/top
	for s := 0; s < 3; s++ {
		y := yhat.RawRowView(s)
		c := y[0]*y[0] + y[1]*y[1] - x.At(s, 0)*x.At(s, 0)
		g := 4 * (y[0]*y[0]*d[0] + y[1]*y[1]*d[1])
		for j := 0; j < 2; j++ {
			assert.InDelta(t, y[j]-d[j]*2*y[j]*c/g, got.At(s, j), 1e-12, "sample %d output %d", s, j)
		}
	}
}

// TestBatchDiagonalSingleSampleIsAutoDiagonal checks that a batch of one
// sample gets AutoDiagonal's weights, and that a constant Jacobian gets
// AutoDiagonal's for any batch.
func TestBatchDiagonalSingleSampleIsAutoDiagonal(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, sys := range wtSystems(t) {
		x, yhat, _ := wtInputs(rnd, sys, 1)
		pb, err := NewAdaNP(sys.c, Settings{Weights: BatchDiagonal})
		require.NoError(t, err)
		pa, err := NewAdaNP(sys.c, Settings{Weights: AutoDiagonal})
		require.NoError(t, err)
		yb, sb, err := pb.Project(x, yhat)
		require.NoError(t, err)
		ya, sa, err := pa.Project(x, yhat)
		require.NoError(t, err)
		assert.Equal(t, sa.Depth, sb.Depth, sys.name)
		assert.Less(t, floatsDist(ya.RawMatrix().Data, yb.RawMatrix().Data), 1e-12, sys.name)
	}
	C := mat.NewDense(2, 4, []float64{3, 0.5, -2, 1, 0.2, 4, 1, -1})
	lin, err := Linear(2, C, nil)
	require.NoError(t, err)
	x, yhat := randDense(rnd, 5, 2, 1), randDense(rnd, 5, 4, 2)
	pb, err := NewAdaNP(lin, Settings{Weights: BatchDiagonal})
	require.NoError(t, err)
	pa, err := NewAdaNP(lin, Settings{Weights: AutoDiagonal})
	require.NoError(t, err)
	yb, _, err := pb.Project(x, yhat)
	require.NoError(t, err)
	ya, _, err := pa.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, ya.RawMatrix().Data, yb.RawMatrix().Data)
}

// TestBatchDiagonalProjectorIsInexact checks that Projector gradients run
// and are reported inexact (they hold B and the weights fixed).
func TestBatchDiagonalProjectorIsInexact(t *testing.T) {
	p, err := NewAdaNP(gtTwo(t), Settings{Weights: BatchDiagonal, Grad: Projector})
	require.NoError(t, err)
	assert.False(t, p.ExactGradient())
	rnd := rand.New(rand.NewPCG(8, 9))
	x, yhat, a := wtInputs(rnd, wtSystems(t)[1], 3)
	gy, _, gs := gtVJP(t, p, x, yhat, a)
	assert.True(t, allFinite(gy))
	assert.False(t, gs.Exact())
}

// TestWeightingSettingsRejected checks the combinations NewAdaNP refuses.
func TestWeightingSettingsRejected(t *testing.T) {
	for _, s := range []Settings{
		{Weights: BatchDiagonal, LineSearch: true},
		{Weights: BatchDiagonal, Precision: Float32},
		{Weights: BatchDiagonal, Grad: Implicit},
		{Weights: BatchDiagonal, Grad: FinalProjector},
		{Weights: BatchDiagonal, Diag: []float64{1, 1}},
		{Weights: TrainableDiagonal, Diag: []float64{1, 1}},
	} {
		_, err := NewAdaNP(gtCircle(t), s)
		assert.Error(t, err, "%+v", s)
	}
}

// wtThetaLoss is ℓ = Σ a ⊙ ỹ for trainable weights θ.
func wtThetaLoss(t *testing.T, p *AdaNP, x, yhat, a *mat.Dense, theta []float64) float64 {
	y, _, err := p.ProjectTheta(x, yhat, theta)
	require.NoError(t, err)
	return mat.Sum(gtMulElem(a, y))
}

// TestTrainableDiagonalUnrolledIsExact checks the ŷ-, x- and θ-gradients
// of Unrolled with trainable weights against finite differences, with and
// without globalisation and recomputation, through the per-sample, the
// EvalBatch and the HessVecBatch paths (quadratic).
func TestTrainableDiagonalUnrolledIsExact(t *testing.T) {
	globals := []struct {
		name string
		s    Settings
	}{
		{"full", Settings{MinDepth: 3, MaxDepth: 3}},
		{"adaptive", Settings{Tol: 1e-4}},
		{"linesearch", Settings{MinDepth: 3, MaxDepth: 3, LineSearch: true}},
		{"both+recompute", Settings{MinDepth: 3, MaxDepth: 3, LineSearch: true, MaxStep: 0.5, Recompute: true}},
	}
	for _, sys := range wtSystems(t) {
		for _, g := range globals {
			t.Run(sys.name+"/"+g.name, func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(17, uint64(len(sys.name))))
				s := g.s
				s.Weights = TrainableDiagonal
				p, err := NewAdaNP(sys.c, s)
				require.NoError(t, err)
				assert.True(t, p.ExactGradient())
				x, yhat, a := wtInputs(rnd, sys, 3)
				theta := ctRandVec(rnd, sys.ny, -1, 1)
				rows := 3
				var tr Trace
				_, err = p.ProjectTraceTheta(mat.NewDense(rows, sys.ny, nil), x, yhat, theta, &tr)
				require.NoError(t, err)
				gy := mat.NewDense(rows, sys.ny, nil)
				gx := mat.NewDense(rows, sys.nx, nil)
				gth := make([]float64, sys.ny)
				require.NoError(t, p.VJPTheta(&tr, a, gy, gx, gth))
				assert.True(t, tr.GradStats().Exact(), "%+v", tr.GradStats())

				set := &fd.Settings{Formula: fd.Central, Step: 1e-6}
				wy := fd.Gradient(nil, func(v []float64) float64 {
					return wtThetaLoss(t, p, x, mat.NewDense(rows, sys.ny, v), a, theta)
				}, append([]float64(nil), yhat.RawMatrix().Data...), set)
				wx := fd.Gradient(nil, func(v []float64) float64 {
					return wtThetaLoss(t, p, mat.NewDense(rows, sys.nx, v), yhat, a, theta)
				}, append([]float64(nil), x.RawMatrix().Data...), set)
				wth := fd.Gradient(nil, func(v []float64) float64 {
					return wtThetaLoss(t, p, x, yhat, a, v)
				}, append([]float64(nil), theta...), set)
				assert.Less(t, relErr(gy.RawMatrix().Data, wy), 2e-5, "ŷ-gradient\n got %v\nwant %v", gy.RawMatrix().Data, wy)
				assert.Less(t, relErr(gx.RawMatrix().Data, wx), 2e-5, "x-gradient\n got %v\nwant %v", gx.RawMatrix().Data, wx)
				assert.Less(t, relErr(gth, wth), 2e-5, "θ-gradient\n got %v\nwant %v", gth, wth)

				// VJP gives the same ŷ- and x-gradients without θ's.
				gy2 := mat.NewDense(rows, sys.ny, nil)
				gx2 := mat.NewDense(rows, sys.nx, nil)
				require.NoError(t, p.VJP(&tr, a, gy2, gx2))
				assert.Equal(t, gy.RawMatrix().Data, gy2.RawMatrix().Data)
				assert.Equal(t, gx.RawMatrix().Data, gx2.RawMatrix().Data)
			})
		}
	}
}

// TestTrainableDiagonalSpecialCases checks that θ = 0 is the orthogonal
// projection and θ = log(diag) is Diagonal weights, on a nonlinear system
// and on a Linear one (whose Jacobian is then evaluated, not shared).
func TestTrainableDiagonalSpecialCases(t *testing.T) {
	C := mat.NewDense(2, 4, []float64{3, 0.5, -2, 1, 0.2, 4, 1, -1})
	lin, err := Linear(2, C, nil)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(21, 22))
	for _, c := range []Constraint{gtTwo(t), lin} {
		x, yhat := randDense(rnd, 4, 2, 0.5), randDense(rnd, 4, 4, 1)
		pt, err := NewAdaNP(c, Settings{Weights: TrainableDiagonal})
		require.NoError(t, err)
		pi, err := NewAdaNP(c, Settings{})
		require.NoError(t, err)
		diag := []float64{1, 2, 0.5, 3}
		pd, err := NewAdaNP(c, Settings{Weights: Diagonal, Diag: diag})
		require.NoError(t, err)
		theta := make([]float64, 4)
		yt, _, err := pt.ProjectTheta(x, yhat, theta)
		require.NoError(t, err)
		yi, _, err := pi.Project(x, yhat)
		require.NoError(t, err)
		assert.Less(t, floatsDist(yt.RawMatrix().Data, yi.RawMatrix().Data), 1e-12)
		for j, v := range diag {
			theta[j] = math.Log(v)
		}
		yt, _, err = pt.ProjectTheta(x, yhat, theta)
		require.NoError(t, err)
		yd, _, err := pd.Project(x, yhat)
		require.NoError(t, err)
		assert.Less(t, floatsDist(yt.RawMatrix().Data, yd.RawMatrix().Data), 1e-12)
	}
}

// TestTrainableDiagonalErrors checks the errors of the θ methods.
func TestTrainableDiagonalErrors(t *testing.T) {
	p, err := NewAdaNP(gtCircle(t), Settings{Weights: TrainableDiagonal})
	require.NoError(t, err)
	x := mat.NewDense(1, 1, []float64{1})
	yhat := mat.NewDense(1, 2, []float64{0.3, 2})
	_, _, err = p.Project(x, yhat)
	assert.ErrorContains(t, err, "ProjectTheta")
	_, err = p.Check(x, yhat)
	assert.NoError(t, err, "Check does not project")
	for _, theta := range [][]float64{{0}, {0, 0, 0}, {math.NaN(), 0}, {0, 301}, {math.Inf(-1), 0}} {
		_, _, err = p.ProjectTheta(x, yhat, theta)
		assert.Error(t, err, "%v", theta)
	}
	var tr Trace
	_, err = p.ProjectTraceTheta(mat.NewDense(1, 2, nil), x, yhat, []float64{0.5, -0.5}, &tr)
	require.NoError(t, err)
	g := mat.NewDense(1, 2, []float64{1, 1})
	assert.Error(t, p.VJPTheta(&tr, g, nil, nil, make([]float64, 3)))

	pi, err := NewAdaNP(gtCircle(t), Settings{})
	require.NoError(t, err)
	_, _, err = pi.ProjectTheta(x, yhat, []float64{0, 0})
	assert.Error(t, err)
	_, err = pi.ProjectTrace(mat.NewDense(1, 2, nil), x, yhat, &tr)
	require.NoError(t, err)
	assert.Error(t, pi.VJPTheta(&tr, g, nil, nil, make([]float64, 2)))
}

// TestTrainableDiagonalProjector checks that Projector gradients with
// trainable weights are finite and reported inexact.
func TestTrainableDiagonalProjector(t *testing.T) {
	p, err := NewAdaNP(gtTwo(t), Settings{Weights: TrainableDiagonal, Grad: Projector})
	require.NoError(t, err)
	assert.False(t, p.ExactGradient())
	rnd := rand.New(rand.NewPCG(31, 32))
	x, yhat, a := wtInputs(rnd, wtSystems(t)[1], 3)
	var tr Trace
	_, err = p.ProjectTraceTheta(mat.NewDense(3, 4, nil), x, yhat, []float64{0.1, -0.2, 0.3, 0}, &tr)
	require.NoError(t, err)
	gth := make([]float64, 4)
	require.NoError(t, p.VJPTheta(&tr, a, mat.NewDense(3, 4, nil), nil, gth))
	assert.True(t, allFinite(gth))
	assert.Greater(t, norm2(gth), 0.0)
	assert.False(t, tr.GradStats().Exact())
}

func TestWeightingString(t *testing.T) {
	for w, want := range map[Weighting]string{BatchDiagonal: "batch-diagonal", TrainableDiagonal: "trainable-diagonal"} {
		assert.Equal(t, want, w.String())
	}
	assert.Equal(t, "Weighting(9)", fmt.Sprint(Weighting(9)))
}

// TestBatchDiagonalFailedSampleIsInexact checks that when a sample that
// weighed in a step's batch weights could not take the step (here its
// trial point leaves the domain of log), the gradient is reported inexact
// for the batch, and the projection still reports the sample as stopped.
func TestBatchDiagonalFailedSampleIsInexact(t *testing.T) {
	c, err := Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		// c = log(y1) + y2 − x
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Log(y[0]), y[1]), x[0])
	})
	require.NoError(t, err)
	p, err := NewAdaNP(c, Settings{Weights: BatchDiagonal, MaxDepth: 5})
	require.NoError(t, err)
	x := mat.NewDense(2, 1, []float64{0, 1})
	yhat := mat.NewDense(2, 2, []float64{0.05, 5, 2, 0.5})
	var tr Trace
	st, err := p.ProjectTrace(mat.NewDense(2, 2, nil), x, yhat, &tr)
	require.NoError(t, err)
	require.Equal(t, 1, st.Stopped, "%+v", st)
	require.NoError(t, p.VJP(&tr, mat.NewDense(2, 2, []float64{1, 1, 1, 1}), mat.NewDense(2, 2, nil), nil))
	assert.Equal(t, 2, tr.GradStats().Inexact)
}

// TestTrainableDiagonalFloat32 checks trainable weights with Float32
// precision: the projection meets the tolerance and equals Float64's to
// its accuracy.
func TestTrainableDiagonalFloat32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(51, 52))
	sys := wtSystems(t)[4] // quadratic: EvalBatch32
	x, yhat, _ := wtInputs(rnd, sys, 6)
	theta := ctRandVec(rnd, sys.ny, -1, 1)
	p64, err := NewAdaNP(sys.c, Settings{Weights: TrainableDiagonal, Tol: 1e-9})
	require.NoError(t, err)
	p32, err := NewAdaNP(sys.c, Settings{Weights: TrainableDiagonal, Tol: 1e-9, Precision: Float32})
	require.NoError(t, err)
	y64, s64, err := p64.ProjectTheta(x, yhat, theta)
	require.NoError(t, err)
	y32, s32, err := p32.ProjectTheta(x, yhat, theta)
	require.NoError(t, err)
	require.True(t, s64.Converged())
	require.True(t, s32.Converged())
	assert.Less(t, floatsDist(y64.RawMatrix().Data, y32.RawMatrix().Data), 1e-6)
}

// wtPanicky panics when it evaluates a sample whose x is negative.
type wtPanicky struct{}

func (wtPanicky) Dims() (nx, ny, nc int) { return 1, 2, 1 }
func (wtPanicky) Eval(x, y, c, jy []float64) {
	if x[0] < 0 {
		panic("negative x")
	}
	c[0] = y[0] + y[1]*y[1] - x[0]
	if jy != nil {
		jy[0], jy[1] = 1, 2*y[1]
	}
}

// TestBatchDiagonalPanicNamesSample checks that a panic of constraint code
// in the batch-diagonal driver becomes an error naming the sample.
func TestBatchDiagonalPanicNamesSample(t *testing.T) {
	p, err := NewAdaNP(wtPanicky{}, Settings{Weights: BatchDiagonal})
	require.NoError(t, err)
	x := mat.NewDense(3, 1, []float64{1, 2, -1})
	_, _, err = p.Project(x, mat.NewDense(3, 2, []float64{1, 1, 2, 2, 3, 3}))
	assert.ErrorContains(t, err, "sample 2: negative x")
	y, _, err := p.Project(x.Slice(0, 2, 0, 1).(*mat.Dense), mat.NewDense(2, 2, []float64{1, 1, 2, 2}))
	require.NoError(t, err)
	assert.Less(t, maxResidual(wtPanicky{}, x.Slice(0, 2, 0, 1).(*mat.Dense), y), 1e-6)
}

// TestBatchDiagonalDeterministic checks that a batch-diagonal pass and its
// gradient do not depend on GOMAXPROCS, on a batch large enough to be
// split among workers, with and without EvalBatch.
func TestBatchDiagonalDeterministic(t *testing.T) {
	rnd := rand.New(rand.NewPCG(61, 62))
	for _, sys := range []wtSystem{wtSystems(t)[1], wtSystems(t)[4]} {
		x, yhat, a := wtInputs(rnd, sys, 200)
		p, err := NewAdaNP(sys.c, Settings{Weights: BatchDiagonal, Tol: 1e-10})
		require.NoError(t, err)
		run := func(procs int) (*mat.Dense, Stats, *mat.Dense, *mat.Dense) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			var tr Trace
			out := mat.NewDense(200, sys.ny, nil)
			st, err := p.ProjectTrace(out, x, yhat, &tr)
			require.NoError(t, err)
			gy, gx := mat.NewDense(200, sys.ny, nil), mat.NewDense(200, sys.nx, nil)
			require.NoError(t, p.VJP(&tr, a, gy, gx))
			return out, st, gy, gx
		}
		y1, st1, gy1, gx1 := run(1)
		require.Greater(t, st1.Depth, 1, sys.name)
		for _, procs := range []int{2, 4} {
			y, st, gy, gx := run(procs)
			assert.True(t, mat.Equal(y1, y), sys.name)
			assert.Equal(t, st1, st, sys.name)
			assert.True(t, mat.Equal(gy1, gy), sys.name)
			assert.True(t, mat.Equal(gx1, gx), sys.name)
		}
	}
}

// BenchmarkWeighting compares a training pass (ProjectTrace and an
// Unrolled VJP) of 400 samples with AutoDiagonal, BatchDiagonal and
// TrainableDiagonal weights, on a constraint evaluated sample by sample
// (npQuad) and on one with EvalBatch (Quadratic).
func BenchmarkWeighting(b *testing.B) {
	const rows, ny, nc = 400, 30, 10
	rnd := rand.New(rand.NewPCG(71, 72))
	A := make([]*mat.SymDense, nc)
	for i := range A {
		A[i] = ctRandSym(rnd, ny)
		A[i].ScaleSym(1/float64(ny), A[i])
	}
	q, err := Quadratic(nc, A, ctRandDense(rnd, nc, ny), ctRandVec(rnd, nc, -1, 1), ctCubeRHS)
	if err != nil {
		b.Fatal(err)
	}
	for _, cs := range []struct {
		name string
		c    Constraint
	}{
		{"per-sample", newNPQuad(rnd, ny, nc, 0.3)},
		{"EvalBatch", q},
	} {
		x, yhat := randDense(rnd, rows, nc, 0.3), randDense(rnd, rows, ny, 0.3)
		theta := ctRandVec(rnd, ny, -0.5, 0.5)
		for _, w := range []Weighting{AutoDiagonal, BatchDiagonal, TrainableDiagonal} {
			b.Run(cs.name+"/"+w.String(), func(b *testing.B) {
				p, err := NewAdaNP(cs.c, Settings{Weights: w, Tol: 1e-8})
				if err != nil {
					b.Fatal(err)
				}
				out, gy := mat.NewDense(rows, ny, nil), mat.NewDense(rows, ny, nil)
				gth := make([]float64, ny)
				var tr Trace
				b.ReportAllocs()
				for b.Loop() {
					if w == TrainableDiagonal {
						_, err = p.ProjectTraceTheta(out, x, yhat, theta, &tr)
					} else {
						_, err = p.ProjectTrace(out, x, yhat, &tr)
					}
					if err != nil {
						b.Fatal(err)
					}
					if w == TrainableDiagonal {
						err = p.VJPTheta(&tr, yhat, gy, nil, gth)
					} else {
						err = p.VJP(&tr, yhat, gy, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestTrainableDiagonalImplicit checks Implicit and FinalProjector
// gradients with trainable weights, ŷ and θ, against finite differences
// of the computed map where it is the W-nearest point: on an affine
// constraint and on c = (aᵀy)³ + aᵀy − x, whose set is a hyperplane that
// every Gauss–Newton step approaches along D·a, so that AdaNP ends at the
// nearest point. (On both the curvature term of the KKT system vanishes,
// u being orthogonal to a: FinalProjector's Gauss–Newton gradients are
// exact there too, though GradStats, which cannot know that, reports them
// inexact.)
func TestTrainableDiagonalImplicit(t *testing.T) {
	lin, err := Linear(2, mat.NewDense(2, 4, []float64{3, 0.5, -2, 1, 0.2, 4, 1, -1}), func(x, r, jx []float64) {
		copy(r, x)
		if jx != nil {
			clear(jx)
			jx[0], jx[3] = 1, 1
		}
	})
	require.NoError(t, err)
	cubic, err := Func(1, 3, 1, func(x, y, c []hyperdual.Number) {
		s := hyperdual.Sub(hyperdual.Add(y[0], hyperdual.Scale(2, y[1])), y[2])
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(s, hyperdual.Mul(s, s)), s), x[0])
	})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		c    Constraint
		nx   int
		ny   int
		grad GradMode
	}{
		{"affine/implicit", lin, 2, 4, Implicit},
		{"affine/final-projector", lin, 2, 4, FinalProjector},
		{"cubic/implicit", cubic, 1, 3, Implicit},
		{"cubic/final-projector", cubic, 1, 3, FinalProjector},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(81, 82))
			p, err := NewAdaNP(tc.c, Settings{Weights: TrainableDiagonal, Grad: tc.grad, Tol: 1e-13})
			require.NoError(t, err)
			const rows = 3
			x, yhat, a := randDense(rnd, rows, tc.nx, 1), randDense(rnd, rows, tc.ny, 1), randDense(rnd, rows, tc.ny, 1)
			theta := ctRandVec(rnd, tc.ny, -1, 1)
			var tr Trace
			st, err := p.ProjectTraceTheta(mat.NewDense(rows, tc.ny, nil), x, yhat, theta, &tr)
			require.NoError(t, err)
			require.True(t, st.Converged())
			gy := mat.NewDense(rows, tc.ny, nil)
			gth := make([]float64, tc.ny)
			require.NoError(t, p.VJPTheta(&tr, a, gy, nil, gth))
			set := &fd.Settings{Formula: fd.Central, Step: 1e-6}
			wy := fd.Gradient(nil, func(v []float64) float64 {
				return wtThetaLoss(t, p, x, mat.NewDense(rows, tc.ny, v), a, theta)
			}, append([]float64(nil), yhat.RawMatrix().Data...), set)
			wth := fd.Gradient(nil, func(v []float64) float64 {
				return wtThetaLoss(t, p, x, yhat, a, v)
			}, append([]float64(nil), theta...), set)
			assert.Equal(t, tc.grad == Implicit, tr.GradStats().Exact(), "%+v", tr.GradStats())
			assert.Less(t, relErr(gy.RawMatrix().Data, wy), 2e-5, "ŷ-gradient\n got %v\nwant %v", gy.RawMatrix().Data, wy)
			assert.Less(t, relErr(gth, wth), 2e-5, "θ-gradient\n got %v\nwant %v", gth, wth)
		})
	}
}
