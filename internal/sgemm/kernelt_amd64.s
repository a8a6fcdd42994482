//go:build amd64 && !purego

// The AVX2 kernels of BlockT: four functions that differ only in their
// row count (6 or 4) and their sign (= or −=).

#include "textflag.h"

// func kernT6x16(k int, a, b, c *float32, ldc int)
// C[0:6, 0:16] = A·B for A = aᵀ (rows 0 to 5 of it: columns of the
// column panel a, whose rows are 16 floats apart) and B = b, a packed
// column panel (k×16), c with stride ldc (elements); AVX2. Each entry
// is one chain of fused multiply-adds over k in increasing order, as in
// kern16x16. Accumulators: Y0–Y11 (row i in Y(2i), Y(2i+1)).
TEXT ·kernT6x16(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
loopT6x16:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VBROADCASTSS 0(SI), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 4(SI), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 8(SI), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 12(SI), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 16(SI), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 20(SI), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ loopT6x16
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

// func kernT6x16sub(k int, a, b, c *float32, ldc int)
// C[0:6, 0:16] −= A·B for A = aᵀ (rows 0 to 5 of it: columns of the
// column panel a, whose rows are 16 floats apart) and B = b, a packed
// column panel (k×16), c with stride ldc (elements); AVX2. Each entry
// is one chain of fused multiply-adds over k in increasing order, as in
// kern16x16sub. Accumulators: Y0–Y11 (row i in Y(2i), Y(2i+1)).
TEXT ·kernT6x16sub(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	MOVQ DX, R9
	VMOVUPS (R9), Y0
	VMOVUPS 32(R9), Y1
	ADDQ R8, R9
	VMOVUPS (R9), Y2
	VMOVUPS 32(R9), Y3
	ADDQ R8, R9
	VMOVUPS (R9), Y4
	VMOVUPS 32(R9), Y5
	ADDQ R8, R9
	VMOVUPS (R9), Y6
	VMOVUPS 32(R9), Y7
	ADDQ R8, R9
	VMOVUPS (R9), Y8
	VMOVUPS 32(R9), Y9
	ADDQ R8, R9
	VMOVUPS (R9), Y10
	VMOVUPS 32(R9), Y11
loopT6x16sub:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VBROADCASTSS 0(SI), Y14
	VFNMADD231PS Y12, Y14, Y0
	VFNMADD231PS Y13, Y14, Y1
	VBROADCASTSS 4(SI), Y14
	VFNMADD231PS Y12, Y14, Y2
	VFNMADD231PS Y13, Y14, Y3
	VBROADCASTSS 8(SI), Y14
	VFNMADD231PS Y12, Y14, Y4
	VFNMADD231PS Y13, Y14, Y5
	VBROADCASTSS 12(SI), Y14
	VFNMADD231PS Y12, Y14, Y6
	VFNMADD231PS Y13, Y14, Y7
	VBROADCASTSS 16(SI), Y14
	VFNMADD231PS Y12, Y14, Y8
	VFNMADD231PS Y13, Y14, Y9
	VBROADCASTSS 20(SI), Y14
	VFNMADD231PS Y12, Y14, Y10
	VFNMADD231PS Y13, Y14, Y11
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ loopT6x16sub
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	VZEROUPPER
	RET

// func kernT4x16(k int, a, b, c *float32, ldc int)
// C[0:4, 0:16] = A·B for A = aᵀ (rows 0 to 3 of it: columns of the
// column panel a, whose rows are 16 floats apart) and B = b, a packed
// column panel (k×16), c with stride ldc (elements); AVX2. Each entry
// is one chain of fused multiply-adds over k in increasing order, as in
// kern16x16. Accumulators: Y0–Y7 (row i in Y(2i), Y(2i+1)).
TEXT ·kernT4x16(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
loopT4x16:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VBROADCASTSS 0(SI), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 4(SI), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 8(SI), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 12(SI), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ loopT4x16
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// func kernT4x16sub(k int, a, b, c *float32, ldc int)
// C[0:4, 0:16] −= A·B for A = aᵀ (rows 0 to 3 of it: columns of the
// column panel a, whose rows are 16 floats apart) and B = b, a packed
// column panel (k×16), c with stride ldc (elements); AVX2. Each entry
// is one chain of fused multiply-adds over k in increasing order, as in
// kern16x16sub. Accumulators: Y0–Y7 (row i in Y(2i), Y(2i+1)).
TEXT ·kernT4x16sub(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8
	MOVQ DX, R9
	VMOVUPS (R9), Y0
	VMOVUPS 32(R9), Y1
	ADDQ R8, R9
	VMOVUPS (R9), Y2
	VMOVUPS 32(R9), Y3
	ADDQ R8, R9
	VMOVUPS (R9), Y4
	VMOVUPS 32(R9), Y5
	ADDQ R8, R9
	VMOVUPS (R9), Y6
	VMOVUPS 32(R9), Y7
loopT4x16sub:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VBROADCASTSS 0(SI), Y14
	VFNMADD231PS Y12, Y14, Y0
	VFNMADD231PS Y13, Y14, Y1
	VBROADCASTSS 4(SI), Y14
	VFNMADD231PS Y12, Y14, Y2
	VFNMADD231PS Y13, Y14, Y3
	VBROADCASTSS 8(SI), Y14
	VFNMADD231PS Y12, Y14, Y4
	VFNMADD231PS Y13, Y14, Y5
	VBROADCASTSS 12(SI), Y14
	VFNMADD231PS Y12, Y14, Y6
	VFNMADD231PS Y13, Y14, Y7
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ loopT4x16sub
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

