package enforce_test

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/benchcases"
)

// precisions returns the precisions a case is benchmarked in: Float64,
// and Float32 where it changes the arithmetic. Sub-benchmarks are named
// after them, so that benchstat can compare them side by side.
func precisions(tc benchcases.Case) []enforce.Precision {
	if tc.Large {
		return []enforce.Precision{enforce.Float64, enforce.Float32}
	}
	return []enforce.Precision{enforce.Float64}
}

func benchCases(b *testing.B) []benchcases.Case {
	b.Helper()
	cases, err := benchcases.Cases(1)
	if err != nil {
		b.Fatal(err)
	}
	return cases
}

// BenchmarkNPStep times one NP step (MinDepth = MaxDepth = 1) over a batch,
// including the evaluation of c at the result that the convergence test
// needs, so it slightly overstates the cost of a step inside a deeper run.
// With Float32 the step and both evaluations are in single precision and
// the final point is evaluated once more in float64 (see
// enforce.Float32); examples/bench separates the step's own cost.
func BenchmarkNPStep(b *testing.B) {
	for _, tc := range benchCases(b) {
		for _, p := range precisions(tc) {
			b.Run(tc.Name+"/"+p.String(), func(b *testing.B) {
				benchNPStep(b, tc, p)
			})
		}
	}
}

func benchNPStep(b *testing.B, tc benchcases.Case, p enforce.Precision) {
	a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: 1, MaxDepth: 1, Tol: 1e-300, Precision: p})
	if err != nil {
		b.Fatal(err)
	}
	dst := mat.DenseCopyOf(tc.YHat)
	if _, err := a.ProjectTo(dst, tc.X, tc.YHat); err != nil { // warm-up: buffers and pools
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.ProjectTo(dst, tc.X, tc.YHat); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGrad times a training step through one NP step: the forward
// pass with its trace and the Unrolled vector–Jacobian product.
func BenchmarkGrad(b *testing.B) {
	for _, tc := range benchCases(b) {
		for _, p := range precisions(tc) {
			b.Run(tc.Name+"/"+p.String(), func(b *testing.B) {
				benchGrad(b, tc, p)
			})
		}
	}
}

func benchGrad(b *testing.B, tc benchcases.Case, p enforce.Precision) {
	a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: 1, MaxDepth: 1, Tol: 1e-300, Precision: p})
	if err != nil {
		b.Fatal(err)
	}
	dst := mat.DenseCopyOf(tc.YHat)
	gy := mat.DenseCopyOf(tc.YHat)
	var tr enforce.Trace
	if _, err := a.ProjectTrace(dst, tc.X, tc.YHat, &tr); err != nil { // warm-up
		b.Fatal(err)
	}
	if err := a.VJP(&tr, tc.YHat, gy, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.ProjectTrace(dst, tc.X, tc.YHat, &tr); err != nil {
			b.Fatal(err)
		}
		if err := a.VJP(&tr, tc.YHat, gy, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdaNP times a full adaptive projection to max|c| ≤ 1e-6.
func BenchmarkAdaNP(b *testing.B) {
	for _, tc := range benchCases(b) {
		for _, p := range precisions(tc) {
			b.Run(tc.Name+"/"+p.String(), func(b *testing.B) {
				benchAdaNP(b, tc, p)
			})
		}
	}
}

func benchAdaNP(b *testing.B, tc benchcases.Case, p enforce.Precision) {
	a, err := enforce.NewAdaNP(tc.C, enforce.Settings{Precision: p})
	if err != nil {
		b.Fatal(err)
	}
	dst := mat.DenseCopyOf(tc.YHat)
	st, err := a.ProjectTo(dst, tc.X, tc.YHat)
	if err != nil || !st.Converged() {
		b.Fatalf("%v %+v", err, st)
	}
	b.ReportMetric(float64(st.Depth), "depth")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.ProjectTo(dst, tc.X, tc.YHat); err != nil {
			b.Fatal(err)
		}
	}
}
