package main

import (
	"bytes"
	"fmt"
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

// TestHelp checks the examples' convention: -h prints the usage and exits
// with status 0 without training.
func TestHelp(t *testing.T) {
	out := harnesstest.GoRun(t, "-h")
	assert.Contains(t, out, "Usage of")
	assert.NotContains(t, out, "network ŷ")
}
