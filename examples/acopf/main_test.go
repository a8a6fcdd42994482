package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// TestQuick runs -quick's setting (case57) and checks the report, the
// reference solve when the ipopt tag is there, and the files.
func TestQuick(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick"}))
	o.out = t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := out.String()
	assert.Contains(t, text, "case pglib_opf_case57_ieee: 57 buses, 7 generators, 80 branches")
	assert.Contains(t, text, "nx = 84 (Pd, Qd), ny = 128 (Vm, Va, Pg, Qg), 115 power-flow equations")
	assert.Contains(t, text, "voltage profile at")
	assert.Contains(t, text, "PGLib-OPF BASELINE.md: 3.7589e+04 $/h")
	assert.Regexp(t, `relative difference [0-9.]+e-0[5-9]`, text)
	assert.Contains(t, text, "from the flat start")
	harnesstest.Files(t, o.out, "acopf_voltage.png", "acopf_voltage.csv")
	csv, err := os.ReadFile(filepath.Join(o.out, "acopf_voltage.csv"))
	require.NoError(t, err)
	assert.Equal(t, 58, bytes.Count(csv, []byte("\n")), "a header and 57 buses")

	// A user's file, without line limits; bad settings.
	o.caseName, o.out, o.noLineLimits = "matpower6_case57", "", true
	out.Reset()
	require.NoError(t, run(o, &out, io.Discard))
	assert.Contains(t, out.String(), "case matpower6_case57: 57 buses")
	assert.Contains(t, out.String(), "without line limits (DC3's formulation)")
	o.caseName = filepath.Join(t.TempDir(), "absent.m")
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "neither a shipped case")
	if referenceName != "IPOPT" {
		o.caseName, o.noLineLimits = "case1354_pegase", false
		out.Reset()
		require.NoError(t, run(o, &out, io.Discard))
		assert.Contains(t, out.String(), "more than 200 buses: build with -tags ipopt")
	}
	o.caseName, o.tol = "case57_ieee", 0
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-tol")
}

// TestFlags checks the examples' command-line convention and what -quick
// sets.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "case", "nolinelimits", "tol",
		"project", "batch", "seed", "noise", "projtol", "maxdepth", "linesearch", "maxstep", "fbeps", "nearest", "interior", "float32", "points", "path", "damping", "stop-feasible")
	o := defaults()
	assert.Equal(t, "pglib_opf_case118_ieee", o.caseName)
	require.NoError(t, flags(&o).Parse([]string{"-quick"}))
	assert.Equal(t, "pglib_opf_case57_ieee", o.caseName)
	o = defaults()
	require.NoError(t, flags(&o).Parse([]string{"-case", "case300_ieee", "-quick"}))
	assert.Equal(t, "case300_ieee", o.caseName, "an explicit flag keeps its value")
}

