package enforce

import (
	"fmt"
	"strings"
)

// String returns the statistics with every number labelled, for logs:
//
//	8 samples, depth mean 2.12 max 3, max|c| 1.20e-01 → 3.40e-08, mean|c| 5.00e-02 → 1.00e-08, ‖ỹ−ŷ‖ max 1.50e-01 mean 7.00e-02, converged
//
// The residuals read before → after projection; ‖ỹ−ŷ‖ is Displacement. The end says
// "converged" when every sample met the tolerance and otherwise how many did
// not, followed by the nonzero counts of samples that were clamped, stopped
// or stalled (see the fields of Stats). A Stats with Samples == 0 (the
// zero Stats that a projection returns with an error) describes no
// projection and prints as "0 samples, nothing projected".
func (s Stats) String() string {
	if s.Samples == 0 {
		return "0 samples, nothing projected"
	}
	var b strings.Builder
	noun := "samples"
	if s.Samples == 1 {
		noun = "sample"
	}
	fmt.Fprintf(&b, "%d %s, depth mean %.3g max %d, max|c| %.2e → %.2e, mean|c| %.2e → %.2e, ‖ỹ−ŷ‖ max %.2e mean %.2e",
		s.Samples, noun, s.MeanDepth, s.Depth, s.Before.Max, s.After.Max, s.Before.Mean, s.After.Mean,
		s.Displacement.Max, s.Displacement.Mean)
	if s.NotConverged == 0 {
		b.WriteString(", converged")
	} else {
		fmt.Fprintf(&b, ", %d not converged", s.NotConverged)
	}
	for _, c := range []struct {
		n    int
		name string
	}{{s.Clamped, "clamped"}, {s.Stopped, "stopped"}, {s.Stalled, "stalled"}} {
		if c.n != 0 {
			fmt.Fprintf(&b, ", %d %s", c.n, c.name)
		}
	}
	return b.String()
}
