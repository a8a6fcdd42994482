//go:build !amd64 || purego

package sgemm

// biasAsm reports whether the bias epilogues use the assembly; never here.
var biasAsm = false

func biasReLU32(h, b *float32, rows, w int)               { panic("sgemm: no assembly") }
func biasAdd32(h, b *float32, rows, w int)                { panic("sgemm: no assembly") }
func biasReLU64(dst *float64, h, b *float32, rows, w int) { panic("sgemm: no assembly") }
func biasAdd64(dst *float64, h, b *float32, rows, w int)  { panic("sgemm: no assembly") }
func reluGrad32(dz, y, grad *float32, n int)              { panic("sgemm: no assembly") }
func colSum32(sum, h *float32, rows, w int)               { panic("sgemm: no assembly") }
