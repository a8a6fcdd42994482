package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuick runs the experiment at a scale smaller than -quick and checks
// that it prints the paper's table beside ours, that ENFORCE's predictions
// are feasible, and that it writes the figures and the history.
func TestQuick(t *testing.T) {
	o := defaults()
	o.epochs, o.n, o.nTest, o.logLines, o.out = 15, 400, 100, 0, t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := out.String()
	for _, want := range []string{"MLP (paper)      0.994", "Soft (ours)", "ENFORCE (paper)  0.995", "ENFORCE (ours)"} {
		assert.Contains(t, text, want)
	}
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+0\.00\s+0\.00\s`, text, "ENFORCE has no infeasible test prediction")
	for _, f := range []string{"inequality_predictions.png", "inequality_loss.png", "inequality_depth.png", "inequality_history.csv"} {
		info, err := os.Stat(filepath.Join(o.out, f))
		require.NoError(t, err, f)
		assert.Positive(t, info.Size(), f)
	}
	o.seeds = 0
	assert.Error(t, run(o, io.Discard, io.Discard))
}
