//go:build !amd64 || purego

package mixed

// useAsm reports whether the assembly runs; never here.
var useAsm = false

func axpyAsm(dst *float64, a float64, x *float32, n int) { panic("mixed: no assembly") }
