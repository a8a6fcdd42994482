package enforce_test

import (
	"testing"

	"github.com/enforce-nn/enforce"
)

// BenchmarkNPStepStacked is BenchmarkNPStep for the large cases wrapped in
// a one-part Stack: a wrapper keeps its part's batched and
// single-precision evaluation, so it should cost what the bare constraint
// does.
func BenchmarkNPStepStacked(b *testing.B) {
	for _, tc := range benchCases(b) {
		if !tc.Large {
			continue
		}
		s, err := enforce.Stack(tc.C)
		if err != nil {
			b.Fatal(err)
		}
		tc.C = s
		for _, p := range precisions(tc) {
			b.Run(tc.Name+"/"+p.String(), func(b *testing.B) {
				benchNPStep(b, tc, p)
			})
		}
	}
}
