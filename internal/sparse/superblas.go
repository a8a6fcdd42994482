package sparse

import "github.com/enforce-nn/enforce/internal/sgemm"

// The large dense blocks of the supernodal factorisation go through
// internal/sgemm's float64 product where its Go-assembly kernel runs
// (AVX2 and FMA, without the purego tag): the update of a supernode by a
// descendant, C = L_d[p1:, :]·L_d[p1:p1+nc, :]ᵀ, and the update of each
// block of a supernode's own panel by the panel's columns to its left. Small blocks keep the
// plain-Go loops of updateBlock and panelColumn, which beat packing there.

// Thresholds of the packed product: a block takes it when its descendant
// has at least gemmMinK columns and the block at least gemmMinWork
// multiply–adds. With BenchmarkGram/mesh at nc = 10⁵, gemmMinWork = 4096,
// 16384 and 65536 gave the same time within the noise of a shared
// machine.
const (
	gemmMinK    = 4
	gemmMinWork = 4096
	// panelNB is the column block of the supernode's own Cholesky: columns
	// within a block are factored left-looking by panelColumn, the columns
	// right of it updated by one packed product.
	panelNB = 16
)

// useGEMM reports whether the nr×nc update of rank wd takes the packed
// product: only with sgemm's assembly kernels, since its plain-Go kernel
// (the purego tag, or a CPU without AVX2 and FMA) made the factorisation
// of BenchmarkGram/mesh at nc = 10⁵ about 2.7× slower than the plain-Go
// loops alone.
func useGEMM(nr, nc, wd int) bool {
	return sgemm.HasAsm && wd >= gemmMinK && nr*nc*wd >= gemmMinWork
}

// real is the element type of a supernodal factor's blocks: float64, or
// float32 for a single-precision factor (NewFactorSingle).
type real interface{ ~float32 | ~float64 }

// panels is a k×n matrix packed as sgemm packs its right factor: column
// panels of NR columns, each k×NR row-major, the last padded with zeros.
type panels[T real] struct {
	K, N int
	Data []T
}

// gemmWork holds the packing buffers of the packed product, sized once by
// the symbolic analysis (maxPackA, maxPackB) so that the factorisation
// allocates nothing, and the product of its element type.
type gemmWork[T real] struct {
	pa   []T
	pb   panels[T]
	tile []T
	// mul is sgemm's packed product in T: C = A·B for the m×k A packed in
	// pa and the columns [j0, j1) of pb, into c (stride ldc).
	mul func(m int, pa []T, pb *panels[T], j0, j1 int, c []T, ldc int, tile []T)
	// mulS, where not nil (float64), is mul for a right factor whose
	// panels lie stride apart (sgemm.MulPackedStrided64), and pp the
	// panel buffer factorPanel packs for it.
	mulS func(m int, pa []T, data []T, k, n, stride, j0, j1 int, c []T, ldc int, tile []T)
	pp   []T
}

func newGemmWork[T real](sn *supernodal, mul func(m int, pa []T, pb *panels[T], j0, j1 int, c []T, ldc int, tile []T),
	mulS func(m int, pa []T, data []T, k, n, stride, j0, j1 int, c []T, ldc int, tile []T)) gemmWork[T] {
	if sn.maxPackA == 0 {
		return gemmWork[T]{}
	}
	g := gemmWork[T]{
		pa:   make([]T, sn.maxPackA),
		pb:   panels[T]{Data: make([]T, sn.maxPackB)},
		tile: make([]T, sgemm.MR*sgemm.NR),
		mul:  mul,
	}
	if mulS != nil && sn.maxPanelB > 0 {
		g.mulS, g.pp = mulS, make([]T, sn.maxPanelB)
	}
	return g
}

// mul64 and mul32 are gemmWork's products in float64 and float32.
func mul64(m int, pa []float64, pb *panels[float64], j0, j1 int, c []float64, ldc int, tile []float64) {
	p := sgemm.Panels64{K: pb.K, N: pb.N, Data: pb.Data}
	sgemm.MulPacked64(m, pa, &p, j0, j1, c, ldc, tile)
}

func mul32(m int, pa []float32, pb *panels[float32], j0, j1 int, c []float32, ldc int, tile []float32) {
	p := sgemm.Panels{K: pb.K, N: pb.N, Data: pb.Data}
	sgemm.MulPacked(m, pa, &p, j0, j1, c, ldc, false, tile)
}

