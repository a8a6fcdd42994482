//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 kernels of BlockT: C[0:r, 0:16] = A·B (kernT<r>x16) or
// C[0:r, 0:16] −= A·B (kernT<r>x16sub), r = 6 or 4, for A = aᵀ (rows 0 to
// r−1 of it: columns of the column panel a, whose rows are 16 floats
// apart) and B = b, a packed column panel (k×16), c with stride ldc
// (elements). Each entry is one chain of fused multiply–adds over k in
// increasing order, as in kern16x16 and kern16x16sub. Accumulators: row i
// in Y(2i), Y(2i+1); Y12, Y13 hold the row of b, Y14 the broadcast entry
// of a.

// ARGS loads the arguments: CX = k, SI = a, DI = b, DX = c, R8 = ldc in
// bytes.
#define ARGS \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ b+16(FP), DI; \
	MOVQ c+24(FP), DX; \
	MOVQ ldc+32(FP), R8; \
	SHLQ $2, R8

// ZERO2 clears a row's two accumulators.
#define ZERO2(r0, r1) \
	VXORPS r0, r0, r0; \
	VXORPS r1, r1, r1

// LOAD2 loads a row of c (at R9, which it then moves to the next row) into
// its two accumulators.
#define LOAD2(r0, r1) \
	VMOVUPS (R9), r0; \
	VMOVUPS 32(R9), r1; \
	ADDQ R8, R9

// BROW loads the row of b at DI into Y12, Y13.
#define BROW \
	VMOVUPS (DI), Y12; \
	VMOVUPS 32(DI), Y13

// FMA2 adds a[off]·(Y12, Y13) to a row's accumulators; FNMA2 subtracts it.
#define FMA2(off, r0, r1) \
	VBROADCASTSS off(SI), Y14; \
	VFMADD231PS Y12, Y14, r0; \
	VFMADD231PS Y13, Y14, r1

#define FNMA2(off, r0, r1) \
	VBROADCASTSS off(SI), Y14; \
	VFNMADD231PS Y12, Y14, r0; \
	VFNMADD231PS Y13, Y14, r1

// NEXT advances a and b by one row (16 floats) and counts k down.
#define NEXT \
	ADDQ $64, SI; \
	ADDQ $64, DI; \
	DECQ CX

// STORE2 stores a row's accumulators at DX, which it then moves to the
// next row.
#define STORE2(r0, r1) \
	VMOVUPS r0, (DX); \
	VMOVUPS r1, 32(DX); \
	ADDQ R8, DX

// func kernT6x16(k int, a, b, c *float32, ldc int)
TEXT ·kernT6x16(SB), NOSPLIT, $0-40
	ARGS
	ZERO2(Y0, Y1)
	ZERO2(Y2, Y3)
	ZERO2(Y4, Y5)
	ZERO2(Y6, Y7)
	ZERO2(Y8, Y9)
	ZERO2(Y10, Y11)
loopT6x16:
	BROW
	FMA2(0, Y0, Y1)
	FMA2(4, Y2, Y3)
	FMA2(8, Y4, Y5)
	FMA2(12, Y6, Y7)
	FMA2(16, Y8, Y9)
	FMA2(20, Y10, Y11)
	NEXT
	JNZ loopT6x16
	STORE2(Y0, Y1)
	STORE2(Y2, Y3)
	STORE2(Y4, Y5)
	STORE2(Y6, Y7)
	STORE2(Y8, Y9)
	STORE2(Y10, Y11)
	VZEROUPPER
	RET

// func kernT6x16sub(k int, a, b, c *float32, ldc int)
TEXT ·kernT6x16sub(SB), NOSPLIT, $0-40
	ARGS
	MOVQ DX, R9
	LOAD2(Y0, Y1)
	LOAD2(Y2, Y3)
	LOAD2(Y4, Y5)
	LOAD2(Y6, Y7)
	LOAD2(Y8, Y9)
	LOAD2(Y10, Y11)
loopT6x16sub:
	BROW
	FNMA2(0, Y0, Y1)
	FNMA2(4, Y2, Y3)
	FNMA2(8, Y4, Y5)
	FNMA2(12, Y6, Y7)
	FNMA2(16, Y8, Y9)
	FNMA2(20, Y10, Y11)
	NEXT
	JNZ loopT6x16sub
	STORE2(Y0, Y1)
	STORE2(Y2, Y3)
	STORE2(Y4, Y5)
	STORE2(Y6, Y7)
	STORE2(Y8, Y9)
	STORE2(Y10, Y11)
	VZEROUPPER
	RET

// func kernT4x16(k int, a, b, c *float32, ldc int)
TEXT ·kernT4x16(SB), NOSPLIT, $0-40
	ARGS
	ZERO2(Y0, Y1)
	ZERO2(Y2, Y3)
	ZERO2(Y4, Y5)
	ZERO2(Y6, Y7)
loopT4x16:
	BROW
	FMA2(0, Y0, Y1)
	FMA2(4, Y2, Y3)
	FMA2(8, Y4, Y5)
	FMA2(12, Y6, Y7)
	NEXT
	JNZ loopT4x16
	STORE2(Y0, Y1)
	STORE2(Y2, Y3)
	STORE2(Y4, Y5)
	STORE2(Y6, Y7)
	VZEROUPPER
	RET

// func kernT4x16sub(k int, a, b, c *float32, ldc int)
TEXT ·kernT4x16sub(SB), NOSPLIT, $0-40
	ARGS
	MOVQ DX, R9
	LOAD2(Y0, Y1)
	LOAD2(Y2, Y3)
	LOAD2(Y4, Y5)
	LOAD2(Y6, Y7)
loopT4x16sub:
	BROW
	FNMA2(0, Y0, Y1)
	FNMA2(4, Y2, Y3)
	FNMA2(8, Y4, Y5)
	FNMA2(12, Y6, Y7)
	NEXT
	JNZ loopT4x16sub
	STORE2(Y0, Y1)
	STORE2(Y2, Y3)
	STORE2(Y4, Y5)
	STORE2(Y6, Y7)
	VZEROUPPER
	RET

