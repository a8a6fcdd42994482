//go:build amd64 && !purego

package adam

import "golang.org/x/sys/cpu"

// useAsm reports whether float32 steps use the AVX2 loop (tests switch it
// off to compare it with the Go loop).
var useAsm = cpu.X86.HasAVX2

// step32Asm takes the Adam step of stepBody.Run on n float32 weights, n a
// positive multiple of 8, eight at a time, with the same operations in
// the same order (no fused multiply-add), so the same bits (NaN payloads
// aside; TestStep32Asm): k holds 1−β₁, 1−β₂, β₁, β₂, c₁, c₂, ε and −η.
//
//go:noescape
func step32Asm(w, grad, m, v *float32, n int, k *[8]float32)
