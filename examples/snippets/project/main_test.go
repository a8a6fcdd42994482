package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestMainOutput runs the README's plain-Go snippet and checks the line the
// README says it prints.
func TestMainOutput(t *testing.T) {
	out := harnesstest.Stdout(t, main)
	assert.Equal(t, "projected (0.707107, 0.707107), converged true\n", out)
}
