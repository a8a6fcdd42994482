package acopf

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// edit applies the replacements old → new (each must apply once) to the
// tiny case.
func edit(t *testing.T, src string, pairs ...string) string {
	t.Helper()
	require.Zero(t, len(pairs)%2)
	for k := 0; k < len(pairs); k += 2 {
		require.Equal(t, 1, strings.Count(src, pairs[k]), "%q must occur once", pairs[k])
		src = strings.Replace(src, pairs[k], pairs[k+1], 1)
	}
	return src
}

// Lines of the tiny case that the tests below switch off.
const (
	tinyLine1020 = "\t10\t20\t0\t0.1\t0.2\t250\t250\t250\t0\t0\t1\t-30\t30;"
	tinyXfmr     = "\t20\t30\t0\t0.2\t0\t0\t0\t0\t2\t90\t1\t0\t0;"
	tinyGen10    = "\t10\t60\t5\t300\t-300\t1.0\t100\t1\t250"
	tinyGen20    = "\t20\t0\t0\tInf\t-Inf\t1.0\t100\t1\t50"
)

// off sets the status column (column 11 of a branch, 8 of a generator)
// of one of the lines above to 0.
func off(line string) string {
	f := strings.Split(line, "\t")
	if strings.HasSuffix(line, ";") { // a branch: tab, 13 columns
		f[11] = "0"
	} else {
		f[8] = "0"
	}
	return strings.Join(f, "\t")
}

// TestParseStructuralErrors: each edit of the tiny case gives a grid that
// no projection can solve (or a bound that is empty), which the old
// reader accepted.
func TestParseStructuralErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pairs []string
		want  string
	}{
		{"Vmin > Vmax", []string{"\t20\t2\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t1.1\t0.9", "\t20\t2\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t0.9\t1.1"},
			"tiny.m:8: bus 20 has Vmin 1.1 > Vmax 0.9"},
		{"near-zero impedance", []string{tinyLine1020, "\t10\t20\t0\t1e-300\t0.2\t250\t250\t250\t0\t0\t1\t-30\t30;"},
			"tiny.m:24: branch 10–20 has impedance |R + jX| = 1e-300 p.u., below MinImpedance"},
		{"bus without a branch", []string{tinyXfmr, off(tinyXfmr)},
			"tiny.m: bus 30 has no in-service branch (an isolated bus"},
		{"island without a reference bus", []string{tinyLine1020, off(tinyLine1020)},
			"tiny.m: an island of 2 buses (30, 20) has no in-service branch to the rest of the grid and no reference bus (type 3)"},
		{"island without a generator", []string{tinyLine1020, off(tinyLine1020), tinyGen20, off(tinyGen20),
			"\t20\t2\t0\t0\t0\t0\t1\t1.0\t0\t230", "\t20\t3\t0\t0\t0\t0\t1\t1.0\t0\t230"},
			"tiny.m: the island of 2 buses (30, 20) has no in-service generator"},
		{"every generator off", []string{tinyGen10, off(tinyGen10), tinyGen20, off(tinyGen20)},
			"tiny.m: no in-service generator"},
		{"piecewise-linear breakpoints", []string{"\t1\t0\t0\t2\t0\t0\t50\t1000;", "\t1\t0\t0\t2\t50\t0\t50\t1000;"},
			"tiny.m:21: piecewise-linear gencost: breakpoint 2 at 50 MW does not follow breakpoint 1 at 50 MW"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(edit(t, tiny, tc.pairs...)), "tiny.m")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// The smallest impedance of MATPOWER's cases (case16am) is accepted.
	_, err := Parse(strings.NewReader(edit(t, tiny, tinyLine1020, "\t10\t20\t0\t6.2e-10\t0.2\t250\t250\t250\t0\t0\t1\t-30\t30;")), "tiny.m")
	assert.NoError(t, err)
	// A second island with its own reference bus and generator is a grid.
	c, err := Parse(strings.NewReader(edit(t, tiny, tinyLine1020, off(tinyLine1020),
		"\t20\t2\t0\t0\t0\t0\t1\t1.0\t0\t230", "\t20\t3\t0\t0\t0\t0\t1\t1.0\t0\t230")), "tiny.m")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, c.Refs)
}

