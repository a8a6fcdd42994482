//go:build !amd64 || purego

package adam

// useAsm reports whether the assembly runs; never here.
var useAsm = false

func step32Asm(w, grad, m, v *float32, n int, k *[8]float32) { panic("adam: no assembly") }
