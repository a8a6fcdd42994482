package solvers

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/problems"
)

// equalityQP is min ½‖y‖² − aᵀy s.t. Ey = e, whose solution is
// y* = a − Eᵀ(EEᵀ)⁻¹(Ea − e).
func equalityQP(a []float64, e *mat.Dense, rhs []float64) (NLP, []float64) {
	m, n := e.Dims()
	p := NLP{
		N: n, M: m,
		Objective: func(y []float64) float64 { return 0.5*floats.Dot(y, y) - floats.Dot(a, y) },
		Grad:      func(y, g []float64) { floats.SubTo(g, y, a) },
		Constraints: func(y, c, jac []float64) {
			mat.NewVecDense(m, c).MulVec(e, mat.NewVecDense(n, y))
			floats.Sub(c, rhs)
			if jac != nil {
				copy(jac, e.RawMatrix().Data)
			}
		},
		Hessian: func(_, _, h []float64) {
			clear(h)
			for i := range n {
				h[i*n+i] = 1
			}
		},
	}
	var eet mat.SymDense
	eet.SymOuterK(1, e)
	r := mat.NewVecDense(m, nil)
	r.MulVec(e, mat.NewVecDense(n, a))
	r.SubVec(r, mat.NewVecDense(m, rhs))
	var chol mat.Cholesky
	chol.Factorize(&eet)
	var mu mat.VecDense
	_ = chol.SolveVecTo(&mu, r)
	want := mat.NewVecDense(n, append([]float64(nil), a...))
	var et mat.VecDense
	et.MulVec(e.T(), &mu)
	want.SubVec(want, &et)
	return p, want.RawVector().Data
}

// TestSolve runs the SQP on problems with known or checkable solutions.
func TestSolve(t *testing.T) {
	e := mat.NewDense(2, 4, []float64{1, 2, 0, -1, 0, 1, 1, 1})
	qp, want := equalityQP([]float64{1, -2, 3, 0.5}, e, []float64{1, -1})
	res, err := Solve(qp, []float64{5, 5, 5, 5}, nil)
	require.NoError(t, err)
	assert.Equal(t, Success, res.Status)
	assert.InDeltaSlice(t, want, res.Y, 1e-10, "equality QP: closed form")
	assert.LessOrEqual(t, res.Iterations, 2, "a QP takes one Newton step")

	lin, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	quad, err := problems.NewNonconvexQuadratic(20, 8, 1)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		nlp  func(x []float64) NLP
		xs   *mat.Dense
	}{
		{"linear", func(x []float64) NLP { return Linear(lin, x) }, lin.SampleX(5, 2)},
		{"quadratic", func(x []float64) NLP { return Quadratic(quad, x) }, quad.SampleX(5, 2)},
	} {
		for i := range 5 {
			p := tc.nlp(tc.xs.RawRowView(i))
			y0, err := LeastNormStart(p)
			require.NoError(t, err)
			c := make([]float64, p.M)
			p.Constraints(y0, c, nil)
			assert.Less(t, floats.Norm(c, math.Inf(1)), 1e-9, "%s %d: the start is feasible", tc.name, i)
			res, err := Solve(p, y0, nil)
			require.NoError(t, err)
			require.Equal(t, Success, res.Status, "%s %d", tc.name, i)
			assert.LessOrEqual(t, res.MaxViolation, DefaultFeasTol)
			assert.LessOrEqual(t, res.Stationarity, DefaultTol)
			assert.LessOrEqual(t, res.Objective, p.Objective(y0)+1e-12, "%s %d: no worse than the start", tc.name, i)
			assert.InDelta(t, p.Objective(res.Y), res.Objective, 1e-12)
			checkSecondOrder(t, p, res)
		}
	}
}

// checkSecondOrder asserts that the reduced Hessian of the Lagrangian at
// the solution is positive semidefinite (a local minimum, not a saddle).
func checkSecondOrder(t *testing.T, p NLP, res *Result) {
	t.Helper()
	h := make([]float64, p.N*p.N)
	p.Hessian(res.Y, res.Lambda, h)
	jac := make([]float64, p.M*p.N)
	p.Constraints(res.Y, make([]float64, p.M), jac)
	var svd mat.SVD
	require.True(t, svd.Factorize(mat.NewDense(p.M, p.N, jac), mat.SVDFull))
	var v mat.Dense
	svd.VTo(&v)
	z := v.Slice(0, p.N, p.M, p.N)
	var hz, red mat.Dense
	hz.Mul(mat.NewDense(p.N, p.N, h), z)
	red.Mul(z.T(), &hz)
	k, _ := red.Dims()
	sym := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			sym.SetSym(i, j, 0.5*(red.At(i, j)+red.At(j, i)))
		}
	}
	var eig mat.EigenSym
	require.True(t, eig.Factorize(sym, false))
	assert.GreaterOrEqual(t, floats.Min(eig.Values(nil)), -1e-8, "reduced Hessian PSD")
}

