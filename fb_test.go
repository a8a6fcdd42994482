package enforce

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// ctDiscFunc is the inequality system (nx = 2, ny = 3, ng = 2)
//
//	g1 = y1² + y2² + x1·y3² − 1
//	g2 = sin(x2·y1) − y3
func ctDiscFunc(x, y, c []hyperdual.Number) {
	mul, add := hyperdual.Mul, hyperdual.Add
	c[0] = hyperdual.Sub(add(add(mul(y[0], y[0]), mul(y[1], y[1])), mul(x[0], mul(y[2], y[2]))), ctHD(1))
	c[1] = hyperdual.Sub(hyperdual.Sin(mul(x[1], y[0])), y[2])
}

func TestWithInequalitiesDerivatives(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(8, 8))
	g, err := Func(2, 3, 2, ctDiscFunc)
	require.NoError(t, err)
	eqFunc, err := Func(2, 3, 3, ctNonlinearFunc)
	require.NoError(t, err)
	eqQuad, err := Quadratic(2, []*mat.SymDense{ctRandSym(rnd, 3)}, nil, []float64{-0.5}, nil)
	require.NoError(t, err)
	gLin, err := Linear(2, ctRandDense(rnd, 2, 3), ctSinRHS)
	require.NoError(t, err)
	for _, test := range []struct {
		name     string
		eq, g    Constraint
		neq      int
		eps      float64
		lo, hi   float64 // range of y and λ
		wantEps  float64
		provides bool
	}{
		{name: "g only", g: g, lo: -1, hi: 1, wantEps: DefaultFBEps},
		{name: "eq Func", eq: eqFunc, g: g, neq: 3, lo: -1, hi: 1, wantEps: DefaultFBEps},
		{name: "eq Quadratic, large ε", eq: eqQuad, g: g, neq: 1, eps: 0.1, lo: -2, hi: 2, wantEps: 0.1},
		{name: "affine g", eq: eqQuad, g: gLin, neq: 1, eps: -1, lo: -1, hi: 1, wantEps: DefaultFBEps},
		{name: "large λ", g: g, eps: 1e-4, lo: 5, hi: 10, wantEps: 1e-4},
	} {
		t.Run(test.name, func(t *testing.T) {
			c, err := WithInequalities(test.eq, test.g, test.eps)
			require.NoError(t, err)
			nx, nye, nce := c.Dims()
			require.Equal(t, []int{2, 3 + 2, test.neq + 2}, []int{nx, nye, nce})
			assert.Equal(t, 2, CapabilitiesOf(c).Latent)
			assert.Equal(t, test.wantEps, c.(*fbConstraint).eps)
			assert.Subset(t, ctCaps(c), []string{"JacobianX", "HessVec", "MixedHessVec", "Latent"})
			assert.NotContains(t, ctCaps(c), "ConstantJacobian")
			for seed := range uint64(5) {
				ctCheckDerivatives(t, c, seed, -1, 1, test.lo, test.hi)
			}
		})
	}
}

func TestWithInequalitiesEval(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(9, 1))
	g, err := Func(2, 3, 2, ctDiscFunc)
	require.NoError(t, err)
	eq, err := Func(2, 3, 3, ctNonlinearFunc)
	require.NoError(t, err)
	const eps = 1e-3
	c, err := WithInequalities(eq, g, eps)
	require.NoError(t, err)
	x, y, lambda := ctRandVec(rnd, 2, -1, 1), ctRandVec(rnd, 3, -1, 1), ctRandVec(rnd, 2, -1, 1)
	cv, jy := ctEval(t, c, x, append(append([]float64(nil), y...), lambda...))
	eqc, eqj := ctEval(t, eq, x, y)
	gc, gj := ctEval(t, g, x, y)
	assert.Equal(t, eqc, cv[:3])
	for i := range 3 {
		assert.Equal(t, eqj[i*3:(i+1)*3], jy[i*5:i*5+3], "∂eq_%d/∂y", i)
		assert.Equal(t, []float64{0, 0}, jy[i*5+3:(i+1)*5], "∂eq_%d/∂λ", i)
	}
	for j := range 2 {
		s := math.Sqrt(lambda[j]*lambda[j] + gc[j]*gc[j] + eps)
		assert.InDelta(t, s-lambda[j]+gc[j], cv[3+j], 1e-15, "φ_%d", j)
		row := jy[(3+j)*5 : (4+j)*5]
		for k := range 3 {
			assert.InDelta(t, (gc[j]/s+1)*gj[j*3+k], row[k], 1e-15, "∂φ_%d/∂y_%d", j, k)
		}
		assert.InDelta(t, lambda[j]/s-1, row[3+j], 1e-15, "∂φ_%d/∂λ_%d", j, j)
		assert.Zero(t, row[3+1-j], "∂φ_%d/∂λ_%d", j, 1-j)
	}
}

