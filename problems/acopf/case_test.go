package acopf

import (
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tiny is a hand-built case: buses numbered 30, 10, 20 in that order (so
// the indices are 0, 1, 2), an isolated bus 40 with a generator and a
// branch, an out-of-service generator and branch, a line 10–20 with
// charging, a phase-shifting transformer 20–30 (tap 2, shift 90°), a
// shunt at bus 30, baseMVA 100.
const tiny = `function mpc = tiny
%% a hand-built case
mpc.version = '2';
mpc.baseMVA = 100;
mpc.bus = [
	30	1	50	20	10	20	1	1.0	0	230	1	1.1	0.9;   % bus 30: load, shunt 0.1 + 0.2j
	10	3	0	0	0	0	1	1.0	0	230	1	1.1	0.9;
	20	2	0	0	0	0	1	1.0	0	230	1	1.1	0.9
	40	4	7	7	0	0	1	1.0	0	230	1	1.1	0.9;
];
mpc.gen = [
	10	60	5	300	-300	1.0	100	1	250	10	0	0	0	0	0	0	0	0	0	0	0;
	20	0	0	100	-100	1.0	100	0	100	0	0	0	0	0	0	0	0	0	0	0	0;
	40	0	0	100	-100	1.0	100	1	100	0	0	0	0	0	0	0	0	0	0	0	0;
	20	0	0	Inf	-Inf	1.0	100	1	50	0	0	0	0	0	0	0	0	0	0	0	0;
];
mpc.gencost = [
	2	0	0	3	0.01	20	5	0;
	2	0	0	3	0	1	0	0;
	2	0	0	3	0	1	0	0;
	1	0	0	2	0	0	50	1000;
];
mpc.branch = [
	10	20	0	0.1	0.2	250	250	250	0	0	1	-30	30;
	20	30	0	0.2	0	0	0	0	2	90	1	0	0;
	20	30	0.01	0.1	0	0	0	0	0	0	0	-30	30;
	30	40	0.01	0.1	0	0	0	0	0	0	1	-30	30;
];
mpc.bus_name = {
	'A';
	'B';
};
`

func TestTinyCase(t *testing.T) {
	c, err := Parse(strings.NewReader(tiny), "tiny.m")
	require.NoError(t, err)
	assert.Equal(t, "tiny", c.Name)
	require.Len(t, c.Buses, 3)
	require.Len(t, c.Gens, 2)
	require.Len(t, c.Branches, 2)
	assert.Equal(t, []int{30, 10, 20}, []int{c.Buses[0].ID, c.Buses[1].ID, c.Buses[2].ID})
	assert.Equal(t, []int{1}, c.Refs)
	b := c.Buses[0]
	assert.Equal(t, [4]float64{0.5, 0.2, 0.1, 0.2}, [4]float64{b.Pd, b.Qd, b.Gs, b.Bs})

	// Generators: per unit, costs in p.u. (a_k = c_k·100^k).
	g := c.Gens[0]
	assert.Equal(t, 1, g.Bus)
	assert.InDeltaSlice(t, []float64{0.6, 0.05, 2.5, 0.1, 3, -3}, []float64{g.Pg, g.Qg, g.Pmax, g.Pmin, g.Qmax, g.Qmin}, 1e-15)
	assert.InDeltaSlice(t, []float64{5, 2000, 100}, g.Cost.Poly, 1e-9)
	f, df, d2f := g.Cost.Eval(0.6)
	assert.InDelta(t, 0.01*60*60+20*60+5, f, 1e-9)
	assert.InDelta(t, (2*0.01*60+20)*100, df, 1e-9)
	assert.InDelta(t, 2*0.01*100*100, d2f, 1e-9)
	g = c.Gens[1]
	assert.Equal(t, 2, g.Bus)
	assert.True(t, math.IsInf(g.Qmax, 1) && math.IsInf(g.Qmin, -1))
	assert.Equal(t, &Cost{Model: 1, Points: [][2]float64{{0, 0}, {0.5, 1000}}}, g.Cost)

	// Branches: the line, and the transformer with tap and shift.
	br := c.Branches[0]
	assert.Equal(t, [2]int{1, 2}, [2]int{br.From, br.To})
	assert.InDelta(t, 2.5, br.RateA, 1e-15)
	assert.InDelta(t, -math.Pi/6, br.AngMin, 1e-15)
	tr := c.Branches[1]
	assert.Equal(t, [2]int{2, 0}, [2]int{tr.From, tr.To})
	assert.True(t, math.IsInf(tr.RateA, 1))
	assert.Equal(t, 2.0, tr.Tap)
	assert.InDelta(t, math.Pi/2, tr.Shift, 1e-15)
	assert.Equal(t, [2]float64{-2 * math.Pi, 2 * math.Pi}, [2]float64{tr.AngMin, tr.AngMax})

	// The admittance matrix by hand. Line 10–20: y_s = 1/(0.1j) = −10j,
	// charging 0.1j at each end. Transformer 20–30: y_s = −5j,
	// T = 2e^{j90°} = 2j: Yff = −5j/4, Yft = 5j/conj(2j) = −2.5,
	// Ytf = 5j/(2j) = 2.5, Ytt = −5j. Shunt at bus 30: 0.1 + 0.2j.
	want := [3][3]complex128{
		{-5i + 0.1 + 0.2i, 0, 2.5},       // bus 30 (index 0): Ytt + shunt, Ytf
		{0, -10i + 0.1i, 10i},            // bus 10
		{-2.5, 10i, -10i + 0.1i - 1.25i}, // bus 20: Yft, line, Y_line + Yff
	}
	y := newAdmittance(c)
	var got [3][3]complex128
	for i := range 3 {
		for e := y.rowPtr[i]; e < y.rowPtr[i+1]; e++ {
			got[i][y.col[e]] = complex(y.g[e], y.b[e])
		}
		assert.Equal(t, i, y.col[y.diag[i]])
	}
	for i := range 3 {
		for k := range 3 {
			assert.InDelta(t, 0, cmplx.Abs(got[i][k]-want[i][k]), 1e-12, "Y[%d][%d] = %v, want %v", i, k, got[i][k], want[i][k])
		}
	}
	// Bus 30 has no branch to bus 10: its row has two entries.
	assert.Equal(t, 2, y.rowPtr[1]-y.rowPtr[0])

	// Piecewise-linear costs have no objective here.
	_, err = NewModel(c)
	assert.ErrorContains(t, err, "piecewise-linear")
}

// TestPowerFlowByHand checks c at a point of the tiny case against the
// complex power V·conj(Y·V) computed directly.
func TestPowerFlowByHand(t *testing.T) {
	c, err := Parse(strings.NewReader(tiny), "tiny.m")
	require.NoError(t, err)
	pf, err := NewPowerFlow(c)
	require.NoError(t, err)
	nx, ny, nc := pf.Dims()
	require.Equal(t, [3]int{2, 10, 7}, [3]int{nx, ny, nc})
	assert.Equal(t, []int{0}, pf.LoadBuses())
	vm := []float64{0.95, 1.02, 1.01}
	va := []float64{-0.2, 0.05, -0.1}
	pg, qg := []float64{0.7, 0.3}, []float64{0.1, -0.2}
	x := []float64{0.5, 0.2}
	yv := append(append(append(append([]float64(nil), vm...), va...), pg...), qg...)
	cv := make([]float64, nc)
	pf.Eval(x, yv, cv, nil)

	yb := [3][3]complex128{
		{-5i + 0.1 + 0.2i, 0, 2.5},
		{0, -10i + 0.1i, 10i},
		{-2.5, 10i, -10i + 0.1i - 1.25i},
	}
	v := make([]complex128, 3)
	for i := range v {
		v[i] = cmplx.Rect(vm[i], va[i])
	}
	inj := []complex128{0 - complex(x[0], x[1]), complex(pg[0], qg[0]), complex(pg[1], qg[1])}
	for i := range 3 {
		var cur complex128
		for k := range 3 {
			cur += yb[i][k] * v[k]
		}
		s := v[i]*cmplx.Conj(cur) - inj[i]
		assert.InDelta(t, real(s), cv[i], 1e-12, "P balance at bus %d", i)
		assert.InDelta(t, imag(s), cv[3+i], 1e-12, "Q balance at bus %d", i)
	}
	assert.Equal(t, va[1], cv[6], "reference angle")
}

func TestParseErrors(t *testing.T) {
	// Each case edits the tiny case; the error must name the line.
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"missing baseMVA", "mpc.baseMVA = 100;", "", "no baseMVA"},
		{"bad baseMVA", "mpc.baseMVA = 100;", "mpc.baseMVA = abc;", "tiny.m:4: baseMVA"},
		{"zero baseMVA", "mpc.baseMVA = 100;", "mpc.baseMVA = 0;", "tiny.m:4: baseMVA = 0"},
		{"missing bus", "mpc.bus = [", "mpc.busx = [", "no bus matrix"},
		{"missing branch", "mpc.branch = [", "mpc.lines = [", "no branch matrix"},
		{"missing gen", "mpc.gen = [", "mpc.gens = [", "no gen matrix"},
		{"non-numeric", "\t10\t3\t0\t0", "\t10\t3\tx0\t0", "tiny.m:7: matrix bus: unknown name \"x0\""},
		{"ragged row", "\t10\t3\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t1.1\t0.9;", "\t10\t3\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t1.1;", "tiny.m:7: bus row 2 has 12 columns, the first row has 13"},
		{"too few columns", "mpc.bus = [\n\t30\t1\t50\t20\t10\t20\t1\t1.0\t0\t230\t1\t1.1\t0.9;   % bus 30: load, shunt 0.1 + 0.2j\n\t10\t3\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t1.1\t0.9;\n\t20\t2\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t1.1\t0.9\n\t40\t4\t7\t7\t0\t0\t1\t1.0\t0\t230\t1\t1.1\t0.9;",
			"mpc.bus = [\n\t30\t1\t50\t20\t10\t20\t1\t1.0\t0\t230\t1\t1.1;\n\t10\t3\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t1.1;\n\t20\t2\t0\t0\t0\t0\t1\t1.0\t0\t230\t1\t1.1\n\t40\t4\t7\t7\t0\t0\t1\t1.0\t0\t230\t1\t1.1;",
			"tiny.m:6: bus has 12 columns, want at least 13"},
		{"unknown gen bus", "\t40\t0\t0\t100", "\t41\t0\t0\t100", "tiny.m:14: generator bus 41 is not in the bus matrix"},
		{"unknown branch bus", "\t30\t40\t0.01", "\t30\t44\t0.01", "tiny.m:27: branch to-bus 44 is not in the bus matrix"},
		{"duplicate bus", "\t20\t2\t0", "\t10\t2\t0", "tiny.m:8: bus number 10 appears twice"},
		{"fractional bus", "\t20\t2\t0", "\t20.5\t2\t0", "tiny.m:8: bus number 20.5 is not an integer"},
		{"bad bus type", "\t20\t2\t0", "\t20\t5\t0", "tiny.m:8: bus 20 has type 5"},
		{"no reference", "\t10\t3\t0", "\t10\t2\t0", "no in-service reference bus"},
		{"NaN load", "\t30\t1\t50", "\t30\t1\tNaN", "tiny.m:6: bus column 3 is NaN"},
		{"unclosed", "];\nmpc.gen = [", "\nmpc.gen = [", "tiny.m:11: matrix bus opened on line 5 is not closed"},
		{"unclosed at the end", "];\nmpc.bus_name = {\n\t'A';\n\t'B';\n};\n", "", "tiny.m:27: matrix branch opened on line 23 is not closed by ]"},
		{"gencost rows", "\t1\t0\t0\t2\t0\t0\t50\t1000;\n", "", "gencost has 3 rows, want ng = 4"},
		{"cost model", "\t2\t0\t0\t3\t0.01", "\t7\t0\t0\t3\t0.01", "tiny.m:18: cost model 7"},
		{"cost width", "\t1\t0\t0\t2\t0\t0\t50\t1000;", "\t1\t0\t0\t3\t0\t0\t50\t1000;", "tiny.m:21: gencost row gives 3 coefficients but has 8 columns"},
		{"zero impedance", "\t10\t20\t0\t0.1", "\t10\t20\t0\t0", "tiny.m:24: branch 10–20 has impedance |R + jX| = 0 p.u., below MinImpedance"},
		{"indexed assignment", "mpc.bus_name = {", "mpc.gen(:, 2) = mpc.gen(:, 2) * foo;\nmpc.bus_name = {", "tiny.m:29: unsupported statement \"mpc.gen(:, 2) = mpc.gen(:, 2) * foo\": unknown name \"foo\""},
		{"junk after matrix", "0\t0\t0\t0\t0\t0;\n];\nmpc.gencost", "0\t0\t0\t0\t0\t0;\n] x;\nmpc.gencost", "tiny.m:16: unexpected \"x;\" after the end of matrix gen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(tiny, tc.old, tc.new, 1)
			require.NotEqual(t, tiny, src, "the edit must apply")
			_, err := Parse(strings.NewReader(src), "tiny.m")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestReadFileAndLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "my_grid.m")
	require.NoError(t, os.WriteFile(path, []byte(tiny), 0o600))
	for _, name := range []string{path} {
		c, err := Load(name)
		require.NoError(t, err)
		assert.Equal(t, "my_grid", c.Name)
		assert.Len(t, c.Buses, 3)
	}
	_, err := Load(filepath.Join(dir, "absent.m"))
	assert.ErrorContains(t, err, "neither a shipped case")
	_, err = ReadFile(filepath.Join(dir, "absent.m"))
	assert.Error(t, err)

	// Shipped cases, with and without the pglib_opf_ prefix; sizes as
	// PGLib's BASELINE.md lists them (nodes, edges).
	sizes := map[string][2]int{
		"pglib_opf_case57_ieee": {57, 80}, "pglib_opf_case118_ieee": {118, 186}, "pglib_opf_case300_ieee": {300, 411},
		"pglib_opf_case1354_pegase": {1354, 1991}, "pglib_opf_case2869_pegase": {2869, 4582},
		"pglib_opf_case10000_goc": {10000, 13193}, "matpower6_case57": {57, 80},
	}
	names := Names()
	assert.Len(t, names, len(sizes))
	for _, n := range names {
		want, ok := sizes[n]
		require.True(t, ok, n)
		if testing.Short() && want[0] > 1000 {
			continue
		}
		c, err := Load(n)
		require.NoError(t, err, n)
		assert.Equal(t, want, [2]int{len(c.Buses), len(c.Branches)}, n)
		assert.Equal(t, n, c.Name)
		if _, pub := Published[n]; pub || n == "matpower6_case57" {
			_, err := NewModel(c)
			assert.NoError(t, err, n)
		}
	}
	c, err := Load("case57_ieee")
	require.NoError(t, err)
	assert.Equal(t, "pglib_opf_case57_ieee", c.Name)
}

// TestParseTolerates checks what the reader accepts beyond literal
// numbers: a matrix it does not read may hold anything (MATPOWER's
// contingency tables use named constants), and baseMVA may be a quotient
// or product of two numbers (MATPOWER's case533mt: 50/3).
func TestParseTolerates(t *testing.T) {
	src := strings.Replace(tiny, "mpc.baseMVA = 100;", "mpc.baseMVA = 200/2;\nmpc.chgtab = [\n\t1\t0\tCT_TBRCH\t1\tCT_REP;\n\t2\t0\n];", 1)
	c, err := Parse(strings.NewReader(src), "tiny.m")
	require.NoError(t, err)
	assert.Equal(t, 100.0, c.BaseMVA)
	assert.Len(t, c.Buses, 3)
	src = strings.Replace(tiny, "mpc.baseMVA = 100;", "mpc.baseMVA = 50*2;", 1)
	c, err = Parse(strings.NewReader(src), "tiny.m")
	require.NoError(t, err)
	assert.Equal(t, 100.0, c.BaseMVA)
	src = strings.Replace(tiny, "mpc.baseMVA = 100;", "mpc.baseMVA = 50/x;", 1)
	_, err = Parse(strings.NewReader(src), "tiny.m")
	assert.ErrorContains(t, err, "tiny.m:4: baseMVA")
}

// TestParseDistributionRescaling checks the two rescalings of MATPOWER's
// distribution cases (case33bw, …): branch R, X given in ohms and loads
// in kW.
func TestParseDistributionRescaling(t *testing.T) {
	tail := "Vbase = mpc.bus(1, BASE_KV) * 1e3;      %% in Volts\nSbase = mpc.baseMVA * 1e6;              %% in VA\n" +
		"mpc.branch(:, [BR_R BR_X]) = mpc.branch(:, [BR_R BR_X]) / (Vbase^2 / Sbase);\n" +
		"mpc.bus(:, [PD, QD]) = mpc.bus(:, [PD, QD]) / 1e3;\n"
	c, err := Parse(strings.NewReader(tiny+tail), "tiny.m")
	require.NoError(t, err)
	// The first bus's BASE_KV is 230: Z_base = 230e3²/100e6 = 529 Ω.
	assert.InDelta(t, 0.1/529, c.Branches[0].X, 1e-15)
	assert.InDelta(t, 0.2/529, c.Branches[1].X, 1e-15)
	assert.InDelta(t, 0.5/1e3, c.Buses[0].Pd, 1e-15)
	assert.InDelta(t, 0.2/1e3, c.Buses[0].Qd, 1e-15)
	assert.InDelta(t, 0.1, c.Buses[0].Gs, 1e-15, "shunts are not rescaled")

	_, err = Parse(strings.NewReader(tiny+"mpc.bus(:, [PD, QD]) = mpc.bus(:, [PD, QD]) / 0;\n"), "tiny.m")
	assert.ErrorContains(t, err, "tiny.m:33: unsupported statement")
	_, err = Parse(strings.NewReader(tiny+"mpc.bus(:, QD) = mpc.bus(:, PD) * sin(acos(pf));\n"), "tiny.m")
	assert.ErrorContains(t, err, "tiny.m:33: unsupported statement")
}

// TestTwoReferenceBuses: a second type-3 bus fixes its angle at the
// file's value (5° here) in an extra row of the power flow.
func TestTwoReferenceBuses(t *testing.T) {
	src := strings.Replace(tiny, "\t20\t2\t0\t0\t0\t0\t1\t1.0\t0\t230", "\t20\t3\t0\t0\t0\t0\t1\t1.0\t5\t230", 1)
	c, err := Parse(strings.NewReader(src), "tiny.m")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, c.Refs)
	pf, err := NewPowerFlow(c)
	require.NoError(t, err)
	nx, ny, nc := pf.Dims()
	require.Equal(t, 8, nc)
	y := make([]float64, ny)
	y[3+1], y[3+2] = 0.25, 0.5
	cv, jy := make([]float64, nc), make([]float64, nc*ny)
	pf.Eval(make([]float64, nx), y, cv, jy)
	assert.Equal(t, 0.25, cv[6])
	assert.InDelta(t, 0.5-5*math.Pi/180, cv[7], 1e-15)
	assert.Equal(t, 1.0, jy[6*ny+3+1])
	assert.Equal(t, 1.0, jy[7*ny+3+2])
}