// TestQuickProject runs -quick -project (case57, its cached optimum, no
// IPOPT needed) in two batches and checks the report: every point
// converges on the sparse path, and the power flow and limits hold after.
func TestQuickProject(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-project", "5", "-batch", "3", "-noise", "0.01"}))
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := out.String()
	assert.Contains(t, text, "projection of 5 points perturbed around the cached optimum (IPOPT")
	assert.Contains(t, text, "limits (142 rows: 3 pinned variables as equalities,")
	assert.Contains(t, text, "nc 254, ny 128 + 136 multipliers")
	assert.Contains(t, text, "AdaNP: sparse path (PathAuto: sparse path)")
	assert.Contains(t, text, "136 bound rows eliminated in closed form")
	assert.Regexp(t, `(?m)^ +1 +3 .*\n +2 +2 `, text, "two batches")
	assert.Regexp(t, `power flow max\|c\| [0-9.e+-]+ → [0-9.]+e-(0[7-9]|[1-9][0-9]) p\.u\.`, text)
	assert.Contains(t, text, "0 not converged")
	if referenceName == "IPOPT" {
		assert.Contains(t, text, "IPOPT, nearest point of sample 1")
	} else {
		assert.Contains(t, text, "build with -tags ipopt to time IPOPT")
	}
	for _, line := range strings.Split(text, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 120, "%q", line)
	}

	// -path augmented, -damping and -stop-feasible set AdaNP's settings.
	o = defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-project", "5", "-batch", "3", "-noise", "0.01",
		"-fbeps", "1e-6", "-path", "augmented", "-damping", "1e-3", "-stop-feasible"}))
	out.Reset()
	require.NoError(t, run(o, &out, io.Discard))
	text = out.String()
	assert.Contains(t, text, "AdaNP: sparse path (augmented system) (PathAuto: sparse path)")
	assert.Contains(t, text, "damping θ₀ 0.001, stop when feasible true")
	assert.Contains(t, text, "0 not converged")
	assert.ErrorContains(t, flags(&o).Parse([]string{"-path", "dense"}), "sparse or augmented")

	// -interior: enforce.Interior instead of the Fischer–Burmeister rows.
	o = defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-project", "4", "-noise", "0.01", "-interior"}))
	out.Reset()
	require.NoError(t, run(o, &out, io.Discard))
	text = out.String()
	assert.Contains(t, text, "-interior: enforce.Interior instead, onto the power flow (115 rows) within the limits")
	assert.NotContains(t, text, "AdaNP: sparse path")
	assert.Regexp(t, `power flow max\|c\| [0-9.e+-]+ → [0-9.]+e-(0[7-9]|[1-9][0-9]) p\.u\., max g⁺ [0-9.e+-]+ → 0;`, text)
	assert.Contains(t, text, "0 not converged")
	for _, line := range strings.Split(text, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 120, "%q", line)
	}
	o = defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-project", "2", "-interior", "-fbeps", "1e-6"}))
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-interior")
	for _, f := range [][]string{{"-path", "augmented"}, {"-damping", "1e-3"}, {"-stop-feasible"}} {
		o = defaults()
		require.NoError(t, flags(&o).Parse(append([]string{"-quick", "-project", "2", "-interior"}, f...)))
		assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-interior", "%v", f)
	}

	for _, args := range [][]string{{"-project", "-1"}, {"-project", "2", "-batch", "0"}, {"-project", "2", "-noise", "-1"},
		{"-project", "2", "-maxstep", "-1"}, {"-project", "2", "-fbeps", "-1"}, {"-project", "2", "-nearest", "0"}, {"-project", "2", "-maxdepth", "0"}, {"-project", "2", "-projtol", "0"}} {
		o := defaults()
		require.NoError(t, flags(&o).Parse(append([]string{"-quick"}, args...)))
		assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-project", "%v", args)
	}
}

