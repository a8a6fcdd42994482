package acopf

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMatrixElements checks how a row of a matrix splits into elements
// (as MATLAB splits them inside brackets) and what an element may be:
// MATPOWER's case533mt writes BASE_KV as 135/sqrt(3).
func TestMatrixElements(t *testing.T) {
	rd := &reader{name: "t.m", rc: &rawCase{matrices: map[string]*rawMatrix{}}, vars: map[string]value{"x": scalar(4)}, bad: map[string]int{"k": 3}}
	for _, tc := range []struct {
		row  string
		want []float64
	}{
		{"135/sqrt(3)", []float64{135 / math.Sqrt(3)}},
		{"1 -2", []float64{1, -2}},
		{"1 - 2", []float64{-1}},
		{"1- 2", []float64{-1}},
		{"1 +2", []float64{1, 2}},
		{"1 -2*3", []float64{1, -6}},
		{"1 * 2", []float64{2}},
		{"2^-1 -2^2", []float64{0.5, -4}},
		{"1e3, 2.5E-1,-Inf", []float64{1000, 0.25, math.Inf(-1)}},
		{"sqrt(2 + 2) 3", []float64{2, 3}},
		{"(1) (2)", []float64{1, 2}},
		{"[1 2] 3", []float64{1, 2, 3}},
		{"pi/2 x BASE_KV", []float64{math.Pi / 2, 4, 10}},
		{"2*x.^2 ./ 4", []float64{8}},
		{"cosd(60) abs(-3) round(2.5) fix(-2.5)", []float64{0.5, 3, 3, -2}},
		{"(1 < 2) + (2 >= 3) + ~0", []float64{2}},
	} {
		got, err := rd.evalList(tc.row)
		require.NoError(t, err, tc.row)
		require.Len(t, got, len(tc.want), tc.row)
		for k := range got {
			assert.InDelta(t, tc.want[k], got[k], 1e-12, "%q element %d", tc.row, k)
		}
	}
	for _, tc := range []struct{ row, want string }{
		{"y", `unknown name "y"`},
		{"k + 1", "k: its value (line 3) is not supported"},
		{"1/0", "division by zero"},
		{"[1 2] * [3 4]", "matrix products are not supported"},
		{"[1 2] + [3 4 5]", "+ of a 1×2 and a 1×3 matrix"},
		{"foo(2)", `unknown function or matrix "foo"`},
		{"(1 + 2", `want ")" at the end`},
		{"1 $ 2", `unsupported character "$"`},
		{"2'", `unsupported character "'"`},
	} {
		_, err := rd.evalList(tc.row)
		assert.ErrorContains(t, err, tc.want, tc.row)
	}
}

