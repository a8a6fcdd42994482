package f32chk

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/benchcases"
)

func BenchmarkF32Step(b *testing.B) {
	cases, _ := benchcases.Cases(1)
	tc := cases[2]
	a, _ := enforce.NewAdaNP(tc.C, enforce.Settings{Precision: enforce.Float32, MinDepth: 3, MaxDepth: 3, Tol: 1e-300})
	dst := mat.DenseCopyOf(tc.YHat)
	a.ProjectTo(dst, tc.X, tc.YHat)
	b.ResetTimer()
	for b.Loop() {
		a.ProjectTo(dst, tc.X, tc.YHat)
	}
}
