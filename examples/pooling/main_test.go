package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems"
)

// TestQuick trains both models for two epochs on 256 training rows and
// checks the table, ENFORCE's feasibility at inference and the files. It
// skips when the shared data are absent.
func TestQuick(t *testing.T) {
	dir, err := problems.DataDir()
	if errors.Is(err, problems.ErrNoData) {
		t.Skip("KKT-HardNet data not found (set ENFORCE_DATA or place ../shared/data beside the checkout):", err)
	}
	require.NoError(t, err)
	o := defaults()
	o.epochs, o.nTrain, o.logLines, o.out, o.dataDir = 2, 256, 0, t.TempDir(), dir
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := out.String()
	assert.Contains(t, text, "KKT-HardNet (paper)")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+[0-9.]+e-(0[7-9]|[1-9][0-9])\s`, text, "ENFORCE's max|h| ≤ 1e-6")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+[0-9.]+e-(0[7-9]|[1-9][0-9])\s`, text, "ENFORCE's max g⁺ ≤ 1e-6")
	assert.Regexp(t, `ENFORCE \(ours\)(\s+\S+){5}\s+0\.00\s+0\.00\s+\S+\s+0\s`, text, "no infeasible test point, every sample converged")
	for _, f := range []string{"pooling_parity.png", "pooling_loss.png", "pooling_depth.png", "pooling_history.csv"} {
		info, err := os.Stat(filepath.Join(o.out, f))
		require.NoError(t, err, f)
		assert.Positive(t, info.Size(), f)
	}
	o.dataDir = filepath.Join(t.TempDir(), "missing")
	assert.Error(t, run(o, io.Discard, io.Discard))
}
