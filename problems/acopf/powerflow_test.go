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

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/solvers"
)

// assertClose asserts |got_i − want_i| ≤ tol·(1 + |want_i|) elementwise.
func assertClose(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	bad := 0
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol*(1+math.Abs(want[i]))) {
			if bad < 5 {
				assert.Failf(t, "mismatch", "%s[%d]: got %.17g, want %.17g (tol %g)", what, i, got[i], want[i], tol)
			}
			bad++
		}
	}
	assert.Zero(t, bad, "%s: entries out of tolerance", what)
}

// centralJacobian returns the central finite-difference Jacobian of f
// (m outputs) at z as a row-major m×len(z) slice.
func centralJacobian(m int, f func(out, z []float64), z []float64) []float64 {
	dst := mat.NewDense(m, len(z), nil)
	fd.Jacobian(dst, f, z, &fd.JacobianSettings{Formula: fd.Central})
	return dst.RawMatrix().Data
}

// randomPoint returns loads scaled around the case's and an operating
// point y with Vm ∈ [0.9, 1.1], Va ∈ [−0.3, 0.3], Pg, Qg ∈ [−1, 1].
func randomPoint(m *Model, rng *rand.Rand) (x, y []float64) {
	x = m.Loads()
	for i := range x {
		x[i] *= 0.5 + rng.Float64()
	}
	_, ny := m.Dims()
	nb := len(m.Case.Buses)
	y = make([]float64, ny)
	for i := range ny {
		switch {
		case i < nb:
			y[i] = 0.9 + 0.2*rng.Float64()
		case i < 2*nb:
			y[i] = 0.6*rng.Float64() - 0.3
		default:
			y[i] = 2*rng.Float64() - 1
		}
	}
	return x, y
}

func randVec(n int, rng *rand.Rand) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// checkDerivatives compares every derivative c declares at (x, y) with
// central finite differences, and its sparse values with its dense
// Jacobian, using random weights w and direction v.
func checkDerivatives(t *testing.T, c enforce.Constraint, x, y []float64, rng *rand.Rand, tol float64) {
	t.Helper()
	nx, ny, nc := c.Dims()
	k := enforce.CapabilitiesOf(c)
	require.NotNil(t, k.Sparse)
	require.NotNil(t, k.JacobianX)
	require.NotNil(t, k.HessVec)
	require.NotNil(t, k.MixedHessVec)
	w, v := randVec(nc, rng), randVec(ny, rng)

	cv, jy := make([]float64, nc), make([]float64, nc*ny)
	c.Eval(x, y, cv, jy)
	c2 := make([]float64, nc)
	c.Eval(x, y, c2, nil)
	assert.Equal(t, cv, c2, "Eval with and without Jacobian")

	// The sparse values in the pattern, and zeros outside it.
	sp := k.Sparse
	vals := make([]float64, sp.RowPtr[nc])
	c3 := make([]float64, nc)
	sp.Eval(x, y, c3, vals)
	assert.Equal(t, cv, c3, "sparse Eval's c")
	dense := make([]float64, nc*ny)
	for i := range nc {
		for p := sp.RowPtr[i]; p < sp.RowPtr[i+1]; p++ {
			dense[i*ny+sp.Col[p]] = vals[p]
		}
	}
	assert.Equal(t, jy, dense, "sparse values scattered = dense Jacobian")

	want := centralJacobian(nc, func(out, z []float64) { c.Eval(x, z, out, nil) }, y)
	assertClose(t, want, jy, tol, "∂c/∂y")

	jx := make([]float64, nc*nx)
	k.JacobianX(x, y, jx)
	assertClose(t, centralJacobian(nc, func(out, z []float64) { c.Eval(z, y, out, nil) }, x), jx, tol, "∂c/∂x")
	if sp.JacobianXTVec != nil {
		got := make([]float64, nx)
		sp.JacobianXTVec(x, y, w, got)
		wantT := make([]float64, nx)
		mat.NewVecDense(nx, wantT).MulVec(mat.NewDense(nc, nx, jx).T(), mat.NewVecDense(nc, w))
		assertClose(t, wantT, got, 1e-14, "(∂c/∂x)ᵀw")
	}

	// jacT returns J(x', y')ᵀw.
	jacT := func(xx, yy []float64) []float64 {
		j := make([]float64, nc*ny)
		c.Eval(xx, yy, make([]float64, nc), j)
		out := make([]float64, ny)
		mat.NewVecDense(ny, out).MulVec(mat.NewDense(nc, ny, j).T(), mat.NewVecDense(nc, w))
		return out
	}
	got := make([]float64, ny)
	k.HessVec(x, y, w, v, got)
	wantH := centralJacobian(ny, func(out, s []float64) {
		yy := append([]float64(nil), y...)
		floats.AddScaled(yy, s[0], v)
		copy(out, jacT(x, yy))
	}, []float64{0})
	assertClose(t, wantH, got, tol, "Σ w_i ∇²_yy c_i v")

	gotM := make([]float64, nx)
	k.MixedHessVec(x, y, w, v, gotM)
	wantM := fd.Gradient(nil, func(z []float64) float64 {
		return floats.Dot(jacT(z, y), v)
	}, x, &fd.Settings{Formula: fd.Central})
	assertClose(t, wantM, gotM, tol, "Σ w_i ∇²_xy c_i v")
}

