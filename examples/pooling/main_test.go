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
	assert.Contains(t, text, "ε_I 0.0001")
	// The floor of KKT-HardNet's test split (problems.TestPoolingFloor),
	// whatever the training set.
	assert.Contains(t, harnesstest.Flat(text), "has MSE 63.14 on this test set (expectation 57.15)")
	assert.Regexp(t, `floor: E\[y \| x\] \(ours, this test set\)\s+63\.1\s`, text)
	// At most ε_I = 1e-4 (printed to two digits).
	le := `([0-9.]+e-(0[5-9]|[1-9][0-9])|1\.0e-04)`
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+`+le+`\s`, text, "ENFORCE's max|h| ≤ ε_I")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+`+le+`\s`, text, "ENFORCE's max g⁺ ≤ ε_I")
	assert.Regexp(t, `ENFORCE \(ours\)(\s+\S+){5}\s+0\.00\s+0\.00\s+\S+\s+0\s`, text, "no test point with g_j > ε_I, every sample converged")

	// The paper's claim, eq. and ineq. < 1e-7, with -infertol 1e-7.
	o.inferTol, o.Out = 1e-7, ""
	out.Reset()
	require.NoError(t, run(o, &out, io.Discard))
	text = harnesstest.Unsplit(out.String(), "method")
	lt := `[0-9.]+e-(0[89]|[1-9][0-9])`
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+`+lt+`\s+`+lt+`\s`, text, "ENFORCE's max|h| and max g⁺ < 1e-7")
	assert.Regexp(t, `ENFORCE \(ours\)(\s+\S+){5}\s+0\.00\s+0\.00\s+\S+\s+0\s`, text)
	o.inferTol, o.Out = 1e-4, t.TempDir()
	require.NoError(t, run(o, io.Discard, io.Discard))
	harnesstest.Files(t, o.Out, "pooling_parity.png", "pooling_loss.png", "pooling_depth.png", "pooling_history.csv")
	o.DataDir = filepath.Join(t.TempDir(), "missing")
	assert.Error(t, run(o, io.Discard, io.Discard))
	o.inferTol = 0
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-infertol")
}

// TestFlags checks the examples' command-line convention and what -quick
// sets.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "epochs", "data", "ntrain")
	o := defaults()
	assert.Equal(t, 10000, o.Epochs, "the reference's epochs")
	assert.Equal(t, 5e-5, o.LR, "the reference's learning rate")
	assert.Equal(t, 1e-4, o.inferTol, "the reference's ε_I")
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-seeds", "2", "-infertol", "1e-6", "-resplit", "4"}))
	assert.Equal(t, uint64(4), o.Resplit)
	assert.Equal(t, 30, o.Epochs)
	assert.Equal(t, 2, o.Seeds)
	assert.Equal(t, 1e-6, o.inferTol)
}
