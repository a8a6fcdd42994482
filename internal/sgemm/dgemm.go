package sgemm

// The float64 product: the same packing and blocking as the float32 one,
// with a 12×16 AVX-512 kernel (two row panels by one column panel) and a
// 6×8 AVX2/FMA one, for the float64 evaluations of enforce's Quadratic in
// the default (pure-Go) build, where gonum's Dgemm runs at a tenth of the
// rate.

// Panels64 is Panels in float64: a k×n matrix B packed for MulPacked64 as
// column panels of NR columns, each k×NR row-major and contiguous, the last
// one padded with zeros.
type Panels64 struct {
	K, N int
	Data []float64
}

// Pack packs the k×n row-major b (stride ldb) into p, reusing p.Data when
// it is long enough.
func (p *Panels64) Pack(k, n int, b []float64, ldb int) {
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
// right factor of A·btᵀ.
func (p *Panels64) PackT(k, n int, bt []float64, ldbt int) {
	p.reset(k, n)
	pack(p.Data, n, k, bt, ldbt, nil, NR)
}

func (p *Panels64) reset(k, n int) {
	p.K, p.N = k, n
	if l := Len(k, n); cap(p.Data) < l {
		p.Data = make([]float64, l)
	} else {
		p.Data = p.Data[:l]
	}
}

// PackAT64 packs A = atᵀ, for the k×m row-major at (stride ldat), into the
// row panels MulPacked64 takes (the layout PackA64 writes for A itself):
// the left factor of atᵀ·B. dst must have length at least WorkLen(m, k) −
// MR·NR.
func PackAT64(m, k int, at []float64, ldat int, dst []float64) { packAT(m, k, at, ldat, dst) }

// PackA64 packs the m×k row-major a (stride lda) into the row panels
// MulPacked64 takes; dst must have length at least WorkLen(m, k) − MR·NR.
func PackA64(m, k int, a []float64, lda int, dst []float64) {
	pack(dst, m, k, a, lda, nil, MR)
}

// MulPacked64 writes C[i, j] = Σ_k A[i, k]·B[k, j] in float64 for the A
// packed by PackA64 (m rows) and the columns [j0, j1) of p, into the
// m×(j1−j0) row-major c (stride ldc): column j of B goes to column j − j0
// of c. j0 must be a multiple of NR; tile is scratch of MR·NR. Each entry
// is accumulated over k in order, with fused multiply–adds in the
// assembly kernels, so the result does not depend on m, j0 or j1.
func MulPacked64(m int, pa []float64, p *Panels64, j0, j1 int, c []float64, ldc int, tile []float64) {
	mulPacked64(m, pa, p, j0, j1, c, ldc, tile, false)
}

// MulPacked64Lower is MulPacked64 over all the columns of p (j0 = 0,
// j1 = p.N) for a square result, writing only the blocks that meet its
// lower triangle (i ≥ j): those wholly above it are left unchanged, those
// that straddle it may be written above it too. With A and B packed from
// the same matrix M (PackA64 of M, PackT of M) it forms the lower
// triangle of the Gram matrix M·Mᵀ in about half the arithmetic of the
// whole product, with the same bits on and below the diagonal.
func MulPacked64Lower(m int, pa []float64, p *Panels64, c []float64, ldc int, tile []float64) {
	mulPacked64(m, pa, p, 0, p.N, c, ldc, tile, true)
}

func mulPacked64(m int, pa []float64, p *Panels64, j0, j1 int, c []float64, ldc int, tile []float64, lower bool) {
	mulStrided64(m, pa, p.Data, p.K, p.N, p.K*NR, j0, j1, c, ldc, tile, lower)
}

// MulPackedStrided64 is MulPacked64 for a k×n right factor whose column
// panels lie stride values apart in data (stride ≥ k·NR): panel P, the
// columns P·NR…P·NR+NR−1, is the k×NR row-major block at data[P·stride:].
// A buffer packed for a larger k (stride = kmax·NR) serves every k ≤ kmax
// through its first k rows per panel.
func MulPackedStrided64(m int, pa []float64, data []float64, k, n, stride, j0, j1 int, c []float64, ldc int, tile []float64) {
	if stride < k*NR {
		panic("sgemm: panel stride shorter than k·NR")
	}
	mulStrided64(m, pa, data, k, n, stride, j0, j1, c, ldc, tile, false)
}

func mulStrided64(m int, pa []float64, data []float64, k, n, stride, j0, j1 int, c []float64, ldc int, tile []float64, lower bool) {
	if m == 0 || j1 <= j0 {
		return
	}
	if j0%NR != 0 || j1 > n || j0 < 0 {
		panic("sgemm: bad column range")
	}
	mp := roundUp(m, MR)
	for jb := j0; jb < j1; jb += NR {
		w := min(NR, j1-jb)
		off := jb / NR * stride
		bp := data[off : off+k*NR]
		i0 := 0
		if lower {
			// The first row panel that reaches row jb.
			i0 = jb / MR * MR
		}
		if Has512 && k > 0 && w == NR {
			for ; i0+2*MR <= m; i0 += 2 * MR {
				kernel64x2(k, pa[i0*k:i0*k+2*k*MR], bp, c[i0*ldc+jb-j0:], ldc)
			}
		}
		for ; i0 < mp; i0 += MR {
			h := min(MR, m-i0)
			ap := pa[i0*k : i0*k+k*MR]
			if h == MR && w == NR {
				kernel64(k, ap, bp, c[i0*ldc+jb-j0:], ldc)
				continue
			}
			kernel64(k, ap, bp, tile, NR)
			for ii := 0; ii < h; ii++ {
				copy(c[(i0+ii)*ldc+jb-j0:(i0+ii)*ldc+jb-j0+w], tile[ii*NR:ii*NR+w])
			}
		}
	}
}
