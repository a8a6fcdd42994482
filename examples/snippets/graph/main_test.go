package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestMainOutput runs the README's gorgonia snippet and checks what it
// prints: the loss is below 0.2 after 2000 Adam steps and the last batch
// was projected to mean|c| ≤ 1e-4, every sample converged.
func TestMainOutput(t *testing.T) {
	out := harnesstest.Stdout(t, main)
	t.Log("\n" + out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	var loss float64
	_, err := fmt.Sscanf(lines[0], "loss %g", &loss)
	require.NoError(t, err, lines[0])
	assert.Less(t, loss, 0.2)
	assert.True(t, strings.HasPrefix(lines[1], "100 samples,"), lines[1])
	assert.True(t, strings.HasSuffix(lines[1], ", converged"), lines[1])
	var after float64
	_, err = fmt.Sscanf(lines[1][strings.Index(lines[1], "mean|c|"):], "mean|c| %g → %g", new(float64), &after)
	require.NoError(t, err, lines[1])
	assert.LessOrEqual(t, after, 1e-4)
}
