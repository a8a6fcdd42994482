package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestQuick runs the experiment, both studies included, at a scale
// smaller than -quick and checks the tables, ENFORCE's feasibility and
// the files written.
func TestQuick(t *testing.T) {
	o := defaults()
	o.Epochs, o.sweepEpochs, o.n, o.nTest, o.Width, o.act, o.LR, o.standardize = 200, 20, 40, 2000, 16, "tanh", 1e-2, true
	o.LogLines, o.Out, o.sweep, o.scarcity = 0, t.TempDir(), true, true
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := harnesstest.Unsplit(out.String(), "method")
	for _, want := range []string{"MLP (paper)", "0.339 ± 0.083", "ENFORCE (ours)", "λ_D × ε_T study", "Data-scarcity study"} {
		assert.Contains(t, text, want)
	}
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+(0\.0001|[0-9.]+e-0[5-9])\s`, text, "ENFORCE's max eq. [%] is at most 100·1e-6")
	assert.Contains(t, text, "MAPE (fraction)")
	harnesstest.Files(t, o.Out, "fitting_y1.png", "fitting_y2.png", "fitting_constraint.png", "fitting_loss.png", "fitting_depth.png",
		"fitting_displacement.png", "fitting_history.csv", "fitting_sweep.png", "fitting_sweep_depth.png", "fitting_scarcity.png")
	o.n = 5
	assert.Error(t, run(o, io.Discard, io.Discard))
	o.n, o.weights = 40, "identity"
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-weights")
	o.weights, o.softPenalty = "auto", "squaredhinge"
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-softpenalty")
}

// TestFlags checks the examples' command-line convention and what -quick
// sets.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "epochs", "sweep", "scarcity")
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-lr", "0.5"}))
	assert.Equal(t, 1500, o.Epochs)
	assert.Equal(t, 300, o.sweepEpochs)
	assert.Equal(t, 200, o.n)
	assert.Equal(t, "tanh", o.act)
	assert.True(t, o.standardize, "the default, the reference's")
	assert.Equal(t, "auto", o.weights)
	assert.Equal(t, "norm", o.softPenalty)
	assert.Equal(t, 0.5, o.LR, "an explicit flag keeps its value")
	assert.True(t, o.pyTorchInit, "-quick leaves flags it does not list")
}
