//go:build !unix

package acopf

import "time"

// processCPU is not measured outside Unix systems.
func processCPU() time.Duration { return 0 }
