// Package sgemm holds the single-precision matrix product of the
// projection's float32 path: C = A·B for a row-major A and a B packed once
// into column panels, the shape of the hot products of enforce's Float32
// precision (Y·[A_1 … A_nc] for quadratic constraints, B·Bᵀ for Gram
// matrices and the blocks of their Cholesky factorisation: GramLower and
// BlockT), and its float64 counterpart for Quadratic's float64 batches
// (dgemm.go).
//
// On amd64 with AVX2 and FMA the 6×16 inner kernel is Go assembly, and with
// AVX-512F too a 12×32 kernel (two row panels by two column panels of the
// same packing) computes the full blocks; elsewhere, or with the purego
// build tag, the kernel is plain Go. All accumulate each entry of C over k
// in the same order, in float32 (the assembly ones with fused
// multiply–adds). Mul and MulPacked allocate
// nothing (TestMulDoesNotAllocate); the packers allocate only when the
// Panels' Data is too short.
//
// bias.go holds the epilogue of a layer's product, a(h + b) row by row for
// ReLU and the identity, in AVX2 assembly where the CPU has it and bit for
// bit the Go loops elsewhere (BiasReLU, BiasAdd and their float64-output
// forms).
package sgemm

// Tile sizes of the inner kernel: it computes an MR×NR block of C.
const (
	MR = 6
	NR = 16
)

// Panels is a k×n matrix B packed for Mul: column panels of NR columns,
// each stored k×NR row-major and contiguous, the last one padded with
// zeros.
type Panels struct {
	K, N int
	Data []float32
}

// Len returns the length of Data for a k×n matrix.
func Len(k, n int) int { return k * roundUp(n, NR) }

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// Pack packs the k×n row-major b (stride ldb) into p, reusing p.Data when
// it is long enough.
func (p *Panels) Pack(k, n int, b []float32, ldb int) {
	p.reset(k, n)
	for j0 := 0; j0 < n; j0 += NR {
		w := min(NR, n-j0)
		dst := p.Data[j0*k : j0*k+k*NR]
		for kk := 0; kk < k; kk++ {
			row := dst[kk*NR : kk*NR+NR]
			copy(row[:w], b[kk*ldb+j0:kk*ldb+j0+w])
			clear(row[w:])
		}
	}
}

// PackT packs B = btᵀ into p, for the n×k row-major bt (stride ldbt): the
// right factor of A·btᵀ, such as a Gram matrix's.
func (p *Panels) PackT(k, n int, bt []float32, ldbt int) {
	p.reset(k, n)
	pack(p.Data, n, k, bt, ldbt, nil, NR)
}

func (p *Panels) reset(k, n int) {
	p.K, p.N = k, n
	if l := Len(k, n); cap(p.Data) < l {
		p.Data = make([]float32, l)
	} else {
		p.Data = p.Data[:l]
	}
}

// WorkLen returns the length of the work slice Mul needs for m rows of A
// with k columns.
func WorkLen(m, k int) int { return roundUp(m, MR)*k + MR*NR }

// Mul writes C[i, j] = Σ_k A[i, k]·B[k, j] for the m×k row-major a (stride
// lda) and the columns [j0, j1) of p, into the m×(j1−j0) row-major c
// (stride ldc): column j of B goes to column j − j0 of c. j0 must be a
// multiple of NR. If lower is true only the blocks that meet the lower
// triangle (i ≥ j, in B's column numbering) are written; the others are
// left unchanged (those that straddle it may be written above it too).
// work must have length at least WorkLen(m, k).
func Mul(m int, a []float32, lda int, p *Panels, j0, j1 int, c []float32, ldc int, lower bool, work []float32) {
	k := p.K
	if m == 0 || j1 <= j0 {
		return
	}
	if j0%NR != 0 || j1 > p.N || j0 < 0 {
		panic("sgemm: bad column range")
	}
	mp := roundUp(m, MR)
	pa := work[:mp*k]
	pack(pa, m, k, a, lda, nil, MR) // row panels of MR rows, padded with zero rows
	MulPacked(m, pa, p, j0, j1, c, ldc, lower, work[mp*k:mp*k+MR*NR])
}

// Real is the element type of the matrices the packers read: float32, or
// float64 rounded to float32 as it is packed.
type Real interface{ ~float32 | ~float64 }