// packALen and packBLen are the buffer lengths gemmUpdate needs for an
// nr×nc update of rank wd.
func packALen(nc, wd int) int { return (nc + sgemm.MR - 1) / sgemm.MR * sgemm.MR * wd }
func packBLen(nr, wd int) int { return sgemm.Len(wd, nr) }

// gemmUpdate is updateBlock by the packed product: it sets (at least) the
// lower trapezoid of the nr×nc column-major c (stride nr) to A·Bᵀ, where A
// is rows p1…p1+nr−1 and B rows p1…p1+nc−1 of the md×wd column-major xd.
// It computes the transpose Cᵀ = B·Aᵀ as an nc×nr row-major product (the
// same memory as column-major C), row panel by row panel from the first
// column panel that reaches the diagonal, so about nc²/2 of the nc·nr
// entries above the trapezoid are skipped.
func (g *gemmWork[T]) gemmUpdate(c, xd []T, md, wd, p1, nr, nc int) {
	g.packA(xd[p1:], md, wd, nc)
	g.packB(xd[p1:], md, wd, nr)
	for i0 := 0; i0 < nc; i0 += sgemm.MR {
		h := min(sgemm.MR, nc-i0)
		j0 := i0 / sgemm.NR * sgemm.NR
		g.mul(h, g.pa[i0*wd:], &g.pb, j0, nr, c[i0*nr+j0:], nr, g.tile)
	}
}

// packA packs the n×wd matrix A[i, k] = a[k·ld + i] (the rows of a
// column-major block) into g.pa as sgemm.PackAT64 does: row panels of MR
// rows, each wd×MR row-major, the last padded with zeros. Whole panels
// move entry by entry, without a call to memmove per row.
func (g *gemmWork[T]) packA(a []T, ld, wd, n int) {
	const mr = 6 // sgemm.MR, unrolled below
	for r0 := 0; r0 < n; r0 += mr {
		pan := g.pa[r0*wd : r0*wd+wd*mr]
		if r0+mr <= n {
			for k := 0; k < wd; k++ {
				o, v := pan[k*mr:k*mr+mr], a[k*ld+r0:k*ld+r0+mr]
				o[0], o[1], o[2], o[3], o[4], o[5] = v[0], v[1], v[2], v[3], v[4], v[5]
			}
			continue
		}
		h := n - r0
		for k := 0; k < wd; k++ {
			o := pan[k*mr : k*mr+mr]
			copy(o[:h], a[k*ld+r0:k*ld+r0+h])
			clear(o[h:])
		}
	}
}

// packB packs the wd×n matrix B[k, j] = b[k·ld + j] into g.pb as
// sgemm.Panels64.Pack does: column panels of NR columns, each wd×NR
// row-major, the last padded with zeros.
func (g *gemmWork[T]) packB(b []T, ld, wd, n int) {
	const nr = 16 // sgemm.NR, unrolled below
	p := &g.pb
	p.K, p.N = wd, n
	p.Data = p.Data[:sgemm.Len(wd, n)]
	for j0 := 0; j0 < n; j0 += nr {
		dst := p.Data[j0*wd : j0*wd+wd*nr]
		if j0+nr <= n {
			for k := 0; k < wd; k++ {
				o, v := dst[k*nr:k*nr+nr], b[k*ld+j0:k*ld+j0+nr]
				o[0], o[1], o[2], o[3] = v[0], v[1], v[2], v[3]
				o[4], o[5], o[6], o[7] = v[4], v[5], v[6], v[7]
				o[8], o[9], o[10], o[11] = v[8], v[9], v[10], v[11]
				o[12], o[13], o[14], o[15] = v[12], v[13], v[14], v[15]
			}
			continue
		}
		w := n - j0
		for k := 0; k < wd; k++ {
			row := dst[k*nr : k*nr+nr]
			copy(row[:w], b[k*ld+j0:k*ld+j0+w])
			clear(row[w:])
		}
	}
}

// packA and packB unroll sgemm's tile sizes: these fail to compile if they
// change.
const (
	_ = uint(sgemm.MR-6) + uint(6-sgemm.MR)
	_ = uint(sgemm.NR-16) + uint(16-sgemm.NR)
)
