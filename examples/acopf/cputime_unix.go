//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used, or
// -1 if the system does not say.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
