package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuick runs the -quick version of the command (a few seconds) and
// checks that it prints the table, that ENFORCE's predictions meet the
// inference tolerance max|c| ≤ 1e-3, and that it writes the table, the
// history and the plots.
func TestQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	_, file, _, _ := runtime.Caller(0)
	out := t.TempDir()
	cmd := exec.Command("go", "run", ".", "-quick", "-out", out)
	cmd.Dir = filepath.Dir(file)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	s := string(b)
	assert.Contains(t, s, "ENFORCE")
	assert.Contains(t, s, "reference: ")
	for _, suffix := range []string{"-table.md", "-history.csv", "-objective.png", "-depth.png"} {
		files, err := filepath.Glob(filepath.Join(out, "*"+suffix))
		require.NoError(t, err)
		assert.Len(t, files, 1, suffix)
	}
	found := false
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[0] == "ENFORCE" {
			found = true
			maxEq, err := strconv.ParseFloat(f[4], 64)
			require.NoError(t, err)
			assert.LessOrEqual(t, maxEq, 1e-3, "ENFORCE meets the inference tolerance")
		}
	}
	assert.True(t, found, "ENFORCE row")
}
