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
// that it prints the paper's table beside ours, that ENFORCE's predictions
// are feasible, and that it writes the figures and the history.
func TestQuick(t *testing.T) {
	o := defaults()
	o.Epochs, o.n, o.nTest, o.LogLines, o.Out = 15, 400, 100, 0, t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := harnesstest.Unsplit(out.String(), "method")
	for _, want := range []string{"MLP (paper)      0.994", "Soft (ours)", "ENFORCE (paper)  0.995", "ENFORCE (ours)"} {
		assert.Contains(t, text, want)
	}
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+0\.00\s+0\.00\s`, text, "ENFORCE has no infeasible test prediction")
	harnesstest.Files(t, o.Out, "inequality_predictions.png", "inequality_loss.png", "inequality_depth.png", "inequality_history.csv")
	assert.Contains(t, harnesstest.Flat(text), "ε_I 1e-06, Soft λ_C 1 (hinge penalty)")

	// The reference's ε_I and the earlier Soft penalty.
	o.inferTol, o.softPenalty, o.Out = 1e-4, "fb", ""
	out.Reset()
	require.NoError(t, run(o, &out, io.Discard))
	text = harnesstest.Unsplit(out.String(), "method")
	assert.Contains(t, harnesstest.Flat(text), "ε_I 0.0001, Soft λ_C 1 (fb penalty)")
	assert.Contains(t, harnesstest.Flat(text), "g_j(x, ỹ) > ε_I = 0.0001")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+0\.00\s+0\.00\s`, text)

	o.Seeds = 0
	assert.Error(t, run(o, io.Discard, io.Discard))
	o.Seeds, o.inferTol = 1, -1
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-infertol")
	o.inferTol, o.softPenalty = 1e-6, "l1"
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-softpenalty")
}

// TestFlags checks the examples' command-line convention and what -quick
// sets.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "epochs", "activation")
	o := defaults()
	assert.Equal(t, 1e-6, o.inferTol, "the paper's ε_I")
	assert.Equal(t, "hinge", o.softPenalty)
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-infertol", "1e-4"}))
	assert.Equal(t, 60, o.Epochs)
	assert.Equal(t, 1e-4, o.inferTol)
	o = defaults()
	require.NoError(t, flags(&o).Parse([]string{"-epochs", "3", "-quick"}))
	assert.Equal(t, 3, o.Epochs, "an explicit flag keeps its value")
}
