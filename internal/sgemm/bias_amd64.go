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
