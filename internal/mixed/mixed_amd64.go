//go:build amd64 && !purego

package mixed

import "golang.org/x/sys/cpu"

// useAsm reports whether the AVX2 loop runs (tests switch it off).
var useAsm = cpu.X86.HasAVX2

// axpyAsm is Axpy's loop over the first n values; n is a positive
// multiple of 8.
//
//go:noescape
func axpyAsm(dst *float64, a float64, x *float32, n int)
