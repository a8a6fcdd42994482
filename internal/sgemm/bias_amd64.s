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

// func reluGrad32(dz, y, grad *float32, n int)
// The mask is the sign of the negated bits of y, as in reluGradGo.
TEXT ·reluGrad32(SB), NOSPLIT, $0-32
	MOVQ dz+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ grad+16(FP), DX
	MOVQ n+24(FP), CX
	VPXOR Y15, Y15, Y15
rgloop:
	VMOVDQU (SI), Y0
	VPSUBD Y0, Y15, Y0   // −bits
	VPSRAD $31, Y0, Y0   // all ones where negative
	VPAND (DX), Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ rgloop
	VZEROUPPER
	RET

// func colSum32(sum, h *float32, rows, w int)
// Thirty-two columns at a time down all rows (four independent chains of
// additions), then eight, so each sum adds the rows in order, as colSumGo
// does; then the last columns one by one.
TEXT ·colSum32(SB), NOSPLIT, $0-32
	MOVQ sum+0(FP), DI
	MOVQ h+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ w+24(FP), DX
	MOVQ DX, R9
	SHLQ $2, R9          // row stride in bytes
	MOVQ DX, R10         // columns left
cs32:
	CMPQ R10, $32
	JL csvec
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ SI, R11
	MOVQ R8, CX
cs32row:
	VADDPS (R11), Y0, Y0
	VADDPS 32(R11), Y1, Y1
	VADDPS 64(R11), Y2, Y2
	VADDPS 96(R11), Y3, Y3
	ADDQ R9, R11
	DECQ CX
	JNZ cs32row
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, SI
	SUBQ $32, R10
	JMP cs32
csvec:
	CMPQ R10, $8
	JL cstail
	VMOVUPS (DI), Y0
	MOVQ SI, R11
	MOVQ R8, CX
csvrow:
	VADDPS (R11), Y0, Y0
	ADDQ R9, R11
	DECQ CX
	JNZ csvrow
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, R10
	JMP csvec
cstail:
	TESTQ R10, R10
	JZ csdone
csone:
	VMOVSS (DI), X0
	MOVQ SI, R11
	MOVQ R8, CX
csorow:
	VADDSS (R11), X0, X0
	ADDQ R9, R11
	DECQ CX
	JNZ csorow
	VMOVSS X0, (DI)
	ADDQ $4, DI
	ADDQ $4, SI
	DECQ R10
	JNZ csone
csdone:
	VZEROUPPER
	RET
