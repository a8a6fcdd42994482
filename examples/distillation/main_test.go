package main

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestQuick trains both models for two epochs on 256 training rows and
// checks the table, ENFORCE's feasibility at inference and the files.
func TestQuick(t *testing.T) {
	o := defaults()
	o.Epochs, o.NTrain, o.LogLines, o.Out, o.DataDir = 2, 256, 0, t.TempDir(), harnesstest.DataDir(t)
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := harnesstest.Unsplit(out.String(), "method")
	assert.Contains(t, text, "KKT-HardNet (paper)")
	assert.Contains(t, text, "output σ floor 1e-05")
	assert.Contains(t, text, "W auto")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+([0-9.]+e-(0[7-9]|[1-9][0-9])|1\.0e-06)\s`, text, "ENFORCE's max|h| ≤ 1e-6 (printed to two digits)")
	assert.Regexp(t, `ENFORCE \(ours\)(\s+\S+){7}\s+0\s`, text, "every test sample converged")
	assert.Contains(t, text, "ENFORCE projected 0.0 % of its training batches", "the rule rejected every batch, and the program says why")
	assert.Contains(t, text, "one NP step raises the task loss")
	harnesstest.Files(t, o.Out, "distillation_parity.png", "distillation_loss.png", "distillation_depth.png", "distillation_history.csv")
	o.DataDir = filepath.Join(t.TempDir(), "missing")
	assert.Error(t, run(o, io.Discard, io.Discard))
	o.weights = "other"
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-weights")
	o.weights, o.StdFloor = "auto", -1
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-stdfloor not negative")
	o.StdFloor, o.inferTol = 1e-5, 0
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-infertol")
}

// TestFlags checks the examples' command-line convention and what -quick
// sets.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "epochs", "data", "weights", "infertol")
	o := defaults()
	assert.Equal(t, "auto", o.weights, "the reference's weighting by default")
	assert.Equal(t, 1e-5, o.StdFloor, "the reference's σ floor by default")
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-weights", "standardised", "-stdfloor", "0"}))
	assert.Equal(t, 30, o.Epochs)
	assert.Equal(t, "standardised", o.weights)
	assert.Equal(t, 0.0, o.StdFloor)
	assert.Equal(t, 1200, defaults().Epochs)
	assert.Equal(t, 1e-6, defaults().inferTol, "ε_I = 1e-6 by default")
	require.NoError(t, flags(&o).Parse([]string{"-infertol", "1e-7"}))
	assert.Equal(t, 1e-7, o.inferTol)
}
