package enforce_test

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// BenchmarkNPStepStacked is BenchmarkNPStep for the large (Quadratic)
// cases in a Stack, alone and with a one-row Linear constraint y₁ = 0: a
// wrapper keeps its parts' batched and single-precision evaluation, so
// Float32 pays off there as it does for the bare Quadratic.
func BenchmarkNPStepStacked(b *testing.B) {
	for _, tc := range benchCases(b) {
		if !tc.Large {
			continue
		}
		nx, ny, _ := tc.C.Dims()
		row := mat.NewDense(1, ny, nil)
		row.Set(0, 0, 1)
		lin, err := enforce.Linear(nx, row, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, parts := range []struct {
			name string
			cs   []enforce.Constraint
		}{{"Stack(q)", []enforce.Constraint{tc.C}}, {"Stack(q, linear)", []enforce.Constraint{tc.C, lin}}} {
			s, err := enforce.Stack(parts.cs...)
			if err != nil {
				b.Fatal(err)
			}
			tc := tc
			tc.C = s
			for _, p := range precisions(tc) {
				b.Run(tc.Name+"/"+parts.name+"/"+p.String(), func(b *testing.B) {
					benchNPStep(b, tc, p)
				})
			}
		}
	}
}
