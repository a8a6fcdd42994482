// Package adam is the Adam optimiser of packages train and dc3: gorgonia's
// AdamSolver (v0.9.18) with its defaults, bit for bit, but with its state
// (moments and step count) readable and settable, so that a checkpoint can
// save it and a resumed run take exactly the steps an uninterrupted one
// would.
package adam

import (
	"fmt"
	"math"

	"github.com/enforce-nn/enforce/internal/par"
)

// Adam's constants, those of gorgonia.NewAdamSolver.
const (
	Beta1 = 0.9
	Beta2 = 0.999
	Eps   = 1e-8
)

// Solver is gorgonia's AdamSolver (v0.9.18) with its default β₁ = 0.9,
// β₂ = 0.999, ε = 1e-8 and batch size 1, computing the same float64
// operations in the same order, so that it takes the same steps bit for
// bit (TestAdamMatchesGorgonia). It exists because gorgonia keeps its
// moments and step counter unexported, and a checkpoint must save them.
// For weight w with gradient g at step t,
//
//	m ← (1−β₁)·g + β₁·m,   v ← (1−β₂)·g² + β₂·v,
//	w ← w + (−η·(m·(1/(1−β₁ᵗ)))) / (√(v·(1/(1−β₂ᵗ))) + ε),
//
// after which g is set to zero, as gorgonia's Step does (a tape machine
// adds each run's gradients to the previous ones).
//
// For float32 weights it keeps its moments in float32 and computes the
// same operations in float32, with β, 1−β, ε, η and the corrections
// computed in float64 and rounded to float32, and the square root
// correctly rounded, as PyTorch's float32 Adam does its arithmetic.
//
// The zero Solver with Eta set is ready to use.
type Solver struct {
	// Eta is the step size η.
	Eta      float64
	iter     int         // steps taken
	m, v     [][]float64 // first and second moments of float64 weights, per learnable; nil before the first step
	m32, v32 [][]float32 // those of float32 weights
}

// Step applies one Adam step to the weights w with gradients g (both in
// the order of the model's learnables, all []float64 or all []float32,
// the same type at every step) and zeroes g. It returns an error, and
// changes nothing, if the gradients do not fit the weights or the
// weights do not fit the moments of earlier steps.
func (a *Solver) Step(w, g []any) error {
	if len(g) != len(w) {
		return fmt.Errorf("%d gradients for %d learnables", len(g), len(w))
	}
	w64, g64, ok64 := all[float64](w, g)
	w32, g32, ok32 := all[float32](w, g)
	switch {
	case ok64 && a.m32 == nil:
		if a.m == nil {
			a.m, a.v = zeros(w64), zeros(w64)
		}
		return a.count(step(a.Eta, a.iter+1, w64, g64, a.m, a.v))
	case ok32 && a.m == nil:
		if a.m32 == nil {
			a.m32, a.v32 = zeros(w32), zeros(w32)
		}
		return a.count(step(a.Eta, a.iter+1, w32, g32, a.m32, a.v32))
	}
	return fmt.Errorf("the solver cannot step weights %T with gradients %T after %d steps", w, g, a.iter)
}

// count counts a step that succeeded.
func (a *Solver) count(err error) error {
	if err == nil {
		a.iter++
	}
	return err
}

// all returns w and g as slices of []T, if every entry is one.
func all[T float32 | float64](w, g []any) (wt, gt [][]T, ok bool) {
	wt, gt = make([][]T, len(w)), make([][]T, len(g))
	for i := range w {
		if wt[i], ok = w[i].([]T); !ok {
			return nil, nil, false
		}
		if gt[i], ok = g[i].([]T); !ok {
			return nil, nil, false
		}
	}
	return wt, gt, true
}

func zeros[T float32 | float64](w [][]T) [][]T {
	z := make([][]T, len(w))
	for i := range w {
		z[i] = make([]T, len(w[i]))
	}
	return z
}

// Iter returns the number of steps taken.
func (a *Solver) Iter() int { return a.iter }

// Moments returns the first and second moments per learnable as float64
// (converted, exactly, from float32 moments), nil before the first step.
// Float64 moments are the solver's own slices, not copies.
func (a *Solver) Moments() (m, v [][]float64) {
	if a.m32 == nil {
		return a.m, a.v
	}
	conv := func(s [][]float32) [][]float64 {
		out := make([][]float64, len(s))
		for i, r := range s {
			out[i] = make([]float64, len(r))
			for j, x := range r {
				out[i][j] = float64(x)
			}
		}
		return out
	}
	return conv(a.m32), conv(a.v32)
}

