package dense

import (
	"math"

	"github.com/enforce-nn/enforce/internal/sgemm"
)

// Potrf32, when set, factors single-precision Gram matrices for
// GramChol32 like Potrf (the openblas build sets it to OpenBLAS's spotrf);
// by default they are factored by cholBlocked32 where sgemm has its
// assembly kernels, else in float64.
var Potrf32 func(a []float32, n int) bool

// Gram32Scratch holds the single-precision temporaries of Gram32.
type Gram32Scratch struct {
	g, work []float32
	gp      []float32 // G with its size rounded up to sgemm.NR, for sgemm.GramLower
	cw      []float32 // cholBlocked32's panels
	sd      []float64
	p       sgemm.Panels
}

// Resize makes s large enough for B of nc×n.
func (s *Gram32Scratch) Resize(nc, n int) {
	s.sd = make([]float64, n)
	s.g = make([]float32, nc*nc)
	ncp := sgemm.Len(1, nc)
	s.gp = make([]float32, ncp*ncp)
	s.cw = make([]float32, (ncp/sgemm.NR+2)*sgemm.NR*sgemm.NR)
	s.work = make([]float32, sgemm.WorkLen(nc, n))
	s.p.Data = make([]float32, sgemm.Len(n, nc))
}

// Gram32 is Gram computed in single precision, for B in float64 or
// float32: B·diag(d)^½ is rounded to float32 and its products accumulated
// in float32; g (float64) receives the result, with reg added to the
// diagonal in float64. Below the size at which Gram calls BLAS it computes
// in float64 with plain loops, which is as fast. s must have been resized
// for at least nc×n.
func Gram32[T sgemm.Real](g []float64, b []T, d []float64, nc, n int, reg float64, s *Gram32Scratch) {
	if nc*nc*n < blasMin {
		gramLoops(g, b, d, nc, n, reg)
		return
	}
	g32, ld := gram32Lower(b, d, nc, n, s)
	for i := 0; i < nc; i++ {
		for j := 0; j < i; j++ {
			v := float64(g32[i*ld+j])
			g[i*nc+j], g[j*nc+i] = v, v
		}
		g[i*nc+i] = float64(g32[i*ld+i]) + reg
	}
}

// gram32Lower computes the lower triangle of B·diag(d)·Bᵀ in single
// precision into s and returns it, with its stride: B·diag(d)^½ is packed
// once, straight from B, and with an assembly kernel (AVX2 or AVX-512) that
// packing serves as both factors, only the blocks on and below the
// diagonal computed (sgemm.GramLower, into s.gp, whose padding it leaves
// zero); else it is packed a second time as the left factor (into s.g).
func gram32Lower[T sgemm.Real](b []T, d []float64, nc, n int, s *Gram32Scratch) (g32 []float32, ld int) {
	var sd []float64
	if d != nil {
		sd = s.sd[:n]
		for k, v := range d[:n] {
			sd[k] = math.Sqrt(v)
		}
	}
	sgemm.PackTScaled(&s.p, n, nc, b, n, sd)
	if sgemm.HasAsm {
		ld = sgemm.Len(1, nc)
		g32 = s.gp[:ld*ld]
		sgemm.GramLower(&s.p, g32, ld)
		return g32, ld
	}
	g32 = s.g[:nc*nc]
	pa := s.work[:len(s.work)-sgemm.MR*sgemm.NR]
	sgemm.PackAScaled(nc, n, b, n, sd, pa)
	sgemm.MulPacked(nc, pa, &s.p, 0, nc, g32, nc, true, s.work[len(s.work)-sgemm.MR*sgemm.NR:])
	return g32, nc
}

// GramChol32 forms G = B·diag(d)·Bᵀ + reg·I as Gram32 does and factors it
// like CholeskyRel with threshold rel, writing L into the lower triangle of
// the float64 g. Large enough G are factored in single precision too: by
// Potrf32 where it is set, else, with an assembly kernel (AVX2 or
// AVX-512, the same bits), by a blocked factorisation on it
// (cholBlocked32); otherwise in float64. diag is scratch of length nc.
func GramChol32[T sgemm.Real](g []float64, b []T, d []float64, nc, n int, reg float64, s *Gram32Scratch, diag []float64, rel float64) bool {
	if Potrf32 == nil && !sgemm.HasAsm || nc*nc*nc < 3*blasMin {
		Gram32(g, b, d, nc, n, reg, s)
		for _, v := range g[:nc*nc] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return CholeskyRel(g, nc, diag, rel)
	}
	g32, ld := gram32Lower(b, d, nc, n, s)
	if Potrf32 != nil && ld != nc {
		for i := 0; i < nc; i++ {
			copy(s.g[i*nc:i*nc+i+1], g32[i*ld:i*ld+i+1])
		}
		g32, ld = s.g[:nc*nc], nc
	}
	for i := 0; i < nc; i++ {
		g32[i*ld+i] += float32(reg)
		diag[i] = float64(g32[i*ld+i])
		if math.IsNaN(diag[i]) || math.IsInf(diag[i], 0) {
			return false
		}
	}
	var ok bool
	if Potrf32 != nil {
		ok = Potrf32(g32, nc)
	} else {
		ok = cholBlocked32(g32, nc, ld, s.cw)
	}
	if !ok {
		return false
	}
	for i := 0; i < nc; i++ {
		for j := 0; j <= i; j++ {
			g[i*nc+j] = float64(g32[i*ld+j])
		}
		if d := g[i*nc+i]; !(d*d > rel*diag[i]) || math.IsInf(d, 1) {
			return false
		}
	}
	return true
}