// ctFBExact returns φ(λ, u) = √(λ² + u² + ε) − λ + u in 256-bit arithmetic.
func ctFBExact(lambda, u, eps float64) float64 {
	const prec = 256
	l := new(big.Float).SetPrec(prec).SetFloat64(lambda)
	g := new(big.Float).SetPrec(prec).SetFloat64(u)
	e := new(big.Float).SetPrec(prec).SetFloat64(eps)
	s := new(big.Float).SetPrec(prec).Mul(l, l)
	s.Add(s, new(big.Float).SetPrec(prec).Mul(g, g))
	s.Add(s, e)
	s.Sqrt(s)
	s.Sub(s, l)
	s.Add(s, g)
	f, _ := s.Float64()
	return f
}

func TestFBPartialsAccuracy(t *testing.T) {
	t.Parallel()
	fb := &fbConstraint{eps: DefaultFBEps}
	for _, test := range []struct{ lambda, u float64 }{
		{0, 0}, {1, -1}, {-1, 1}, {0.3, 0.2}, {-0.2, -0.7},
		{1e4, 1e-3}, {1e3, -1e-9}, {1e-5, -5e-4}, {5e3, 0}, {-1e-3, -1e4}, {0, 1e5},
	} {
		p := fb.partials(test.lambda, test.u)
		want := ctFBExact(test.lambda, test.u, fb.eps)
		assert.InDelta(t, want, p.phi, 2e-15*math.Abs(want), "φ(%v, %v)", test.lambda, test.u)
		s := math.Sqrt(test.lambda*test.lambda + test.u*test.u + fb.eps)
		assert.InDelta(t, test.lambda/s-1, p.dl, 1e-15, "∂φ/∂λ(%v, %v)", test.lambda, test.u)
		assert.InDelta(t, test.u/s+1, p.du, 1e-15, "∂φ/∂u(%v, %v)", test.lambda, test.u)
	}
}

func TestWithInequalitiesComplementarity(t *testing.T) {
	t.Parallel()
	const eps = DefaultFBEps
	fb := &fbConstraint{eps: eps}
	// φ(λ, u) = 0 exactly at λ = −ε/(2u), u < 0: the multiplier is positive.
	for _, u := range []float64{-1e3, -1, -1e-2, -1e-4, -1e-8} {
		lambda := -eps / (2 * u)
		assert.InDelta(t, 0, fb.partials(lambda, u).phi, 1e-15*math.Max(1, lambda-u), "u = %v", u)
		assert.Positive(t, lambda)
	}
	// The margin −u = ε/(2λ) is √(ε/2) where λ = −u; where λ ≫ √ε at
	// u = 0, ∂φ/∂λ ≈ −ε/(2λ²).
	r := math.Sqrt(eps / 2)
	assert.InDelta(t, 0, fb.partials(r, -r).phi, 1e-15)
	for _, lambda := range []float64{1e-2, 1, 1e2} {
		want := -eps / (2 * lambda * lambda)
		assert.InDelta(t, want, fb.partials(lambda, 0).dl, 1e-3*math.Abs(want), "λ = %v", lambda)
	}
	// φ > 0 wherever u ≥ 0 or λ < 0, so φ = 0 implies λ > 0 and g < 0.
	for _, lambda := range []float64{-1e3, -1, -1e-4, 0, 1e-4, 1, 1e3} {
		for _, u := range []float64{0, 1e-8, 1e-4, 1, 1e3} {
			assert.Positive(t, fb.partials(lambda, u).phi, "φ(%v, %v)", lambda, u)
		}
		if lambda < 0 {
			for _, u := range []float64{-1e3, -1, -1e-4} {
				assert.Positive(t, fb.partials(lambda, u).phi, "φ(%v, %v)", lambda, u)
			}
		}
	}
}

