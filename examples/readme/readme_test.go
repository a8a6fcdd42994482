package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestRun runs the program and checks what it reports: the projected
// predictions meet the inference tolerance and are closer to the targets
// than the network's own output.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	t.Log("\n" + out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	var rawMSE, rawMax, projMSE, projMax float64
	var depth int
	_, err := fmt.Sscanf(lines[1], "network ŷ:    MSE %g  max|c| %g", &rawMSE, &rawMax)
	require.NoError(t, err, lines[1])
	_, err = fmt.Sscanf(lines[2], "projected ỹ:  MSE %g  max|c| %g  (AdaNP depth %d)", &projMSE, &projMax, &depth)
	require.NoError(t, err, lines[2])
	assert.LessOrEqual(t, projMax, 1e-6)
	assert.Greater(t, rawMax, 1e-3)
	assert.Less(t, projMSE, rawMSE)
	assert.Less(t, projMSE, 0.05)
}

// TestREADMEHasProgram checks that the README's quick start for gorgonia
// users is this program, verbatim.
func TestREADMEHasProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	block, err := fencedGoBlock(string(readme), "## Quick start for gorgonia users")
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(src)), strings.TrimSpace(block),
		"README.md's quick start differs from examples/readme/main.go: paste main.go into the README's first go block under the heading")
}

// fencedGoBlock returns the body of the first ```go block after heading.
func fencedGoBlock(doc, heading string) (string, error) {
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		return "", fmt.Errorf("no heading %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	start := strings.Index(rest, "\n```go\n")
	if next := strings.Index(rest, "\n## "); start < 0 || (next >= 0 && next < start) {
		return "", fmt.Errorf("no ```go block under %q", heading)
	}
	rest = rest[start+len("\n```go\n"):]
	end := strings.Index(rest, "\n```\n")
	if end < 0 {
		return "", fmt.Errorf("unterminated ```go block under %q", heading)
	}
	return rest[:end], nil
}

// TestHelp checks the examples' convention: -h prints the usage and exits
// with status 0 without training.
func TestHelp(t *testing.T) {
	out := harnesstest.GoRun(t, "-h")
	assert.Contains(t, out, "Usage of")
	assert.NotContains(t, out, "network ŷ")
}
