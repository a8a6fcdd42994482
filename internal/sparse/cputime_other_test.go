//go:build !linux

package sparse

import "time"

// threadCPU is not measured outside Linux.
func threadCPU() time.Duration { return 0 }
