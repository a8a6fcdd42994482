package losses

import (
	"testing"

	"github.com/enforce-nn/enforce/problems"
)

// BenchmarkSoftPenaltyQuadratic measures the forward value and the
// gradient with respect to y of SoftPenalty at the largest size of the
// quadratic benchmark, (N_O, N_C) = (200, 150), batch 200.
func BenchmarkSoftPenaltyQuadratic(b *testing.B) {
	const n = 200
	p, err := problems.NewNonconvexQuadratic(200, 150, 1)
	if err != nil {
		b.Fatal(err)
	}
	c := p.Equalities()
	op, err := newConstraintLossOp(squaredNorm, c, 1)
	if err != nil {
		b.Fatal(err)
	}
	x := p.SampleX(n, 2).RawMatrix().Data
	y := randData(3, n*200, -1, 1)
	gy := make([]float64, n*200)
	for b.Loop() {
		if _, err := op.eval(x, y, n, nil, nil, 0); err != nil {
			b.Fatal(err)
		}
		if _, err := op.eval(x, y, n, nil, gy, 1.0/n); err != nil {
			b.Fatal(err)
		}
	}
}
