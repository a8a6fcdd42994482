package acopf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/solvers"
)

// TestNearestPointNLP checks the nearest-point problem on case57: its
// objective, gradient (finite differences) and Hessian of the Lagrangian
// (finite differences of the Lagrangian's gradient), its constraints and
// bounds (those of NLP without line limits), its errors; and that its
// solution by the pure-Go interior-point method from a perturbed optimum is
// feasible and no farther from ŷ than AdaNP's projection of the same
// point (which is feasible too, and within 1 % of that distance).
func TestNearestPointNLP(t *testing.T) {
	c, err := Load("case57_ieee")
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	opt, err := ReferenceOptimum("case57_ieee")
	require.NoError(t, err)
	nx, ny := m.Dims()
	x := m.Loads()
	rng := rand.New(rand.NewPCG(5, 6))
	yhat := make([]float64, ny)
	m.Perturb(yhat, opt.Y, Perturbation{Vm: 0.01, Va: 0.01, PQ: 0.01}, rng)
	w := randVec(ny, rng)
	for i := range w {
		w[i] = 0.5 + math.Abs(w[i])
	}

	p, err := m.NearestPointNLP(x, yhat, w)
	require.NoError(t, err)
	require.NoError(t, p.Validate(yhat))
	base, err := m.NLP(x, Formulation{NoFlowLimits: true, NoAngleLimits: true})
	require.NoError(t, err)
	assert.Equal(t, base.M, p.M)
	assert.Equal(t, base.Lower, p.Lower)
	assert.Equal(t, base.Upper, p.Upper)
	assert.Equal(t, base.GLower, p.GLower)
	assert.Equal(t, base.GUpper, p.GUpper)
	_, _, npf := m.PowerFlow().Dims()
	assert.Equal(t, npf, p.M, "the power flow only")

	y := opt.Y
	var want float64
	for i := range y {
		want += w[i] * (y[i] - yhat[i]) * (y[i] - yhat[i]) / 2
	}
	assert.InDelta(t, want, p.Objective(y), 1e-12*want)
	grad := make([]float64, ny)
	p.Grad(y, grad)
	assertClose(t, fd.Gradient(nil, p.Objective, y, &fd.Settings{Formula: fd.Central}), grad, 1e-6, "∇f")

	sigma := 0.7
	lambda := randVec(p.M, rng)
	hv := make([]float64, len(p.HessRows))
	p.Hessian(y, sigma, lambda, hv)
	hess := make([]float64, ny*ny)
	for e, r := range p.HessRows {
		cc := p.HessCols[e]
		hess[r*ny+cc] += hv[e]
		if r != cc {
			hess[cc*ny+r] += hv[e]
		}
	}
	lagGrad := func(out, z []float64) {
		p.Grad(z, out)
		floats.Scale(sigma, out)
		v := make([]float64, len(p.JacRows))
		p.Jacobian(z, v)
		for e, r := range p.JacRows {
			out[p.JacCols[e]] += lambda[r] * v[e]
		}
	}
	assertClose(t, centralJacobian(ny, lagGrad, y), hess, 1e-5, "∇²L")

	_, err = m.NearestPointNLP(x, yhat[1:], nil)
	assert.ErrorContains(t, err, "len(ŷ)")
	_, err = m.NearestPointNLP(x, yhat, w[1:])
	assert.ErrorContains(t, err, "len(w)")
	w[3] = 0
	_, err = m.NearestPointNLP(x, yhat, w)
	assert.ErrorContains(t, err, "w[3] = 0")
	_, err = m.NearestPointNLP(x[1:], yhat, nil)
	assert.ErrorContains(t, err, "len(x)")

	// The orthogonal nearest point against AdaNP's projection.
	p, err = m.NearestPointNLP(x, yhat, nil)
	require.NoError(t, err)
	res, err := solvers.SolveSparse(p, yhat, &solvers.Settings{Tol: 1e-8, FeasTol: 1e-9})
	require.NoError(t, err)
	require.Equal(t, solvers.Success, res.Status)
	con, err := m.Constraint()
	require.NoError(t, err)
	a, err := enforce.NewAdaNP(con, enforce.Settings{Path: enforce.PathSparse})
	require.NoError(t, err)
	proj, st, err := a.Project(mat.NewDense(1, nx, x), mat.NewDense(1, ny, yhat))
	require.NoError(t, err)
	require.True(t, st.Converged(), "%v", st)
	for _, yy := range [][]float64{res.Y, proj.RawRowView(0)} {
		pf, lim := feasibility(m, x, yy)
		assert.LessOrEqual(t, pf, 1e-6)
		assert.LessOrEqual(t, lim, 1e-6)
	}
	dRef, dOurs := floats.Distance(res.Y, yhat, 2), floats.Distance(proj.RawRowView(0), yhat, 2)
	t.Logf("‖y−ŷ‖: nearest point %.6g, AdaNP %.6g", dRef, dOurs)
	assert.LessOrEqual(t, dRef, dOurs*(1+1e-6))
	assert.LessOrEqual(t, dOurs, dRef*1.01)
}

