package solvers

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hs071 is problem 71 of Hock & Schittkowski, IPOPT's own example:
//
//	min y1·y4·(y1 + y2 + y3) + y3
//	s.t. y1·y2·y3·y4 ≥ 25,  Σ y_i² = 40,  1 ≤ y ≤ 5,
//
// with the optimum f* = 17.0140173 at (1, 4.743, 3.82115, 1.37941).
func hs071() *SparseNLP {
	inf := math.Inf(1)
	return &SparseNLP{
		N: 4, M: 2,
		Lower: []float64{1, 1, 1, 1}, Upper: []float64{5, 5, 5, 5},
		GLower: []float64{25, 40}, GUpper: []float64{inf, 40},
		Objective: func(y []float64) float64 { return y[0]*y[3]*(y[0]+y[1]+y[2]) + y[2] },
		Grad: func(y, g []float64) {
			g[0] = y[3]*(y[0]+y[1]+y[2]) + y[0]*y[3]
			g[1] = y[0] * y[3]
			g[2] = y[0]*y[3] + 1
			g[3] = y[0] * (y[0] + y[1] + y[2])
		},
		Constraints: func(y, g []float64) {
			g[0] = y[0] * y[1] * y[2] * y[3]
			g[1] = y[0]*y[0] + y[1]*y[1] + y[2]*y[2] + y[3]*y[3]
		},
		JacRows: []int{0, 0, 0, 0, 1, 1, 1, 1},
		JacCols: []int{0, 1, 2, 3, 0, 1, 2, 3},
		Jacobian: func(y, v []float64) {
			v[0], v[1], v[2], v[3] = y[1]*y[2]*y[3], y[0]*y[2]*y[3], y[0]*y[1]*y[3], y[0]*y[1]*y[2]
			for i := range 4 {
				v[4+i] = 2 * y[i]
			}
		},
		// The lower triangle row by row, the diagonal of the second
		// constraint's Hessian given again (repeated positions add up).
		HessRows: []int{0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 0, 1, 2, 3},
		HessCols: []int{0, 0, 1, 0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 3},
		Hessian: func(y []float64, s float64, l, v []float64) {
			v[0] = s * 2 * y[3]
			v[1] = s*y[3] + l[0]*y[2]*y[3]
			v[2] = 0
			v[3] = s*y[3] + l[0]*y[1]*y[3]
			v[4] = l[0] * y[0] * y[3]
			v[5] = 0
			v[6] = s*(2*y[0]+y[1]+y[2]) + l[0]*y[1]*y[2]
			v[7] = s*y[0] + l[0]*y[0]*y[2]
			v[8] = s*y[0] + l[0]*y[0]*y[1]
			v[9] = 0
			for i := range 4 {
				v[10+i] = 2 * l[1]
			}
		},
	}
}

func TestSparseNLPValidate(t *testing.T) {
	init := []float64{1, 5, 5, 1}
	require.NoError(t, hs071().Validate(init))
	for _, tc := range []struct {
		name string
		edit func(p *SparseNLP)
		init []float64
		want string
	}{
		{"nil callback", func(p *SparseNLP) { p.Hessian = nil }, init, "needs Objective"},
		{"N", func(p *SparseNLP) { p.N = 0 }, init, "N = 0"},
		{"init length", func(p *SparseNLP) {}, init[:3], "length 3, want N = 4"},
		{"init NaN", func(p *SparseNLP) {}, []float64{1, math.NaN(), 1, 1}, "not finite"},
		{"constraint bounds", func(p *SparseNLP) { p.GUpper = p.GUpper[:1] }, init, "constraint bounds, want M = 2"},
		{"variable bounds", func(p *SparseNLP) { p.Lower = p.Lower[:2] }, init, "variable bounds, want N = 4"},
		{"crossed bounds", func(p *SparseNLP) { p.Lower[2] = 6 }, init, "variable bounds [6, 5] at 2"},
		{"NaN bound", func(p *SparseNLP) { p.GLower[0] = math.NaN() }, init, "constraint bounds [NaN"},
		{"Jacobian lengths", func(p *SparseNLP) { p.JacCols = p.JacCols[:3] }, init, "8 Jacobian rows and 3 columns"},
		{"Jacobian entry", func(p *SparseNLP) { p.JacRows[5] = 2 }, init, "Jacobian entry 5 at (2, 1) outside 2×4"},
		{"Hessian upper", func(p *SparseNLP) { p.HessRows[1], p.HessCols[1] = 0, 1 }, init, "Hessian entry 1 at (0, 1) outside the lower triangle"},
		{"Hessian lengths", func(p *SparseNLP) { p.HessRows = p.HessRows[:1] }, init, "1 Hessian rows and 14 columns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := hs071()
			tc.edit(p)
			assert.ErrorContains(t, p.Validate(tc.init), tc.want)
		})
	}
	var p *SparseNLP
	assert.ErrorContains(t, p.Validate(init), "nil SparseNLP")
}

func TestSparseNLPViolation(t *testing.T) {
	p := hs071()
	// At (1, 5, 5, 1): g = (25, 52): the equality is off by 12.
	assert.InDelta(t, 12, p.Violation([]float64{1, 5, 5, 1}, nil), 1e-12)
	// Below the bound y ≥ 1 by 0.5 and g = (0.5·5·5·1, 0.25+25+25+1).
	assert.InDelta(t, 25-12.5, p.Violation([]float64{0.5, 5, 5, 1}, make([]float64, 2)), 1e-12)
	// The optimum is feasible.
	assert.Less(t, p.Violation([]float64{1, 4.74299963, 3.82114998, 1.37940829}, nil), 1e-6)
	assert.True(t, math.IsInf(p.Violation([]float64{math.Inf(1), 1, 1, 1}, nil), 1))
}

// TestSolveSparseHS071 solves HS071 with the pure-Go interior-point
// method: f* = 17.0140173 at (1, 4.743, 3.82115, 1.37941).
func TestSolveSparseHS071(t *testing.T) {
	p := hs071()
	res, err := SolveSparse(p, []float64{1, 5, 5, 1}, &Settings{Tol: 1e-8, FeasTol: 1e-10})
	require.NoError(t, err)
	require.Equal(t, Success, res.Status, "%+v", res)
	assert.InDelta(t, 17.0140173, res.Objective, 1e-6)
	assert.InDeltaSlice(t, []float64{1, 4.74299963, 3.82114998, 1.37940829}, res.Y, 1e-6)
	assert.Less(t, res.MaxViolation, 1e-9)
	assert.Less(t, res.Stationarity, 1e-8)
	_, err = SolveSparse(p, []float64{1, 5, 5}, nil)
	assert.Error(t, err)
	_, err = SolveSparse(p, []float64{1, 5, 5, 1}, &Settings{Tol: -1})
	assert.ErrorContains(t, err, "Settings.Tol")
}
