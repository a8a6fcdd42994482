package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
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
		"project", "batch", "seed", "noise", "projtol", "maxdepth", "linesearch", "maxstep", "fbeps", "nearest", "interior", "float32")
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

	for _, args := range [][]string{{"-project", "-1"}, {"-project", "2", "-batch", "0"}, {"-project", "2", "-noise", "-1"},
		{"-project", "2", "-maxstep", "-1"}, {"-project", "2", "-fbeps", "-1"}, {"-project", "2", "-nearest", "0"}, {"-project", "2", "-maxdepth", "0"}, {"-project", "2", "-projtol", "0"}} {
		o := defaults()
		require.NoError(t, flags(&o).Parse(append([]string{"-quick"}, args...)))
		assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-project", "%v", args)
	}
}
