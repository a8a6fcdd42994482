//go:build !amd64 || purego

package sgemm

func add4x64(n int, y, a0, a1, a2, a3 *float64, b *[4]float64) { panic("sgemm: no assembly") }

func add4x32(n int, y, a0, a1, a2, a3 *float32, b *[4]float32) { panic("sgemm: no assembly") }