// TestSolveAll checks that the parallel driver returns results in order
// and equal to serial solves.
func TestSolveAll(t *testing.T) {
	lin, err := problems.NewNonconvexLinear(12, 5, 3)
	require.NoError(t, err)
	xs := lin.SampleX(7, 4)
	build := func(i int) (NLP, []float64, error) {
		p := Linear(lin, xs.RawRowView(i))
		y0, err := LeastNormStart(p)
		return p, y0, err
	}
	all, err := SolveAll(SQP{}, 7, 3, build)
	require.NoError(t, err)
	for i, r := range all {
		p, y0, _ := build(i)
		one, err := Solve(p, y0, nil)
		require.NoError(t, err)
		assert.Equal(t, one.Y, r.Y, "instance %d", i)
	}
}

// TestErrors checks malformed problems and non-convergence statuses.
func TestErrors(t *testing.T) {
	e := mat.NewDense(1, 2, []float64{1, 1})
	qp, _ := equalityQP([]float64{1, 2}, e, []float64{1})
	_, err := Solve(qp, []float64{1}, nil)
	assert.Error(t, err, "wrong length")
	_, err = Solve(qp, []float64{math.NaN(), 0}, nil)
	assert.Error(t, err, "NaN start")
	bad := qp
	bad.Hessian = nil
	_, err = Solve(bad, []float64{0, 0}, nil)
	assert.Error(t, err, "nil callback")
	bad = qp
	bad.M = 3
	_, err = Solve(bad, []float64{0, 0}, nil)
	assert.Error(t, err, "M > N")

	nan := qp
	nan.Objective = func([]float64) float64 { return math.NaN() }
	res, err := Solve(nan, []float64{0, 0}, nil)
	require.NoError(t, err)
	assert.Equal(t, NumericalFailure, res.Status)

	lin, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	p := Linear(lin, lin.SampleX(1, 1).RawRowView(0))
	res, err = Solve(p, make([]float64, 20), &Settings{MaxIterations: 1})
	require.NoError(t, err)
	assert.Equal(t, IterationLimit, res.Status)
	assert.Equal(t, "IterationLimit", res.Status.String())
}

// TestQuadraticOptimumRange solves instances of the quadratic benchmark at
// the paper's sizes (N_O = 100) and checks that the mean optimum lies in
// the range of the paper's IPOPT optima, −11.7 … −29.5 (with a margin of
// 2 for the spread over instances): the calibration of
// problems.QuadraticGamma.
func TestQuadraticOptimumRange(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 4 × 3 instances with N_O = 100 (about 10 s)")
	}
	for _, nc := range []int{10, 30, 50} {
		p, err := problems.NewNonconvexQuadratic(100, nc, 1)
		require.NoError(t, err)
		xs := p.SampleX(4, 1)
		res, err := SolveAll(SQP{}, 4, 0, func(i int) (NLP, []float64, error) {
			nlp := Quadratic(p, xs.RawRowView(i))
			y0, err := LeastNormStart(nlp)
			return nlp, y0, err
		})
		require.NoError(t, err)
		mean := 0.0
		for _, r := range res {
			require.Equal(t, Success, r.Status)
			mean += r.Objective / 4
		}
		t.Logf("(100, %d): mean optimum %.2f", nc, mean)
		assert.True(t, mean >= -31.5 && mean <= -9.7, "(100, %d): mean optimum %.2f outside the paper's range", nc, mean)
	}
}

// TestStallStops checks the exit for steps that no longer change the
// merit: on this paper-family instance SQP reaches stationarity 1.3e-8,
// a little above Tol = 1e-8, where its steps only move y by rounding. It
// must stop there with LineSearchFailure after a few iterations (it used
// to run to MaxIterations, 65 evaluations per iteration), at the point a
// looser Tol certifies, and report that point's stationarity.
func TestStallStops(t *testing.T) {
	lin, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	nlp := Linear(lin, lin.SampleX(3, 201).RawRowView(2))
	y0, err := LeastNormStart(nlp)
	require.NoError(t, err)
	r, err := Solve(nlp, y0, nil)
	require.NoError(t, err)
	assert.Equal(t, LineSearchFailure, r.Status)
	assert.Less(t, r.Iterations, 30)
	assert.Greater(t, r.Stationarity, DefaultTol)
	assert.Less(t, r.Stationarity, 1e-6)
	assert.Less(t, r.MaxViolation, 1e-12)
	loose, err := Solve(nlp, y0, &Settings{Tol: 1e-6})
	require.NoError(t, err)
	require.Equal(t, Success, loose.Status)
	assert.InDelta(t, loose.Objective, r.Objective, 1e-12)
}
