//go:build amd64 && !purego

#include "textflag.h"

// func axpyAsm(dst *float64, a float64, x *float32, n int)
// Eight values a round: four float32 converted to float64 at a time
// (exact), multiplied by a (rounded), added to dst (rounded).
TEXT ·axpyAsm(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	VBROADCASTSD a+8(FP), Y2
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
loop:
	VCVTPS2PD (SI), Y0
	VCVTPS2PD 16(SI), Y1
	VMULPD Y2, Y0, Y0
	VMULPD Y2, Y1, Y1
	VADDPD (DI), Y0, Y0
	VADDPD 32(DI), Y1, Y1
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	ADDQ $32, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JNZ loop
	VZEROUPPER
	RET
