package hd_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

// seeded returns r as a variable: ϵ₁ and ϵ₂ parts 1, so f(seeded(r)) has
// parts (f, f′, f′, f″).
func seeded(r float64) hd.Number { return hd.Number{Real: r, E1mag: 1, E2mag: 1} }

// TestUnaryClosedForm checks value, f′ and f″ of every one-argument helper
// against closed forms, at zero and away from it.
func TestUnaryClosedForm(t *testing.T) {
	sech2 := func(r float64) float64 { c := math.Cosh(r); return 1 / (c * c) }
	for _, tc := range []struct {
		name       string
		f          func(hd.Number) hd.Number
		f0, f1, f2 func(r float64) float64
		at         []float64
	}{
		{"Neg", hd.Neg, func(r float64) float64 { return -r }, func(float64) float64 { return -1 }, func(float64) float64 { return 0 }, []float64{0, 2.5}},
		{"Scale", func(a hd.Number) hd.Number { return hd.Scale(3, a) }, func(r float64) float64 { return 3 * r }, func(float64) float64 { return 3 }, func(float64) float64 { return 0 }, []float64{0, -1.5}},
		{"Square", hd.Square, func(r float64) float64 { return r * r }, func(r float64) float64 { return 2 * r }, func(float64) float64 { return 2 }, []float64{0, -1.5, 3}},
		{"Inv", hd.Inv, func(r float64) float64 { return 1 / r }, func(r float64) float64 { return -1 / (r * r) }, func(r float64) float64 { return 2 / (r * r * r) }, []float64{-0.3, 2, 1e-5}},
		{"Pow 2.5", func(a hd.Number) hd.Number { return hd.Pow(a, 2.5) }, func(r float64) float64 { return math.Pow(r, 2.5) }, func(r float64) float64 { return 2.5 * math.Pow(r, 1.5) }, func(r float64) float64 { return 3.75 * math.Sqrt(r) }, []float64{0, 0.4, 3}},
		{"Pow 3", func(a hd.Number) hd.Number { return hd.Pow(a, 3) }, func(r float64) float64 { return r * r * r }, func(r float64) float64 { return 3 * r * r }, func(r float64) float64 { return 6 * r }, []float64{-2, 0, 1.2}},
		{"Pow −1", func(a hd.Number) hd.Number { return hd.Pow(a, -1) }, func(r float64) float64 { return 1 / r }, func(r float64) float64 { return -1 / (r * r) }, func(r float64) float64 { return 2 / (r * r * r) }, []float64{-2, 0.5}},
		{"Pow 1", func(a hd.Number) hd.Number { return hd.Pow(a, 1) }, func(r float64) float64 { return r }, func(float64) float64 { return 1 }, func(float64) float64 { return 0 }, []float64{-2, 0, 0.5}},
		{"Pow 0", func(a hd.Number) hd.Number { return hd.Pow(a, 0) }, func(float64) float64 { return 1 }, func(float64) float64 { return 0 }, func(float64) float64 { return 0 }, []float64{-2, 0, 0.5}},
		{"Sqrt", hd.Sqrt, math.Sqrt, func(r float64) float64 { return 0.5 / math.Sqrt(r) }, func(r float64) float64 { return -0.25 / (r * math.Sqrt(r)) }, []float64{1e-6, 0.5, 4}},
		{"Exp", hd.Exp, math.Exp, math.Exp, math.Exp, []float64{-3, 0, 1.7}},
		{"Log", hd.Log, math.Log, func(r float64) float64 { return 1 / r }, func(r float64) float64 { return -1 / (r * r) }, []float64{1e-4, 1, 7}},
		{"Log10", hd.Log10, math.Log10, func(r float64) float64 { return 1 / (r * math.Ln10) }, func(r float64) float64 { return -1 / (r * r * math.Ln10) }, []float64{0.01, 1, 350}},
		{"Sin", hd.Sin, math.Sin, math.Cos, func(r float64) float64 { return -math.Sin(r) }, []float64{0, 1, -2.5}},
		{"Cos", hd.Cos, math.Cos, func(r float64) float64 { return -math.Sin(r) }, func(r float64) float64 { return -math.Cos(r) }, []float64{0, 1, -2.5}},
		{"Tanh", hd.Tanh, math.Tanh, sech2, func(r float64) float64 { return -2 * math.Tanh(r) * sech2(r) }, []float64{0, 0.8, -3}},
		{"Atan", hd.Atan, math.Atan, func(r float64) float64 { return 1 / (1 + r*r) }, func(r float64) float64 { return -2 * r / ((1 + r*r) * (1 + r*r)) }, []float64{0, 0.8, -3}},
		{"Abs", hd.Abs, math.Abs, func(r float64) float64 { return math.Copysign(1, r) }, func(float64) float64 { return 0 }, []float64{-1.5, 2, 1e-300, -1e-300}},
		{"SignedSquare", hd.SignedSquare, func(r float64) float64 { return r * math.Abs(r) }, func(r float64) float64 { return 2 * math.Abs(r) },
			func(r float64) float64 { return math.Copysign(2, r) }, []float64{-1.5, 0.7, 1e-300, -1e-300}},
	} {
		for _, r := range tc.at {
			t.Run(fmt.Sprintf("%s(%g)", tc.name, r), func(t *testing.T) {
				got := tc.f(seeded(r))
				want := hd.Number{Real: tc.f0(r), E1mag: tc.f1(r), E2mag: tc.f1(r), E1E2mag: tc.f2(r)}
				assertClose(t, want, got, 1e-13)
			})
		}
	}
}

