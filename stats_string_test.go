package enforce_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

func TestStatsString(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    enforce.Stats
		want string
	}{
		{"zero", enforce.Stats{}, "0 samples, nothing projected"},
		{"one sample", enforce.Stats{Samples: 1, Depth: 2, MeanDepth: 2, Before: enforce.Residual{Max: 0.5, Mean: 0.25},
			After: enforce.Residual{Max: 3e-9, Mean: 1e-9}, Displacement: enforce.Residual{Max: 0.125, Mean: 0.125}},
			"1 sample, depth mean 2 max 2, max|c| 5.00e-01 → 3.00e-09, mean|c| 2.50e-01 → 1.00e-09, ‖ỹ−ŷ‖ max 1.25e-01 mean 1.25e-01, converged"},
		{"every counter", enforce.Stats{Samples: 8, Depth: 100, MeanDepth: 37.625, Before: enforce.Residual{Max: 12, Mean: 3},
			After: enforce.Residual{Max: 0.5, Mean: math.NaN()}, Displacement: enforce.Residual{Max: math.Inf(1), Mean: 2},
			NotConverged: 4, Clamped: 1, Stopped: 2, Stalled: 3},
			"8 samples, depth mean 37.6 max 100, max|c| 1.20e+01 → 5.00e-01, mean|c| 3.00e+00 → NaN, ‖ỹ−ŷ‖ max +Inf mean 2.00e+00, 4 not converged, 1 clamped, 2 stopped, 3 stalled"},
		{"only stalled", enforce.Stats{Samples: 2, Depth: 1, MeanDepth: 1, Stalled: 1},
			"2 samples, depth mean 1 max 1, max|c| 0.00e+00 → 0.00e+00, mean|c| 0.00e+00 → 0.00e+00, ‖ỹ−ŷ‖ max 0.00e+00 mean 0.00e+00, converged, 1 stalled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.s.String())
		})
	}
}

// TestStatsPrint checks that printing the Stats of a real projection with
// %v shows the labelled form, not a struct of unlabelled numbers.
func TestStatsPrint(t *testing.T) {
	p, err := enforce.NewAdaNP(circle(), enforce.Settings{})
	require.NoError(t, err)
	_, st, err := p.Project(mat.NewDense(2, 1, []float64{1, 2}), mat.NewDense(2, 2, []float64{0.9, 0.1, 1, 1.5}))
	require.NoError(t, err)
	got := fmt.Sprint(st)
	assert.Equal(t, st.String(), got)
	assert.Equal(t, st.String(), fmt.Sprintf("%v", st))
	for _, label := range []string{"2 samples", "depth", "max|c|", "mean|c|", "‖ỹ−ŷ‖", "converged"} {
		assert.Contains(t, got, label)
	}
	assert.False(t, strings.Contains(got, "{"), "no struct braces: %s", got)
}

// Print the statistics of a projection.
func ExampleStats_String() {
	st := enforce.Stats{Samples: 8, Depth: 3, MeanDepth: 2.125,
		Before:       enforce.Residual{Max: 0.12, Mean: 0.05},
		After:        enforce.Residual{Max: 3.4e-8, Mean: 1e-8},
		Displacement: enforce.Residual{Max: 0.15, Mean: 0.07}}
	fmt.Println(st)
	st.NotConverged, st.Stalled = 1, 1
	fmt.Println(st)
	// Output:
	// 8 samples, depth mean 2.12 max 3, max|c| 1.20e-01 → 3.40e-08, mean|c| 5.00e-02 → 1.00e-08, ‖ỹ−ŷ‖ max 1.50e-01 mean 7.00e-02, converged
	// 8 samples, depth mean 2.12 max 3, max|c| 1.20e-01 → 3.40e-08, mean|c| 5.00e-02 → 1.00e-08, ‖ỹ−ŷ‖ max 1.50e-01 mean 7.00e-02, 1 not converged, 1 stalled
}

// TestErrorStatsNotConverged is the regression test of a projection that
// fails: its zero Stats must neither print "converged" nor report
// Converged, for every method that returns Stats with an error.
func TestErrorStatsNotConverged(t *testing.T) {
	p, err := enforce.NewAdaNP(circle(), enforce.Settings{})
	require.NoError(t, err)
	x := mat.NewDense(1, 1, []float64{1})
	bad := mat.NewDense(1, 2, []float64{math.NaN(), 1})
	wrong := mat.NewDense(1, 3, nil)
	for name, call := range map[string]func() (enforce.Stats, error){
		"Project non-finite": func() (enforce.Stats, error) { _, st, err := p.Project(x, bad); return st, err },
		"Project shape":      func() (enforce.Stats, error) { _, st, err := p.Project(x, wrong); return st, err },
		"ProjectTo":          func() (enforce.Stats, error) { return p.ProjectTo(mat.NewDense(1, 2, nil), x, bad) },
		"Check":              func() (enforce.Stats, error) { return p.Check(x, wrong) },
		"ProjectTrace":       func() (enforce.Stats, error) { return p.ProjectTrace(mat.NewDense(1, 2, nil), x, bad, nil) },
	} {
		st, err := call()
		require.Error(t, err, name)
		assert.False(t, st.Converged(), name)
		assert.NotContains(t, st.String(), "converged", name)
	}
	_, st, err := p.Project(x, mat.NewDense(1, 2, []float64{0.9, 0.1}))
	require.NoError(t, err)
	assert.True(t, st.Converged())
}
