//go:build amd64 && !purego

#include "textflag.h"

// TRANSPOSE8(off) transposes eight entries of the eight rows at AX
// (stride R8 bytes, R9 = 3·R8) and stores them as eight panel rows of
// dst at DI+off (the panel's rows 64 bytes apart).
#define TRANSPOSE8(off) \
	LEAQ (AX)(R8*4), BX; \
	VMOVUPS (AX), Y0; \
	VMOVUPS (AX)(R8*1), Y1; \
	VMOVUPS (AX)(R8*2), Y2; \
	VMOVUPS (AX)(R9*1), Y3; \
	VMOVUPS (BX), Y4; \
	VMOVUPS (BX)(R8*1), Y5; \
	VMOVUPS (BX)(R8*2), Y6; \
	VMOVUPS (BX)(R9*1), Y7; \
	VUNPCKLPS Y1, Y0, Y8; \
	VUNPCKHPS Y1, Y0, Y9; \
	VUNPCKLPS Y3, Y2, Y10; \
	VUNPCKHPS Y3, Y2, Y11; \
	VUNPCKLPS Y5, Y4, Y12; \
	VUNPCKHPS Y5, Y4, Y13; \
	VUNPCKLPS Y7, Y6, Y14; \
	VUNPCKHPS Y7, Y6, Y15; \
	VSHUFPS $0x44, Y10, Y8, Y0; \
	VSHUFPS $0xEE, Y10, Y8, Y1; \
	VSHUFPS $0x44, Y11, Y9, Y2; \
	VSHUFPS $0xEE, Y11, Y9, Y3; \
	VSHUFPS $0x44, Y14, Y12, Y4; \
	VSHUFPS $0xEE, Y14, Y12, Y5; \
	VSHUFPS $0x44, Y15, Y13, Y6; \
	VSHUFPS $0xEE, Y15, Y13, Y7; \
	VPERM2F128 $0x20, Y4, Y0, Y8; \
	VPERM2F128 $0x20, Y5, Y1, Y9; \
	VPERM2F128 $0x20, Y6, Y2, Y10; \
	VPERM2F128 $0x20, Y7, Y3, Y11; \
	VPERM2F128 $0x31, Y4, Y0, Y12; \
	VPERM2F128 $0x31, Y5, Y1, Y13; \
	VPERM2F128 $0x31, Y6, Y2, Y14; \
	VPERM2F128 $0x31, Y7, Y3, Y15; \
	VMOVUPS Y8, (0+off)(DI); \
	VMOVUPS Y9, (64+off)(DI); \
	VMOVUPS Y10, (128+off)(DI); \
	VMOVUPS Y11, (192+off)(DI); \
	VMOVUPS Y12, (256+off)(DI); \
	VMOVUPS Y13, (320+off)(DI); \
	VMOVUPS Y14, (384+off)(DI); \
	VMOVUPS Y15, (448+off)(DI)

// func packT16Asm(dst, src *float32, k, ld int)
// Writes the 16 rows of src (stride ld floats), k entries each, k a
// positive multiple of 8, transposed into the k×16 panel dst:
// dst[kk·16 + i] = src[i·ld + kk]. Eight entries of each row at a time:
// rows 0–7 and rows 8–15 as two 8×8 transposes in registers.
TEXT ·packT16Asm(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ k+16(FP), CX
	MOVQ ld+24(FP), R8
	SHLQ $2, R8 // row stride in bytes
	LEAQ (R8)(R8*2), R9 // 3 rows
loop:
	MOVQ SI, AX
	TRANSPOSE8(0) // rows 0–7: the first half of each panel row
	LEAQ (SI)(R8*8), AX
	TRANSPOSE8(32) // rows 8–15: the second half
	ADDQ $32, SI // the next eight entries of each row
	ADDQ $512, DI // the next eight rows of the panel
	SUBQ $8, CX
	JNZ loop
	VZEROUPPER
	RET