// TestChainAtZero checks the f′(a₀)·a₁₂ term of the chain rule at a real
// part of exactly 0, which gonum's Sin, Tanh and Atan drop: for
// g(u, v) = f(u·v), ∂²g/∂u∂v at (0, 0) is f′(0) = 1.
func TestChainAtZero(t *testing.T) {
	u := hd.Number{E1mag: 1}
	v := hd.Number{E2mag: 1}
	for name, f := range map[string]func(hd.Number) hd.Number{
		"Sin": hd.Sin, "Tanh": hd.Tanh, "Atan": hd.Atan, "Exp": hd.Exp,
		"Pow 1": func(a hd.Number) hd.Number { return hd.Pow(a, 1) },
	} {
		assert.Equal(t, 1.0, f(hd.Mul(u, v)).E1E2mag, name)
	}
	assert.Equal(t, 0.0, hyperdual.Sin(hd.Mul(u, v)).E1E2mag, "gonum's Sin (if this fails, gonum fixed it; the doc comment can drop the remark)")
}

// TestAgainstFiniteDifferences compares the value, gradient and Hessian of
// formulas in two variables, read off hyperdual seeds, with central finite
// differences of the same formulas in float64.
func TestAgainstFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    func(u, v hd.Number) hd.Number
		f    func(u, v float64) float64
		at   [][2]float64
	}{
		{"Add", func(u, v hd.Number) hd.Number { return hd.Add(u, v, hd.Mul(u, v), hd.Const(2)) }, func(u, v float64) float64 { return u + v + u*v + 2 }, [][2]float64{{0.7, -1.3}, {0, 0}}},
		{"Sub", func(u, v hd.Number) hd.Number { return hd.Sub(hd.Square(u), hd.Mul(u, v)) }, func(u, v float64) float64 { return u*u - u*v }, [][2]float64{{0.7, -1.3}}},
		{"Mul", func(u, v hd.Number) hd.Number { return hd.Mul(u, v, u, hd.Const(3)) }, func(u, v float64) float64 { return 3 * u * v * u }, [][2]float64{{0.7, -1.3}, {0, 0}}},
		{"Div", hd.Div, func(u, v float64) float64 { return u / v }, [][2]float64{{0.7, -1.3}, {2, 0.3}, {0, 1}}},
		{"Div of sums", func(u, v hd.Number) hd.Number {
			return hd.Div(hd.Scale(2.5, u), hd.Add(hd.Const(1), hd.Scale(1.5, u), hd.Square(v)))
		}, func(u, v float64) float64 { return 2.5 * u / (1 + 1.5*u + v*v) }, [][2]float64{{0.3, 0.2}, {0.9, -1}}},
		{"Inv", func(u, v hd.Number) hd.Number { return hd.Inv(hd.Mul(u, v)) }, func(u, v float64) float64 { return 1 / (u * v) }, [][2]float64{{0.7, -1.3}}},
		{"Pow", func(u, v hd.Number) hd.Number { return hd.Pow(hd.Add(u, hd.Square(v)), 1.7) }, func(u, v float64) float64 { return math.Pow(u+v*v, 1.7) }, [][2]float64{{0.7, -1.3}}},
		{"Sqrt", func(u, v hd.Number) hd.Number { return hd.Sqrt(hd.Add(hd.Square(u), hd.Square(v))) }, func(u, v float64) float64 { return math.Hypot(u, v) }, [][2]float64{{0.7, -1.3}}},
		{"Exp", func(u, v hd.Number) hd.Number { return hd.Exp(hd.Mul(u, v)) }, func(u, v float64) float64 { return math.Exp(u * v) }, [][2]float64{{0.7, -1.3}, {0, 0}}},
		{"Log", func(u, v hd.Number) hd.Number { return hd.Log(hd.Div(u, v)) }, func(u, v float64) float64 { return math.Log(u / v) }, [][2]float64{{0.7, 1.3}}},
		{"Antoine", func(u, v hd.Number) hd.Number {
			return hd.Sub(hd.Log10(u), hd.Sub(hd.Const(4.1), hd.Div(hd.Const(1200), hd.Add(v, hd.Const(-45)))))
		}, func(u, v float64) float64 { return math.Log10(u) - (4.1 - 1200/(v-45)) }, [][2]float64{{1.2, 350}}},
		{"Sin", func(u, v hd.Number) hd.Number { return hd.Sin(hd.Mul(u, v)) }, func(u, v float64) float64 { return math.Sin(u * v) }, [][2]float64{{0.7, -1.3}, {0, 0}}},
		{"Cos", func(u, v hd.Number) hd.Number { return hd.Cos(hd.Add(u, hd.Square(v))) }, func(u, v float64) float64 { return math.Cos(u + v*v) }, [][2]float64{{0.7, -1.3}, {0, 0}}},
		{"Tanh", func(u, v hd.Number) hd.Number { return hd.Tanh(hd.Mul(u, v)) }, func(u, v float64) float64 { return math.Tanh(u * v) }, [][2]float64{{0.7, -1.3}, {0, 0}}},
		{"Atan", func(u, v hd.Number) hd.Number { return hd.Atan(hd.Mul(u, v)) }, func(u, v float64) float64 { return math.Atan(u * v) }, [][2]float64{{0.7, -1.3}, {0, 0}}},
		{"Abs", func(u, v hd.Number) hd.Number { return hd.Mul(hd.Abs(hd.Sub(hd.Mul(u, v), hd.Const(0.3))), v) },
			func(u, v float64) float64 { return math.Abs(u*v-0.3) * v }, [][2]float64{{0.7, -1.3}, {0.7, 1.3}}},
		{"SignedSquare", func(u, v hd.Number) hd.Number { return hd.Scale(2.5, hd.SignedSquare(hd.Sub(u, hd.Square(v)))) },
			func(u, v float64) float64 { d := u - v*v; return 2.5 * d * math.Abs(d) }, [][2]float64{{0.7, -1.3}, {0.7, 0.3}}},
		{"Dot", func(u, v hd.Number) hd.Number {
			return hd.Dot([]hd.Number{u, v, hd.Const(2)}, []hd.Number{v, v, u})
		}, func(u, v float64) float64 { return u*v + v*v + 2*u }, [][2]float64{{0.7, -1.3}}},
		{"WeightedSum", func(u, v hd.Number) hd.Number {
			return hd.WeightedSum([]float64{2, -3, 0.5}, []hd.Number{u, v, hd.Mul(u, v)})
		}, func(u, v float64) float64 { return 2*u - 3*v + 0.5*u*v }, [][2]float64{{0.7, -1.3}}},
	} {
		for _, p := range tc.at {
			t.Run(fmt.Sprintf("%s%v", tc.name, p), func(t *testing.T) {
				val, grad, hess := derivatives(tc.h, p)
				f := func(x []float64) float64 { return tc.f(x[0], x[1]) }
				assert.InDelta(t, tc.f(p[0], p[1]), val, 1e-14*(1+math.Abs(val)), "value")
				wantG := fd.Gradient(nil, f, p[:], &fd.Settings{Formula: fd.Central})
				var wantH mat.SymDense
				fd.Hessian(&wantH, f, p[:], &fd.Settings{Formula: fd.Central})
				for i := range 2 {
					assert.InDelta(t, wantG[i], grad[i], 1e-7*(1+math.Abs(wantG[i])), "∂/∂x%d", i)
					for j := range 2 {
						assert.InDelta(t, wantH.At(i, j), hess[i][j], 1e-3*(1+math.Abs(wantH.At(i, j))), "∂²/∂x%d∂x%d", i, j)
					}
				}
			})
		}
	}
}

