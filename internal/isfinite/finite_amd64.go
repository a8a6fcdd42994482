//go:build amd64 && !purego

package isfinite

import "golang.org/x/sys/cpu"

// useAsm reports whether the AVX2 loops run (tests switch it off).
var useAsm = cpu.X86.HasAVX2

// float32sAsm reports whether the n values at x are finite; n is a
// positive multiple of 32.
//
//go:noescape
func float32sAsm(x *float32, n int) bool

// float64sAsm reports whether the n values at x are finite; n is a
// positive multiple of 16.
//
//go:noescape
func float64sAsm(x *float64, n int) bool