// ctNewtonProject runs minimum-norm Newton steps y ← y − Jᵀ(JJᵀ)⁻¹c on
// c(x, y) = 0 and returns y and the final max|c|.
func ctNewtonProject(t *testing.T, c Constraint, x, y []float64, steps int) ([]float64, float64) {
	t.Helper()
	_, ny, nc := c.Dims()
	y = append([]float64(nil), y...)
	cv, jy := make([]float64, nc), make([]float64, nc*ny)
	var res float64
	for range steps {
		c.Eval(x, y, cv, jy)
		J := mat.NewDense(nc, ny, jy)
		var G mat.SymDense
		G.SymOuterK(1, J)
		var chol mat.Cholesky
		require.True(t, chol.Factorize(&G))
		var mu, step mat.VecDense
		require.NoError(t, chol.SolveVecTo(&mu, mat.NewVecDense(nc, cv)))
		step.MulVec(J.T(), &mu)
		for k := range y {
			y[k] -= step.AtVec(k)
		}
	}
	c.Eval(x, y, cv, nil)
	for _, v := range cv {
		res = math.Max(res, math.Abs(v))
	}
	return y, res
}

func TestWithInequalitiesNewton(t *testing.T) {
	t.Parallel()
	// y ∈ ℝ² in the unit disc, y1 + y2 = x1.
	g, err := Func(1, 2, 1, func(_, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), ctHD(1))
	})
	require.NoError(t, err)
	eq, err := Linear(1, mat.NewDense(1, 2, []float64{1, 1}), func(x, r, jx []float64) {
		r[0] = x[0]
		if jx != nil {
			jx[0] = 1
		}
	})
	require.NoError(t, err)
	c, err := WithInequalities(eq, g, 0)
	require.NoError(t, err)
	for _, test := range []struct {
		name   string
		x, y   []float64
		active bool
	}{
		{name: "outside", x: []float64{1.4}, y: []float64{2, 1}, active: true},
		{name: "inside", x: []float64{0.3}, y: []float64{0.2, 0.1}},
	} {
		yext, res := ctNewtonProject(t, c, test.x, append(test.y, 0), 30)
		assert.Less(t, res, 1e-12, test.name)
		gv := make([]float64, 1)
		g.Eval(test.x, yext[:2], gv, nil)
		assert.LessOrEqual(t, gv[0], math.Sqrt(DefaultFBEps), "%s: g", test.name)
		assert.GreaterOrEqual(t, yext[2], 0.0, "%s: λ", test.name)
		assert.InDelta(t, test.x[0], yext[0]+yext[1], 1e-12, "%s: equality", test.name)
		if test.active {
			assert.InDelta(t, 0, gv[0], 1e-6, "%s: active constraint", test.name)
			assert.Greater(t, yext[2], 1e-3, "%s: λ of the active constraint", test.name)
		}
	}
}

func TestWithInequalitiesCapabilities(t *testing.T) {
	t.Parallel()
	full, err := Func(2, 3, 2, ctDiscFunc)
	require.NoError(t, err)
	bare := ctEvalOnly{nx: 2, ny: 3}
	for _, test := range []struct {
		name  string
		eq, g Constraint
		want  [3]bool // JacobianX, HessVec, MixedHessVec
	}{
		{name: "all", eq: full, g: full, want: [3]bool{true, true, true}},
		{name: "bare eq", eq: bare, g: full},
		{name: "bare g", eq: full, g: bare},
		{name: "bare g alone", g: bare},
	} {
		c, err := WithInequalities(test.eq, test.g, 0)
		require.NoError(t, err, test.name)
		k := CapabilitiesOf(c)
		got := [3]bool{k.JacobianX != nil, k.HessVec != nil, k.MixedHessVec != nil}
		assert.Equal(t, test.want, got, test.name)
		assert.Nil(t, k.ConstantJacobian, test.name)
		_, nye, _ := c.Dims()
		ctCheckJacobian(t, c, []float64{0.1, 0.2}, ctRandVec(rand.New(rand.NewPCG(1, 1)), nye, -1, 1), ctFDTol)
	}
	c, err := WithInequalities(nil, bare, 0)
	require.NoError(t, err)
	assert.Nil(t, CapabilitiesOf(c).HessVec, "a missing capability is nil, not a method that panics")
}