// derivatives returns h's value, gradient and Hessian at p, each Hessian
// entry from one evaluation with ϵ₁ = e_i and ϵ₂ = e_j.
func derivatives(h func(u, v hd.Number) hd.Number, p [2]float64) (val float64, grad [2]float64, hess [2][2]float64) {
	for i := range 2 {
		for j := range 2 {
			var x [2]hd.Number
			x[0], x[1] = hd.Const(p[0]), hd.Const(p[1])
			x[i].E1mag = 1
			x[j].E2mag = 1
			r := h(x[0], x[1])
			val, grad[i], hess[i][j] = r.Real, r.E1mag, r.E1E2mag
		}
	}
	return val, grad, hess
}

// TestDivNearZero checks a/b for b near zero against the closed forms
// ∂(a/b)/∂a = 1/b, ∂/∂b = −a/b², ∂²/∂b² = 2a/b³, ∂²/∂a∂b = −1/b², and that
// a constant denominator gives zero (not NaN) derivative parts even when
// b² underflows.
func TestDivNearZero(t *testing.T) {
	const a = 0.75
	for _, b := range []float64{1e-8, -1e-8, 1e-100, -1e-150, 1e-170, 1e-300} {
		t.Run(fmt.Sprint(b), func(t *testing.T) {
			num := hd.Number{Real: a, E1mag: 1}
			den := hd.Number{Real: b, E2mag: 1}
			assertClose(t, hd.Number{Real: a / b, E1mag: 1 / b, E2mag: -a / b / b, E1E2mag: -1 / b / b}, hd.Div(num, den), 1e-15)

			bb := hd.Number{Real: b, E1mag: 1, E2mag: 1}
			assertClose(t, hd.Number{Real: a / b, E1mag: -a / b / b, E2mag: -a / b / b, E1E2mag: 2 * a / b / b / b}, hd.Div(hd.Const(a), bb), 1e-15)

			got := hd.Div(hd.Number{Real: a, E1mag: 1, E2mag: 1}, hd.Const(b))
			assertClose(t, hd.Number{Real: a / b, E1mag: 1 / b, E2mag: 1 / b}, got, 1e-15)
			assert.Zero(t, got.E1E2mag)
		})
	}
	t.Run("exactly 0", func(t *testing.T) {
		// Constants are TestConstantSingularValues' concern: their dual
		// parts stay zero.
		for _, q := range []hd.Number{
			hd.Div(hd.Number{Real: 1, E1mag: 1}, hd.Number{E2mag: 1}),
			hd.Div(hd.Const(1), seeded(0)),
			hd.Inv(seeded(0)),
		} {
			for _, p := range []float64{q.Real, q.E1mag, q.E2mag, q.E1E2mag} {
				assert.True(t, math.IsInf(p, 0) || math.IsNaN(p), "%v", q)
			}
		}
	})
}