func TestPowerFlowDerivatives(t *testing.T) {
	for _, name := range []string{"pglib_opf_case57_ieee", "pglib_opf_case118_ieee", "matpower6_case57"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name == "pglib_opf_case118_ieee" {
				t.Skip("-short: case57 only")
			}
			c, err := Load(name)
			require.NoError(t, err)
			m, err := NewModel(c)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(1, 2))
			x, y := randomPoint(m, rng)
			checkDerivatives(t, m.PowerFlow(), x, y, rng, 1e-6)
			checkDerivatives(t, m.Inequalities(), x, y, rng, 1e-6)

			// The objective's gradient.
			grad := make([]float64, len(y))
			m.ObjectiveGrad(y, grad)
			want := fd.Gradient(nil, m.Objective, y, &fd.Settings{Formula: fd.Central})
			assertClose(t, want, grad, 1e-6, "∇f")

			// The pattern passes enforce's checks; the FB system builds.
			_, err = enforce.NewAdaNP(m.PowerFlow(), enforce.Settings{})
			require.NoError(t, err)
			_, err = m.Constraint()
			require.NoError(t, err)
		})
	}
}

// TestProjectOntoPowerFlow projects MATPOWER 6.0 case57's own operating
// point (the file's slack generator output is not balanced: max|c| > 1)
// onto the power-flow equations with AdaNP's dense path, and checks the
// residual.
func TestProjectOntoPowerFlow(t *testing.T) {
	c, err := Load("matpower6_case57")
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	a, err := enforce.NewAdaNP(m.PowerFlow(), enforce.Settings{Tol: 1e-9, MaxDepth: 20})
	require.NoError(t, err)
	nx, ny := m.Dims()
	x := mat.NewDense(1, nx, m.Loads())
	y0 := m.OperatingPoint()
	yp, st, err := a.Project(x, mat.NewDense(1, ny, y0))
	require.NoError(t, err)
	assert.Greater(t, st.Before.Max, 1.0)
	assert.LessOrEqual(t, st.After.Max, 1e-9)
	nc := 2*len(c.Buses) + 1
	cv := make([]float64, nc)
	m.PowerFlow().Eval(m.Loads(), yp.RawRowView(0), cv, nil)
	assert.LessOrEqual(t, floats.Norm(cv, math.Inf(1)), 1e-9)
}

