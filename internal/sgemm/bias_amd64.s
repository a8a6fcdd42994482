//go:build amd64 && !purego

#include "textflag.h"

// ReLU is max(s, 0) for s = v+b as Go computes it on amd64: VMAXPS with 0
// as its first source returns s when s is NaN or ±0 and max(0, s)
// otherwise; clearing the sign bit then maps −0 to +0 and a NaN to itself
// with its sign cleared, as Go's max does. VADDPS adds b to v (Intel's
// first source), so of two NaNs the one of v is kept, as ADDSS does in the
// Go loop.

// func biasReLU32(h, b *float32, rows, w int)
TEXT ·biasReLU32(SB), NOSPLIT, $0-32
	MOVQ h+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ rows+16(FP), CX
	MOVQ w+24(FP), DX
	VXORPS Y14, Y14, Y14
	VPCMPEQD Y15, Y15, Y15
	VPSRLD $1, Y15, Y15
relurow:
	MOVQ DI, R11
	MOVQ DX, R10
	CMPQ R10, $8
	JL relutail
reluvec:
	VMOVUPS (SI), Y0
	VADDPS (R11), Y0, Y0
	VMAXPS Y0, Y14, Y0
	VANDPS Y15, Y0, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	ADDQ $32, R11
	SUBQ $8, R10
	CMPQ R10, $8
	JGE reluvec
relutail:
	TESTQ R10, R10
	JZ relunext
reluone:
	VMOVSS (SI), X0
	VADDSS (R11), X0, X0
	VMAXSS X0, X14, X0
	VANDPS X15, X0, X0
	VMOVSS X0, (SI)
	ADDQ $4, SI
	ADDQ $4, R11
	DECQ R10
	JNZ reluone
relunext:
	DECQ CX
	JNZ relurow
	VZEROUPPER
	RET

// func biasAdd32(h, b *float32, rows, w int)
TEXT ·biasAdd32(SB), NOSPLIT, $0-32
	MOVQ h+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ rows+16(FP), CX
	MOVQ w+24(FP), DX
addrow:
	MOVQ DI, R11
	MOVQ DX, R10
	CMPQ R10, $8
	JL addtail
addvec:
	VMOVUPS (SI), Y0
	VADDPS (R11), Y0, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	ADDQ $32, R11
	SUBQ $8, R10
	CMPQ R10, $8
	JGE addvec
addtail:
	TESTQ R10, R10
	JZ addnext
addone:
	VMOVSS (SI), X0
	VADDSS (R11), X0, X0
	VMOVSS X0, (SI)
	ADDQ $4, SI
	ADDQ $4, R11
	DECQ R10
	JNZ addone
addnext:
	DECQ CX
	JNZ addrow
	VZEROUPPER
	RET

// func biasReLU64(dst *float64, h, b *float32, rows, w int)
TEXT ·biasReLU64(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), R9
	MOVQ h+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ rows+24(FP), CX
	MOVQ w+32(FP), DX
	VXORPS Y14, Y14, Y14
	VPCMPEQD Y15, Y15, Y15
	VPSRLD $1, Y15, Y15
relu64row:
	MOVQ DI, R11
	MOVQ DX, R10
	CMPQ R10, $8
	JL relu64tail
relu64vec:
	VMOVUPS (SI), Y0
	VADDPS (R11), Y0, Y0
	VMAXPS Y0, Y14, Y0
	VANDPS Y15, Y0, Y0
	VCVTPS2PD X0, Y1
	VEXTRACTF128 $1, Y0, X2
	VCVTPS2PD X2, Y2
	VMOVUPD Y1, (R9)
	VMOVUPD Y2, 32(R9)
	ADDQ $32, SI
	ADDQ $32, R11
	ADDQ $64, R9
	SUBQ $8, R10
	CMPQ R10, $8
	JGE relu64vec
relu64tail:
	TESTQ R10, R10
	JZ relu64next
relu64one:
	VMOVSS (SI), X0
	VADDSS (R11), X0, X0
	VMAXSS X0, X14, X0
	VANDPS X15, X0, X0
	VCVTSS2SD X0, X0, X0
	VMOVSD X0, (R9)
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $8, R9
	DECQ R10
	JNZ relu64one
relu64next:
	DECQ CX
	JNZ relu64row
	VZEROUPPER
	RET

// func biasAdd64(dst *float64, h, b *float32, rows, w int)
TEXT ·biasAdd64(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), R9
	MOVQ h+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ rows+24(FP), CX
	MOVQ w+32(FP), DX
add64row:
	MOVQ DI, R11
	MOVQ DX, R10
	CMPQ R10, $8
	JL add64tail
add64vec:
	VMOVUPS (SI), Y0
	VADDPS (R11), Y0, Y0
	VCVTPS2PD X0, Y1
	VEXTRACTF128 $1, Y0, X2
	VCVTPS2PD X2, Y2
	VMOVUPD Y1, (R9)
	VMOVUPD Y2, 32(R9)
	ADDQ $32, SI
	ADDQ $32, R11
	ADDQ $64, R9
	SUBQ $8, R10
	CMPQ R10, $8
	JGE add64vec
add64tail:
	TESTQ R10, R10
	JZ add64next
add64one:
	VMOVSS (SI), X0
	VADDSS (R11), X0, X0
	VCVTSS2SD X0, X0, X0
	VMOVSD X0, (R9)
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $8, R9
	DECQ R10
	JNZ add64one
add64next:
	DECQ CX
	JNZ add64row
	VZEROUPPER
	RET