// TestSpecialValues checks the documented behaviour at and outside the
// edges of the domains.
func TestSpecialValues(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name      string
		got, want hd.Number
	}{
		{"Sqrt of constant 0", hd.Sqrt(hd.Const(0)), hd.Number{}},
		{"Pow of constant 0", hd.Pow(hd.Const(0), 0.5), hd.Number{}},
		{"Log of constant 0", hd.Log(hd.Const(0)), hd.Number{Real: -inf}},
		{"Sqrt at 0", hd.Sqrt(seeded(0)), hd.Number{E1mag: inf, E2mag: inf, E1E2mag: -inf}},
		{"Log at 0", hd.Log(seeded(0)), hd.Number{Real: -inf, E1mag: inf, E2mag: inf, E1E2mag: -inf}},
		{"Pow 0.5 at 0", hd.Pow(seeded(0), 0.5), hd.Number{E1mag: inf, E2mag: inf, E1E2mag: -inf}},
		{"Pow 1.5 at 0", hd.Pow(seeded(0), 1.5), hd.Number{E1E2mag: inf}},
		{"Pow 2 at 0", hd.Pow(seeded(0), 2), hd.Number{E1E2mag: 2}},
		{"Pow 3 of negative", hd.Pow(seeded(-2), 3), hd.Number{Real: -8, E1mag: 12, E2mag: 12, E1E2mag: -12}},
		{"Atan at +Inf", hd.Atan(seeded(inf)), hd.Number{Real: math.Pi / 2}},
		{"Tanh at −Inf", hd.Tanh(seeded(-inf)), hd.Number{Real: -1}},
		{"Add of none", hd.Add(), hd.Number{}},
		{"Mul of none", hd.Mul(), hd.Const(1)},
		{"Dot of none", hd.Dot(nil, nil), hd.Number{}},
		{"Abs at 0", hd.Abs(seeded(0)), hd.Number{}},
		{"Abs at −0", hd.Abs(seeded(math.Copysign(0, -1))), hd.Number{}},
		{"Abs at +Inf", hd.Abs(seeded(inf)), hd.Number{Real: inf, E1mag: 1, E2mag: 1}},
		{"Abs at −Inf", hd.Abs(seeded(-inf)), hd.Number{Real: inf, E1mag: -1, E2mag: -1}},
		{"SignedSquare at 0", hd.SignedSquare(seeded(0)), hd.Number{}},
		{"SignedSquare of u·v at 0", hd.SignedSquare(hd.Mul(hd.Number{E1mag: 1}, hd.Number{E2mag: 1})), hd.Number{}},
		{"SignedSquare at −Inf", hd.SignedSquare(seeded(-inf)), hd.Number{Real: -inf, E1mag: inf, E2mag: inf, E1E2mag: -2}},
	} {
		assert.Equal(t, tc.want, tc.got, tc.name)
	}
	for name, q := range map[string]hd.Number{
		"Sqrt(−1)": hd.Sqrt(seeded(-1)), "Log(−1)": hd.Log(seeded(-1)), "Log10(−1)": hd.Log10(seeded(-1)),
		"Pow(−1, 0.5)": hd.Pow(seeded(-1), 0.5), "Abs(NaN)": hd.Abs(seeded(math.NaN())),
		"SignedSquare(NaN)": hd.SignedSquare(seeded(math.NaN())),
	} {
		for _, p := range []float64{q.Real, q.E1mag, q.E2mag, q.E1E2mag} {
			assert.True(t, math.IsNaN(p), "%s = %v", name, q)
		}
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	assert.PanicsWithValue(t, "hd: Dot: len(a) = 1, len(b) = 2", func() { hd.Dot(make([]hd.Number, 1), make([]hd.Number, 2)) })
	assert.PanicsWithValue(t, "hd: WeightedSum: len(w) = 2, len(a) = 1", func() { hd.WeightedSum(make([]float64, 2), make([]hd.Number, 1)) })
}

