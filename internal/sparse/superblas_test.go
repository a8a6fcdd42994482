package sparse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/enforce-nn/enforce/internal/sgemm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGemmUpdate checks the packed product of a supernode update against
// updateBlock's plain loops on the lower trapezoid, and its packers
// against sgemm's, for blocks with and without partial tiles.
func TestGemmUpdate(t *testing.T) {
	for _, tc := range []struct{ md, wd, p1, nr, nc int }{
		{md: 40, wd: 4, p1: 3, nr: 37, nc: 5},
		{md: 64, wd: 16, p1: 8, nr: 56, nc: 16},
		{md: 100, wd: 17, p1: 10, nr: 90, nc: 13},
		{md: 33, wd: 32, p1: 32, nr: 1, nc: 1},
		{md: 200, wd: 7, p1: 50, nr: 150, nc: 150},
	} {
		t.Run(fmt.Sprintf("%d×%d/p1=%d/nc=%d", tc.md, tc.wd, tc.p1, tc.nc), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.md), uint64(tc.wd)))
			xd := randomVec(rng, tc.md*tc.wd, -1, 1)
			g := gemmWork[float64]{
				pa:   make([]float64, packALen(tc.nc, tc.wd)),
				pb:   panels[float64]{Data: make([]float64, packBLen(tc.nr, tc.wd))},
				tile: make([]float64, sgemm.MR*sgemm.NR),
				mul:  mul64,
			}
			got := make([]float64, tc.nr*tc.nc)
			want := make([]float64, tc.nr*tc.nc)
			g.gemmUpdate(got, xd, tc.md, tc.wd, tc.p1, tc.nr, tc.nc)
			updateBlock(add4Go[float64], want, xd, tc.md, tc.wd, tc.p1, tc.nr, tc.nc)
			for jj := 0; jj < tc.nc; jj++ {
				for ii := jj; ii < tc.nr; ii++ {
					w, v := want[jj*tc.nr+ii], got[jj*tc.nr+ii]
					require.InDelta(t, w, v, 1e-13*(1+math.Abs(w)), "C[%d, %d]", ii, jj)
				}
			}
			// The small blocks' loops with the assembly's fused
			// multiply–adds agree with the plain ones.
			fused := make([]float64, tc.nr*tc.nc)
			updateBlock(sgemm.Add4x64, fused, xd, tc.md, tc.wd, tc.p1, tc.nr, tc.nc)
			for jj := 0; jj < tc.nc; jj++ {
				for ii := jj; ii < tc.nr; ii++ {
					w := want[jj*tc.nr+ii]
					require.InDelta(t, w, fused[jj*tc.nr+ii], 1e-13*(1+math.Abs(w)), "fused C[%d, %d]", ii, jj)
				}
			}
			// The packers write sgemm's layouts.
			pa := make([]float64, len(g.pa))
			sgemm.PackAT64(tc.nc, tc.wd, xd[tc.p1:], tc.md, pa)
			assert.Equal(t, pa, g.pa)
			var pb sgemm.Panels64
			pb.Pack(tc.wd, tc.nr, xd[tc.p1:], tc.md)
			assert.Equal(t, pb.K, g.pb.K)
			assert.Equal(t, pb.N, g.pb.N)
			assert.Equal(t, pb.Data, g.pb.Data)

			// The single-precision product agrees with the plain loops
			// in float32.
			g32 := gemmWork[float32]{
				pa:   make([]float32, packALen(tc.nc, tc.wd)),
				pb:   panels[float32]{Data: make([]float32, packBLen(tc.nr, tc.wd))},
				tile: make([]float32, sgemm.MR*sgemm.NR),
				mul:  mul32,
			}
			xd32 := make([]float32, len(xd))
			for i, v := range xd {
				xd32[i] = float32(v)
			}
			got32 := make([]float32, tc.nr*tc.nc)
			want32 := make([]float32, tc.nr*tc.nc)
			g32.gemmUpdate(got32, xd32, tc.md, tc.wd, tc.p1, tc.nr, tc.nc)
			updateBlock(add4Go[float32], want32, xd32, tc.md, tc.wd, tc.p1, tc.nr, tc.nc)
			for jj := 0; jj < tc.nc; jj++ {
				for ii := jj; ii < tc.nr; ii++ {
					w, v := float64(want32[jj*tc.nr+ii]), float64(got32[jj*tc.nr+ii])
					require.InDelta(t, w, v, 1e-5*(1+math.Abs(w)), "C32[%d, %d]", ii, jj)
					require.InDelta(t, want[jj*tc.nr+ii], v, 1e-5*(1+math.Abs(w)), "C32[%d, %d] against float64", ii, jj)
				}
			}
		})
	}
}

// TestPanelPacksOnce factors Gram matrices whose factor is one or a few
// dense supernodes wider than panelNB (B with long random rows, so G is
// full or nearly), the case where factorPanel packs each block of its
// columns once into the strided buffer, and checks the solves against the
// dense Cholesky (float64) and the float64 factor (float32).
func TestPanelPacksOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, tc := range []struct{ nc, ny, perRow int }{{50, 80, 40}, {100, 150, 100}, {137, 300, 30}} {
		b := randomB(rng, tc.nc, tc.ny, tc.perRow, true)
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Method: Supernodal})
		require.NoError(t, err)
		f := g.NewFactor()
		// (Only with the assembly kernels: without them no block takes
		// the packed product.)
		assert.Equal(t, sgemm.HasAsm, f.sv.gw.pp != nil, "nc = %d: the panel buffer", tc.nc)
		fs := g.NewFactorSingle()
		assert.Equal(t, sgemm.HasAsm, fs.sv32.gw.pp != nil, "nc = %d: the float32 panel buffer", tc.nc)
		checkSolve(t, rng, b, Options{Method: Supernodal}, 0)
		// The single-precision factor solves to float32 accuracy.
		winv := randomVec(rng, b.cols, 0.5, 2)
		require.NoError(t, f.Factor(b.val, winv, 0))
		require.NoError(t, fs.Factor(b.val, winv, 0))
		r := randomVec(rng, b.rows, -1, 1)
		x64, x32 := append([]float64(nil), r...), append([]float64(nil), r...)
		f.Solve(x64)
		fs.Solve(x32)
		for i := range x64 {
			assert.InDelta(t, x64[i], x32[i], 1e-3*(1+math.Abs(x64[i])), "x[%d]", i)
		}
	}
}

// add4Go is add4 in plain Go, unfused: the reference for the kernels'.
func add4Go[T real](y, a0, a1, a2, a3 []T, b0, b1, b2, b3 T) {
	a0, a1, a2, a3 = a0[:len(y)], a1[:len(y)], a2[:len(y)], a3[:len(y)]
	for i := range y {
		y[i] += a0[i]*b0 + a1[i]*b1 + a2[i]*b2 + a3[i]*b3
	}
}
