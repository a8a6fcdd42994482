package train

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/problems"
)

// BenchmarkMeanNorm measures the per-batch residual report at the largest
// size of the quadratic benchmark, (N_O, N_C) = (200, 150), batch 200.
func BenchmarkMeanNorm(b *testing.B) {
	p, err := problems.NewNonconvexQuadratic(200, 150, 1)
	if err != nil {
		b.Fatal(err)
	}
	x := p.SampleX(200, 2)
	rng := rand.New(rand.NewPCG(3, 4))
	y := mat.NewDense(200, 200, nil)
	for i := range 200 {
		for j := range 200 {
			y.Set(i, j, rng.NormFloat64())
		}
	}
	v := newView(p.Equalities(), 150)
	if _, err := v.meanNorm(x, y); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		v.meanNorm(x, y)
	}
}
