package dense

import (
	"math"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// cholBlocked32 overwrites the lower triangle of the n×n matrix held in the
// ld×ld row-major a (ld a multiple of sgemm.NR; rows and columns n to ld
// zero) with its Cholesky factor L, a = L·Lᵀ, in single precision, and
// reports whether every pivot was positive and finite. It works in
// NR×NR blocks: each diagonal block is factored and inverted in float64
// (factorDiag, invertDiag), the blocks below it are multiplied by that inverse
// (transposed), and the trailing blocks are updated with sgemm.BlockT,
// which does almost all of the arithmetic. It sets the padding's diagonal
// to 1. w must hold (ld/NR + 2)·NR² elements.
func cholBlocked32(a []float32, n, ld int, w []float32) bool {
	const nb = sgemm.NR
	for i := n; i < ld; i++ {
		a[i*ld+i] = 1
	}
	blocks := ld / nb
	panels, t, bt := w[:blocks*nb*nb], w[blocks*nb*nb:(blocks+1)*nb*nb], w[(blocks+1)*nb*nb:(blocks+2)*nb*nb]
	var blk, inv [nb][nb]float64
	for jb := 0; jb < blocks; jb++ {
		j0 := jb * nb
		d := a[j0*ld+j0:]
		// Only the last block holds padding (rows and columns n to ld,
		// zero but for the diagonal's 1, which stay so): m is its number
		// of rows of the matrix itself.
		m := min(nb, n-j0)
		for i := range m {
			for k, v := range d[i*ld : i*ld+i+1] {
				blk[i][k] = float64(v)
			}
		}
		if !factorDiag(&blk, m) {
			return false
		}
		for i := range m {
			for k := range d[i*ld : i*ld+i+1] {
				d[i*ld+k] = float32(blk[i][k])
			}
		}
		if jb == blocks-1 {
			break
		}
		// inv = L11⁻¹ (lower), and bt = inv as a panel: bt[kk][j] = inv[j][kk].
		invertDiag(&blk, &inv)
		for kk := range nb {
			row := bt[kk*nb : kk*nb+nb]
			for j := range row {
				row[j] = float32(inv[j][kk])
			}
		}
		// L_IJ = A_IJ·L11⁻ᵀ for the blocks below, and the same product
		// transposed, L_IJᵀ = L11⁻¹·A_IJᵀ, as the panel of the trailing
		// updates: a second product of the same panels costs less than
		// transposing the first, and gives its bits (the same products,
		// accumulated in the same order).
		for ib := jb + 1; ib < blocks; ib++ {
			below := a[ib*nb*ld+j0:]
			sgemm.PackRows(t, nb, below, ld)
			sgemm.BlockT(nb, t, bt, below, ld, false)
			sgemm.BlockT(nb, bt, t, panels[ib*nb*nb:(ib+1)*nb*nb], nb, false)
		}
		// A_IK −= L_IJ·L_KJᵀ for jb < K ≤ I.
		for ib := jb + 1; ib < blocks; ib++ {
			pi := panels[ib*nb*nb : (ib+1)*nb*nb]
			for kb := jb + 1; kb <= ib; kb++ {
				sgemm.BlockT(nb, pi, panels[kb*nb*nb:(kb+1)*nb*nb], a[ib*nb*ld+kb*nb:], ld, true)
			}
		}
	}
	return true
}

// factorDiag overwrites the lower triangle of the leading m×m part of the
// NR×NR block b (float32 values held in float64) with its Cholesky factor,
// each entry computed in float64 and rounded to float32 as soon as it is
// final, as the factor's later entries read it, and reports whether every
// pivot was positive and finite. The entries of a column below the
// diagonal are independent sums, computed four rows at a time to overlap
// their additions' latencies; every sum runs over k in increasing order,
// as cholBlocked32Ref's (TestCholBlocked32Bits).
func factorDiag(b *[sgemm.NR][sgemm.NR]float64, m int) bool {
	for j := range m {
		rj := b[j][:j]
		s := b[j][j]
		for _, v := range rj {
			s -= v * v
		}
		if !(s > 0) || math.IsInf(s, 1) {
			return false
		}
		l := math.Sqrt(s)
		b[j][j] = float64(float32(l))
		i := j + 1
		for ; i+4 <= m; i += 4 {
			r0, r1, r2, r3 := b[i][:j], b[i+1][:j], b[i+2][:j], b[i+3][:j]
			s0, s1, s2, s3 := b[i][j], b[i+1][j], b[i+2][j], b[i+3][j]
			for k, v := range rj {
				s0 -= r0[k] * v
				s1 -= r1[k] * v
				s2 -= r2[k] * v
				s3 -= r3[k] * v
			}
			b[i][j] = float64(float32(s0 / l))
			b[i+1][j] = float64(float32(s1 / l))
			b[i+2][j] = float64(float32(s2 / l))
			b[i+3][j] = float64(float32(s3 / l))
		}
		for ; i < m; i++ {
			ri := b[i][:j]
			s := b[i][j]
			for k, v := range rj {
				s -= ri[k] * v
			}
			b[i][j] = float64(float32(s / l))
		}
	}
	return true
}

// invertDiag writes into inv the lower triangle of the inverse of the
// lower-triangular factor in b (its upper triangle is left as it is, zero
// from the caller): inv[i][j] = −(Σ_{k=j}^{i−1} b[i][k]·inv[k][j])/b[i][i]
// for j < i, row by row, with the sums of a row, independent of one
// another, computed four columns at a time.
func invertDiag(b, inv *[sgemm.NR][sgemm.NR]float64) {
	const nb = sgemm.NR
	for i := range nb {
		bi := b[i][:i]
		dii := b[i][i]
		j := 0
		for ; j+4 <= i; j += 4 {
			// Column j+c's sum starts at k = j+c: the terms before the
			// first k that all four share are taken first, in order.
			var s0, s1, s2, s3 float64
			s0 += bi[j] * inv[j][j]
			s0 += bi[j+1] * inv[j+1][j]
			s1 += bi[j+1] * inv[j+1][j+1]
			s0 += bi[j+2] * inv[j+2][j]
			s1 += bi[j+2] * inv[j+2][j+1]
			s2 += bi[j+2] * inv[j+2][j+2]
			for k := j + 3; k < i; k++ {
				v, ik := bi[k], &inv[k]
				s0 += v * ik[j]
				s1 += v * ik[j+1]
				s2 += v * ik[j+2]
				s3 += v * ik[j+3]
			}
			inv[i][j] = -s0 / dii
			inv[i][j+1] = -s1 / dii
			inv[i][j+2] = -s2 / dii
			inv[i][j+3] = -s3 / dii
		}
		for ; j < i; j++ {
			var s float64
			for k := j; k < i; k++ {
				s += bi[k] * inv[k][j]
			}
			inv[i][j] = -s / dii
		}
		inv[i][i] = 1 / dii
	}
}
