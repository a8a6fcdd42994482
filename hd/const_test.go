package hd_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/hd"
)

// constValues are the real parts TestConstantsStayConstant tries: ordinary
// values, the singular points of the functions (0 of both signs), values
// outside their domains, values whose results overflow, and non-finite
// values.
var constValues = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -2.5, 3, 1e-310, -1e-310, 1e300, -1e300, 800,
	math.Inf(1), math.Inf(-1), math.NaN()}

// constCases returns, by function name, every way each exported function
// of hd is applied to constants in TestConstantsStayConstant.
func constCases() map[string][]hd.Number {
	c := hd.Const
	vals := constValues
	cases := map[string][]hd.Number{}
	add := func(name string, n hd.Number) { cases[name] = append(cases[name], n) }
	for _, a := range vals {
		add("Const", c(a))
		add("Neg", hd.Neg(c(a)))
		add("Inv", hd.Inv(c(a)))
		add("Square", hd.Square(c(a)))
		add("Sqrt", hd.Sqrt(c(a)))
		add("Exp", hd.Exp(c(a)))
		add("Log", hd.Log(c(a)))
		add("Log10", hd.Log10(c(a)))
		add("Sin", hd.Sin(c(a)))
		add("Cos", hd.Cos(c(a)))
		add("Tanh", hd.Tanh(c(a)))
		add("Atan", hd.Atan(c(a)))
		add("Abs", hd.Abs(c(a)))
		add("SignedSquare", hd.SignedSquare(c(a)))
		for _, p := range []float64{0, 1, 2, 3, 0.5, 1.5, -1, -0.5, -2, math.Inf(1), math.NaN()} {
			add("Pow", hd.Pow(c(a), p))
		}
		for _, b := range vals {
			add("Add", hd.Add(c(a), c(b), c(1)))
			add("Sub", hd.Sub(c(a), c(b)))
			add("Scale", hd.Scale(a, c(b)))
			add("Mul", hd.Mul(c(a), c(b), c(2)))
			add("Div", hd.Div(c(a), c(b)))
			add("Dot", hd.Dot([]hd.Number{c(a), c(1)}, []hd.Number{c(b), c(a)}))
			add("WeightedSum", hd.WeightedSum([]float64{a, 1}, []hd.Number{c(b), c(a)}))
		}
	}
	add("Add", hd.Add())
	add("Mul", hd.Mul())
	add("Dot", hd.Dot(nil, nil))
	add("WeightedSum", hd.WeightedSum(nil, nil))
	return cases
}

// TestConstantsStayConstant checks the package's promise that a constant
// stays a constant: every exported function applied to constants returns
// exactly zero dual parts (never NaN), also at singular points (Inv(0),
// Div(·, 0), Log(0), Pow(0, −1)), outside the domains (Sqrt(−1)) and for
// infinite or NaN values. The list of functions is read from the package's
// source, so a function added to hd must be added here.
func TestConstantsStayConstant(t *testing.T) {
	cases := constCases()
	for _, name := range exportedFuncs(t) {
		results, ok := cases[name]
		if !assert.True(t, ok, "hd.%s is not tried on constants: add it to constCases", name) {
			continue
		}
		for i, r := range results {
			assert.True(t, r.E1mag == 0 && r.E2mag == 0 && r.E1E2mag == 0, "hd.%s, case %d: %v", name, i, r)
		}
	}
}

// TestConstantSingularValues checks the value parts the package doc states
// for constants at singular points and outside the domains.
func TestConstantSingularValues(t *testing.T) {
	inf, c := math.Inf(1), hd.Const
	for _, tc := range []struct {
		name string
		got  hd.Number
		want float64 // the real part; NaN means NaN
	}{
		{"Inv(0)", hd.Inv(c(0)), inf},
		{"Inv(−0)", hd.Inv(c(math.Copysign(0, -1))), -inf},
		{"Div(2, 0)", hd.Div(c(2), c(0)), inf},
		{"Div(−2, 0)", hd.Div(c(-2), c(0)), -inf},
		{"Div(0, 0)", hd.Div(c(0), c(0)), math.NaN()},
		{"Div(1, Inf)", hd.Div(c(1), c(inf)), 0},
		{"Log(0)", hd.Log(c(0)), -inf},
		{"Log10(0)", hd.Log10(c(0)), -inf},
		{"Pow(0, −1)", hd.Pow(c(0), -1), inf},
		{"Sqrt(−1)", hd.Sqrt(c(-1)), math.NaN()},
		{"Log(−1)", hd.Log(c(-1)), math.NaN()},
		{"Log10(−1)", hd.Log10(c(-1)), math.NaN()},
		{"Pow(−1, 0.5)", hd.Pow(c(-1), 0.5), math.NaN()},
		{"Mul(Inf, 2)", hd.Mul(c(inf), c(2)), inf},
		{"Scale(Inf, 2)", hd.Scale(inf, c(2)), inf},
	} {
		if math.IsNaN(tc.want) {
			assert.True(t, math.IsNaN(tc.got.Real), "%s = %v", tc.name, tc.got)
		} else {
			assert.Equal(t, math.Float64bits(tc.want), math.Float64bits(tc.got.Real), "%s = %v", tc.name, tc.got)
		}
		assert.Equal(t, [3]float64{}, [3]float64{tc.got.E1mag, tc.got.E2mag, tc.got.E1E2mag}, "%s: dual parts", tc.name)
	}
}

// exportedFuncs returns the names of the exported functions declared in the
// package's non-test files.
func exportedFuncs(t *testing.T) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, 0)
	require.NoError(t, err)
	var names []string
	for _, f := range pkgs["hd"].Files {
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() {
				names = append(names, fn.Name.Name)
			}
		}
	}
	require.NotEmpty(t, names, fmt.Sprint("no exported functions found in ", pkgs))
	return names
}

var sinkNumber hd.Number

// BenchmarkArithmetic evaluates the package doc's vapour–liquid
// equilibrium, a product and a dot product on variables: the cost of the
// zero-part checks in Mul, Div and Dot.
func BenchmarkArithmetic(b *testing.B) {
	const alpha = 2.5
	y := []hd.Number{{Real: 0.3, E1mag: 1}, {Real: 0.6, E2mag: 1}, {Real: 0.1, E1mag: 0.5, E2mag: 0.5}}
	b.ReportAllocs()
	for b.Loop() {
		v := hd.Sub(y[1], hd.Div(hd.Scale(alpha, y[0]), hd.Add(hd.Const(1), hd.Scale(alpha-1, y[0]))))
		v = hd.Add(v, hd.Mul(y[0], y[1], y[2]), hd.Dot(y, y))
		sinkNumber = v
	}
}
