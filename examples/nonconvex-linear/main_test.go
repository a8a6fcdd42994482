package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestQuick runs the -quick version of the command: the table, ENFORCE's
// feasibility and the files (harnesstest.CheckNonconvexQuick).
func TestQuick(t *testing.T) { harnesstest.CheckNonconvexQuick(t) }

// TestFlags checks the examples' command-line convention.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "sizes", "soft", "dc3", "float32")
}

// TestDC3Only runs DC3 alone with DC3's own choice of partial variables:
// the table has the reference and DC3 rows only, names the choice, and the
// progress reports the conditioning of that choice (cond₂(C_o) = 727.2 at
// (100, 50), NumPy's value); a bad -dc3-partial is refused.
func TestDC3Only(t *testing.T) {
	var stdout, stderr bytes.Buffer
	out := t.TempDir()
	require.Equal(t, 0, cli([]string{"-quick", "-dc3-only", "-dc3-partial", "dc3", "-dc3epochs", "2", "-out", out}, &stdout, &stderr), stderr.String())
	s := stdout.String()
	assert.Contains(t, stderr.String(), "cond₂(C_o) = 727.2")
	assert.Contains(t, stderr.String(), "[100/50 DC3 seed 17] test: obj. ", "each seed's row")
	assert.Contains(t, s, "DC3's partial variables: DC3's generator's choice (after its 50 inequality rows) (-dc3-partial dc3)")
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[0] == "MLP" || f[0] == "ENFORCE" || f[0] == "Soft") {
			t.Errorf("-dc3-only printed a %s row: %s", f[0], line)
		}
	}
	assert.Regexp(t, `(?m)^DC3 +`, s)
	stderr.Reset()
	assert.NotEqual(t, 0, cli([]string{"-quick", "-dc3-partial", "fixed"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `bad -dc3-partial "fixed"`)
}

// TestFirstSeed runs the second of two model seeds alone.
func TestFirstSeed(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, cli([]string{"-quick", "-dc3-only", "-seeds", "2", "-first-seed", "1", "-dc3epochs", "2"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stderr.String(), "DC3 seed 18]")
	assert.NotContains(t, stderr.String(), "DC3 seed 17]")
	stderr.Reset()
	assert.NotEqual(t, 0, cli([]string{"-quick", "-seeds", "2", "-first-seed", "2"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "-first-seed")
}

// TestSoftPenalty runs the Soft row alone (-soft-only) in the paper's
// unsquared form: the row and its progress are named after the form, no
// other row is trained, and a bad form or an empty -soft is refused.
func TestSoftPenalty(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, cli([]string{"-quick", "-soft-only", "-softpenalty", "norm", "-epochs", "2"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "Soft Norm (λ_C=1)")
	assert.Contains(t, stderr.String(), "[100/50 Soft Norm (λ_C=1) seed ")
	for _, line := range strings.Split(stdout.String(), "\n") {
		if f := strings.Fields(line); len(f) > 4 && (f[0] == "MLP" || f[0] == "ENFORCE" || f[0] == "DC3") {
			t.Errorf("-soft-only printed a %s row: %s", f[0], line)
		}
	}
	stderr.Reset()
	assert.NotEqual(t, 0, cli([]string{"-quick", "-soft-only", "-soft", ""}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "-soft-only")
	stderr.Reset()
	assert.NotEqual(t, 0, cli([]string{"-quick", "-softpenalty", "hinge"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `bad -softpenalty "hinge"`)
}
