package solvers

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
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

// dcFeeder is the optimal power flow of a direct-current radial feeder of
// n nodes fed at node 0: y = (v_0, …, v_n, p), v_0 = 1 fixed, 0.9 ≤ v_k ≤
// 1.1, 0 ≤ p ≤ 10, and
//
//	min cost·p   s.t.   p − v_0·I_1 = 0,   v_k·(I_k − I_{k+1}) = d_k  (k = 1, …, n),
//
// with the branch currents I_k = g_k·(v_{k−1} − v_k) (I_{n+1} = 0),
// g_k = 30 + 10·(k mod 3) and d_k = 0.01 + 0.005·(k mod 4). The
// constraints determine y, so the optimum is the feasible point, with
// multipliers proportional to cost.
func dcFeeder(n int, cost float64) *SparseNLP {
	g := make([]float64, n+2) // g[n+1] = 0: no branch beyond node n
	d := make([]float64, n+1)
	for k := 1; k <= n; k++ {
		g[k] = 30 + 10*float64(k%3)
		d[k] = 0.01 + 0.005*float64(k%4)
	}
	np := n + 1 // the index of p
	p := &SparseNLP{N: n + 2, M: n + 1,
		Lower: make([]float64, n+2), Upper: make([]float64, n+2), GLower: d, GUpper: d}
	for i := range n + 1 {
		p.Lower[i], p.Upper[i] = 0.9, 1.1
	}
	p.Lower[0], p.Upper[0], p.Lower[np], p.Upper[np] = 1, 1, 0, 10
	cur := func(y []float64, k int) float64 {
		if k > n {
			return 0
		}
		return g[k] * (y[k-1] - y[k])
	}
	p.Objective = func(y []float64) float64 { return cost * y[np] }
	p.Grad = func(y, grad []float64) {
		clear(grad)
		grad[np] = cost
	}
	p.Constraints = func(y, c []float64) {
		c[0] = y[np] - y[0]*cur(y, 1)
		for k := 1; k <= n; k++ {
			c[k] = y[k] * (cur(y, k) - cur(y, k+1))
		}
	}
	// Row 0: (0, p), (0, v_0), (0, v_1); row k: (k, v_{k−1}), (k, v_k), (k, v_{k+1}).
	p.JacRows, p.JacCols = []int{0, 0, 0}, []int{np, 0, 1}
	for k := 1; k <= n; k++ {
		for j := k - 1; j <= min(k+1, n); j++ {
			p.JacRows, p.JacCols = append(p.JacRows, k), append(p.JacCols, j)
		}
	}
	p.Jacobian = func(y, v []float64) {
		v[0], v[1], v[2] = 1, -g[1]*(2*y[0]-y[1]), g[1]*y[0]
		q := 3
		for k := 1; k <= n; k++ {
			v[q], v[q+1] = y[k]*g[k], cur(y, k)-cur(y, k+1)-y[k]*(g[k]+g[k+1])
			q += 2
			if k < n {
				v[q] = y[k] * g[k+1]
				q++
			}
		}
	}
	// The diagonal (v_k, v_k) and the subdiagonal (v_k, v_{k−1}).
	for k := range n + 1 {
		p.HessRows, p.HessCols = append(p.HessRows, k), append(p.HessCols, k)
	}
	for k := 1; k <= n; k++ {
		p.HessRows, p.HessCols = append(p.HessRows, k), append(p.HessCols, k-1)
	}
	p.Hessian = func(y []float64, sigma float64, lambda, v []float64) {
		v[0] = -2 * g[1] * lambda[0]
		for k := 1; k <= n; k++ {
			v[k] = -2 * (g[k] + g[k+1]) * lambda[k]
			v[n+k] = g[k] * (lambda[k] + lambda[k-1])
		}
	}
	return p
}

// TestDCFeederDerivatives checks dcFeeder's Jacobian and Hessian of the
// Lagrangian against central finite differences.
func TestDCFeederDerivatives(t *testing.T) {
	p := dcFeeder(5, 3)
	y := []float64{1, 0.97, 0.95, 0.96, 0.93, 0.92, 0.4}
	lambda := []float64{0.5, -1, 2, 0.3, -0.7, 1.1}
	vals := make([]float64, len(p.JacRows))
	p.Jacobian(y, vals)
	jac := mat.NewDense(p.M, p.N, nil)
	for e, r := range p.JacRows {
		jac.Set(r, p.JacCols[e], jac.At(r, p.JacCols[e])+vals[e])
	}
	fdJac := mat.NewDense(p.M, p.N, nil)
	fd.Jacobian(fdJac, func(c, y []float64) { p.Constraints(y, c) }, y, &fd.JacobianSettings{Formula: fd.Central})
	assert.True(t, mat.EqualApprox(jac, fdJac, 1e-6), "∂g/∂y\n%v\n%v", mat.Formatted(jac), mat.Formatted(fdJac))

	hv := make([]float64, len(p.HessRows))
	p.Hessian(y, 1, lambda, hv)
	hess := mat.NewDense(p.N, p.N, nil)
	for e, r := range p.HessRows {
		c := p.HessCols[e]
		hess.Set(r, c, hess.At(r, c)+hv[e])
		if r != c {
			hess.Set(c, r, hess.At(c, r)+hv[e])
		}
	}
	lagGrad := func(out, y []float64) {
		p.Grad(y, out)
		v := make([]float64, len(p.JacRows))
		p.Jacobian(y, v)
		for e, r := range p.JacRows {
			out[p.JacCols[e]] += lambda[r] * v[e]
		}
	}
	fdHess := mat.NewDense(p.N, p.N, nil)
	fd.Jacobian(fdHess, lagGrad, y, &fd.JacobianSettings{Formula: fd.Central})
	assert.True(t, mat.EqualApprox(hess, fdHess, 1e-6), "∇²L\n%v\n%v", mat.Formatted(hess), mat.Formatted(fdHess))
}

// TestSolveSparseDCFeeder is the regression test of issue 56's stalls on
// MATPOWER's distribution feeders: on this 5-node feeder the earlier ℓ₁
// merit line search, its penalty ν ≥ 1.1·‖λ‖∞ weighting the rounding of c
// (and the growth of ‖c‖₁ along curved steps), cut every step short and
// with it the multipliers' step: 851 iterations at cost 1, the iteration
// limit at cost 100. The filter line search converges in a few
// iterations, to the same point for every cost.
func TestSolveSparseDCFeeder(t *testing.T) {
	const pStar = 0.08538591144 // p at the feasible point, from these runs
	for _, cost := range []float64{1, 100, 1e4} {
		t.Run(fmt.Sprint(cost), func(t *testing.T) {
			p := dcFeeder(5, cost)
			init := []float64{1, 1, 1, 1, 1, 1, 5}
			res, err := SolveSparse(p, init, &Settings{Tol: 1e-8, FeasTol: 1e-10})
			require.NoError(t, err)
			require.Equal(t, Success, res.Status, "after %d iterations", res.Iterations)
			assert.LessOrEqual(t, res.Iterations, 15)
			assert.LessOrEqual(t, res.MaxViolation, 1e-10)
			assert.LessOrEqual(t, res.Stationarity, 1e-8)
			assert.InEpsilon(t, pStar, res.Objective/cost, 1e-9)
			// p covers the loads and the losses.
			assert.Greater(t, res.Y[6], 0.085)
		})
	}
}
