//go:build amd64 && !purego

package vmath

import "golang.org/x/sys/cpu"

// useAsm reports whether SinCos32s uses the AVX2 loop (tests switch it
// off to compare).
var useAsm = cpu.X86.HasAVX2

// sinCos4 is SinCos32's polynomial path on n values, n a positive
// multiple of 4, four at a time; lanes with |x| ≥ Limit, infinities and
// NaN get meaningless values, which SinCos32s replaces.
//
//go:noescape
func sinCos4(x, sin, cos *float64, n int)
