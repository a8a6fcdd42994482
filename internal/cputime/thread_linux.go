package cputime

import (
	"syscall"
	"time"
)

// Thread returns the CPU time (user and system) the calling OS thread has
// used; lock the goroutine to its thread (runtime.LockOSThread) between
// two readings.
func Thread() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
