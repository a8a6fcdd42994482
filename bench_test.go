package enforce_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems"
)

// benchCase is one row of the performance table: a constraint with a batch
// of inputs and predictions near its feasible set.
type benchCase struct {
	name    string
	c       enforce.Constraint
	x, yhat *mat.Dense
}

func benchCases(b *testing.B) []benchCase {
	b.Helper()
	var cases []benchCase
	fit := problems.FittingEquality{}
	d := fit.Sample(1000, 1)
	cases = append(cases, benchCase{"fitting(1000,2,1)", fit.Equalities(), d.X, perturb(d.Y, 0.05, 1)})
	for _, sz := range [][2]int{{100, 50}, {200, 150}} {
		p, err := problems.NewNonconvexQuadratic(sz[0], sz[1], 1)
		if err != nil {
			b.Fatal(err)
		}
		x := p.SampleX(833, 2)
		y := mat.NewDense(833, sz[0], nil)
		rnd := rand.New(rand.NewPCG(3, 3))
		for s := 0; s < 833; s++ {
			row := y.RawRowView(s)
			for j := range row {
				row[j] = rnd.NormFloat64()
			}
			p.Complete(x.RawRowView(s), row, row)
		}
		c, _ := p.Constraint()
		cases = append(cases, benchCase{fmt.Sprintf("quadratic(833,%d,%d)", sz[0], sz[1]), c, x, perturb(y, 0.01, 4)})
	}
	dist, err := problems.DistillationFunc()
	if err != nil {
		b.Fatal(err)
	}
	x, y := distillationLike(1000)
	cases = append(cases,
		benchCase{"distillation-func(1000,9,6)", dist, x, y},
		benchCase{"distillation-analytic(1000,9,6)", problems.Distillation{}.Equalities(), x, y})
	return cases
}

// distillationLike returns inputs and near-feasible outputs in the ranges
// of the distillation data set, without reading it.
func distillationLike(n int) (x, y *mat.Dense) {
	rnd := rand.New(rand.NewPCG(5, 5))
	x, y = mat.NewDense(n, 3, nil), mat.NewDense(n, 9, nil)
	for s := 0; s < n; s++ {
		f, il, rr := 0.36+0.06*rnd.Float64(), 1.31+0.25*rnd.Float64(), 2.5+1.8*rnd.Float64()
		d := 0.12
		bot := f + il - d
		x.SetRow(s, []float64{f, il, rr})
		xd32 := 0.05
		xb32 := (0.697616946*f - d*xd32) / bot
		xd125 := 1 - xd32
		xb125 := (0.302383054*f - d*xd125) / bot
		y.SetRow(s, []float64{d, bot, xd32, xd125, 0, xb32, xb125, 1 - xb32 - xb125, rr * d})
	}
	return x, perturb(y, 1e-3, 6)
}

func perturb(m *mat.Dense, scale float64, seed uint64) *mat.Dense {
	rnd := rand.New(rand.NewPCG(seed, seed))
	out := mat.DenseCopyOf(m)
	raw := out.RawMatrix().Data
	for i := range raw {
		raw[i] += scale * rnd.NormFloat64()
	}
	return out
}

// BenchmarkNPStep times one NP step (MinDepth = MaxDepth = 1) over a batch,
// including the evaluation of c at the result that the convergence test
// needs, so it slightly overstates the cost of a step inside a deeper run.
func BenchmarkNPStep(b *testing.B) {
	for _, tc := range benchCases(b) {
		b.Run(tc.name, func(b *testing.B) {
			a, err := enforce.NewAdaNP(tc.c, enforce.Settings{MinDepth: 1, MaxDepth: 1})
			if err != nil {
				b.Fatal(err)
			}
			dst := mat.DenseCopyOf(tc.yhat)
			if _, err := a.ProjectTo(dst, tc.x, tc.yhat); err != nil { // warm-up: buffers and pools
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := a.ProjectTo(dst, tc.x, tc.yhat); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGrad times a training step through one NP step: the forward
// pass with its trace and the Unrolled vector–Jacobian product.
func BenchmarkGrad(b *testing.B) {
	for _, tc := range benchCases(b) {
		b.Run(tc.name, func(b *testing.B) {
			a, err := enforce.NewAdaNP(tc.c, enforce.Settings{MinDepth: 1, MaxDepth: 1})
			if err != nil {
				b.Fatal(err)
			}
			dst := mat.DenseCopyOf(tc.yhat)
			gy := mat.DenseCopyOf(tc.yhat)
			var tr enforce.Trace
			if _, err := a.ProjectTrace(dst, tc.x, tc.yhat, &tr); err != nil { // warm-up
				b.Fatal(err)
			}
			if err := a.VJP(&tr, tc.yhat, gy, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := a.ProjectTrace(dst, tc.x, tc.yhat, &tr); err != nil {
					b.Fatal(err)
				}
				if err := a.VJP(&tr, tc.yhat, gy, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAdaNP times a full adaptive projection to max|c| ≤ 1e-6.
func BenchmarkAdaNP(b *testing.B) {
	for _, tc := range benchCases(b) {
		b.Run(tc.name, func(b *testing.B) {
			a, err := enforce.NewAdaNP(tc.c, enforce.Settings{})
			if err != nil {
				b.Fatal(err)
			}
			dst := mat.DenseCopyOf(tc.yhat)
			st, err := a.ProjectTo(dst, tc.x, tc.yhat)
			if err != nil || !st.Converged() {
				b.Fatalf("%v %+v", err, st)
			}
			b.ReportMetric(float64(st.Depth), "depth")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := a.ProjectTo(dst, tc.x, tc.yhat); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
