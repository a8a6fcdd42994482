package enforce_test

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/benchcases"
)

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
func BenchmarkNPStep(b *testing.B) {
	for _, tc := range benchCases(b) {
		b.Run(tc.Name, func(b *testing.B) {
			a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: 1, MaxDepth: 1})
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
		})
	}
}

// BenchmarkGrad times a training step through one NP step: the forward
// pass with its trace and the Unrolled vector–Jacobian product.
func BenchmarkGrad(b *testing.B) {
	for _, tc := range benchCases(b) {
		b.Run(tc.Name, func(b *testing.B) {
			a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: 1, MaxDepth: 1})
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
		})
	}
}

// BenchmarkAdaNP times a full adaptive projection to max|c| ≤ 1e-6.
func BenchmarkAdaNP(b *testing.B) {
	for _, tc := range benchCases(b) {
		b.Run(tc.Name, func(b *testing.B) {
			a, err := enforce.NewAdaNP(tc.C, enforce.Settings{})
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
		})
	}
}
