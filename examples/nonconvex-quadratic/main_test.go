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
// checks that it prints the table with ENFORCE's row and writes the CSV
// histories.
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
	assert.Contains(t, s, "reference (IPOPT in the paper)")
	files, err := filepath.Glob(filepath.Join(out, "*ENFORCE*.csv"))
	require.NoError(t, err)
	assert.NotEmpty(t, files)
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == "ENFORCE" {
			maxEq, err := strconv.ParseFloat(f[3], 64)
			require.NoError(t, err)
			assert.LessOrEqual(t, maxEq, 1e-3, "ENFORCE meets the inference tolerance")
		}
	}
}
