//go:build !linux

package cputime

import "time"

// Thread returns 0: a thread's CPU time is read on Linux only.
func Thread() time.Duration { return 0 }
