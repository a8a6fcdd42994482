package dense

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkGram32(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	nc, n := 150, 200
	bm := make([]float64, nc*n)
	for i := range bm {
		bm[i] = rnd.NormFloat64()
	}
	var s Gram32Scratch
	s.Resize(nc, n)
	g := make([]float64, nc*nc)
	for b.Loop() {
		Gram32(g, bm, nil, nc, n, 0, nil, &s)
	}
}