// TestZeroDenominatorIsAnError checks the documented end-to-end behaviour:
// a constraint that divides by zero at the prediction makes Project return
// an error naming the sample, not NaN output.
func TestZeroDenominatorIsAnError(t *testing.T) {
	c, err := enforce.Func(0, 2, 1, func(_, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Div(y[0], y[1]), hd.Const(2))
	})
	require.NoError(t, err)
	a, err := enforce.NewAdaNP(c, enforce.Settings{})
	require.NoError(t, err)
	_, _, err = a.Project(nil, mat.NewDense(2, 2, []float64{1, 1, 1, 0}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sample 1")
	yt, st, err := a.Project(nil, mat.NewDense(1, 2, []float64{1, 1e-3}))
	require.NoError(t, err)
	assert.True(t, st.Converged())
	assert.InDelta(t, 2, yt.At(0, 0)/yt.At(0, 1), 1e-6)
}

// TestNoAllocation checks that a Func constraint written with the helpers,
// variadic forms included, evaluates its Jacobian and curvature without
// allocating.
func TestNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	c, err := enforce.Func(2, 4, 3, flash(2.5))
	require.NoError(t, err)
	x, y := []float64{1, 0.4}, []float64{0.5, 0.5, 0.3, 0.5}
	cv, jy := make([]float64, 3), make([]float64, 12)
	hv := enforce.CapabilitiesOf(c).HessVec
	w, v, out := []float64{1, -1, 0.5}, []float64{1, 2, 3, 4}, make([]float64, 4)
	allocs := testing.AllocsPerRun(100, func() {
		c.Eval(x, y, cv, jy)
		hv(x, y, w, v, out)
	})
	assert.Zero(t, allocs)
}

