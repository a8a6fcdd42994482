package acopf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// TestPinned checks the pinned variables: case57_ieee's three generators
// with Pmin = Pmax are rows y_k − b_k with exact derivatives, the model's
// Limits keep their two bounds, and case1354_pegase has none.
func TestPinned(t *testing.T) {
	c, err := Load("case57_ieee")
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	p := m.Pinned()
	require.NotNil(t, p)
	nx, ny := m.Dims()
	nb := len(c.Buses)
	var cols []int
	var bounds []float64
	for j, g := range c.Gens {
		if g.Pmin == g.Pmax {
			cols, bounds = append(cols, 2*nb+j), append(bounds, g.Pmin)
		}
	}
	require.Len(t, cols, 3)
	pnx, pny, np := p.Dims()
	require.Equal(t, []int{nx, ny, 3}, []int{pnx, pny, np})

	rng := rand.New(rand.NewPCG(5, 6))
	x, y := randomPoint(m, rng)
	cv, jy := make([]float64, np), make([]float64, np*ny)
	p.Eval(x, y, cv, jy)
	for r, k := range cols {
		assert.Equal(t, y[k]-bounds[r], cv[r], "row %d", r)
		for j := range ny {
			want := 0.0
			if j == k {
				want = 1
			}
			assert.Equal(t, want, jy[r*ny+j], "row %d, column %d", r, j)
		}
	}
	checkDerivatives(t, p, x, y, rng, 1e-6)
	assert.Panics(t, func() { p.Eval(x, y[1:], cv, nil) })
	assert.Panics(t, func() { p.Eval(x, y, cv, jy[1:]) })

	// Limits keeps every finite bound, the pinned ones included.
	_, _, nl := m.Inequalities().Dims()
	all, err := NewLimits(c, nx)
	require.NoError(t, err)
	_, _, want := all.Dims()
	assert.Equal(t, want, nl)

	c, err = Load("case1354_pegase")
	require.NoError(t, err)
	m, err = NewModel(c)
	require.NoError(t, err)
	assert.Nil(t, m.Pinned())
	nx, _ = m.Dims()
	p, err = NewPinned(c, nx)
	require.NoError(t, err)
	assert.Nil(t, p)

	// A case whose every bound is pinned: the constraint has no
	// inequality left, and no multiplier.
	c, err = Load("case57_ieee")
	require.NoError(t, err)
	for i := range c.Buses {
		c.Buses[i].Vmin = c.Buses[i].Vmax
	}
	for j := range c.Gens {
		c.Gens[j].Pmin, c.Gens[j].Qmin = c.Gens[j].Pmax, c.Gens[j].Qmax
	}
	m, err = NewModel(c)
	require.NoError(t, err)
	con, err := m.Constraint()
	require.NoError(t, err)
	_, nye, nce := con.Dims()
	_, ny = m.Dims()
	_, _, npf := m.PowerFlow().Dims()
	assert.Equal(t, []int{ny, npf + len(c.Buses) + 2*len(c.Gens)}, []int{nye, nce})
	assert.Zero(t, enforce.CapabilitiesOf(con).Latent)

	_, err = NewPinned(&Case{Name: "empty"}, 0)
	assert.ErrorContains(t, err, "0 buses")
	_, err = NewPinned(&Case{Name: "nan", Buses: []Bus{{Vmin: math.NaN(), Vmax: 1}}}, 0)
	assert.ErrorContains(t, err, "NaN bound")
}

// TestConstraintWith checks Model.ConstraintWith: its errors, that FBEps
// 0 means FBEpsilon (Model.Constraint), that the pinned variables are
// equalities, and that with ProjectionFBEpsilon AdaNP projects perturbed
// optima of case57_ieee (three pinned generators) and case1354_pegase onto
// the power flow and the limits in at most ten steps.
func TestConstraintWith(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxDepth int
	}{{"case57_ieee", 10}, {"case1354_pegase", 10}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.name)
			require.NoError(t, err)
			m, err := NewModel(c)
			require.NoError(t, err)
			for _, eps := range []float64{-1, math.NaN(), math.Inf(1)} {
				_, err := m.ConstraintWith(ConstraintOptions{FBEps: eps})
				assert.ErrorContains(t, err, "FBEps", "%v", eps)
			}

			// FBEps 0 is FBEpsilon, and ProjectionFBEpsilon differs only in
			// the Fischer–Burmeister rows.
			def, err := m.Constraint()
			require.NoError(t, err)
			same, err := m.ConstraintWith(ConstraintOptions{FBEps: FBEpsilon})
			require.NoError(t, err)
			proj, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon})
			require.NoError(t, err)
			nx, nye, nce := def.Dims()
			rng := rand.New(rand.NewPCG(7, 8))
			x, y := randomPoint(m, rng)
			yext := append(y, make([]float64, nye-len(y))...)
			for i := len(y); i < nye; i++ {
				yext[i] = rng.Float64()
			}
			c0, c1, c2 := make([]float64, nce), make([]float64, nce), make([]float64, nce)
			def.Eval(x, yext, c0, nil)
			same.Eval(x, yext, c1, nil)
			proj.Eval(x, yext, c2, nil)
			assert.Equal(t, c0, c1)
			_, _, npf := m.PowerFlow().Dims()
			np := 0
			if p := m.Pinned(); p != nil {
				_, _, np = p.Dims()
			}
			neq := npf + np
			assert.Equal(t, c0[:neq], c2[:neq], "equalities")
			assert.NotEqual(t, c0[neq:], c2[neq:], "Fischer–Burmeister rows")

			// Projections with ProjectionFBEpsilon.
			opt, err := ReferenceOptimum(c.Name)
			require.NoError(t, err)
			a, err := enforce.NewAdaNP(proj, enforce.Settings{Tol: 1e-6, MaxDepth: tc.maxDepth})
			require.NoError(t, err)
			const n = 10
			_, ny := m.Dims()
			xb, yb := mat.NewDense(n, nx, nil), mat.NewDense(n, ny, nil)
			noise := Perturbation{Vm: 1e-3, Va: 1e-3, PQ: 1e-3}
			rng = rand.New(rand.NewPCG(1, 28))
			for i := range n {
				xb.SetRow(i, m.Loads())
				m.Perturb(yb.RawRowView(i), opt.Y, noise, rng)
			}
			out, st, err := a.Project(xb, yb)
			require.NoError(t, err)
			assert.True(t, st.Converged(), "%v", st)
			assert.LessOrEqual(t, st.Depth, tc.maxDepth)
			for i := range n {
				yi := out.RawRowView(i)
				pfRes, lim := feasibility(m, m.Loads(), yi)
				assert.LessOrEqual(t, pfRes, 1e-6, "sample %d: power flow", i)
				assert.LessOrEqual(t, lim, 1e-6, "sample %d: limits", i)
				if p := m.Pinned(); p != nil {
					r := make([]float64, np)
					p.Eval(m.Loads(), yi, r, nil)
					assert.LessOrEqual(t, floats.Norm(r, math.Inf(1)), 1e-6, "sample %d: pinned", i)
				}
			}
		})
	}
}
