package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestMainOutput runs the README's train snippet (New, Fit, SaveFile,
// LoadFile, Predict) in a temporary folder and checks what it prints:
// three predictions within 0.1 of the truth, projected to max|c| ≤ 1e-6,
// every sample converged; and that it saved model.json there.
func TestMainOutput(t *testing.T) {
	t.Chdir(t.TempDir()) // main writes model.json to the working directory
	out := harnesstest.Stdout(t, main)
	t.Log("\n" + out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5)
	for i, v := range []float64{-1.5, 0.1, 1.9} {
		row := strings.Trim(lines[1+i], "⎡⎢⎣⎤⎥⎦ ")
		var y1, y2 float64
		_, err := fmt.Sscan(row, &y1, &y2)
		require.NoError(t, err, lines[1+i])
		s := math.Sin(5 * v)
		assert.InDelta(t, 2*s, y1, 0.1, "y₁ at x = %v", v)
		assert.InDelta(t, -s*s-v*v, y2, 0.1, "y₂ at x = %v", v)
		assert.InDelta(t, 0, 0.25*y1*y1+v*v+y2, 2e-3, "c at x = %v, from 3 printed decimals", v)
	}
	assert.True(t, strings.HasPrefix(lines[4], "3 samples,"), lines[4])
	assert.True(t, strings.HasSuffix(lines[4], ", converged"), lines[4])
	var after float64
	_, err := fmt.Sscanf(lines[4][strings.Index(lines[4], "max|c|"):], "max|c| %g → %g", new(float64), &after)
	require.NoError(t, err, lines[4])
	assert.LessOrEqual(t, after, 1e-6)
	assert.FileExists(t, "model.json")
}
