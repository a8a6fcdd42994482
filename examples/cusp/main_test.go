package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestQuick runs the experiment at a scale smaller than -quick and checks
// the table, ENFORCE's feasibility on every test point and the files.
func TestQuick(t *testing.T) {
	o := defaults()
	o.Epochs, o.n, o.nTest, o.Width, o.act, o.LR, o.standardize, o.LogLines, o.Out = 200, 50, 2000, 16, "tanh", 1e-2, true, 0, t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := harnesstest.Unsplit(out.String(), "method")
	assert.Contains(t, text, "ENFORCE (paper)")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+\S+\s+\S+\s+0\s+0\s`, text, "no test point above 1e-6, none unconverged")
	harnesstest.Files(t, o.Out, "cusp_predictions.png", "cusp_constraint.png", "cusp_loss.png", "cusp_depth.png", "cusp_history.csv")
	o.Width = 0
	assert.Error(t, run(o, io.Discard, io.Discard))
	o.Width, o.weights = 16, "identity"
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-weights")
}

// TestFlags checks the examples' command-line convention and what -quick
// sets.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "epochs", "seeds")
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-width", "8"}))
	assert.Equal(t, 1500, o.Epochs)
	assert.Equal(t, "tanh", o.act)
	assert.True(t, o.standardize, "the default, the reference's")
	assert.Equal(t, "auto", o.weights)
	assert.Equal(t, 8, o.Width, "an explicit flag keeps its value")
	assert.Equal(t, defaults().Out, o.Out)
}
