package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestHelp checks the examples' convention: -h prints the usage and exits
// with status 0 without training.
func TestHelp(t *testing.T) {
	out := harnesstest.GoRun(t, "-h")
	assert.Contains(t, out, "-epochs")
	assert.NotContains(t, out, "epoch ", "no training")
}

// TestRun trains briefly and checks that the report has both rows and
// the projection meets the inference tolerance.
func TestRun(t *testing.T) {
	out := harnesstest.GoRun(t, "-epochs", "50", "-n", "50")
	assert.Contains(t, out, "network output ŷ")
	assert.Regexp(t, `ENFORCE ỹ = AdaNP\(ŷ\)\s+\S+\s+([0-9.]+e-(0[7-9]|[1-9][0-9])|0\.0e\+00)\s`, out, "max|c| ≤ 1e-6")
}

// TestShortRun: fewer epochs than progress lines (a division by zero
// once) and invalid sizes.
func TestShortRun(t *testing.T) {
	assert.NoError(t, run(3, 20))
	assert.ErrorContains(t, run(0, 20), "-epochs 0")
}