// TestParseWarnings: what Parse drops from a usable case is named in
// Case.Warnings (the old reader dropped it silently).
func TestParseWarnings(t *testing.T) {
	c, err := Parse(strings.NewReader(tiny), "tiny.m")
	require.NoError(t, err)
	require.Len(t, c.Warnings, 1)
	assert.Equal(t, "dropped 1 isolated buses (type 4: 40) with 7 MW and 7 MVAr of load (absolute), 1 in-service generators and 1 in-service branches at them", c.Warnings[0])

	src := tiny + "mpc.dcline = [\n\t10\t20\t1\t10\t8.9\t0\t0\t1.01\t1\t-100\t100\t-Inf\tInf\t-Inf\tInf\t0\t0;\n" +
		"\t10\t30\t0\t0\t0\t0\t0\t1\t1\t0\t50\t-Inf\tInf\t-Inf\tInf\t0\t0;\n];\nmpc.A = [1 0 0];\n"
	c, err = Parse(strings.NewReader(edit(t, src, "\t40\t4\t7\t7", "\t40\t4\t0\t0", "\t30\t40\t0.01\t0.1\t0\t0\t0\t0\t0\t0\t1", "\t30\t40\t0.01\t0.1\t0\t0\t0\t0\t0\t0\t0",
		"\t40\t0\t0\t100\t-100\t1.0\t100\t1", "\t40\t0\t0\t100\t-100\t1.0\t100\t0")), "tiny.m")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"line 33: mpc.dcline: in-service DC lines are not modelled and were dropped, 1 of them (10–20 (PF 10 MW, Pmin -100, Pmax 100 MW)): the power they carry is missing from the balance of their buses",
		"line 37: mpc.A (an OPF extension: user constraints or costs) is not modelled and was dropped",
	}, c.Warnings, "an empty isolated bus and an out-of-service DC line are dropped quietly")
}

// TestCosts checks the cost errors of NewModel (a case without gencost
// used to get an error about piecewise-linear costs) and the evaluation
// of piecewise-linear costs (Cost.Eval used to panic).
func TestCosts(t *testing.T) {
	noCost := edit(t, tiny, tiny[strings.Index(tiny, "mpc.gencost"):strings.Index(tiny, "mpc.branch")], "")
	c, err := Parse(strings.NewReader(noCost), "tiny.m")
	require.NoError(t, err)
	_, err = NewModel(c)
	require.Error(t, err)
	assert.Equal(t, `acopf: NewModel: case "tiny" has no generation cost (no gencost matrix): the ACOPF objective needs a polynomial cost (gencost model 2) for every generator`, err.Error())
	assert.NotContains(t, err.Error(), "piecewise")

	c, err = Parse(strings.NewReader(tiny), "tiny.m")
	require.NoError(t, err)
	assert.ErrorContains(t, c.PolynomialCosts(), `case "tiny": generator 1 (bus 20) has a piecewise-linear active-power cost (gencost model 1; 1 of 2 generators have one)`)
	c.Gens[1].Cost = &Cost{Model: 2, Poly: []float64{1}}
	assert.NoError(t, c.PolynomialCosts())
	c.Gens[0].QCost = &Cost{Model: 1, Points: [][2]float64{{0, 0}, {1, 1}}}
	assert.ErrorContains(t, c.PolynomialCosts(), "generator 0 (bus 10) has a piecewise-linear reactive-power cost")

	// MATPOWER's totcost: the segment whose right end is the first at or
	// above p, the end segments extended.
	pwl := &Cost{Model: 1, Points: [][2]float64{{0, 0}, {1, 10}, {2, 30}}}
	for _, tc := range []struct{ p, f, df float64 }{
		{-1, -10, 10}, {0, 0, 10}, {0.5, 5, 10}, {1, 10, 10}, {1.5, 20, 20}, {2, 30, 20}, {3, 50, 20},
	} {
		f, df, d2f := pwl.Eval(tc.p)
		assert.InDelta(t, tc.f, f, 1e-12, "p = %v", tc.p)
		assert.Equal(t, tc.df, df, "p = %v", tc.p)
		assert.Zero(t, d2f)
	}
	f, df, _ := (&Cost{Model: 1, Points: [][2]float64{{1, 7}}}).Eval(3)
	assert.Equal(t, [2]float64{7, 0}, [2]float64{f, df})
	f, df, _ = (&Cost{Model: 1}).Eval(3)
	assert.Equal(t, [2]float64{0, 0}, [2]float64{f, df})
	assert.False(t, math.IsNaN(f))
}
