package dense

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// TestCholBlocked32Bits checks cholBlocked32 against cholBlocked32Ref, the
// straightforward loops it replaced (one row and one column of the
// diagonal block's factor and inverse at a time), bit for bit, on
// symmetric positive definite matrices of several sizes and on matrices
// that are not positive definite (both must fail).
func TestCholBlocked32Bits(t *testing.T) {
	rnd := rand.New(rand.NewPCG(91, 92))
	for _, n := range []int{1, 5, 16, 17, 31, 50, 64, 100, 150} {
		ld := (n + sgemm.NR - 1) / sgemm.NR * sgemm.NR
		for trial := range 4 {
			// G = B·Bᵀ + shift·I in float32, from a B with n+3 columns.
			m := n + 3
			b := make([]float64, n*m)
			for i := range b {
				b[i] = rnd.NormFloat64()
			}
			a := make([]float32, ld*ld)
			shift := 0.1
			if trial == 3 {
				shift = -float64(m) * 4 // not positive definite
			}
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					var s float64
					for k := 0; k < m; k++ {
						s += b[i*m+k] * b[j*m+k]
					}
					if i == j {
						s += shift
					}
					a[i*ld+j] = float32(s)
				}
			}
			want, got := slices.Clone(a), slices.Clone(a)
			w1 := make([]float32, (ld/sgemm.NR+2)*sgemm.NR*sgemm.NR)
			w2 := make([]float32, len(w1))
			okWant := cholBlocked32Ref(want, n, ld, w1)
			okGot := cholBlocked32(got, n, ld, w2)
			if okWant != okGot {
				t.Fatalf("n %d trial %d: ok %v, want %v", n, trial, okGot, okWant)
			}
			if trial == 3 && okGot {
				t.Fatalf("n %d: an indefinite matrix factored", n)
			}
			if !okGot {
				continue
			}
			for i := 0; i < n; i++ {
				for j := 0; j <= i; j++ {
					if math.Float32bits(got[i*ld+j]) != math.Float32bits(want[i*ld+j]) {
						t.Fatalf("n %d trial %d: L[%d][%d] = %v, want %v", n, trial, i, j, got[i*ld+j], want[i*ld+j])
					}
				}
			}
		}
	}
}

// cholBlocked32Ref is cholBlocked32 as it was before its diagonal blocks
// were factored and inverted on a float64 copy with several independent
// sums at a time: the oracle of TestCholBlocked32Bits.
func cholBlocked32Ref(a []float32, n, ld int, w []float32) bool {
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

// BenchmarkCholBlocked32 times the single-precision factorisation alone at
// the Gram sizes of the (…, 100, 50) and (…, 200, 150) steps.
func BenchmarkCholBlocked32(b *testing.B) {
	rnd := rand.New(rand.NewPCG(93, 94))
	for _, n := range []int{50, 150} {
		ld := (n + sgemm.NR - 1) / sgemm.NR * sgemm.NR
		a := make([]float32, ld*ld)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				a[i*ld+j] = float32(rnd.NormFloat64() / float64(n))
			}
			a[i*ld+i] += 2
		}
		w := make([]float32, (ld/sgemm.NR+2)*sgemm.NR*sgemm.NR)
		c := make([]float32, len(a))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				copy(c, a)
				if !cholBlocked32(c, n, ld, w) {
					b.Fatal("not positive definite")
				}
			}
		})
	}
}
