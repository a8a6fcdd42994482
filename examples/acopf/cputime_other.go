//go:build !unix

package main

import "time"

// cpuTime returns -1: the process's CPU time is read on unix systems only.
func cpuTime() time.Duration { return -1 }
