package dc3

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// correctionFixture completes case57 from its operating point with the
// generator buses' voltages raised above their upper bounds, so that
// partial (Vm) and completed (Qg) variables violate bounds.
func correctionFixture(t *testing.T) (*acopf.Model, *ACOPFCompletion, []float64, []float64, []float64) {
	t.Helper()
	c, m, a := case57Completion(t)
	nb := len(c.Buses)
	op := m.OperatingPoint()
	x := m.Loads()
	partial := a.Partial()
	yp := make([]float64, len(partial))
	for i, k := range partial {
		yp[i] = op[k]
		if k < nb {
			yp[i] = c.Buses[k].Vmax + 0.01
		}
	}
	y := append([]float64(nil), op...)
	_, ok, err := a.Complete(x, yp, y)
	require.NoError(t, err)
	require.True(t, ok)
	return m, a, x, yp, y
}

// TestCorrectionDirection checks DC3's correction direction against
// central differences through the completion: its partial part is the
// gradient of ‖max(0, g)‖² of the completed point with respect to y_p,
// and its completed part the derivative of the completion along it.
func TestCorrectionDirection(t *testing.T) {
	m, a, x, yp, y := correctionFixture(t)
	ineq := m.Inequalities()
	_, ny, ng := ineq.Dims()
	dg, d := make([]float64, ny), make([]float64, ny)
	worst := violationGrad(ineq, x, y, dg)
	require.Greater(t, worst, 5e-3, "the fixture must violate a bound")
	ys := append([]float64(nil), y...)
	for i := range a.nb {
		ys[i]--
	}
	require.NoError(t, a.Newton.correctionDir(a.pad(x), ys, dg, d))

	complete := func(p []float64) []float64 {
		z := append([]float64(nil), y...)
		_, ok, err := a.Complete(x, p, z)
		require.NoError(t, err)
		require.True(t, ok)
		return z
	}
	phi := func(p []float64) float64 {
		g := make([]float64, ng)
		ineq.Eval(x, complete(p), g, nil)
		var s float64
		for _, v := range g {
			v = math.Max(v, 0)
			s += v * v
		}
		return s
	}
	const h = 1e-6
	for i, k := range a.Partial() {
		pp, pm := append([]float64(nil), yp...), append([]float64(nil), yp...)
		pp[i] += h
		pm[i] -= h
		fd := (phi(pp) - phi(pm)) / (2 * h)
		assert.InDelta(t, fd, d[k], 1e-5*(1+math.Abs(fd)), "partial %d (y[%d])", i, k)
	}
	// The completed part: the completion's derivative along d_p.
	dp := make([]float64, len(yp))
	for i, k := range a.Partial() {
		dp[i] = d[k]
	}
	const s = 1e-6
	pp, pm := append([]float64(nil), yp...), append([]float64(nil), yp...)
	for i := range dp {
		pp[i] += s * dp[i]
		pm[i] -= s * dp[i]
	}
	zp, zm := complete(pp), complete(pm)
	for _, k := range a.Newton.Other {
		fd := (zp[k] - zm[k]) / (2 * s)
		assert.InDelta(t, fd, d[k], 1e-5*(1+math.Abs(fd)), "completed y[%d]", k)
	}
}

// violations returns the sum of squared bound violations and the max
// |balance residual| of y.
func violations(m *acopf.Model, x, y []float64) (sq, eq float64) {
	ineq, pf := m.Inequalities(), m.PowerFlow()
	_, _, ng := ineq.Dims()
	_, _, nc := pf.Dims()
	g, c := make([]float64, ng), make([]float64, nc)
	ineq.Eval(x, y, g, nil)
	pf.Eval(x, y, c, nil)
	for _, v := range g {
		v = math.Max(v, 0)
		sq += v * v
	}
	for _, v := range c {
		eq = math.Max(eq, math.Abs(v))
	}
	return sq, eq
}

