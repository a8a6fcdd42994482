//go:build unix

package acopf

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time used so far by the process, all threads
// (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