// PackAScaled packs the m×k row-major a (stride lda), with column kk
// scaled by scale[kk] (nil meaning 1) and rounded to float32, into the row
// panels MulPacked takes; dst must have length at least WorkLen(m, k) −
// MR·NR. A float32 a is scaled in float64 and rounded once.
func PackAScaled[T Real](m, k int, a []T, lda int, scale []float64, dst []float32) {
	pack(dst, m, k, a, lda, scale, MR)
}

// PackTScaled is p.PackT from the n×k row-major bt (stride ldbt), with
// column kk of bt scaled by scale[kk] (nil meaning 1) and rounded to
// float32.
func PackTScaled[T Real](p *Panels, k, n int, bt []T, ldbt int, scale []float64) {
	p.reset(k, n)
	pack(p.Data, n, k, bt, ldbt, scale, NR)
}

// pack writes the rows of the rows×k src (stride ld), scaled by column and
// rounded to float32, as panels of width rows each: panel r0 holds
// src[r0 : r0+width] transposed, k×width, at dst[r0·k:], padded with zero
// rows.
func pack[T, D Real](dst []D, rows, k int, src []T, ld int, scale []float64, width int) {
	if k == 0 {
		return // empty panels
	}
	for r0 := 0; r0 < rows; r0 += width {
		h := min(width, rows-r0)
		pan := dst[r0*k : r0*k+k*width]
		if h == width && scale == nil && (width == NR || width == MR) {
			packFull(pan, k, src[r0*ld:], ld, width)
			continue
		}
		// Row by row: sequential reads, writes with stride width inside a
		// panel that stays in L1.
		for ii := 0; ii < h; ii++ {
			row := src[(r0+ii)*ld : (r0+ii)*ld+k]
			out := pan[ii:]
			if scale == nil {
				for kk, v := range row {
					out[kk*width] = D(v)
				}
				continue
			}
			sc := scale[:k]
			for kk, v := range row {
				out[kk*width] = D(float64(v) * sc[kk])
			}
		}
		for ii := h; ii < width; ii++ {
			for kk := 0; kk < k; kk++ {
				pan[kk*width+ii] = 0
			}
		}
	}
}

// MulPacked is Mul for an A already packed by Mul's layout (PackAScaled):
// pa holds ⌈m/MR⌉ row panels of k×MR. tile is scratch of MR·NR. With
// lower, blocks that lie wholly above the diagonal are skipped; entries
// above it in the blocks that straddle it are written.
func MulPacked(m int, pa []float32, p *Panels, j0, j1 int, c []float32, ldc int, lower bool, tile []float32) {
	k := p.K
	jb := j0
	if Has512 && k > 0 {
		// 12×32 blocks (two row panels by two column panels) where both
		// column panels are full, then the rows left over.
		m2 := m / (2 * MR) * (2 * MR)
		for ; jb+2*NR <= j1; jb += 2 * NR {
			bp := p.Data[jb*k : jb*k+2*k*NR]
			for i0 := 0; i0 < m2; i0 += 2 * MR {
				if lower && i0+2*MR-1 < jb {
					continue
				}
				kernel2(k, pa[i0*k:i0*k+2*k*MR], bp, c[i0*ldc+jb-j0:], ldc)
			}
			if m2 < m {
				mulPanels(m, m2, pa, p, jb, jb+2*NR, j0, c, ldc, lower, tile)
			}
		}
		// The last one or two column panels, full or not: 12×16 blocks
		// whose stores are masked to the columns there are.
		for ; jb < j1; jb += NR {
			w := min(NR, j1-jb)
			bp := p.Data[jb*k : jb*k+k*NR]
			for i0 := 0; i0 < m2; i0 += 2 * MR {
				if lower && i0+2*MR-1 < jb {
					continue
				}
				kernel2x1(k, pa[i0*k:i0*k+2*k*MR], bp, c[i0*ldc+jb-j0:], ldc, w)
			}
			if m2 < m {
				mulPanels(m, m2, pa, p, jb, jb+w, j0, c, ldc, lower, tile)
			}
		}
		return
	}
	mulPanels(m, 0, pa, p, jb, j1, j0, c, ldc, lower, tile)
}

// mulPanels computes the rows [r0, m) (r0 a multiple of MR) and columns
// [jb0, j1) of C with the MR×NR kernel; column j goes to column j − j0 of
// c.
func mulPanels(m, r0 int, pa []float32, p *Panels, jb0, j1, j0 int, c []float32, ldc int, lower bool, tile []float32) {
	mulPanelsStrided(m, r0, pa, p.Data, p.K, p.K*NR, jb0, j1, j0, c, ldc, lower, tile)
}

