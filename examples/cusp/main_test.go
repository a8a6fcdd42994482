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
// the table, ENFORCE's feasibility on every test point and the files.
func TestQuick(t *testing.T) {
	o := defaults()
	o.epochs, o.n, o.nTest, o.width, o.act, o.lr, o.standardize, o.logLines, o.out = 200, 50, 2000, 16, "tanh", 1e-2, true, 0, t.TempDir()
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := out.String()
	assert.Contains(t, text, "ENFORCE (paper)")
	assert.Regexp(t, `ENFORCE \(ours\)\s+\S+\s+\S+\s+\S+\s+\S+\s+0\s+0\s`, text, "no test point above 1e-6, none unconverged")
	for _, f := range []string{"cusp_predictions.png", "cusp_constraint.png", "cusp_loss.png", "cusp_depth.png", "cusp_history.csv"} {
		info, err := os.Stat(filepath.Join(o.out, f))
		require.NoError(t, err, f)
		assert.Positive(t, info.Size(), f)
	}
	o.width = 0
	assert.Error(t, run(o, io.Discard, io.Discard))
}
