//go:build ipopt

package ipopt

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/solvers"
)

// discNLP is min (y1 − 2)² + (y2 − 2)² + y3²/100 s.t. y1² + y2² ≤ 2,
// y3 − y1 − y2 = 0, y1 ≤ 0.5: the bound and the disc are active at the
// optimum y1 = 0.5, y2 = √1.75, y3 = y1 + y2. The Hessian gives (0, 0)
// twice: repeated positions add up.
func discNLP() *solvers.SparseNLP {
	inf := math.Inf(1)
	return &solvers.SparseNLP{
		N: 3, M: 2,
		Lower: []float64{-inf, -inf, -inf}, Upper: []float64{0.5, inf, inf},
		GLower: []float64{-inf, 0}, GUpper: []float64{2, 0},
		Objective: func(y []float64) float64 {
			return (y[0]-2)*(y[0]-2) + (y[1]-2)*(y[1]-2) + y[2]*y[2]/100
		},
		Grad: func(y, g []float64) { g[0], g[1], g[2] = 2*(y[0]-2), 2*(y[1]-2), y[2]/50 },
		Constraints: func(y, g []float64) {
			g[0] = y[0]*y[0] + y[1]*y[1]
			g[1] = y[2] - y[0] - y[1]
		},
		JacRows:  []int{0, 0, 1, 1, 1},
		JacCols:  []int{0, 1, 0, 1, 2},
		Jacobian: func(y, v []float64) { v[0], v[1], v[2], v[3], v[4] = 2*y[0], 2*y[1], -1, -1, 1 },
		HessRows: []int{0, 0, 1, 2},
		HessCols: []int{0, 0, 1, 2},
		Hessian: func(y []float64, s float64, l, v []float64) {
			v[0], v[1], v[2], v[3] = 2*s, 2*l[0], 2*s+2*l[0], s/50
		},
	}
}

func TestSolveSparse(t *testing.T) {
	p := discNLP()
	res, err := Solver{Tol: 1e-10}.SolveSparse(p, []float64{0, 0, 0})
	require.NoError(t, err)
	require.Equal(t, solvers.Success, res.Status)
	y2 := math.Sqrt(1.75)
	assert.InDeltaSlice(t, []float64{0.5, y2, 0.5 + y2}, res.Y, 1e-7)
	assert.InDelta(t, 2.25+(2-y2)*(2-y2)+(0.5+y2)*(0.5+y2)/100, res.Objective, 1e-7)
	assert.Less(t, res.MaxViolation, 1e-7, "IPOPT relaxes bounds by 1e-8 relative")
	assert.Less(t, res.Stationarity, 1e-6)
	assert.Greater(t, res.Lambda[0], 0.0, "the disc is active")
	assert.Positive(t, res.Iterations)

	// Malformed problems and Solver fields are errors.
	p.JacCols[0] = 7
	_, err = Solver{}.SolveSparse(p, []float64{0, 0, 0})
	assert.ErrorContains(t, err, "Jacobian entry 0")
	_, err = Solver{Tol: -1}.SolveSparse(discNLP(), []float64{0, 0, 0})
	assert.ErrorContains(t, err, "Solver.Tol")

	// Options of each type; an unknown option is an error.
	opts := map[string]string{"max_iter": "200", "bound_relax_factor": "1e-9", "honor_original_bounds": "no"}
	res, err = Solver{Tol: 1e-10, Options: opts}.SolveSparse(discNLP(), []float64{0, 0, 0})
	require.NoError(t, err)
	assert.InDelta(t, 0.5, res.Y[0], 1e-8)
	_, err = Solver{Options: map[string]string{"no_such_option": "1"}}.SolveSparse(discNLP(), []float64{0, 0, 0})
	assert.ErrorContains(t, err, `option "no_such_option" = "1" rejected`)
}
