//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

// HasAsm reports whether the assembly kernel is in use.
var HasAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func kern6x16(k int, a, b, c *float32, ldc int)

func kernel(k int, a, b, c []float32, ldc int) {
	if !HasAsm || k == 0 {
		kernelGo(k, a, b, c, ldc)
		return
	}
	_ = a[k*MR-1]
	_ = b[k*NR-1]
	_ = c[(MR-1)*ldc+NR-1]
	kern6x16(k, &a[0], &b[0], &c[0], ldc)
}
