//go:build !amd64 || purego

package sgemm

// HasAsm reports whether the assembly kernel is in use.
var HasAsm = false

func kernel(k int, a, b, c []float32, ldc int) { kernelGo(k, a, b, c, ldc) }
