package dense

import (
	"math"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// cholBlocked32 overwrites the lower triangle of the n×n matrix held in the
// ld×ld row-major a (ld a multiple of sgemm.NR; rows and columns n to ld
// zero) with its Cholesky factor L, a = L·Lᵀ, in single precision, and
// reports whether every pivot was positive and finite. It works in
// NR×NR blocks: each diagonal block is factored and inverted in float64,
// the blocks below it are multiplied by that inverse (transposed), and the
// trailing blocks are updated with sgemm.BlockT, which does almost all of
// the arithmetic. It sets the padding's diagonal to 1. w must hold
// (ld/NR + 2)·NR² elements.
func cholBlocked32(a []float32, n, ld int, w []float32) bool {
	const nb = sgemm.NR
	for i := n; i < ld; i++ {
		a[i*ld+i] = 1
	}
	blocks := ld / nb
	panels, t, bt := w[:blocks*nb*nb], w[blocks*nb*nb:(blocks+1)*nb*nb], w[(blocks+1)*nb*nb:(blocks+2)*nb*nb]
	var inv [nb][nb]float64
	for jb := 0; jb < blocks; jb++ {
		j0 := jb * nb
		d := a[j0*ld+j0:]
		for jj := 0; jj < nb; jj++ {
			s := float64(d[jj*ld+jj])
			for k := 0; k < jj; k++ {
				v := float64(d[jj*ld+k])
				s -= v * v
			}
			if !(s > 0) || math.IsInf(s, 1) {
				return false
			}
			l := math.Sqrt(s)
			d[jj*ld+jj] = float32(l)
			for ii := jj + 1; ii < nb; ii++ {
				s := float64(d[ii*ld+jj])
				for k := 0; k < jj; k++ {
					s -= float64(d[ii*ld+k]) * float64(d[jj*ld+k])
				}
				d[ii*ld+jj] = float32(s / l)
			}
		}
		if jb == blocks-1 {
			break
		}
		// inv = L11⁻¹ (lower), and bt = inv as a panel: bt[kk][j] = inv[j][kk].
		for j := 0; j < nb; j++ {
			inv[j][j] = 1 / float64(d[j*ld+j])
			for i := j + 1; i < nb; i++ {
				var s float64
				for k := j; k < i; k++ {
					s += float64(d[i*ld+k]) * inv[k][j]
				}
				inv[i][j] = -s / float64(d[i*ld+i])
			}
			for kk := 0; kk < nb; kk++ {
				bt[kk*nb+j] = float32(inv[j][kk])
			}
		}
		// L_IJ = A_IJ·L11⁻ᵀ for the blocks below, kept transposed as panels.
		for ib := jb + 1; ib < blocks; ib++ {
			blk := a[ib*nb*ld+j0:]
			for i := 0; i < nb; i++ {
				for kk, v := range blk[i*ld : i*ld+nb] {
					t[kk*nb+i] = v
				}
			}
			sgemm.BlockT(nb, t, bt, blk, ld, false)
			p := panels[ib*nb*nb : (ib+1)*nb*nb]
			for i := 0; i < nb; i++ {
				for kk, v := range blk[i*ld : i*ld+nb] {
					p[kk*nb+i] = v
				}
			}
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
