package dense

import (
	"math"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// Potrf32, when set, factors single-precision Gram matrices for
// GramChol32 like Potrf (the openblas build sets it to OpenBLAS's spotrf);
// by default they are factored in float64.
var Potrf32 func(a []float32, n int) bool

// Gram32Scratch holds the single-precision temporaries of Gram32.
type Gram32Scratch struct {
	g, work []float32
	sd      []float64
	p       sgemm.Panels
}

// Resize makes s large enough for B of nc×n.
func (s *Gram32Scratch) Resize(nc, n int) {
	s.sd = make([]float64, n)
	s.g = make([]float32, nc*nc)
	s.work = make([]float32, sgemm.WorkLen(nc, n))
	s.p.Data = make([]float32, sgemm.Len(n, nc))
}

// Gram32 is Gram computed in single precision, for B in float64 or
// float32: B·diag(d)^½ is rounded to float32 and its products accumulated
// in float32; g (float64) receives the result, with reg added to the
// diagonal in float64. Below the size at which Gram calls BLAS it computes
// in float64 with plain loops, which is as fast. s must have been resized
// for at least nc×n. With g nil it leaves G's lower triangle, without reg,
// in single precision in s (used by GramChol32).
func Gram32[T sgemm.Real](g []float64, b []T, d []float64, nc, n int, reg float64, scratch []float64, s *Gram32Scratch) {
	if nc*nc*n < blasMin && g != nil {
		gramLoops(g, b, d, nc, n, reg)
		return
	}
	// B·diag(d)^½ in float32, packed straight from B: as the row panels of
	// the left factor and the column panels of the right one.
	var sd []float64
	if d != nil {
		sd = s.sd[:n]
		for k, v := range d[:n] {
			sd[k] = math.Sqrt(v)
		}
	}
	g32 := s.g[:nc*nc]
	pa := s.work[:len(s.work)-sgemm.MR*sgemm.NR]
	sgemm.PackAScaled(nc, n, b, n, sd, pa)
	sgemm.PackTScaled(&s.p, n, nc, b, n, sd)
	sgemm.MulPacked(nc, pa, &s.p, 0, nc, g32, nc, true, s.work[len(s.work)-sgemm.MR*sgemm.NR:])
	if g == nil {
		return
	}
	for i := 0; i < nc; i++ {
		for j := 0; j < i; j++ {
			v := float64(g32[i*nc+j])
			g[i*nc+j], g[j*nc+i] = v, v
		}
		g[i*nc+i] = float64(g32[i*nc+i]) + reg
	}
}

// GramChol32 forms G = B·diag(d)·Bᵀ + reg·I as Gram32 does and factors it
// like CholeskyRel with threshold rel, writing L into the lower triangle of
// the float64 g. With Potrf32 set and G large enough, the factorisation
// runs in single precision too. diag is scratch of length nc.
func GramChol32[T sgemm.Real](g []float64, b []T, d []float64, nc, n int, reg float64, scratch []float64, s *Gram32Scratch, diag []float64, rel float64) bool {
	if Potrf32 == nil || nc*nc*nc < 3*blasMin {
		Gram32(g, b, d, nc, n, reg, scratch, s)
		for _, v := range g[:nc*nc] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return CholeskyRel(g, nc, diag, rel)
	}
	Gram32(nil, b, d, nc, n, reg, scratch, s)
	g32 := s.g[:nc*nc]
	for i := 0; i < nc; i++ {
		g32[i*nc+i] += float32(reg)
		diag[i] = float64(g32[i*nc+i])
		if math.IsNaN(diag[i]) || math.IsInf(diag[i], 0) {
			return false
		}
	}
	if !Potrf32(g32, nc) {
		return false
	}
	for i := 0; i < nc; i++ {
		for j := 0; j <= i; j++ {
			g[i*nc+j] = float64(g32[i*nc+j])
		}
		if d := g[i*nc+i]; !(d*d > rel*diag[i]) || math.IsInf(d, 1) {
			return false
		}
	}
	return true
}