// TestPoints projects the points of a -points file, each with its own
// loads (case57's operating point perturbed by 1e-3, at loads scaled by
// 1, 1.01 and 0.99), and checks its errors: a row of the wrong length, a
// word, an empty file.
func TestPoints(t *testing.T) {
	c, err := acopf.Load("case57_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for _, s := range []float64{1, 1.01, 0.99} {
		y := make([]float64, len(m.OperatingPoint()))
		m.Perturb(y, m.OperatingPoint(), acopf.Perturbation{Vm: 1e-3, Va: 1e-3, PQ: 1e-3}, rng)
		var row []string
		for _, v := range m.Loads() {
			row = append(row, strconv.FormatFloat(v*s, 'g', -1, 64))
		}
		for _, v := range y {
			row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	good := write("good.csv", b.String())
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-points", good, "-fbeps", "1e-6", "-batch", "2"}))
	o.out = ""
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := out.String()
	assert.Contains(t, text, "projection of 3 points read from "+good+" (each with its own loads)")
	assert.Contains(t, text, "all 3: power flow max|c|")
	assert.Contains(t, text, "0 not converged")
	o.project = 2
	out.Reset()
	require.NoError(t, run(o, &out, io.Discard))
	assert.Contains(t, out.String(), "all 2: power flow max|c|", "-project N takes the first N rows")

	lines := strings.SplitAfter(b.String(), "\n")
	for _, tc := range []struct{ name, text, want string }{
		{"short.csv", lines[0] + "1,2,3\n", "line 2 has 3 numbers, want nx + ny = 84 + 128"},
		{"word.csv", lines[0] + "x" + lines[1][strings.Index(lines[1], ","):], "line 2, column 1: \"x\" is not a finite number"},
		{"nan.csv", "NaN" + lines[0][strings.Index(lines[0], ","):], "line 1, column 1: \"NaN\" is not a finite number"},
		{"empty.csv", "", "no points"},
	} {
		o := defaults()
		require.NoError(t, flags(&o).Parse([]string{"-quick", "-points", write(tc.name, tc.text)}))
		o.out = ""
		assert.ErrorContains(t, run(o, io.Discard, io.Discard), tc.want, tc.name)
	}
	for _, arg := range [][]string{{"-noise", "1e-2"}, {"-seed", "7"}} {
		o := defaults()
		require.NoError(t, flags(&o).Parse(append([]string{"-quick", "-points", good}, arg...)))
		o.out = ""
		assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-noise and -seed set the perturbations", "%v: not consulted with -points, so refused", arg)
	}
}

// TestCaseWithoutCosts: a case without polynomial costs (here MATPOWER's
// case57 without its gencost) has no reference solve, an error that says
// so, while -project, which needs no objective, projects around the
// file's operating point (it used to refuse the case).
func TestCaseWithoutCosts(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "problems", "acopf", "data", "matpower6_case57.m"))
	require.NoError(t, err)
	text := string(src)
	i := strings.Index(text, "mpc.gencost = [")
	require.True(t, i > 0)
	j := i + strings.Index(text[i:], "];") + 2
	path := filepath.Join(t.TempDir(), "nocost57.m")
	require.NoError(t, os.WriteFile(path, []byte(text[:i]+text[j:]), 0o600))

	var out, errOut bytes.Buffer
	assert.Equal(t, 1, cli([]string{"-case", path, "-out", ""}, &out, &errOut))
	assert.Contains(t, out.String(), "case nocost57: 57 buses")
	assert.Equal(t, `acopf: no reference ACOPF: case "nocost57" has no generation cost (no gencost matrix): the ACOPF objective needs a polynomial cost (gencost model 2) for every generator`+"\n", errOut.String())

	out.Reset()
	errOut.Reset()
	require.Equal(t, 0, cli([]string{"-case", path, "-project", "3", "-fbeps", "1e-6"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "projection of 3 points perturbed around the case file's operating point (no cached optimum; no reference solve: the case has no polynomial costs)")
	assert.Contains(t, out.String(), "0 not converged")
}

// TestExitStatus: -project fails when no point converges (it used to exit
// 0), and an error of package acopf is printed with the program's name
// once (it used to read "acopf: acopf: …").
func TestExitStatus(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, cli([]string{"-quick", "-project", "3", "-noise", "0.05", "-maxdepth", "1"}, &out, &errOut))
	assert.Contains(t, out.String(), "3 not converged")
	assert.Equal(t, "acopf: -project: none of the 3 points converged (max|c| > -projtol 1e-06 after at most -maxdepth 1 steps)\n", errOut.String())

	errOut.Reset()
	absent := filepath.Join(t.TempDir(), "absent.m")
	assert.Equal(t, 1, cli([]string{"-case", absent}, io.Discard, &errOut))
	assert.True(t, strings.HasPrefix(errOut.String(), "acopf: \""+absent+"\" is neither a shipped case"), errOut.String())
	assert.NotContains(t, errOut.String(), "acopf: acopf:")
}

// TestWarningsPrinted: the reader's warnings head the output.
func TestWarningsPrinted(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "problems", "acopf", "data", "matpower6_case57.m"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "dc57.m")
	dc := "\nmpc.dcline = [\n\t1\t2\t1\t10\t9\t0\t0\t1\t1\t-20\t20\t-Inf\tInf\t-Inf\tInf\t0\t0;\n];\n"
	require.NoError(t, os.WriteFile(path, append(src, dc...), 0o600))
	var out bytes.Buffer
	require.Equal(t, 0, cli([]string{"-case", path, "-project", "2", "-fbeps", "1e-6"}, &out, io.Discard))
	assert.Regexp(t, `(?m)^WARNING: dc57: line [0-9]+: mpc\.dcline: in-service DC lines are not modelled and were dropped, 1 of them \(1–2 `, out.String())
}
