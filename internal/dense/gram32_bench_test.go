package dense

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkGram32(b *testing.B) {
	nc, n := 150, 200
	bm := randB(rand.New(rand.NewPCG(1, 2)), nc, n)
	var s Gram32Scratch
	s.Resize(nc, n)
	g := make([]float64, nc*nc)
	for b.Loop() {
		Gram32(g, bm, nil, nc, n, 0, &s)
	}
}

// BenchmarkGramChol32 times GramChol32 at the (833, 100, 50) and (833, 200,
// 150) steps' sizes from a float32 B, and its two parts: Gram32 (packing and the float32
// product) and CholeskyRel (the float64 factorisation of the result).
func BenchmarkGramChol32(b *testing.B) {
	for _, sz := range [][2]int{{50, 100}, {150, 200}} {
		b.Run(fmt.Sprint(sz[0], "x", sz[1]), func(b *testing.B) { benchGramChol32(b, sz[0], sz[1]) })
	}
}

func benchGramChol32(b *testing.B, nc, n int) {
	rnd := rand.New(rand.NewPCG(1, 2))
	bm := make([]float32, nc*n)
	for i := range bm {
		bm[i] = float32(rnd.NormFloat64())
	}
	var s Gram32Scratch
	s.Resize(nc, n)
	g, diag := make([]float64, nc*nc), make([]float64, nc)
	b.Run("GramChol32", func(b *testing.B) {
		for b.Loop() {
			GramChol32(g, bm, nil, nc, n, 1e-8, &s, diag, 1e-5)
		}
	})
	b.Run("Gram32", func(b *testing.B) {
		for b.Loop() {
			Gram32(g, bm, nil, nc, n, 1e-8, &s)
		}
	})
	g0 := make([]float64, nc*nc)
	Gram32(g0, bm, nil, nc, n, 1e-8, &s)
	b.Run("CholeskyRel", func(b *testing.B) {
		for b.Loop() {
			copy(g, g0)
			CholeskyRel(g, nc, diag, 1e-5)
		}
	})
}

// BenchmarkGram times the float64 Gram matrix at the (…, 200, 150) step's
// size, with and without weights, as Gram computes it on this machine
// (sgemm's kernel where it has the assembly one) and by the registered
// BLAS's dsyrk (BLASGram, "dsyrk/").
func BenchmarkGram(b *testing.B) {
	b.Run("gram", benchGram)
	BLASGram = true
	defer func() { BLASGram = false }()
	b.Run("dsyrk", benchGram)
}

func benchGram(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	nc, n := 150, 200
	bm := randB(rnd, nc, n)
	d := make([]float64, n)
	for i := range d {
		d[i] = 0.5 + rnd.Float64()
	}
	var s GramScratch
	s.Resize(nc, n)
	g := make([]float64, nc*nc)
	for _, w := range []struct {
		name string
		d    []float64
	}{{"unweighted", nil}, {"weighted", d}} {
		b.Run(w.name, func(b *testing.B) {
			for b.Loop() {
				Gram(g, bm, w.d, nc, n, 1e-8, &s)
			}
		})
	}
}