// SetMoments restores the step count and the moments (nil with iter 0)
// for float64 weights, or for float32 weights when float32Weights is set,
// rounding the moments to float32. It copies m and v.
func (a *Solver) SetMoments(iter int, m, v [][]float64, float32Weights bool) {
	a.iter, a.m, a.v, a.m32, a.v32 = iter, nil, nil, nil, nil
	if m == nil {
		return
	}
	if !float32Weights {
		cp := func(s [][]float64) [][]float64 {
			out := make([][]float64, len(s))
			for i, r := range s {
				out[i] = append([]float64(nil), r...)
			}
			return out
		}
		a.m, a.v = cp(m), cp(v)
		return
	}
	conv := func(s [][]float64) [][]float32 {
		out := make([][]float32, len(s))
		for i, r := range s {
			out[i] = make([]float32, len(r))
			for j, x := range r {
				out[i][j] = float32(x)
			}
		}
		return out
	}
	a.m32, a.v32 = conv(m), conv(v)
}

// step is one step at step count iter, in the arithmetic of T.
func step[T float32 | float64](eta float64, iter int, w, g, m, v [][]T) error {
	if len(m) != len(w) {
		return fmt.Errorf("the solver holds moments of %d learnables, the step has %d", len(m), len(w))
	}
	for i := range w {
		if len(g[i]) != len(w[i]) || len(m[i]) != len(w[i]) {
			return fmt.Errorf("learnable %d: %d weights, %d gradients, %d moments", i, len(w[i]), len(g[i]), len(m[i]))
		}
	}
	// β and 1−β in float64, as gorgonia holds and computes them (the
	// untyped constant 1−0.9 would be exactly 0.1, not 1−float64(0.9)).
	b1, b2 := float64(Beta1), float64(Beta2)
	omb1, omb2, negEta := T(1-b1), T(1-b2), T(-eta)
	// The corrections as gorgonia computes them: 1/(1−βᵗ) with math.Pow.
	c1 := T(1 / (1 - math.Pow(b1, float64(iter))))
	c2 := T(1 / (1 - math.Pow(b2, float64(iter))))
	body := &stepBody[T]{omb1: omb1, omb2: omb2, negEta: negEta, c1: c1, c2: c2, b1: T(b1), b2: T(b2), eps: T(Eps)}
	for i := range w {
		body.w, body.g, body.m, body.v = w[i], g[i], m[i], v[i]
		// Elementwise, so the same bits on any number of cores.
		par.For(len(w[i]), grain, body)
	}
	return nil
}

// grain is the least number of weights a worker of a step takes.
const grain = 8192

// stepBody is the Adam update of one learnable's weights [lo, hi).
type stepBody[T float32 | float64] struct {
	w, g, m, v                              []T
	omb1, omb2, negEta, c1, c2, b1, b2, eps T
}

func (a *stepBody[T]) Run(lo, hi int) {
	wi, gi, mi, vi := a.w[lo:hi], a.g[lo:hi], a.m[lo:hi], a.v[lo:hi]
	if w32, ok := any(wi).([]float32); ok && useAsm && len(wi) >= 8 {
		n := len(wi) &^ 7
		k := [8]float32{float32(a.omb1), float32(a.omb2), float32(a.b1), float32(a.b2), float32(a.c1), float32(a.c2), float32(a.eps), float32(a.negEta)}
		g32, m32, v32 := any(gi).([]float32), any(mi).([]float32), any(vi).([]float32)
		step32Asm(&w32[0], &g32[0], &m32[0], &v32[0], n, &k)
		wi, gi, mi, vi = wi[n:], gi[n:], mi[n:], vi[n:]
	}
	for j, gj := range gi {
		// The conversions T(…) round each product, so no compiler fuses
		// a multiply-add (GOAMD64=v3 may otherwise): the bits are those
		// of the AVX2 loop and of any build.
		t1 := gj * a.omb1
		t2 := T(gj * gj)
		t2 = t2 * a.omb2
		t1 += T(mi[j] * a.b1)
		t2 += T(vi[j] * a.b2)
		mi[j], vi[j] = t1, t2
		mHat := t1 * a.c1
		vHat := t2 * a.c2
		vHat = T(math.Sqrt(float64(vHat)))
		vHat = vHat + a.eps
		mHat = mHat * a.negEta
		mHat = mHat / vHat
		wi[j] = wi[j] + mHat
		gi[j] = 0
	}
}
