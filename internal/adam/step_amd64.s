//go:build amd64 && !purego

#include "textflag.h"

// Go's assembler writes VOP src2, src1, dst for dst = src1 op src2. Every
// operation of stepBody.Run is rounded as there, so the bits are the Go
// loop's; only which of two NaNs propagates may differ (the Go compiler
// orders commutative operands as it likes). VSQRTPS is the correctly
// rounded float32 square root, as float32(math.Sqrt(float64(x))) is.

// func step32Asm(w, grad, m, v *float32, n int, k *[8]float32)
TEXT ·step32Asm(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ k+40(FP), AX
	VBROADCASTSS 0(AX), Y8   // 1−β₁
	VBROADCASTSS 4(AX), Y9   // 1−β₂
	VBROADCASTSS 8(AX), Y10  // β₁
	VBROADCASTSS 12(AX), Y11 // β₂
	VBROADCASTSS 16(AX), Y12 // c₁
	VBROADCASTSS 20(AX), Y13 // c₂
	VBROADCASTSS 24(AX), Y14 // ε
	VBROADCASTSS 28(AX), Y15 // −η
	VXORPS Y7, Y7, Y7
loop:
	VMOVUPS (SI), Y0        // g
	VMULPS Y8, Y0, Y1       // t1 = g·(1−β₁)
	VMULPS Y0, Y0, Y2       // t2 = g·g
	VMULPS Y9, Y2, Y2       // t2 = t2·(1−β₂)
	VMOVUPS (R8), Y3
	VMULPS Y10, Y3, Y3      // m·β₁
	VADDPS Y3, Y1, Y1       // t1 += m·β₁
	VMOVUPS (R9), Y4
	VMULPS Y11, Y4, Y4      // v·β₂
	VADDPS Y4, Y2, Y2       // t2 += v·β₂
	VMOVUPS Y1, (R8)
	VMOVUPS Y2, (R9)
	VMULPS Y12, Y1, Y1      // m̂ = t1·c₁
	VMULPS Y13, Y2, Y2      // v̂ = t2·c₂
	VSQRTPS Y2, Y2          // √v̂
	VADDPS Y14, Y2, Y2      // √v̂ + ε
	VMULPS Y15, Y1, Y1      // m̂·(−η)
	VDIVPS Y2, Y1, Y1       // m̂·(−η) / (√v̂ + ε)
	VMOVUPS (DI), Y5
	VADDPS Y1, Y5, Y5       // w + step
	VMOVUPS Y5, (DI)
	VMOVUPS Y7, (SI)        // g = 0
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, R9
	SUBQ $8, CX
	JNZ loop
	VZEROUPPER
	RET