// TestCorrect: DC3's ACOPF correction (5 steps of 1e-4, momentum 0.5)
// cuts the squared bound violations of the fixture (max 0.89 p.u.) more
// than tenfold, while the balances, which the steps do not re-solve,
// drift to a few 1e-2 p.u.; DC3's stopping rule stops after the first
// step when Eps is loose; bad settings and shapes are errors.
func TestCorrect(t *testing.T) {
	m, a, x, _, y := correctionFixture(t)
	ineq := m.Inequalities()
	_, ny, _ := ineq.Dims()
	xs := mat.NewDense(2, len(x), append(append([]float64(nil), x...), x...))
	ys := mat.NewDense(2, ny, append(append([]float64(nil), y...), y...))
	sq0, eq0 := violations(m, x, y)
	require.Less(t, eq0, 1e-9)
	corr := Correction{Ineq: ineq, LearnRate: ACOPFCorrLearnRate, Momentum: ACOPFCorrMomentum, Steps: ACOPFCorrSteps}
	steps, err := a.Correct(xs, ys, corr)
	require.NoError(t, err)
	assert.Equal(t, ACOPFCorrSteps, steps)
	sq, eq := violations(m, x, ys.RawRowView(0))
	assert.Less(t, sq, sq0/10, "Σ max(0, g)²: %g → %g", sq0, sq)
	assert.Less(t, eq, 0.05, "balances drift to %g", eq)
	assert.Equal(t, ys.RawRowView(0), ys.RawRowView(1), "samples are corrected independently and alike")

	// DC3's rule: the first step is always taken, then stop at Eps. One
	// step of 1e-4 moves this point by about 0.6 in the 2-norm: the
	// completion amplifies the direction (CorrectNode's doc).
	ys2 := mat.NewDense(1, ny, append([]float64(nil), y...))
	steps, err = a.Correct(xs.Slice(0, 1, 0, len(x)).(*mat.Dense), ys2, Correction{Ineq: ineq, LearnRate: 1e-4, Momentum: 0.5, Steps: 5, Eps: 10})
	require.NoError(t, err)
	assert.Equal(t, 1, steps)
	assert.InDelta(t, 0.6, floats.Distance(y, ys2.RawRowView(0), 2), 0.1)

	c118, err := acopf.Load("case118_ieee")
	require.NoError(t, err)
	other, err := acopf.NewModel(c118)
	require.NoError(t, err)
	for _, bad := range []Correction{
		{LearnRate: 1e-4, Steps: 5},
		{Ineq: ineq, Steps: 5},
		{Ineq: ineq, LearnRate: 1e-4, Momentum: 1, Steps: 5},
		{Ineq: ineq, LearnRate: 1e-4, Steps: -1},
		{Ineq: ineq, LearnRate: 1e-4, Steps: 5, Eps: math.NaN()},
		{Ineq: other.Inequalities(), LearnRate: 1e-4, Steps: 5},
	} {
		_, err := a.Correct(xs, ys, bad)
		assert.Error(t, err, "%+v", bad)
	}
	_, err = a.Correct(xs, mat.NewDense(1, ny, nil), corr)
	assert.Error(t, err)
}

// correctGraph builds wᵀ·CorrectNode(x, y) on a graph, runs it and its
// gradient with respect to y on a tape machine, and returns the corrected
// point, the gradient, y's value afterwards and the input nodes.
func correctGraph(t *testing.T, a *ACOPFCompletion, x, y, w []float64, corr Correction) (out, grad, yAfter []float64, xn, yn *gorgonia.Node) {
	t.Helper()
	g := gorgonia.NewGraph()
	row := func(v []float64, name string) *gorgonia.Node {
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(1, len(v)), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(1, len(v)), tensor.WithBacking(append([]float64(nil), v...)))))
	}
	xn, yn = row(x, "x"), row(y, "y")
	on, err := a.CorrectNode(xn, yn, corr)
	require.NoError(t, err)
	prod, err := gorgonia.HadamardProd(on, row(w, "w"))
	require.NoError(t, err)
	loss, err := gorgonia.Sum(prod)
	require.NoError(t, err)
	_, err = gorgonia.Grad(loss, yn)
	require.NoError(t, err)
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	gv, err := yn.Grad()
	require.NoError(t, err)
	return append([]float64(nil), on.Value().Data().([]float64)...), append([]float64(nil), gv.Data().([]float64)...),
		append([]float64(nil), yn.Value().Data().([]float64)...), xn, yn
}

// TestCorrectNode: in a graph the correction's forward pass is Correct
// without a stopping rule, and its gradient passes through unchanged.
func TestCorrectNode(t *testing.T) {
	m, a, x, _, y := correctionFixture(t)
	ineq := m.Inequalities()
	_, ny, _ := ineq.Dims()
	corr := Correction{Ineq: ineq, LearnRate: 1e-2, Momentum: 0.5, Steps: 3, Eps: 1e9}
	w := make([]float64, ny)
	for k := range w {
		w[k] = math.Cos(float64(k))
	}
	out, grad, yAfter, xn, yn := correctGraph(t, a, x, y, w, corr)
	want := mat.NewDense(1, ny, append([]float64(nil), y...))
	corr.Eps = 0
	_, err := a.Correct(mat.NewDense(1, len(x), append([]float64(nil), x...)), want, corr)
	require.NoError(t, err)
	assert.Equal(t, want.RawRowView(0), out)
	assert.Equal(t, w, grad)
	assert.Equal(t, y, yAfter, "the input is not overwritten")

	_, err = a.CorrectNode(xn, yn, Correction{Ineq: ineq})
	assert.Error(t, err)
}

