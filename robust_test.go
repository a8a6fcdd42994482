package enforce

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestEmptyBatchIsAnError(t *testing.T) {
	p, err := NewAdaNP(npFitting{}, Settings{})
	require.NoError(t, err)
	var empty mat.Dense
	_, _, err = p.Project(&empty, &empty)
	assert.ErrorContains(t, err, "empty")
	_, err = p.Check(&empty, &empty)
	assert.ErrorContains(t, err, "empty")
	_, err = p.ProjectTo(&empty, mat.NewDense(1, 1, nil), mat.NewDense(1, 2, nil))
	assert.ErrorContains(t, err, "empty")
	var tr Trace
	_, err = p.ProjectTrace(mat.NewDense(1, 2, nil), mat.NewDense(1, 1, nil), mat.NewDense(1, 2, []float64{1, 1}), &tr)
	require.NoError(t, err)
	assert.ErrorContains(t, p.VJP(&tr, &empty, nil, nil), "empty")
}

// rbPanicky panics in Eval for samples whose x is negative; with many rows
// the panic happens in a worker goroutine.
type rbPanicky struct{ npFitting }

func (p rbPanicky) Eval(x, y, c, jy []float64) {
	if x[0] < 0 {
		panic("negative input")
	}
	p.npFitting.Eval(x, y, c, jy)
}

func TestPanicsInUserCodeAreErrors(t *testing.T) {
	rnd := rand.New(rand.NewPCG(31, 32))
	const rows = 400
	x := randDense(rnd, rows, 1, 1)
	for i := 0; i < rows; i++ {
		x.Set(i, 0, 0.1+math.Abs(x.At(i, 0)))
	}
	yhat := randDense(rnd, rows, 2, 1)
	bad := mat.DenseCopyOf(x)
	bad.Set(317, 0, -1)

	outOfRange, err := Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		if x[0].Real < 0 {
			c[3] = y[0] // out of range: c has length 1
		}
		c[0] = hyperdual.Sub(y[0], x[0])
	})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		c    Constraint
	}{
		{"Eval", rbPanicky{}},
		{"Func out of range", outOfRange},
		{"EvalBatch", rbPanickyBatch{rbPanicky{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewAdaNP(tc.c, Settings{})
			require.NoError(t, err)
			_, _, err = p.Project(bad, yhat)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "panicked")
			if tc.name != "EvalBatch" {
				assert.Contains(t, err.Error(), "sample 317")
			}
			// The AdaNP is still usable, and gives what a fresh one gives.
			for range 3 {
				got, _, err := p.Project(x, yhat)
				require.NoError(t, err)
				fresh, err := NewAdaNP(tc.c, Settings{})
				require.NoError(t, err)
				want, _, err := fresh.Project(x, yhat)
				require.NoError(t, err)
				assert.True(t, mat.Equal(got, want))
			}
		})
	}
}

type rbPanickyBatch struct{ rbPanicky }

func (p rbPanickyBatch) Capabilities() Capabilities {
	k := p.rbPanicky.Capabilities()
	k.EvalBatch = p.EvalBatch
	return k
}

func (p rbPanickyBatch) EvalBatch(rows int, x, y, c, jy []float64) {
	for s := range rows {
		p.Eval(x[s:s+1], y[2*s:2*s+2], c[s:s+1], jy[2*s:2*s+2])
	}
}

// rbPanickyHess panics in HessVec: the backward pass reports it.
type rbPanickyHess struct{ npFitting }

func (rbPanickyHess) HessVec(x, y, w, v, out []float64) { panic("no curvature today") }
func (p rbPanickyHess) Capabilities() Capabilities {
	k := p.npFitting.Capabilities()
	k.HessVec = p.HessVec
	return k
}