// TestParseExpressions reads MATPOWER's constructs beyond literal
// matrices in the tiny case: arithmetic in a matrix, indexed assignments
// (case141's power factor, MATPOWER's `mpc.gen(3, 9) = 100;` style),
// variables, statements continued with ... and several on a line, and if
// blocks (case8387pegase's `if fixed … end`). The old reader refused each
// (or, for the if block, the statements inside it).
func TestParseExpressions(t *testing.T) {
	ref, err := Parse(strings.NewReader(tiny), "tiny.m")
	require.NoError(t, err)

	// Arithmetic inside a matrix gives the same case.
	src := edit(t, tiny, "\t30\t1\t50\t20\t10\t20\t1\t1.0\t0\t230\t1\t1.1\t0.9;", "\t30\t1\t100/2\t20\t10\t20\t1\t1.0\t0\t460/2\t1\t2.2 / 2\t(1.8)/2;",
		"\t10\t3\t0\t0\t0\t0\t1\t1.0\t0\t230", "\t10\t3\t0\t0\t0\t0\t1\t1.0\t0\t135*sqrt(3)^2/sqrt(3)^2+95")
	c, err := Parse(strings.NewReader(src), "tiny.m")
	require.NoError(t, err)
	assert.Equal(t, ref.Buses, c.Buses)

	// Indexed assignments after the matrices, in order.
	tail := `
pf = 0.85;  % a variable; then two statements on one line, as in case141
mpc.bus(:, QD) = mpc.bus(:, PD) * sin(acos(pf)); mpc.bus(:, PD) = mpc.bus(:, PD) * pf;
mpc.gen(1, 9) = 300;
mpc.gen(:, [QMAX QMIN]) = ...
    mpc.gen(:, [QMAX, QMIN]) .* 2;
mpc.bus(2:end, VMAX) = [1.05 1.06 1.07];
k = find(isinf(mpc.gen(:, PMIN)) | mpc.gen(:, GEN_BUS) == 20 & mpc.gen(:, PG) == 0);
mpc.gen(k, PMIN) = 1;
mpc.branch(mpc.branch(:, RATE_A) == 0, RATE_A) = mpc.baseMVA * 9;
mpc.gencost(end, COST:end) = [0 0 100 1000];
`
	c, err = Parse(strings.NewReader(tiny+tail), "tiny.m")
	require.NoError(t, err)
	assert.InDelta(t, 0.5*0.85, c.Buses[0].Pd, 1e-15)
	assert.InDelta(t, 0.5*math.Sin(math.Acos(0.85)), c.Buses[0].Qd, 1e-15)
	assert.Equal(t, 3.0, c.Gens[0].Pmax)
	assert.Equal(t, [2]float64{6, -6}, [2]float64{c.Gens[0].Qmax, c.Gens[0].Qmin})
	assert.Equal(t, [3]float64{1.1, 1.05, 1.06}, [3]float64{c.Buses[0].Vmax, c.Buses[1].Vmax, c.Buses[2].Vmax})
	assert.Equal(t, [2]float64{0.1, 0.01}, [2]float64{c.Gens[0].Pmin, c.Gens[1].Pmin}, "rows 2 and 4 of gen (bus 20, PG 0) get PMIN 1 MW")
	assert.Equal(t, [2]float64{2.5, 9}, [2]float64{c.Branches[0].RateA, c.Branches[1].RateA})
	assert.Equal(t, [][2]float64{{0, 0}, {1, 1000}}, c.Gens[1].Cost.Points)

	// if blocks: case8387pegase's, with fixed = 0 and 1; else, elseif,
	// nesting, and loops in code that does not run.
	block := `
fixed = %s;
if fixed
    [GEN_BUS, PG, QG, QMAX, QMIN, VG, MBASE, GEN_STATUS, PMAX, PMIN] = idx_gen;
    k = find(   isinf(mpc.gen(:, QMIN)) & ...
                isinf(mpc.gen(:, QMAX))  );
    mpc.gen(k, QMIN) = mpc.gen(k, QG);
    mpc.gen(k, QMAX) = mpc.gen(k, QG);
    if 1
        for i = 1:3
            mpc.gen(i, PG) = 0;
        end
    end
elseif fixed == 0
    mpc.gen(1, QMAX) = 123;
else
    mpc.gen(1, QMAX) = 456;
end
`
	for _, tc := range []struct {
		fixed  string
		q10    float64 // Qmax of the generator at bus 10, MVAr
		q20max float64 // Qmax of the one at bus 20
	}{
		{"0", 123, math.Inf(1)},
		{"2", 300, 0},
	} {
		src := tiny + strings.Replace(block, "%s", tc.fixed, 1)
		if tc.fixed != "0" { // the loop runs: not supported
			src = strings.Replace(src, "        for i = 1:3\n            mpc.gen(i, PG) = 0;\n        end\n", "", 1)
		}
		c, err := Parse(strings.NewReader(src), "tiny.m")
		require.NoError(t, err, "fixed = %s", tc.fixed)
		assert.Equal(t, [2]float64{tc.q10, tc.q20max}, [2]float64{c.Gens[0].Qmax * 100, c.Gens[1].Qmax * 100}, "fixed = %s", tc.fixed)
	}
	c, err = Parse(strings.NewReader(tiny+"if 0\n  mpc.gen(1, PMAX) = 11;\nelse\n  mpc.gen(1, PMAX) = 20;\nend\n"), "tiny.m")
	require.NoError(t, err)
	assert.Equal(t, 0.2, c.Gens[0].Pmax)
}

