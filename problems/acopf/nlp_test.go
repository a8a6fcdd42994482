package acopf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
)

// TestNLPDerivatives checks the reference NLP's Jacobian and Hessian of
// the Lagrangian against central finite differences, and its rows and
// bounds against the case.
func TestNLPDerivatives(t *testing.T) {
	for _, name := range []string{"pglib_opf_case57_ieee", "pglib_opf_case118_ieee"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name == "pglib_opf_case118_ieee" {
				t.Skip("-short: case57 only")
			}
			c, err := Load(name)
			require.NoError(t, err)
			m, err := NewModel(c)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(3, 4))
			x, y := randomPoint(m, rng)
			p, err := m.NLP(x, Formulation{})
			require.NoError(t, err)
			require.NoError(t, p.Validate(y))
			nb := len(c.Buses)
			rated, angled := 0, 0
			for _, br := range c.Branches {
				if !math.IsInf(br.RateA, 1) {
					rated++
				}
				if br.AngMin > -2*math.Pi || br.AngMax < 2*math.Pi {
					angled++
				}
			}
			require.Equal(t, 2*nb+1+2*rated+angled, p.M)
			// The first rows are the power flow with equality bounds.
			g := make([]float64, p.M)
			p.Constraints(y, g)
			cv := make([]float64, 2*nb+1)
			m.PowerFlow().Eval(x, y, cv, nil)
			assert.Equal(t, cv, g[:2*nb+1])
			for i := range 2*nb + 1 {
				require.Equal(t, [2]float64{0, 0}, [2]float64{p.GLower[i], p.GUpper[i]})
			}

			// Jacobian.
			vals := make([]float64, len(p.JacRows))
			p.Jacobian(y, vals)
			jac := make([]float64, p.M*p.N)
			for e, r := range p.JacRows {
				jac[r*p.N+p.JacCols[e]] += vals[e]
			}
			assertClose(t, centralJacobian(p.M, func(out, z []float64) { p.Constraints(z, out) }, y), jac, 1e-6, "∂g/∂y")

			// Hessian of the Lagrangian σf + λᵀg.
			sigma := 0.7
			lambda := randVec(p.M, rng)
			hv := make([]float64, len(p.HessRows))
			p.Hessian(y, sigma, lambda, hv)
			hess := make([]float64, p.N*p.N)
			for e, r := range p.HessRows {
				cc := p.HessCols[e]
				hess[r*p.N+cc] += hv[e]
				if r != cc {
					hess[cc*p.N+r] += hv[e]
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
			assertClose(t, centralJacobian(p.N, lagGrad, y), hess, 1e-5, "∇²L")

			// The flat start is inside the bounds.
			y0 := m.FlatStart()
			for i := range y0 {
				assert.True(t, p.Lower[i] <= y0[i] && y0[i] <= p.Upper[i], "flat start %d", i)
			}
			// Violation at the flat start is the power-flow residual.
			m.PowerFlow().Eval(x, y0, cv, nil)
			assert.GreaterOrEqual(t, p.Violation(y0, nil), floats.Norm(cv, math.Inf(1)))
			grad := make([]float64, p.N)
			p.Grad(y, grad)
			assertClose(t, fd.Gradient(nil, p.Objective, y, &fd.Settings{Formula: fd.Central}), grad, 1e-6, "∇f")
		})
	}
}