// mulPanelsStrided is mulPanels for column panels stride values apart in
// data (p.K·NR for a Panels).
func mulPanelsStrided(m, r0 int, pa []float32, data []float32, k, stride, jb0, j1, j0 int, c []float32, ldc int, lower bool, tile []float32) {
	mp := roundUp(m, MR)
	for jb := jb0; jb < j1; jb += NR {
		w := min(NR, j1-jb)
		off := jb / NR * stride
		bp := data[off : off+k*NR]
		for i0 := r0; i0 < mp; i0 += MR {
			h := min(MR, m-i0)
			if lower && i0+h-1 < jb {
				continue
			}
			ap := pa[i0*k : i0*k+k*MR]
			if h == MR && w == NR {
				kernel(k, ap, bp, c[i0*ldc+jb-j0:], ldc)
				continue
			}
			kernel(k, ap, bp, tile, NR)
			for ii := 0; ii < h; ii++ {
				copy(c[(i0+ii)*ldc+jb-j0:(i0+ii)*ldc+jb-j0+w], tile[ii*NR:ii*NR+w])
			}
		}
	}
}

// MulPackedStrided is MulPacked (lower false) for a k×n right factor whose
// column panels lie stride values apart in data (stride ≥ k·NR): panel P,
// the columns P·NR…P·NR+NR−1, is the k×NR row-major block at
// data[P·stride:]. A buffer packed for a larger k (stride = kmax·NR)
// serves every k ≤ kmax through its first k rows per panel. It uses the
// 6×16 kernel on every CPU.
func MulPackedStrided(m int, pa []float32, data []float32, k, n, stride, j0, j1 int, c []float32, ldc int, tile []float32) {
	if m == 0 || j1 <= j0 {
		return
	}
	if stride < k*NR {
		panic("sgemm: panel stride shorter than k·NR")
	}
	if j0%NR != 0 || j1 > n || j0 < 0 {
		panic("sgemm: bad column range")
	}
	mulPanelsStrided(m, 0, pa, data, k, stride, j0, j1, j0, c, ldc, false, tile)
}

// kernelGo writes the MR×NR block C = A·B for the packed panels a (k×MR)
// and b (k×NR) into c (stride ldc).
func kernelGo[T Real](k int, a, b, c []T, ldc int) {
	var acc [MR][NR]T
	for kk := 0; kk < k; kk++ {
		bk := b[kk*NR : kk*NR+NR]
		ak := a[kk*MR : kk*MR+MR]
		for i := range MR {
			ai := ak[i]
			for j := range NR {
				acc[i][j] += ai * bk[j]
			}
		}
	}
	for i := range MR {
		copy(c[i*ldc:i*ldc+NR], acc[i][:])
	}
}

// packFull packs a full panel of width NR or MR rows of src (stride ld)
// without scaling: for each kk, one contiguous write of width values read
// from width sequential streams. Every row is resliced to length k so that
// the compiler drops the bounds checks inside the loop.
func packFull[T, D Real](pan []D, k int, src []T, ld, width int) {
	if width == NR {
		if p32, ok := any(pan).([]float32); ok && HasAsm && k >= 8 {
			if s32, ok := any(src).([]float32); ok {
				// Eight entries of every row at a time (AVX2), the rest
				// below.
				k8 := k &^ 7
				_ = s32[15*ld+k-1]
				_ = p32[k*NR-1]
				packT16Asm(&p32[0], &s32[0], k8, ld)
				if k8 == k {
					return
				}
				packFull(pan[k8*NR:], k-k8, src[k8:], ld, width)
				return
			}
		}
		r0, r1, r2, r3 := src[:k], src[ld:][:k], src[2*ld:][:k], src[3*ld:][:k]
		r4, r5, r6, r7 := src[4*ld:][:k], src[5*ld:][:k], src[6*ld:][:k], src[7*ld:][:k]
		r8, r9, r10, r11 := src[8*ld:][:k], src[9*ld:][:k], src[10*ld:][:k], src[11*ld:][:k]
		r12, r13, r14, r15 := src[12*ld:][:k], src[13*ld:][:k], src[14*ld:][:k], src[15*ld:][:k]
		pan = pan[:k*NR]
		for kk := range r0 {
			o := pan[kk*NR:][:NR]
			o[0], o[1], o[2], o[3] = D(r0[kk]), D(r1[kk]), D(r2[kk]), D(r3[kk])
			o[4], o[5], o[6], o[7] = D(r4[kk]), D(r5[kk]), D(r6[kk]), D(r7[kk])
			o[8], o[9], o[10], o[11] = D(r8[kk]), D(r9[kk]), D(r10[kk]), D(r11[kk])
			o[12], o[13], o[14], o[15] = D(r12[kk]), D(r13[kk]), D(r14[kk]), D(r15[kk])
		}
		return
	}
	r0, r1, r2 := src[:k], src[ld:][:k], src[2*ld:][:k]
	r3, r4, r5 := src[3*ld:][:k], src[4*ld:][:k], src[5*ld:][:k]
	pan = pan[:k*MR]
	for kk := range r0 {
		o := pan[kk*MR:][:MR]
		o[0], o[1], o[2] = D(r0[kk]), D(r1[kk]), D(r2[kk])
		o[3], o[4], o[5] = D(r3[kk]), D(r4[kk]), D(r5[kk])
	}
}

