// Package benchcases builds the performance cases shared by the root
// package's benchmarks (bench_test.go) and the command examples/bench: the
// paper's problem sizes with batches of predictions near the feasible set.
//
// It is support code for measurements, not part of the library's API. It
// lives outside internal/ (which holds the numerical kernels) and outside
// examples/internal/ because the root package's tests import it, and Go's
// internal rule hides examples/internal/... from the module root.
package benchcases

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems"
)

// Case is one performance case.
type Case struct {
	Name    string
	C       enforce.Constraint
	X, YHat *mat.Dense
	// RefSec is a stored figure: the PyTorch reference's time per NP step
	// (enforce-nn 1.0.4, torch 1.13 on 2 CPU threads with its default BLAS,
	// analytic Jacobian, float32), timed by RefDate on a machine of the kind
	// docs/performance.md describes, or 0 if not measured. It is not a
	// same-run measurement: with OpenBLAS as torch's BLAS the
	// reference is about twice as fast. examples/bench/reference/compare.py
	// measures the reference in the same run.
	RefSec float64
	// Flops is the arithmetic of one forward step over the full batch.
	Flops float64
	// Large is set for the cases whose Gram matrix or evaluation is large
	// enough for Settings.Precision Float32 to change the arithmetic.
	Large bool
}

// RefDate and RefBLAS say when, and with which BLAS, the stored figures
// Case.RefSec were timed.
const (
	RefDate = "2026-11-23"
	RefBLAS = "torch's default BLAS"
)

// Cases returns fitting (1000, 2, 1), quadratic (833, 100, 50) and
// (833, 200, 150), and distillation (1000, 9, 6) with a hyperdual and an
// analytic Jacobian. Batch sizes are divided by scale (≥ 1).
func Cases(scale int) ([]Case, error) {
	scale = max(scale, 1)
	var cases []Case
	fit := problems.FittingEquality{}
	bs := 1000 / scale
	d := fit.Sample(bs, 1)
	cases = append(cases, Case{fmt.Sprintf("fitting (%d, 2, 1)", bs), fit.Equalities(), d.X, Perturb(d.Y, 0.05, 1), 0.9e-3, float64(bs) * 30, false})
	for _, sz := range []struct {
		nO, nC int
		ref    float64
	}{{100, 50, 0.19}, {200, 150, 1.56}} {
		p, err := problems.NewNonconvexQuadratic(sz.nO, sz.nC, 1)
		if err != nil {
			return nil, err
		}
		bs := 833 / scale
		x := p.SampleX(bs, 2)
		y := mat.NewDense(bs, sz.nO, nil)
		rnd := rand.New(rand.NewPCG(3, 3))
		for s := 0; s < bs; s++ {
			row := y.RawRowView(s)
			for j := range row {
				row[j] = rnd.NormFloat64()
			}
			p.Complete(x.RawRowView(s), row, row)
		}
		c, _ := p.Constraint()
		nO, nC := float64(sz.nO), float64(sz.nC)
		flops := float64(bs) * (2*nC*nO*nO + nC*nC*nO + nC*nC*nC/3 + 4*nC*nO)
		cases = append(cases, Case{fmt.Sprintf("quadratic (%d, %d, %d)", bs, sz.nO, sz.nC), c, x, Perturb(y, 0.01, 4), sz.ref, flops, true})
	}
	dist, err := problems.DistillationFunc()
	if err != nil {
		return nil, err
	}
	bs = 1000 / scale
	x, y := DistillationLike(bs)
	cases = append(cases,
		Case{fmt.Sprintf("distillation, Func (%d, 9, 6)", bs), dist, x, y, 0, float64(bs) * (9*6*2*20 + 6*6*9 + 100), false},
		Case{fmt.Sprintf("distillation, analytic (%d, 9, 6)", bs), problems.Distillation{}.Equalities(), x, y, 0, float64(bs) * (6*6*9 + 100), false})
	return cases, nil
}

// DistillationLike returns n inputs and near-feasible outputs in the
// ranges of the distillation data set, without reading it.
func DistillationLike(n int) (x, y *mat.Dense) {
	rnd := rand.New(rand.NewPCG(5, 5))
	x, y = mat.NewDense(n, 3, nil), mat.NewDense(n, 9, nil)
	for s := 0; s < n; s++ {
		f, il, rr := 0.36+0.06*rnd.Float64(), 1.31+0.25*rnd.Float64(), 2.5+1.8*rnd.Float64()
		d := 0.12
		bot := f + il - d
		xd32 := 0.05
		xb32 := (problems.FeedR32*f - d*xd32) / bot
		xb125 := (problems.FeedR125*f - d*(1-xd32)) / bot
		x.SetRow(s, []float64{f, il, rr})
		y.SetRow(s, []float64{d, bot, xd32, 1 - xd32, 0, xb32, xb125, 1 - xb32 - xb125, rr * d})
	}
	return x, Perturb(y, 1e-3, 6)
}

// Perturb returns m plus N(0, scale²) noise drawn from the seed.
func Perturb(m *mat.Dense, scale float64, seed uint64) *mat.Dense {
	rnd := rand.New(rand.NewPCG(seed, seed))
	out := mat.DenseCopyOf(m)
	raw := out.RawMatrix().Data
	for i := range raw {
		raw[i] += scale * rnd.NormFloat64()
	}
	return out
}
