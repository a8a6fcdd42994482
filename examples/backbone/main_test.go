package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestQuick runs the example's -quick configuration (about 2 s): the
// residual backbone trains with AdaNP, ENFORCE's predictions meet the
// inference tolerance and beat the backbone's own, and the saved model
// loads back to the same predictions.
func TestQuick(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick"}))
	var out bytes.Buffer
	res, err := run(&out, o)
	require.NoError(t, err)
	assert.LessOrEqual(t, res.maxTilde, 1e-6, "max|c| of ENFORCE's predictions")
	assert.Greater(t, res.maxHat, 1e-3, "the backbone alone is not feasible")
	assert.Less(t, res.mseTilde, res.mseHat, "the projection improves the fit")
	assert.Less(t, res.mseTilde, 1e-2)
	assert.Greater(t, res.projected, 0.5, "the activation rule projects")
	assert.True(t, res.sameAfterLoad)
	assert.Contains(t, out.String(), "ENFORCE ỹ = AdaNP(ŷ)")
}

// TestFlags checks the examples' command-line convention and what -quick
// sets.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "epochs", "blocks")
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-blocks", "3", "-quick"}))
	assert.Equal(t, options{n: 200, nTest: 2000, width: 16, blocks: 3, epochs: 1000, lr: 1e-2, seed: 1}, o)
}