// TestPowerFlowConcurrent evaluates from several goroutines at once (run
// with -race): results equal the serial ones.
func TestPowerFlowConcurrent(t *testing.T) {
	c, err := Load("case118_ieee")
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	pf := m.PowerFlow()
	_, ny, nc := pf.Dims()
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := randomPoint(m, rng)
	want, wantJ := make([]float64, nc), make([]float64, nc*ny)
	pf.Eval(x, y, want, wantJ)
	done := make(chan bool)
	for range 4 {
		go func() {
			ok := true
			for range 20 {
				got, gotJ := make([]float64, nc), make([]float64, nc*ny)
				pf.Eval(x, y, got, gotJ)
				ok = ok && floats.Equal(got, want) && floats.Equal(gotJ, wantJ)
			}
			done <- ok
		}()
	}
	for range 4 {
		assert.True(t, <-done)
	}
}

// BenchmarkPowerFlow evaluates c and the Jacobian's values (sparse), and
// the curvature product, on the shipped grids.
func BenchmarkPowerFlow(b *testing.B) {
	for _, name := range []string{"case118_ieee", "case1354_pegase", "case10000_goc"} {
		c, err := Load(name)
		require.NoError(b, err)
		m, err := NewModel(c)
		require.NoError(b, err)
		pf := m.PowerFlow()
		_, ny, nc := pf.Dims()
		rng := rand.New(rand.NewPCG(7, 8))
		x, y := randomPoint(m, rng)
		rowPtr, _ := pf.Pattern()
		cv, vals := make([]float64, nc), make([]float64, rowPtr[nc])
		b.Run(name+"/EvalSparse", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				pf.EvalSparse(x, y, cv, vals)
			}
		})
		w, v, out := randVec(nc, rng), randVec(ny, rng), make([]float64, ny)
		hv := pf.Capabilities().HessVec
		b.Run(name+"/HessVec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				hv(x, y, w, v, out)
			}
		})
	}
}

// TestProjectPerturbedOptimum perturbs case57's optimum without line
// limits (solved by solvers.SolveSparse) by 1 % (each entry of y times
// 1 + 0.01·N(0, 1)) and projects ten such points onto the power flow and
// the voltage and generation limits (Model.Constraint, dense path): the
// power flow then holds to 1e-6 p.u. and the limits to 1e-6.
func TestProjectPerturbedOptimum(t *testing.T) {
	c, err := Load("case57_ieee")
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	p, err := m.NLP(m.Loads(), Formulation{NoFlowLimits: true, NoAngleLimits: true})
	require.NoError(t, err)
	opt, err := solvers.SolveSparse(p, m.FlatStart(), nil)
	require.NoError(t, err)
	require.Equal(t, solvers.Success, opt.Status)

	con, err := m.Constraint()
	require.NoError(t, err)
	a, err := enforce.NewAdaNP(con, enforce.Settings{Tol: 1e-6, MaxDepth: 50})
	require.NoError(t, err)
	nx, ny := m.Dims()
	const n = 10
	rng := rand.New(rand.NewPCG(9, 10))
	x, y := mat.NewDense(n, nx, nil), mat.NewDense(n, ny, nil)
	for i := range n {
		x.SetRow(i, m.Loads())
		for j := range ny {
			y.Set(i, j, opt.Y[j]*(1+0.01*rng.NormFloat64()))
		}
	}
	proj, st, err := a.Project(x, y)
	require.NoError(t, err)
	assert.True(t, st.Converged(), "%v", st)
	assert.Greater(t, st.Before.Max, 0.1)
	_, _, npf := m.PowerFlow().Dims()
	_, _, nl := m.Inequalities().Dims()
	cv, g := make([]float64, npf), make([]float64, nl)
	for i := range n {
		m.PowerFlow().Eval(m.Loads(), proj.RawRowView(i), cv, nil)
		assert.LessOrEqual(t, floats.Norm(cv, math.Inf(1)), 1e-6)
		m.Inequalities().Eval(m.Loads(), proj.RawRowView(i), g, nil)
		assert.LessOrEqual(t, floats.Max(g), 1e-6)
	}
}