func TestWithInequalitiesErrors(t *testing.T) {
	t.Parallel()
	g, err := Func(2, 3, 2, ctDiscFunc)
	require.NoError(t, err)
	otherNX, err := Func(1, 3, 1, ctDiscFunc)
	require.NoError(t, err)
	otherNY, err := Func(2, 2, 1, ctDiscFunc)
	require.NoError(t, err)
	latent, err := WithInequalities(nil, g, 0)
	require.NoError(t, err)
	var nilFunc *funcConstraint
	for _, test := range []struct {
		name  string
		eq, g Constraint
		eps   float64
	}{
		{name: "nil g", eq: g},
		{name: "nil pointer g", g: nilFunc},
		{name: "nil pointer eq", eq: nilFunc, g: g},
		{name: "eq nx differs", eq: otherNX, g: g},
		{name: "eq ny differs", eq: otherNY, g: g},
		{name: "latent g", g: latent},
		{name: "latent eq", eq: latent, g: g},
		{name: "bad g dims", g: ctEvalOnly{nx: 2, ny: 0}},
		{name: "NaN ε", g: g, eps: math.NaN()},
		{name: "Inf ε", g: g, eps: math.Inf(1)},
	} {
		var (
			c   Constraint
			err error
		)
		require.NotPanics(t, func() { c, err = WithInequalities(test.eq, test.g, test.eps) }, test.name)
		assert.Error(t, err, test.name)
		assert.Nil(t, c, test.name)
	}
}

func TestWithInequalitiesZeroAllocs(t *testing.T) {
	g, err := Func(2, 3, 2, ctDiscFunc)
	require.NoError(t, err)
	eq, err := Func(2, 3, 3, ctNonlinearFunc)
	require.NoError(t, err)
	c, err := WithInequalities(eq, g, 0)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(10, 10))
	x, y := ctRandVec(rnd, 2, -1, 1), ctRandVec(rnd, 5, -1, 1)
	w, v := ctRandVec(rnd, 5, -1, 1), ctRandVec(rnd, 5, -1, 1)
	cv, jy, jx := make([]float64, 5), make([]float64, 25), make([]float64, 10)
	hv, mv := make([]float64, 5), make([]float64, 2)
	ctAssertZeroAllocs(t, "Eval", func() { c.Eval(x, y, cv, jy) })
	ctAssertZeroAllocs(t, "JacobianX", func() { CapabilitiesOf(c).JacobianX(x, y, jx) })
	ctAssertZeroAllocs(t, "HessVec", func() { CapabilitiesOf(c).HessVec(x, y, w, v, hv) })
	ctAssertZeroAllocs(t, "MixedHessVec", func() { CapabilitiesOf(c).MixedHessVec(x, y, w, v, mv) })
}

// TestWithInequalitiesPinnedPair checks WithInequalities' remark on two
// inequalities that pin a quantity, g_a = −g_b: their rows have no common
// zero, φ(λ_a, u) + φ(λ_b, −u) > 0, so AdaNP does not reach a tight
// tolerance on them, while the same quantity as an equality is met in one
// step.
func TestWithInequalitiesPinnedPair(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(3, 4))
	fb := &fbConstraint{eps: DefaultFBEps}
	for range 1000 {
		la, lb := 10*(rnd.Float64()-0.5), 10*(rnd.Float64()-0.5)
		u := math.Pow(10, -8+8*rnd.Float64()) * math.Copysign(1, rnd.Float64()-0.5)
		sum := fb.partials(la, u).phi + fb.partials(lb, -u).phi
		assert.Positive(t, sum, "λ_a %v, λ_b %v, u %v", la, lb, u)
	}
	// y ∈ ℝ pinned at 1: y − 1 ≤ 0 and 1 − y ≤ 0, or y − 1 = 0.
	// (Linear's c = C·y − r(x).)
	pair, err := Linear(1, mat.NewDense(2, 1, []float64{1, -1}), func(x, r, jx []float64) {
		r[0], r[1] = 1, -1
		if jx != nil {
			clear(jx)
		}
	})
	require.NoError(t, err)
	ineq, err := WithInequalities(nil, pair, 0)
	require.NoError(t, err)
	eq, err := Linear(1, mat.NewDense(1, 1, []float64{1}), func(x, r, jx []float64) {
		r[0] = 1
		if jx != nil {
			jx[0] = 0
		}
	})
	require.NoError(t, err)
	x, yhat := mat.NewDense(1, 1, []float64{0}), mat.NewDense(1, 1, []float64{1.5})
	s := Settings{Tol: 1e-10, MaxDepth: 40}
	a, err := NewAdaNP(ineq, s)
	require.NoError(t, err)
	_, st, err := a.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, 1, st.NotConverged, "the pinned pair: %v", st)
	assert.Greater(t, st.After.Max, s.Tol)
	a, err = NewAdaNP(eq, s)
	require.NoError(t, err)
	proj, st, err := a.Project(x, yhat)
	require.NoError(t, err)
	assert.True(t, st.Converged(), "the equality: %v", st)
	assert.Equal(t, 1, st.Depth)
	assert.InDelta(t, 1, proj.At(0, 0), 1e-12)
}

