//go:build amd64 && !purego

#include "textflag.h"

// v−v is +0 for a finite v and NaN for a NaN or an infinity; four
// accumulators sum those differences (a sum of zeros stays zero, a NaN
// stays NaN), and the end compares the sum with itself: unordered means
// some value was not finite.

// func float32sAsm(x *float32, n int) bool
TEXT ·float32sAsm(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
loop32:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VSUBPS Y0, Y0, Y0
	VSUBPS Y1, Y1, Y1
	VSUBPS Y2, Y2, Y2
	VSUBPS Y3, Y3, Y3
	VADDPS Y0, Y4, Y4
	VADDPS Y1, Y5, Y5
	VADDPS Y2, Y6, Y6
	VADDPS Y3, Y7, Y7
	ADDQ $128, SI
	SUBQ $32, CX
	JNZ loop32
	VADDPS Y5, Y4, Y4
	VADDPS Y7, Y6, Y6
	VADDPS Y6, Y4, Y4
	VCMPPS $3, Y4, Y4, Y4 // unordered
	VMOVMSKPS Y4, AX
	TESTL AX, AX
	SETEQ ret+16(FP)
	VZEROUPPER
	RET

// func float64sAsm(x *float64, n int) bool
TEXT ·float64sAsm(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
loop64:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VSUBPD Y0, Y0, Y0
	VSUBPD Y1, Y1, Y1
	VSUBPD Y2, Y2, Y2
	VSUBPD Y3, Y3, Y3
	VADDPD Y0, Y4, Y4
	VADDPD Y1, Y5, Y5
	VADDPD Y2, Y6, Y6
	VADDPD Y3, Y7, Y7
	ADDQ $128, SI
	SUBQ $16, CX
	JNZ loop64
	VADDPD Y5, Y4, Y4
	VADDPD Y7, Y6, Y6
	VADDPD Y6, Y4, Y4
	VCMPPD $3, Y4, Y4, Y4 // unordered
	VMOVMSKPD Y4, AX
	TESTL AX, AX
	SETEQ ret+16(FP)
	VZEROUPPER
	RET
