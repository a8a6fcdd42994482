//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

// HasAsm reports whether the assembly kernel is in use, and Has512
// whether its AVX-512 form (12×32 blocks) is.
var (
	HasAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	Has512 = HasAsm && cpu.X86.HasAVX512F
)

//go:noescape
func kern6x16(k int, a, b, c *float32, ldc int)

//go:noescape
func kern12x32(k int, a, b, c *float32, ldc int)

func kernel(k int, a, b, c []float32, ldc int) {
	if !HasAsm || k == 0 {
		kernelGo(k, a, b, c, ldc)
		return
	}
	_ = a[k*MR-1]
	_ = b[k*NR-1]
	_ = c[(MR-1)*ldc+NR-1]
	kern6x16(k, &a[0], &b[0], &c[0], ldc)
}

// kernel2 computes the 2MR×2NR block of C for the two row panels of A at
// a and the two column panels of B at b (each pair adjacent), with the
// AVX-512 kernel; callers check Has512 and k > 0.
func kernel2(k int, a, b, c []float32, ldc int) {
	_ = a[2*k*MR-1]
	_ = b[2*k*NR-1]
	_ = c[(2*MR-1)*ldc+2*NR-1]
	kern12x32(k, &a[0], &b[0], &c[0], ldc)
}

//go:noescape
func kern12x16m(k int, a, b, c *float32, ldc int, w int)

// kernel2x1 computes the first w (1 ≤ w ≤ NR) columns of the 2MR×NR
// block of C for the two row panels of A at a (adjacent) and the column
// panel of B at b, with the AVX-512 kernel; callers check Has512 and
// k > 0.
func kernel2x1(k int, a, b, c []float32, ldc, w int) {
	_ = a[2*k*MR-1]
	_ = b[k*NR-1]
	_ = c[(2*MR-1)*ldc+w-1]
	kern12x16m(k, &a[0], &b[0], &c[0], ldc, w)
}

//go:noescape
func kernd6x8(k int, a, b, c *float64, ldc int)

//go:noescape
func kernd12x16(k int, a, b, c *float64, ldc int)

// kernel64 is kernel in float64: the MR×NR block for the packed panels a
// (k×MR) and b (k×NR), as two 6×8 AVX2 blocks.
func kernel64(k int, a, b, c []float64, ldc int) {
	if !HasAsm || k == 0 {
		kernelGo(k, a, b, c, ldc)
		return
	}
	_ = a[k*MR-1]
	_ = b[k*NR-1]
	_ = c[(MR-1)*ldc+NR-1]
	kernd6x8(k, &a[0], &b[0], &c[0], ldc)
	kernd6x8(k, &a[0], &b[NR/2], &c[NR/2], ldc)
}

// kernel64x2 computes the 2MR×NR block of C in float64 for the two row
// panels of A at a (adjacent) and the column panel of B at b, with the
// AVX-512 kernel; callers check Has512 and k > 0.
func kernel64x2(k int, a, b, c []float64, ldc int) {
	_ = a[2*k*MR-1]
	_ = b[k*NR-1]
	_ = c[(2*MR-1)*ldc+NR-1]
	kernd12x16(k, &a[0], &b[0], &c[0], ldc)
}

//go:noescape
func kern16x16(k int, a, b, c *float32, ldc int)

//go:noescape
func kern16x16sub(k int, a, b, c *float32, ldc int)

// kernelT computes the NR×NR block C = AᵀB (C −= AᵀB with sub) for the
// column panels a and b (k×NR each) with the AVX-512 kernel; callers check
// Has512 and k > 0.
func kernelT(k int, a, b, c []float32, ldc int, sub bool) {
	_ = a[k*NR-1]
	_ = b[k*NR-1]
	_ = c[(NR-1)*ldc+NR-1]
	if sub {
		kern16x16sub(k, &a[0], &b[0], &c[0], ldc)
		return
	}
	kern16x16(k, &a[0], &b[0], &c[0], ldc)
}

//go:noescape
func kernT6x16(k int, a, b, c *float32, ldc int)

//go:noescape
func kernT6x16sub(k int, a, b, c *float32, ldc int)

//go:noescape
func kernT4x16(k int, a, b, c *float32, ldc int)

//go:noescape
func kernT4x16sub(k int, a, b, c *float32, ldc int)

// kernelT2 is kernelT with the AVX2 kernels: the block's rows 0–5, 6–11
// and 12–15 in three products, each entry the same chain of fused
// multiply–adds as kernelT's, so the same bits; callers check HasAsm and
// k > 0.
func kernelT2(k int, a, b, c []float32, ldc int, sub bool) {
	_ = a[k*NR-1]
	_ = b[k*NR-1]
	_ = c[(NR-1)*ldc+NR-1]
	if sub {
		kernT6x16sub(k, &a[0], &b[0], &c[0], ldc)
		kernT6x16sub(k, &a[6], &b[0], &c[6*ldc], ldc)
		kernT4x16sub(k, &a[12], &b[0], &c[12*ldc], ldc)
		return
	}
	kernT6x16(k, &a[0], &b[0], &c[0], ldc)
	kernT6x16(k, &a[6], &b[0], &c[6*ldc], ldc)
	kernT4x16(k, &a[12], &b[0], &c[12*ldc], ldc)
}

// packT16Asm writes the 16 rows of src (stride ld), k entries each (k a
// positive multiple of 8), transposed into the k×NR panel dst, with AVX2;
// callers check HasAsm.
//
//go:noescape
func packT16Asm(dst, src *float32, k, ld int)