func TestPanicInVJPIsAnError(t *testing.T) {
	rnd := rand.New(rand.NewPCG(33, 34))
	p, err := NewAdaNP(rbPanickyHess{}, Settings{MinDepth: 2, MaxDepth: 2})
	require.NoError(t, err)
	x, yhat := randDense(rnd, 100, 1, 1), randDense(rnd, 100, 2, 1)
	var tr Trace
	_, err = p.ProjectTrace(mat.NewDense(100, 2, nil), x, yhat, &tr)
	require.NoError(t, err)
	err = p.VJP(&tr, randDense(rnd, 100, 2, 1), mat.NewDense(100, 2, nil), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sample 0")
	assert.Contains(t, err.Error(), "no curvature today")
}

func TestGateMayCallStatsAndPanic(t *testing.T) {
	p, err := NewAdaNP(npFitting{}, Settings{})
	require.NoError(t, err)
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(4, 1), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4, 1), tensor.WithBacking([]float64{0.1, 0.2, 0.3, 0.4}))))
	yhat := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(4, 2), gorgonia.WithName("yhat"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6, 7, 8}))))
	var node *gorgonia.Node
	calls := 0
	node, err = p.Apply(x, yhat, WithGate(func(x, yhat, step *mat.Dense) bool {
		calls++
		op, _ := OpOf(node)
		_ = op.Stats() // used to deadlock
		_ = op.Projected()
		if calls == 2 {
			panic("gate failure")
		}
		return true
	}))
	require.NoError(t, err)
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	done := make(chan error, 1)
	go func() { done <- m.RunAll() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the gate's call to Stats deadlocked")
	}
	op, _ := OpOf(node)
	assert.True(t, op.Stats().Converged())
	m.Reset()
	err = m.RunAll()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gate failure")
}

func TestFloat32OverflowIsAnError(t *testing.T) {
	// c = y1 − 1e39: the projection moves y1 to 1e39, beyond float32.
	c, err := Func(0, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(y[0], hyperdual.Number{Real: 1e39})
	})
	require.NoError(t, err)
	p, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	g := gorgonia.NewGraph()
	yhat := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(1, 2), gorgonia.WithName("yhat"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]float32{1, 2}))))
	_, err = p.Apply(nil, yhat)
	require.NoError(t, err)
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	err = m.RunAll()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "overflows float32")
}

// TestCheckWithInequalities: Check reports the equality residual and the
// inequality violation, not the Fischer–Burmeister residual with zero
// multipliers.
func TestCheckWithInequalities(t *testing.T) {
	c := gtCircleIneq(t) // y1² + y2² = x2², y1 ≤ x1
	p, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(35, 36))
	const rows = 2000
	x := mat.NewDense(rows, 2, nil)
	y := mat.NewDense(rows, 2, nil)
	for i := 0; i < rows; i++ {
		th := 2 * math.Pi * rnd.Float64()
		r := 1 + 1e-7*(2*rnd.Float64()-1) // |c| ≤ 2.1e-7
		y.Set(i, 0, r*math.Cos(th))
		y.Set(i, 1, r*math.Sin(th))
		x.Set(i, 0, y.At(i, 0)+rnd.Float64()) // g = y1 − x1 ≤ 0
		x.Set(i, 1, 1)
	}
	st, err := p.Check(x, y)
	require.NoError(t, err)
	assert.Zero(t, st.NotConverged)
	assert.Less(t, st.After.Max, 3e-7)
	// A violated inequality is reported by its violation.
	x.Set(0, 0, y.At(0, 0)-0.5)
	st, err = p.Check(x, y)
	require.NoError(t, err)
	assert.Equal(t, 1, st.NotConverged)
	assert.InDelta(t, 0.5, st.After.Max, 1e-9)
}

// TestGlobalisationFarFromManifold is the review's case c = atan(y1) +
// 0.1·y2 from ŷ = (2, 0): full Gauss–Newton steps end 14.5 away while the
// nearest feasible point is 1.99 away.
func TestGlobalisationFarFromManifold(t *testing.T) {
	c := gtAtan(t)
	yhat := mat.NewDense(1, 2, []float64{2, 0})
	nearest := gtNearest(t, c, []float64{2, 0})
	dist := math.Hypot(nearest[0]-2, nearest[1])
	assert.InDelta(t, 1.99, dist, 0.01)
	for _, tc := range []struct {
		name    string
		s       Settings
		maxDist float64
	}{
		{"full steps", Settings{}, math.Inf(1)},
		{"line search", Settings{LineSearch: true}, 1.2 * dist},
		{"line search + max step", Settings{LineSearch: true, MaxStep: 0.5}, 1.05 * dist},
		{"damping", Settings{Damping: DefaultDamping}, 1.2 * dist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewAdaNP(c, tc.s)
			require.NoError(t, err)
			y, st, err := p.Project(nil, yhat)
			require.NoError(t, err)
			require.True(t, st.Converged())
			got := math.Hypot(y.At(0, 0)-2, y.At(0, 1))
			assert.InDelta(t, got, st.Displacement.Max, 1e-12)
			t.Logf("%s: ỹ = %.3g, distance %.3g (nearest %.3g), depth %d", tc.name, mat.Row(nil, 0, y), got, dist, st.Depth)
			if tc.name == "full steps" {
				assert.Greater(t, got, 14.0) // the problem globalisation fixes
				return
			}
			assert.Less(t, got, tc.maxDist)
		})
	}
}

