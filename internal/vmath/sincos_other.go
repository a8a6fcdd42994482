//go:build !amd64 || purego

package vmath

// useAsm reports whether the assembly runs; never here.
var useAsm = false

func sinCos4(x, sin, cos *float64, n int) { panic("vmath: no assembly") }
