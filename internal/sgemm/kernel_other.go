//go:build !amd64 || purego

package sgemm

// HasAsm reports whether the assembly kernel is in use, and Has512
// whether its AVX-512 form is.
var HasAsm, Has512 = false, false

func kernel(k int, a, b, c []float32, ldc int) { kernelGo(k, a, b, c, ldc) }

func kernel2(k int, a, b, c []float32, ldc int) { panic("sgemm: no AVX-512 kernel") }

func kernel64(k int, a, b, c []float64, ldc int) { kernelGo(k, a, b, c, ldc) }

func kernel64x2(k int, a, b, c []float64, ldc int) { panic("sgemm: no AVX-512 kernel") }

func kernelT(k int, a, b, c []float32, ldc int, sub bool) { panic("sgemm: no AVX-512 kernel") }

func kernel2x1(k int, a, b, c []float32, ldc, w int) { panic("sgemm: no AVX-512 kernel") }

func kernelT2(k int, a, b, c []float32, ldc int, sub bool) { panic("sgemm: no AVX2 kernel") }

func packT16Asm(dst, src *float32, k, ld int) { panic("sgemm: no AVX2 kernel") }
