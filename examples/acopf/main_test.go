package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

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
	harnesstest.CheckConvention(t, cli, "quick", "out", "case", "nolinelimits", "tol")
	o := defaults()
	assert.Equal(t, "pglib_opf_case118_ieee", o.caseName)
	require.NoError(t, flags(&o).Parse([]string{"-quick"}))
	assert.Equal(t, "pglib_opf_case57_ieee", o.caseName)
	o = defaults()
	require.NoError(t, flags(&o).Parse([]string{"-case", "case300_ieee", "-quick"}))
	assert.Equal(t, "case300_ieee", o.caseName, "an explicit flag keeps its value")
}
