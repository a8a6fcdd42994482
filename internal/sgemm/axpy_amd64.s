//go:build amd64 && !purego

#include "textflag.h"

// func add4x64(n int, y, a0, a1, a2, a3 *float64, b *[4]float64)
//
// y[i] += ((a0[i]·b0 + a1[i]·b1) + a2[i]·b2) + a3[i]·b3 for i < n, the
// sum by fused multiply–adds, four entries at a time, then one by one.
TEXT ·add4x64(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ y+8(FP), DI
	MOVQ a0+16(FP), R8
	MOVQ a1+24(FP), R9
	MOVQ a2+32(FP), R10
	MOVQ a3+40(FP), R11
	MOVQ b+48(FP), AX
	VBROADCASTSD 0(AX), Y0
	VBROADCASTSD 8(AX), Y1
	VBROADCASTSD 16(AX), Y2
	VBROADCASTSD 24(AX), Y3
	XORQ SI, SI
	MOVQ CX, DX
	ANDQ $-4, DX
	CMPQ SI, DX
	JGE  tail

loop:
	VMULPD      (R8)(SI*8), Y0, Y4
	VFMADD231PD (R9)(SI*8), Y1, Y4
	VFMADD231PD (R10)(SI*8), Y2, Y4
	VFMADD231PD (R11)(SI*8), Y3, Y4
	VADDPD      (DI)(SI*8), Y4, Y4
	VMOVUPD     Y4, (DI)(SI*8)
	ADDQ        $4, SI
	CMPQ        SI, DX
	JL          loop

tail:
	CMPQ SI, CX
	JGE  done
	VMOVSD      (R8)(SI*8), X4
	VMULSD      X0, X4, X4
	VMOVSD      (R9)(SI*8), X5
	VFMADD231SD X1, X5, X4
	VMOVSD      (R10)(SI*8), X5
	VFMADD231SD X2, X5, X4
	VMOVSD      (R11)(SI*8), X5
	VFMADD231SD X3, X5, X4
	VADDSD      (DI)(SI*8), X4, X4
	VMOVSD      X4, (DI)(SI*8)
	INCQ        SI
	JMP         tail

done:
	VZEROUPPER
	RET

// func add4x32(n int, y, a0, a1, a2, a3 *float32, b *[4]float32)
//
// add4x64 in float32, eight entries at a time.
TEXT ·add4x32(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ y+8(FP), DI
	MOVQ a0+16(FP), R8
	MOVQ a1+24(FP), R9
	MOVQ a2+32(FP), R10
	MOVQ a3+40(FP), R11
	MOVQ b+48(FP), AX
	VBROADCASTSS 0(AX), Y0
	VBROADCASTSS 4(AX), Y1
	VBROADCASTSS 8(AX), Y2
	VBROADCASTSS 12(AX), Y3
	XORQ SI, SI
	MOVQ CX, DX
	ANDQ $-8, DX
	CMPQ SI, DX
	JGE  tail32

loop32:
	VMULPS      (R8)(SI*4), Y0, Y4
	VFMADD231PS (R9)(SI*4), Y1, Y4
	VFMADD231PS (R10)(SI*4), Y2, Y4
	VFMADD231PS (R11)(SI*4), Y3, Y4
	VADDPS      (DI)(SI*4), Y4, Y4
	VMOVUPS     Y4, (DI)(SI*4)
	ADDQ        $8, SI
	CMPQ        SI, DX
	JL          loop32

tail32:
	CMPQ SI, CX
	JGE  done32
	VMOVSS      (R8)(SI*4), X4
	VMULSS      X0, X4, X4
	VMOVSS      (R9)(SI*4), X5
	VFMADD231SS X1, X5, X4
	VMOVSS      (R10)(SI*4), X5
	VFMADD231SS X2, X5, X4
	VMOVSS      (R11)(SI*4), X5
	VFMADD231SS X3, X5, X4
	VADDSS      (DI)(SI*4), X4, X4
	VMOVSS      X4, (DI)(SI*4)
	INCQ        SI
	JMP         tail32

done32:
	VZEROUPPER
	RET