// TestWithInequalitiesMultiplierScale checks WithInequalities' remark that
// the multipliers grow with the distances projected: minimum-norm Newton
// steps from ŷ = b + d onto y − b ≤ 0 end with λ between d/10 and 2d,
// and y inside the bound by the margin ε/(2λ).
func TestWithInequalitiesMultiplierScale(t *testing.T) {
	t.Parallel()
	g, err := Linear(1, mat.NewDense(1, 1, []float64{1}), func(x, r, jx []float64) {
		r[0] = 1
		if jx != nil {
			jx[0] = 0
		}
	})
	require.NoError(t, err)
	c, err := WithInequalities(nil, g, 0)
	require.NoError(t, err)
	for _, d := range []float64{1e-3, 1e-2, 1e-1, 1} {
		yext, res := ctNewtonProject(t, c, []float64{0}, []float64{1 + d, 0}, 40)
		require.Less(t, res, 1e-12, "d = %v", d)
		// y is inside by the margin ε/(2λ).
		assert.InEpsilon(t, DefaultFBEps/(2*yext[1]), 1-yext[0], 1e-6, "d = %v: margin", d)
		assert.GreaterOrEqual(t, yext[1], d/10, "d = %v: λ", d)
		assert.LessOrEqual(t, yext[1], 2*d, "d = %v: λ", d)
	}
}

// TestCheckResidual checks CheckResidual: the equalities and max(g, 0)
// for a WithInequalities system (whatever the multipliers a projection
// would carry), whose largest entry is what AdaNP.Check reports; c itself
// for a constraint without latent variables, and c at zero latent
// variables for one with latent variables but no residual of its own;
// errors for wrong lengths.
func TestCheckResidual(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(9, 2))
	g, err := Func(2, 3, 2, ctDiscFunc)
	require.NoError(t, err)
	eq, err := Func(2, 3, 3, ctNonlinearFunc)
	require.NoError(t, err)
	c, err := WithInequalities(eq, g, 1e-3)
	require.NoError(t, err)
	a, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	violated := 0
	for range 20 {
		x, y := ctRandVec(rnd, 2, -1, 1), ctRandVec(rnd, 3, -2, 2)
		r := make([]float64, 5)
		require.NoError(t, CheckResidual(c, x, y, r))
		eqc, _ := ctEval(t, eq, x, y)
		gc, _ := ctEval(t, g, x, y)
		assert.Equal(t, eqc, r[:3])
		mx := 0.0
		for _, v := range eqc {
			mx = math.Max(mx, math.Abs(v))
		}
		for j, v := range gc {
			assert.Equal(t, math.Max(v, 0), r[3+j], "max(g_%d, 0)", j)
			if v > 0 {
				violated++
			}
			mx = math.Max(mx, math.Max(v, 0))
		}
		st, err := a.Check(mat.NewDense(1, 2, x), mat.NewDense(1, 3, y))
		require.NoError(t, err)
		assert.Equal(t, mx, st.Before.Max)

		plain := make([]float64, 3)
		require.NoError(t, CheckResidual(eq, x, y, plain))
		assert.Equal(t, eqc, plain)

		// Latent variables without a residual of their own: c at (y, 0).
		wrapped := make([]float64, 5)
		require.NoError(t, CheckResidual(&capWrap{Constraint: c, k: Capabilities{Latent: 2}}, x, y, wrapped))
		atZero, _ := ctEval(t, c, x, append(append([]float64(nil), y...), 0, 0))
		assert.Equal(t, atZero, wrapped)
	}
	assert.Positive(t, violated, "some inequality violated among the samples")
	assert.ErrorContains(t, CheckResidual(c, make([]float64, 2), make([]float64, 5), make([]float64, 5)), "want 2, 3, 5")
	assert.Error(t, CheckResidual(eq, make([]float64, 2), make([]float64, 3), make([]float64, 2)))
}