// feasibility returns the power flow's max|c| and the largest limit
// violation at y.
func feasibility(m *Model, x, y []float64) (pf, lim float64) {
	_, _, npf := m.PowerFlow().Dims()
	_, _, nl := m.Inequalities().Dims()
	c, g := make([]float64, npf), make([]float64, nl)
	m.PowerFlow().Eval(x, y, c, nil)
	m.Inequalities().Eval(x, y, g, nil)
	return floats.Norm(c, math.Inf(1)), math.Max(0, floats.Max(g))
}

// TestPerturb checks Perturbation's rules on case1354: σ = 0 gives y back,
// dst may be y, a zero injection stays zero, and the relative (Vm, Pg,
// Qg) and absolute (Va) deviations have standard deviation σ; a wrong
// length panics.
func TestPerturb(t *testing.T) {
	c, err := Load("case1354_pegase")
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	opt, err := ReferenceOptimum("case1354_pegase")
	require.NoError(t, err)
	_, ny := m.Dims()
	nb, ng := len(c.Buses), len(c.Gens)
	rng := rand.New(rand.NewPCG(7, 8))
	y := append([]float64(nil), opt.Y...)
	m.Perturb(y, y, Perturbation{}, rng)
	assert.Equal(t, opt.Y, y)

	const sigma = 0.02
	dst := make([]float64, ny)
	m.Perturb(dst, opt.Y, Perturbation{Vm: sigma, Va: 2 * sigma, PQ: 3 * sigma}, rng)
	var vm, va, pq []float64
	for i, v := range opt.Y {
		switch {
		case i < nb:
			vm = append(vm, dst[i]/v-1)
		case i < 2*nb:
			va = append(va, dst[i]-v)
		case v == 0:
			assert.Zero(t, dst[i], "a zero injection stays zero")
		default:
			pq = append(pq, dst[i]/v-1)
		}
	}
	require.Greater(t, len(pq), ng/2)
	for _, tc := range []struct {
		name string
		d    []float64
		want float64
	}{{"Vm", vm, sigma}, {"Va", va, 2 * sigma}, {"Pg, Qg", pq, 3 * sigma}} {
		mean, sd := stat.MeanStdDev(tc.d, nil)
		assert.InDelta(t, 0, mean, 4*tc.want/math.Sqrt(float64(len(tc.d))), tc.name)
		assert.InDelta(t, tc.want, sd, 0.1*tc.want, tc.name)
	}
	assert.Panics(t, func() { m.Perturb(dst[1:], opt.Y, Perturbation{}, rng) })
}

// TestConstraintSparsePath checks that the power flow extended by the
// limits (Model.Constraint, WithInequalities) keeps the sparse Jacobian
// pattern, one row with one entry per pinned variable (case57_ieee has
// three generators with Pmin = Pmax, case1354_pegase none) and one row
// per other limit with two entries (the bound's column and its
// multiplier), and that PathAuto takes the sparse path for it.
func TestConstraintSparsePath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pinned int
	}{{"case57_ieee", 3}, {"case1354_pegase", 0}} {
		name := tc.name
		c, err := Load(name)
		require.NoError(t, err)
		m, err := NewModel(c)
		require.NoError(t, err)
		con, err := m.Constraint()
		require.NoError(t, err)
		sp := con.(enforce.Capable).Capabilities().Sparse
		require.NotNil(t, sp, name)
		_, _, npf := m.PowerFlow().Dims()
		_, _, nl := m.Inequalities().Dims()
		np := 0
		if p := m.Pinned(); p != nil {
			_, _, np = p.Dims()
		}
		require.Equal(t, tc.pinned, np, name)
		nFree := nl - 2*np
		rowPtr, _ := m.PowerFlow().Pattern()
		require.Len(t, sp.RowPtr, npf+np+nFree+1)
		assert.Equal(t, rowPtr[npf]+np+2*nFree, sp.RowPtr[npf+np+nFree], "%s: nonzeros", name)
		_, nye, _ := con.Dims()
		_, ny := m.Dims()
		assert.Equal(t, ny+nFree, nye, "%s: one multiplier per free limit", name)
		a, err := enforce.NewAdaNP(con, enforce.Settings{})
		require.NoError(t, err)
		assert.Equal(t, enforce.PathSparse, a.Path(), name)
	}
}
