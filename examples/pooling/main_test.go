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
	text := out.String()
	assert.Contains(t, text, "KKT-HardNet (paper)")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+[0-9.]+e-(0[7-9]|[1-9][0-9])\s`, text, "ENFORCE's max|h| ≤ 1e-6")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+[0-9.]+e-(0[7-9]|[1-9][0-9])\s`, text, "ENFORCE's max g⁺ ≤ 1e-6")
	assert.Regexp(t, `ENFORCE \(ours\)(\s+\S+){5}\s+0\.00\s+0\.00\s+\S+\s+0\s`, text, "no infeasible test point, every sample converged")
	harnesstest.Files(t, o.Out, "pooling_parity.png", "pooling_loss.png", "pooling_depth.png", "pooling_history.csv")
	o.DataDir = filepath.Join(t.TempDir(), "missing")
	assert.Error(t, run(o, io.Discard, io.Discard))
}

// TestFlags checks the examples' command-line convention and what -quick
// sets.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "epochs", "data", "ntrain")
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-seeds", "2"}))
	assert.Equal(t, 30, o.Epochs)
	assert.Equal(t, 2, o.Seeds)
}
