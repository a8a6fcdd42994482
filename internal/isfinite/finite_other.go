//go:build !amd64 || purego

package isfinite

// useAsm reports whether the assembly runs; never here.
var useAsm = false

func float32sAsm(x *float32, n int) bool { panic("isfinite: no assembly") }
func float64sAsm(x *float64, n int) bool { panic("isfinite: no assembly") }
