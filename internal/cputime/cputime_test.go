package cputime

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReadingsGrow: a busy loop's CPU time shows in both readings where
// the system gives them, and neither goes back.
func TestReadingsGrow(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p0, t0 := Process(), Thread()
	x := 0.0
	for i := range 20_000_000 {
		x += float64(i%7) * 1e-9
	}
	p1, t1 := Process(), Thread()
	assert.GreaterOrEqual(t, p1, p0)
	assert.GreaterOrEqual(t, t1, t0)
	if runtime.GOOS == "linux" {
		assert.Greater(t, p1, p0, "x = %v", x)
		assert.Greater(t, t1, t0)
	}
}
