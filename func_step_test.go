package enforce_test

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/benchcases"
	"github.com/enforce-nn/enforce/problems"
)

// distillationCases returns the distillation cases of benchcases, the
// constraint written with Func and analytically, at batch 1000/scale.
func distillationCases(tb testing.TB, scale int) (fn, analytic benchcases.Case) {
	tb.Helper()
	c, err := problems.DistillationFunc()
	require.NoError(tb, err)
	x, y := benchcases.DistillationLike(1000 / scale)
	return benchcases.Case{Name: "distillation, Func", C: c, X: x, YHat: y},
		benchcases.Case{Name: "distillation, analytic", C: problems.Distillation{}.Equalities(), X: x, YHat: y}
}

// TestFuncStepAllocs checks that an NP step of a Func constraint allocates
// nothing per sample: a step over 1000 samples allocates no more than one
// over 10 (the Func's scratch comes from a pool, the samples' state from
// the AdaNP's workspaces).
func TestFuncStepAllocs(t *testing.T) {
	if raceDetector() {
		t.Skip("allocation counts are not meaningful under the race detector (sync.Pool drops Puts)")
	}
	allocs := func(scale int) float64 {
		tc, _ := distillationCases(t, scale)
		a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: 3, MaxDepth: 3, Tol: 1e-300})
		require.NoError(t, err)
		dst := mat.DenseCopyOf(tc.YHat)
		return testing.AllocsPerRun(20, func() {
			if _, err := a.ProjectTo(dst, tc.X, tc.YHat); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(100), allocs(1)
	assert.LessOrEqual(t, large, small, "allocations grow with the batch: %v for 10 samples, %v for 1000", small, large)
	assert.LessOrEqual(t, large, 2.0)
}

// TestFuncMatchesAnalytic checks that the Func and analytic distillation
// constraints project a batch to the same points, whatever GOMAXPROCS.
func TestFuncMatchesAnalytic(t *testing.T) {
	fn, an := distillationCases(t, 10)
	project := func(c enforce.Constraint, procs int) *mat.Dense {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		a, err := enforce.NewAdaNP(c, enforce.Settings{})
		require.NoError(t, err)
		out := mat.DenseCopyOf(fn.YHat)
		st, err := a.ProjectTo(out, fn.X, fn.YHat)
		require.NoError(t, err)
		require.True(t, st.Converged())
		return out
	}
	ref := project(an.C, 1)
	for _, procs := range []int{1, 2, 5} {
		got := project(fn.C, procs)
		assert.True(t, mat.EqualApprox(ref, got, 1e-12), "GOMAXPROCS %d", procs)
		if procs > 1 {
			assert.True(t, mat.Equal(project(fn.C, 1), got), "Func: GOMAXPROCS %d changes the result", procs)
		}
	}
}

// raceDetector reports whether the test binary was built with -race.
func raceDetector() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// BenchmarkFuncStep times one NP step on the distillation constraint
// (1000, 9, 6), written with Func (forward-mode hyperdual derivatives,
// ⌈9/2⌉ = 5 evaluations of the function per Jacobian) and analytically,
// so that the two can be compared in one run; examples/bench prints their
// ratio.
func BenchmarkFuncStep(b *testing.B) {
	fn, an := distillationCases(b, 1)
	for _, tc := range []benchcases.Case{fn, an} {
		b.Run(strings.TrimPrefix(tc.Name, "distillation, "), func(b *testing.B) {
			a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: 1, MaxDepth: 1, Tol: 1e-300})
			require.NoError(b, err)
			dst := mat.DenseCopyOf(tc.YHat)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.ProjectTo(dst, tc.X, tc.YHat); err != nil {
					b.Fatal(err)
				}
			}
			rows, _ := tc.X.Dims()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/sample")
		})
	}
}