// PackRows writes the NR rows of src (stride ld), k entries each,
// transposed into the k×NR panel dst: dst[kk·NR+i] = src[i·ld+kk], the
// layout BlockT takes.
func PackRows(dst []float32, k int, src []float32, ld int) {
	packFull(dst, k, src, ld, NR)
}

// PackAT packs A = atᵀ, for the k×m row-major at (stride ldat), into the
// row panels MulPacked takes (the layout PackAScaled writes for A itself):
// the left factor of atᵀ·B. dst must have length at least WorkLen(m, k) −
// MR·NR.
func PackAT(m, k int, at []float32, ldat int, dst []float32) { packAT(m, k, at, ldat, dst) }

func packAT[T Real](m, k int, at []T, ldat int, dst []T) {
	for r0 := 0; r0 < m; r0 += MR {
		h := min(MR, m-r0)
		pan := dst[r0*k : r0*k+k*MR]
		for kk := 0; kk < k; kk++ {
			o := pan[kk*MR : kk*MR+MR]
			copy(o[:h], at[kk*ldat+r0:kk*ldat+r0+h])
			clear(o[h:])
		}
	}
}

// GramLower writes the NR×NR blocks on and below the diagonal of C = BᵀB
// for the k×n matrix B packed in p (the Gram matrix of the n columns of B:
// for p packed by PackT or PackTScaled from an n×k matrix M, C = M·Mᵀ),
// into c (stride ldc ≥ Len(1, n), with as many rows): one packing serves
// as both factors. The blocks above the diagonal are left unchanged;
// the rows and columns from n up to the next multiple of NR are zero. It
// needs an assembly kernel (HasAsm: AVX-512's 16×16 blocks, or AVX2's in
// rows of 6, 6 and 4); without one it uses the Go kernel on the same
// blocks, and callers are better served by Mul.
func GramLower(p *Panels, c []float32, ldc int) {
	k, np := p.K, roundUp(p.N, NR)
	for i0 := 0; i0 < np; i0 += NR {
		a := p.Data[i0*k : i0*k+k*NR]
		for j0 := 0; j0 <= i0; j0 += NR {
			b := p.Data[j0*k : j0*k+k*NR]
			out := c[i0*ldc+j0:]
			BlockT(k, a, b, out, ldc, false)
		}
	}
}

// BlockT writes the NR×NR block C = AᵀB, or with sub C −= AᵀB, for the
// column panels a and b (k×NR each, row-major), into c (stride ldc): the
// kernel of GramLower, AVX-512 where there is one (Has512), else AVX2
// (HasAsm), both with the same bits (every entry one chain of fused
// multiply–adds over k in increasing order), else plain Go.
func BlockT(k int, a, b, c []float32, ldc int, sub bool) {
	if Has512 && k > 0 {
		kernelT(k, a, b, c, ldc, sub)
		return
	}
	if HasAsm && k > 0 {
		kernelT2(k, a, b, c, ldc, sub)
		return
	}
	var acc [NR][NR]float32
	if sub {
		for i := range NR {
			copy(acc[i][:], c[i*ldc:i*ldc+NR])
		}
	}
	for kk := 0; kk < k; kk++ {
		ak, bk := a[kk*NR:kk*NR+NR], b[kk*NR:kk*NR+NR]
		for i, ai := range ak {
			for j, bj := range bk {
				if sub {
					acc[i][j] -= ai * bj
				} else {
					acc[i][j] += ai * bj
				}
			}
		}
	}
	for i := range NR {
		copy(c[i*ldc:i*ldc+NR], acc[i][:])
	}
}
