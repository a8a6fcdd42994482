package main

import (
	"testing"

	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
)

// TestQuick runs the -quick version of the command: the table, ENFORCE's
// feasibility and the files (harnesstest.CheckNonconvexQuick).
func TestQuick(t *testing.T) { harnesstest.CheckNonconvexQuick(t) }

// TestFlags checks the examples' command-line convention.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "out", "sizes", "soft", "dc3", "float32")
}
