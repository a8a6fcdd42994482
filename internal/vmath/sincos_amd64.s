//go:build amd64 && !purego

#include "textflag.h"

// SinCos32's polynomial path on four float64 lanes, operation for
// operation (no fused multiply-add, each product and sum rounded as in
// the Go code, so the same bits). The quadrant n is read from the low
// bits of x·(2/π) + toint, which hold the integer nearest x·(2/π) in
// two's complement (the Go code's int64(fn) has the same low bits).

DATA sc<>+0(SB)/8, $0x4338000000000000   // toint = 1.5·2⁵²
DATA sc<>+8(SB)/8, $0x3FE45F306DC9C883   // 2/π
DATA sc<>+16(SB)/8, $0x3FF921FB50000000  // π/2, high 25 bits
DATA sc<>+24(SB)/8, $0x3E5110B4611A6263  // π/2, low part
DATA sc<>+32(SB)/8, $0xBFC5555554CBAC77  // s1
DATA sc<>+40(SB)/8, $0x3F811110896EFBB2  // s2
DATA sc<>+48(SB)/8, $0xBF2A00F9E2CAE774  // s3
DATA sc<>+56(SB)/8, $0x3EC6CD878C3B46A7  // s4
DATA sc<>+64(SB)/8, $0xBFDFFFFFFD0C5E81  // c0
DATA sc<>+72(SB)/8, $0x3FA55553E1053A42  // c1
DATA sc<>+80(SB)/8, $0xBF56C087E80F1E27  // c2
DATA sc<>+88(SB)/8, $0x3EF99342E0EE5069  // c3
DATA sc<>+96(SB)/8, $0x3FF0000000000000  // 1
DATA sc<>+104(SB)/8, $1                  // integer 1
DATA sc<>+112(SB)/8, $2                  // integer 2
GLOBL sc<>(SB), RODATA|NOPTR, $120

// func sinCos4(x, sin, cos *float64, n int)
TEXT ·sinCos4(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ sin+8(FP), DI
	MOVQ cos+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD sc<>+0(SB), Y15  // toint
	VBROADCASTSD sc<>+8(SB), Y14  // 2/π
	VBROADCASTSD sc<>+16(SB), Y13 // π/2 hi
	VBROADCASTSD sc<>+24(SB), Y12 // π/2 lo
	VBROADCASTSD sc<>+104(SB), Y11 // integer 1
	VBROADCASTSD sc<>+112(SB), Y10 // integer 2
loop:
	VMOVUPD (SI), Y0              // x
	VMULPD Y14, Y0, Y1            // x·(2/π)
	VADDPD Y15, Y1, Y1            // + toint: n in the low bits
	VSUBPD Y15, Y1, Y2            // fn
	VMULPD Y13, Y2, Y3            // fn·hi
	VSUBPD Y3, Y0, Y3             // x − fn·hi
	VMULPD Y12, Y2, Y4            // fn·lo
	VSUBPD Y4, Y3, Y3             // y
	VMULPD Y3, Y3, Y4             // z = y·y
	VMULPD Y4, Y4, Y5             // w = z·z
	VMULPD Y3, Y4, Y6             // s = z·y
	// sy = (y + s·(s1 + z·s2)) + (s·w)·(s3 + z·s4)
	VBROADCASTSD sc<>+40(SB), Y7
	VMULPD Y7, Y4, Y7             // z·s2
	VBROADCASTSD sc<>+32(SB), Y8
	VADDPD Y7, Y8, Y7             // s1 + z·s2
	VMULPD Y7, Y6, Y7             // s·(…)
	VADDPD Y7, Y3, Y7             // y + s·(…)
	VBROADCASTSD sc<>+56(SB), Y8
	VMULPD Y8, Y4, Y8             // z·s4
	VBROADCASTSD sc<>+48(SB), Y9
	VADDPD Y8, Y9, Y8             // s3 + z·s4
	VMULPD Y5, Y6, Y9             // s·w
	VMULPD Y8, Y9, Y8             // (s·w)·(…)
	VADDPD Y8, Y7, Y7             // sy
	// cy = ((1 + z·c0) + w·c1) + (w·z)·(c2 + z·c3)
	VBROADCASTSD sc<>+64(SB), Y8
	VMULPD Y8, Y4, Y8             // z·c0
	VBROADCASTSD sc<>+96(SB), Y9
	VADDPD Y8, Y9, Y8             // 1 + z·c0
	VBROADCASTSD sc<>+72(SB), Y9
	VMULPD Y9, Y5, Y9             // w·c1
	VADDPD Y9, Y8, Y8             // (1 + z·c0) + w·c1
	VBROADCASTSD sc<>+88(SB), Y9
	VMULPD Y9, Y4, Y9             // z·c3
	VBROADCASTSD sc<>+80(SB), Y3
	VADDPD Y9, Y3, Y9             // c2 + z·c3
	VMULPD Y4, Y5, Y3             // w·z
	VMULPD Y9, Y3, Y9             // (w·z)·(…)
	VADDPD Y9, Y8, Y8             // cy
	// Quadrant: odd n swaps sin and cos; bit 1 of n, and of n+1, flips
	// the sign of sin, and of cos.
	VPAND Y11, Y1, Y2             // n & 1
	VPSLLQ $63, Y2, Y2            // sign bit set where n is odd
	VBLENDVPD Y2, Y8, Y7, Y3      // sin: sy, or cy where odd
	VBLENDVPD Y2, Y7, Y8, Y4      // cos: cy, or sy where odd
	VPAND Y10, Y1, Y5             // n & 2
	VPSLLQ $62, Y5, Y5
	VXORPD Y5, Y3, Y3
	VPADDQ Y11, Y1, Y6            // n + 1
	VPAND Y10, Y6, Y6
	VPSLLQ $62, Y6, Y6
	VXORPD Y6, Y4, Y4
	VMOVUPD Y3, (DI)
	VMOVUPD Y4, (DX)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	SUBQ $4, CX
	JNZ loop
	VZEROUPPER
	RET
