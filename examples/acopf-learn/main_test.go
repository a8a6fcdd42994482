package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems/acopf/dataset"
)

// TestBaselineRow runs the command on a small labelled set of case57
// (labelled by the reference solver of the build: pure Go by default) and
// checks the summary table's header and row.
func TestBaselineRow(t *testing.T) {
	if testing.Short() {
		t.Skip("labels two instances with the reference solver")
	}
	dir := t.TempDir()
	g, err := dataset.NewReference("pglib_opf_case57_ieee", 1, 2, dataset.LoadModel{CommonLo: 0.95, CommonHi: 1.05, Local: 0.05}, dataset.ReferenceOptions{})
	require.NoError(t, err)
	path := filepath.Join(dir, "test.tsv")
	_, err = g.Run(context.Background(), path, dataset.Shard{K: 0, Of: 1})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	code := cli([]string{"-data", path, "-ipopt", "0", "-out", ""}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	s := out.String()
	assert.Contains(t, s, "| grid | buses | method | gap % | max eq | max ineq | infeasible | ms per instance | IPOPT s per instance |")
	assert.Contains(t, s, "| pglib_opf_case57_ieee | 57 | case optimum + AdaNP (no training) |")
	assert.True(t, strings.Contains(s, "| 0 of 2 |"), "both instances feasible:\n%s", s)
}

func TestNoData(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, cli([]string{"-out", ""}, &out, &errOut))
	assert.Contains(t, errOut.String(), "-data")
}

// TestAllInfeasibleFails: a table whose every instance is infeasible is
// an error (the command exits 1), one feasible instance is not.
func TestAllInfeasibleFails(t *testing.T) {
	var out bytes.Buffer
	bad := row{method: "m", n: 3, infeasible: 3, ipoptSeconds: math.NaN()}
	assert.Error(t, writeTable(&out, "g", 5, []row{bad}))
	assert.Contains(t, out.String(), "| 3 of 3 |")
	good := bad
	good.infeasible = 2
	assert.NoError(t, writeTable(&out, "g", 5, []row{bad, good}))
}