// gtNearest returns the nearest point to yhat on atan(y1) + 0.1·y2 = 0 by
// a fine scan along the curve y2 = −10·atan(y1).
func gtNearest(t *testing.T, _ Constraint, yhat []float64) []float64 {
	best, arg := math.Inf(1), 0.0
	for y1 := -10.0; y1 <= 10; y1 += 1e-5 {
		y2 := -10 * math.Atan(y1)
		if d := math.Hypot(y1-yhat[0], y2-yhat[1]); d < best {
			best, arg = d, y1
		}
	}
	return []float64{arg, -10 * math.Atan(arg)}
}

// TestStagnationStops: c = y1² + 1 has no root; the iteration stops after
// a few steps without progress instead of running to MaxDepth.
func TestStagnationStops(t *testing.T) {
	c, err := Func(0, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Number{Real: 1})
	})
	require.NoError(t, err)
	for _, s := range []Settings{{}, {LineSearch: true}} {
		p, err := NewAdaNP(c, s)
		require.NoError(t, err)
		y, st, err := p.Project(nil, mat.NewDense(1, 2, []float64{0.7, 1}))
		require.NoError(t, err)
		assert.Equal(t, 1, st.Stalled, "%+v", s)
		assert.Equal(t, 1, st.NotConverged)
		assert.Less(t, st.Depth, 40)
		assert.True(t, allFinite(y.RawMatrix().Data))
	}
}

// TestAmplifiedGradientIsReported: near the centre of a circle the
// projection's Jacobian is huge; GradStats reports it.
func TestAmplifiedGradientIsReported(t *testing.T) {
	p, err := NewAdaNP(gtCircle(t), Settings{})
	require.NoError(t, err)
	x := mat.NewDense(2, 1, []float64{1, 1})
	yhat := mat.NewDense(2, 2, []float64{1e-9, 1e-12, 2, 0.5})
	var tr Trace
	_, err = p.ProjectTrace(mat.NewDense(2, 2, nil), x, yhat, &tr)
	require.NoError(t, err)
	gy := mat.NewDense(2, 2, nil)
	require.NoError(t, p.VJP(&tr, mat.NewDense(2, 2, []float64{0, 1, 0, 1}), gy, nil))
	gs := tr.GradStats()
	assert.Equal(t, 1, gs.Amplified)
	assert.Greater(t, gs.MaxGain, GainWarning)
}

// TestDivergentInequalityCase is the review's circle with y1 ≤ x at x = 59
// from ŷ = 0 with AutoDiagonal weights, where B = 0 at the start: the
// iteration stalls instead of running on, every gradient is finite, and
// the Unrolled one, amplified by ~1e200, is reported.
func TestDivergentInequalityCase(t *testing.T) {
	p, err := NewAdaNP(gtCircleIneq(t), Settings{Weights: AutoDiagonal})
	require.NoError(t, err)
	x := mat.NewDense(1, 2, []float64{59, 1})
	var tr Trace
	_, st, err := p.Project(x, mat.NewDense(1, 2, nil))
	require.NoError(t, err)
	assert.Equal(t, 1, st.Stalled)
	_, err = p.ProjectTrace(mat.NewDense(1, 2, nil), x, mat.NewDense(1, 2, nil), &tr)
	require.NoError(t, err)
	gy := mat.NewDense(1, 2, nil)
	require.NoError(t, p.VJP(&tr, mat.NewDense(1, 2, []float64{1, 1}), gy, nil))
	gs := tr.GradStats()
	assert.Equal(t, 1, gs.Amplified)
	assert.False(t, math.IsInf(gs.MaxGain, 0))
}