// TestParseStatementErrors: what the reader cannot run is an error that
// names the line and the statement.
func TestParseStatementErrors(t *testing.T) {
	for _, tc := range []struct{ tail, want string }{
		{"mpc.gen(1, 30) = 1;", `tiny.m:33: unsupported statement "mpc.gen(1, 30) = 1": column index 30 is not in 1…21`},
		{"mpc.gen(5, 1) = 1;", "row index 5 is not in 1…4"},
		{"mpc.gen(1, 1.5) = 1;", "column index 1.5 is not in 1…21"},
		{"mpc.gen(1) = 1;", "want two indices (rows, columns)"},
		{"mpc.gen(:, PG) = mpc.gen(1:2, PG);", "a 2×1 value assigned to 4×1 elements"},
		{"mpc.gen(1, PG) = NaN;", "it writes NaN into row 1, column 2"},
		{"mpc.gen(1, PG) = 1 / 0;", "division by zero"},
		{"k = find(mpc.gen(:, PG) > 0 & x);\nmpc.gen(k, PG) = 0;", `tiny.m:34: unsupported statement "mpc.gen(k, PG) = 0": k: its value (line 33) is not supported`},
		{"mpc.gen(mpc.gen(1:2, PG) > 0, PG) = 0;", "a mask of 2 elements indexes 4 rows"},
		{"mpc = toggle_dcline(mpc, 'on');", `tiny.m:33: unsupported statement "mpc = toggle_dcline(mpc, 'on')" (it replaces the whole case)`},
		{"mpc.baseMVA = [100 200];", "baseMVA = \"[100 200]\" is a 1×2 matrix, want a number"},
		{"for k = 1:2\n mpc.gen(k, PG) = 0;\nend", `tiny.m:33: unsupported statement "for k = 1:2" (loops, switch and try are not read)`},
		{"if x > 1\nend", `tiny.m:33: unsupported statement "if x > 1": unknown name "x"`},
		{"if 1\n", "tiny.m:33: if opened on line 33 is not closed by end"},
		{"else", "tiny.m:33: else without if"},
		{"mpc.gen(1, PG) = ...\n", "tiny.m:33: the statement continued with ... on line 33 does not end"},
		{"mpc.gen = loadgen('x');", `tiny.m:33: unsupported statement "mpc.gen = loadgen('x')" (gen is read from a matrix [ … ] only)`},
		{"x = 1 +;\nmpc.gen(1, PG) = x;", `unsupported statement "mpc.gen(1, PG) = x": x: its value (line 33) is not supported`},
		{"mpc.gen(1:1e12, PG) = 0;", "the range 1:1:1e+12 is longer than the 4 rows"},
		{"mpc.gen(1, PG) = " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300) + ";", "nests more than 200 deep"},
	} {
		_, err := Parse(strings.NewReader(tiny+tc.tail), "tiny.m")
		require.Error(t, err, tc.tail)
		assert.Contains(t, err.Error(), tc.want, tc.tail)
	}
	_, err := Parse(strings.NewReader(strings.Replace(tiny, "mpc.gen = [", "mpc.gen(1, PG) = 1;\nmpc.gen = [", 1)), "tiny.m")
	assert.ErrorContains(t, err, "tiny.m:11: unsupported statement \"mpc.gen(1, PG) = 1\": matrix gen is not defined before it")
	// Assignments to matrices and variables this package does not read
	// are skipped when they cannot be run.
	_, err = Parse(strings.NewReader(tiny+"mpc.areas = [1 2];\nmpc.areas(1, 3) = 1;\nx = load('f.mat');\nmpc.extra = foo(1);\ndefine_constants;\n"), "tiny.m")
	assert.NoError(t, err)
}

// TestPiecewiseLinearCosts reads gencost rows of model 1 as MATPOWER's
// case_RTS_GMLC writes them (four breakpoints, startup and shutdown costs)
// and evaluates them.
func TestPiecewiseLinearCosts(t *testing.T) {
	src := edit(t, tiny,
		"\t2\t0\t0\t3\t0.01\t20\t5\t0;", "\t1\t51.747\t51.747\t4\t8\t1085.77625\t12\t1477.23196\t16\t1869.51562\t20\t2298.06357;",
		"\t2\t0\t0\t3\t0\t1\t0\t0;\n\t2\t0\t0\t3\t0\t1\t0\t0;", "\t2\t0\t0\t3\t0\t1\t0\t0\t0\t0\t0\t0;\n\t2\t0\t0\t3\t0\t1\t0\t0\t0\t0\t0\t0;",
		"\t1\t0\t0\t2\t0\t0\t50\t1000;", "\t1\t0\t0\t2\t0\t0\t50\t1000\t0\t0\t0\t0;")
	c, err := Parse(strings.NewReader(src), "case_rts.m")
	require.NoError(t, err)
	cost := c.Gens[0].Cost
	require.Equal(t, 1, cost.Model)
	assert.InDeltaSlice(t, []float64{0.08, 1085.77625, 0.12, 1477.23196, 0.16, 1869.51562, 0.2, 2298.06357},
		[]float64{cost.Points[0][0], cost.Points[0][1], cost.Points[1][0], cost.Points[1][1], cost.Points[2][0], cost.Points[2][1], cost.Points[3][0], cost.Points[3][1]}, 1e-12)
	f, df, _ := cost.Eval(0.14)
	assert.InDelta(t, (1477.23196+1869.51562)/2, f, 1e-9)
	assert.InDelta(t, (1869.51562-1477.23196)/0.04, df, 1e-6)
	_, err = NewModel(c)
	assert.ErrorContains(t, err, `case "case_rts": generator 0 (bus 10) has a piecewise-linear active-power cost (gencost model 1; 2 of 2 generators have one)`)
	assert.ErrorContains(t, err, "the epigraph formulation of piecewise-linear costs is not implemented")
}

// FuzzParse checks that Parse returns a case or an error, and never
// panics, on any input: go test -run x -fuzz FuzzParse ./problems/acopf/.
func FuzzParse(f *testing.F) {
	f.Add(tiny)
	f.Add(tiny + "pf = 0.85;\nmpc.bus(:, QD) = mpc.bus(:, PD) * sin(acos(pf));\nif pf > 1\n mpc.gen(1, 9) = 1;\nelse\n mpc.gen(end, 2:3) = [1 -2];\nend\n")
	f.Add("mpc.baseMVA = 50/3;\nmpc.bus = [1 3 0 0 0 0 1 1 0 135/sqrt(3) 1 1 1];\nk = find(isinf(mpc.bus(:, VM)) | ~1);\n")
	f.Fuzz(func(t *testing.T, src string) {
		c, err := Parse(strings.NewReader(src), "fuzz.m")
		if err == nil {
			require.NotNil(t, c)
		}
	})
}
