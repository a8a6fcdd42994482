package dense

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// Ssyrk, when set, makes Gram32 call blas32.Syrk (the openblas build tag
// registers OpenBLAS there and sets it); by default Gram32 uses sgemm's
// kernel on the blocks of the lower triangle.
var Ssyrk = false

// Gram32Scratch holds the single-precision temporaries of Gram32.
type Gram32Scratch struct {
	a, g, work []float32
	p          sgemm.Panels
}

// Resize makes s large enough for B of nc×n.
func (s *Gram32Scratch) Resize(nc, n int) {
	s.a = make([]float32, nc*n)
	s.g = make([]float32, nc*nc)
	s.work = make([]float32, sgemm.WorkLen(nc, n))
	s.p.Data = make([]float32, sgemm.Len(n, nc))
}

// Gram32 is Gram computed in single precision: B·diag(d)^½ is rounded to
// float32 and its products accumulated in float32; g (float64) receives
// the result, with reg added to the diagonal in float64. Below the size at
// which Gram calls BLAS it computes in float64, which is as fast. s must
// have been resized for at least nc×n.
func Gram32(g, b, d []float64, nc, n int, reg float64, scratch []float64, s *Gram32Scratch) {
	if nc*nc*n < blasMin {
		Gram(g, b, d, nc, n, reg, scratch)
		return
	}
	a := s.a[:nc*n]
	if d == nil {
		for i, v := range b[:nc*n] {
			a[i] = float32(v)
		}
	} else {
		for i := 0; i < nc; i++ {
			row, src := a[i*n:(i+1)*n], b[i*n:(i+1)*n]
			for k, v := range src {
				row[k] = float32(v * math.Sqrt(d[k]))
			}
		}
	}
	g32 := s.g[:nc*nc]
	if Ssyrk {
		blas32.Syrk(blas.NoTrans, 1,
			blas32.General{Rows: nc, Cols: n, Stride: n, Data: a}, 0,
			blas32.Symmetric{Uplo: blas.Lower, N: nc, Stride: nc, Data: g32})
	} else {
		s.p.PackT(n, nc, a, n)
		sgemm.Mul(nc, a, n, &s.p, 0, nc, g32, nc, true, s.work)
	}
	for i := 0; i < nc; i++ {
		for j := 0; j < i; j++ {
			v := float64(g32[i*nc+j])
			g[i*nc+j], g[j*nc+i] = v, v
		}
		g[i*nc+i] = float64(g32[i*nc+i]) + reg
	}
}
