package train

import (
	"fmt"
	"math"
)

// Adam's constants, those of gorgonia.NewAdamSolver.
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
)

// adam is the Adam solver Fit uses: gorgonia's AdamSolver (v0.9.18) with
// its default β₁ = 0.9, β₂ = 0.999, ε = 1e-8 and batch size 1, computing
// the same float64 operations in the same order, so that it takes the
// same steps bit for bit. It exists because gorgonia keeps its moments
// and step counter unexported, and a checkpoint must save them. For
// weight w with gradient g at step t,
//
//	m ← (1−β₁)·g + β₁·m,   v ← (1−β₂)·g² + β₂·v,
//	w ← w + (−η·(m·(1/(1−β₁ᵗ)))) / (√(v·(1/(1−β₂ᵗ))) + ε),
//
// after which g is set to zero, as gorgonia's Step does (a tape machine
// adds each run's gradients to the previous ones).
type adam struct {
	eta  float64
	iter int         // steps taken
	m, v [][]float64 // first and second moments, per learnable; nil before the first step
}

// step applies one Adam step to the weights w with gradients g (both in
// the order of the model's learnables) and zeroes g.
func (a *adam) step(w, g [][]float64) error {
	if len(g) != len(w) {
		return fmt.Errorf("%d gradients for %d learnables", len(g), len(w))
	}
	if a.m == nil {
		a.m, a.v = make([][]float64, len(w)), make([][]float64, len(w))
		for i := range w {
			a.m[i], a.v[i] = make([]float64, len(w[i])), make([]float64, len(w[i]))
		}
	}
	if len(a.m) != len(w) {
		return fmt.Errorf("the solver holds moments of %d learnables, the step has %d", len(a.m), len(w))
	}
	for i := range w {
		if len(g[i]) != len(w[i]) || len(a.m[i]) != len(w[i]) {
			return fmt.Errorf("learnable %d: %d weights, %d gradients, %d moments", i, len(w[i]), len(g[i]), len(a.m[i]))
		}
	}
	a.iter++
	// β and 1−β in float64, as gorgonia holds and computes them (the
	// untyped constant 1−0.9 would be exactly 0.1, not 1−float64(0.9)).
	b1, b2 := float64(adamBeta1), float64(adamBeta2)
	omb1, omb2, negEta := 1-b1, 1-b2, -a.eta
	// The corrections as gorgonia computes them: 1/(1−βᵗ) with math.Pow.
	c1 := 1 / (1 - math.Pow(b1, float64(a.iter)))
	c2 := 1 / (1 - math.Pow(b2, float64(a.iter)))
	for i, wi := range w {
		gi, mi, vi := g[i], a.m[i], a.v[i]
		for j, gj := range gi {
			t1 := gj * omb1
			t2 := gj * gj
			t2 = t2 * omb2
			t1 += mi[j] * b1
			t2 += vi[j] * b2
			mi[j], vi[j] = t1, t2
			mHat := t1 * c1
			vHat := t2 * c2
			vHat = math.Sqrt(vHat)
			vHat = vHat + adamEps
			mHat = mHat * negEta
			mHat = mHat / vHat
			wi[j] = wi[j] + mHat
			gi[j] = 0
		}
	}
	return nil
}
