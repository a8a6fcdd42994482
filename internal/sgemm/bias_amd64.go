//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

// biasAsm reports whether the bias epilogues use the AVX2 assembly
// (tests switch it off to compare with the Go loops).
var biasAsm = cpu.X86.HasAVX2

// The kernels process rows×w values of h (and dst), row by row, with the
// bias b of w values: eight at a time, then the row's last w mod 8 one by
// one. Callers check that the slices hold them.

//go:noescape
func biasReLU32(h, b *float32, rows, w int)

//go:noescape
func biasAdd32(h, b *float32, rows, w int)

//go:noescape
func biasReLU64(dst *float64, h, b *float32, rows, w int)

//go:noescape
func biasAdd64(dst *float64, h, b *float32, rows, w int)

// reluGrad32 is ReLUGrad on n values, n a positive multiple of 8.
//
//go:noescape
func reluGrad32(dz, y, grad *float32, n int)

// colSum32 adds the column sums of rows×w values of h to the w values of
// sum.
//
//go:noescape
func colSum32(sum, h *float32, rows, w int)
