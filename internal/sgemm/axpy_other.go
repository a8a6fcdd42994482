//go:build !amd64 || purego

package sgemm

func add4x64(n int, y, a0, a1, a2, a3 *float64, b *[4]float64) { panic("sgemm: no assembly") }
