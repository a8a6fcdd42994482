package acopf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestViolations checks Model.Violations: the reference optima (IPOPT's
// optima of PGLib's formulation) are feasible to 1e-6 on every kind, and
// a point that breaks one kind of constraint by a known amount reports
// that amount in that field and in Eq or Ineq; a NaN is reported, not
// dropped.
func TestViolations(t *testing.T) {
	for _, name := range []string{"case57_ieee", "case118_ieee", "case300_ieee", "case1354_pegase", "case2869_pegase"} {
		m := loadModel(t, name)
		opt, err := ReferenceOptimum(name)
		require.NoError(t, err)
		v := m.Violations(m.Loads(), opt.Y)
		assert.LessOrEqual(t, v.Eq(), 1e-6, name)
		assert.LessOrEqual(t, v.Ineq(), 1e-6, name)
		for _, f := range []float64{v.PowerFlow, v.Bounds, v.Thermal, v.Angle} {
			assert.GreaterOrEqual(t, f, 0.0, name)
		}
	}

	m := loadModel(t, "case118_ieee")
	opt, err := ReferenceOptimum("case118_ieee")
	require.NoError(t, err)
	c := m.Case
	nb, ng := len(c.Buses), len(c.Gens)
	x := m.Loads()
	base := m.Violations(x, opt.Y)
	const d = 0.05
	// Each kind broken by d at the optimum: the power flow by moving Pg,
	// the others by moving a bound or a limit of the case past the
	// optimum's value (branch 7's rating by d below its larger end flow,
	// √(P² + Q²) of NLP's rows).
	p, err := m.NLP(x, Formulation{})
	require.NoError(t, err)
	gn := make([]float64, p.M)
	p.Constraints(opt.Y, gn)
	_, _, npf := m.PowerFlow().Dims()
	const e = 7
	k := 0 // branch e's position among the rated branches
	for _, b := range c.Branches[:e] {
		if !math.IsInf(b.RateA, 1) {
			k++
		}
	}
	br := c.Branches[e]
	require.False(t, math.IsInf(br.RateA, 1))
	theta := opt.Y[nb+br.From] - opt.Y[nb+br.To]
	for _, tc := range []struct {
		name  string
		edit  func(c *Case, y []float64)
		field func(v Violation) float64
	}{
		{"power flow", func(c *Case, y []float64) { y[2*nb] += d }, Violation.Eq},
		{"Vmax", func(c *Case, y []float64) { c.Buses[5].Vmax = y[5] - d }, func(v Violation) float64 { return v.Bounds }},
		{"Qmin", func(c *Case, y []float64) { c.Gens[2].Qmin = y[2*nb+ng+2] + d }, func(v Violation) float64 { return v.Bounds }},
		{"AngMax", func(c *Case, y []float64) { c.Branches[e].AngMax = theta - d }, func(v Violation) float64 { return v.Angle }},
		{"AngMin", func(c *Case, y []float64) { c.Branches[e].AngMin = theta + d }, func(v Violation) float64 { return v.Angle }},
		{"thermal", func(c *Case, y []float64) {
			c.Branches[e].RateA = math.Sqrt(math.Max(gn[npf+2*k], gn[npf+2*k+1])) - d
		}, func(v Violation) float64 { return v.Thermal }},
	} {
		y := append([]float64(nil), opt.Y...)
		m2, c2 := *m, *c
		c2.Buses = append([]Bus(nil), c.Buses...)
		c2.Gens = append([]Gen(nil), c.Gens...)
		c2.Branches = append([]Branch(nil), c.Branches...)
		m2.Case = &c2
		tc.edit(&c2, y)
		v := m2.Violations(x, y)
		assert.InDelta(t, d, tc.field(v), 1e-9, tc.name)
		if tc.name != "power flow" {
			assert.InDelta(t, d, v.Ineq(), 1e-9, tc.name)
			assert.Equal(t, base.Eq(), v.Eq(), tc.name)
		}
	}

	// NaNs are reported.
	for _, k := range []int{0, nb + 3, 2*nb + 1} {
		y := append([]float64(nil), opt.Y...)
		y[k] = math.NaN()
		v := m.Violations(x, y)
		assert.True(t, math.IsNaN(v.Eq()), "NaN at %d: %+v", k, v)
	}
	y := append([]float64(nil), opt.Y...)
	y[nb+br.From] = math.NaN()
	v := m.Violations(x, y)
	assert.True(t, math.IsNaN(v.Thermal) && math.IsNaN(v.Angle) && math.IsNaN(v.Ineq()), "%+v", v)
	assert.Panics(t, func() { m.Violations(x, y[1:]) })
	assert.Panics(t, func() { m.Violations(x[1:], y) })
	assert.False(t, math.IsNaN(worse(1, 2)))
	assert.True(t, math.IsNaN(worse(math.NaN(), 2)) && math.IsNaN(worse(2, math.NaN())))
}