// TestCorrectNodeExactGradient checks CorrectNode's gradient with
// Correction.ExactGradient against central differences of a linear
// function of the corrected point, along random directions of the
// completed point, with DC3's ACOPF settings (five steps of 1e-4, momentum
// 0.5) and with one larger step, from the fixture's point moved off the
// kinks of max(0, g); the corrected points are the same as without it. It also checks the identity's gap, so that the test would
// notice an exact gradient that silently fell back to it.
func TestCorrectNodeExactGradient(t *testing.T) {
	m, a, x, _, y := correctionFixture(t)
	ineq := m.Inequalities()
	_, ny, _ := ineq.Dims()
	// Off the kinks of max(0, g): the fixture has variables exactly at a
	// bound, where central differences average the two sides.
	shift := rand.New(rand.NewPCG(5, 6))
	for k := range y {
		y[k] += 1e-3 * shift.NormFloat64()
	}
	w := make([]float64, ny)
	for k := range w {
		w[k] = math.Cos(float64(k))
	}
	for _, corr := range []Correction{
		{Ineq: ineq, LearnRate: ACOPFCorrLearnRate, Momentum: ACOPFCorrMomentum, Steps: ACOPFCorrSteps, ExactGradient: true},
		{Ineq: ineq, LearnRate: 3e-4, Momentum: 0, Steps: 1, ExactGradient: true},
	} {
		out, grad, _, _, _ := correctGraph(t, a, x, y, w, corr)
		plain := corr
		plain.ExactGradient = false
		want := mat.NewDense(1, ny, append([]float64(nil), y...))
		_, err := a.Correct(mat.NewDense(1, len(x), append([]float64(nil), x...)), want, plain)
		require.NoError(t, err)
		assert.Equal(t, want.RawRowView(0), out, "the same corrected point")
		again := mat.NewDense(1, ny, append([]float64(nil), y...))
		_, err = a.Correct(mat.NewDense(1, len(x), append([]float64(nil), x...)), again, corr)
		require.NoError(t, err)
		assert.Equal(t, want.RawRowView(0), again.RawRowView(0), "Correct ignores ExactGradient")

		f := func(y0 []float64) float64 {
			yc := mat.NewDense(1, ny, append([]float64(nil), y0...))
			_, err := a.Correct(mat.NewDense(1, len(x), append([]float64(nil), x...)), yc, plain)
			require.NoError(t, err)
			return floats.Dot(w, yc.RawRowView(0))
		}
		rnd := rand.New(rand.NewPCG(3, 4))
		var worstExact, worstIdentity float64
		for range 4 {
			dir := make([]float64, ny)
			for k := range dir {
				dir[k] = rnd.NormFloat64()
			}
			const h = 1e-6
			yp, ym := append([]float64(nil), y...), append([]float64(nil), y...)
			floats.AddScaled(yp, h, dir)
			floats.AddScaled(ym, -h, dir)
			fd := (f(yp) - f(ym)) / (2 * h)
			scale := 1 + math.Abs(fd)
			worstExact = math.Max(worstExact, math.Abs(floats.Dot(grad, dir)-fd)/scale)
			worstIdentity = math.Max(worstIdentity, math.Abs(floats.Dot(w, dir)-fd)/scale)
		}
		t.Logf("exact %.2e identity %.2e", worstExact, worstIdentity)
		assert.Less(t, worstExact, 1e-7, "%+v: exact gradient against central differences", corr)
		assert.Greater(t, worstIdentity, 1e-2, "%+v: the identity is not the gradient here", corr)
	}
}

// evalOnly is a constraint that declares no capabilities.
type evalOnly struct{ c enforce.Constraint }

func (e evalOnly) Dims() (nx, ny, nc int)     { return e.c.Dims() }
func (e evalOnly) Eval(x, y, c, jy []float64) { e.c.Eval(x, y, c, jy) }

// TestCorrectNodeExactGradientNeeds: the exact gradient needs the
// inequalities' second derivatives (or a constant Jacobian).
func TestCorrectNodeExactGradientNeeds(t *testing.T) {
	m, a, x, _, y := correctionFixture(t)
	g := gorgonia.NewGraph()
	xn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(1, len(x)), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(1, len(x)), tensor.WithBacking(x))))
	yn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(1, len(y)), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(1, len(y)), tensor.WithBacking(y))))
	corr := Correction{Ineq: evalOnly{m.Inequalities()}, LearnRate: 1e-4, Steps: 1, ExactGradient: true}
	_, err := a.CorrectNode(xn, yn, corr)
	assert.ErrorContains(t, err, "neither HessVec nor a constant Jacobian")
	corr.ExactGradient = false
	_, err = a.CorrectNode(xn, yn, corr)
	assert.NoError(t, err, "the identity needs nothing more")
}