// assertClose checks every part of got against want with relative
// tolerance tol; infinite parts must match exactly.
func assertClose(t *testing.T, want, got hd.Number, tol float64) {
	t.Helper()
	w := []float64{want.Real, want.E1mag, want.E2mag, want.E1E2mag}
	g := []float64{got.Real, got.E1mag, got.E2mag, got.E1E2mag}
	for i, name := range []string{"real", "ϵ₁", "ϵ₂", "ϵ₁ϵ₂"} {
		if math.IsInf(w[i], 0) {
			assert.Equal(t, w[i], g[i], name)
			continue
		}
		assert.InDelta(t, w[i], g[i], tol*math.Max(1, math.Abs(w[i])), "%s part: want %v, got %v", name, want, got)
	}
}

// TestBeforeAfter checks that docs/guide.md's and the package doc's "before"
// (gonum's hyperdual alone) and "after" (hd) forms of the flash drum's
// equations agree.
func TestBeforeAfter(t *testing.T) {
	const alpha = 2.5
	before, err := enforce.Func(2, 4, 3, func(x, y, c []hyperdual.Number) {
		F, z := x[0], x[1]
		V, L, xl, yv := y[0], y[1], y[2], y[3]
		c[0] = hyperdual.Sub(F, hyperdual.Add(V, L))
		c[1] = hyperdual.Sub(hyperdual.Mul(F, z), hyperdual.Add(hyperdual.Mul(V, yv), hyperdual.Mul(L, xl)))
		c[2] = hyperdual.Sub(yv, hyperdual.Mul(hyperdual.Scale(alpha, xl),
			hyperdual.Inv(hyperdual.Add(hyperdual.Number{Real: 1}, hyperdual.Scale(alpha-1, xl)))))
	})
	require.NoError(t, err)
	after, err := enforce.Func(2, 4, 3, flash(alpha))
	require.NoError(t, err)
	x, y := []float64{1.2, 0.4}, []float64{0.5, 0.6, 0.3, 0.55}
	var cb, ca [3]float64
	var jb, ja [12]float64
	before.Eval(x, y, cb[:], jb[:])
	after.Eval(x, y, ca[:], ja[:])
	assert.InDeltaSlice(t, cb[:], ca[:], 1e-15)
	assert.InDeltaSlice(t, jb[:], ja[:], 1e-15)
	w, v := []float64{1, -2, 0.5}, []float64{0.3, -1, 2, 0.7}
	var hb, ha [4]float64
	enforce.CapabilitiesOf(before).HessVec(x, y, w, v, hb[:])
	enforce.CapabilitiesOf(after).HessVec(x, y, w, v, ha[:])
	assert.InDeltaSlice(t, hb[:], ha[:], 1e-14)
}
