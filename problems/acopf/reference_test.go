package acopf

import (
	"flag"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/solvers"
)

// bigGrids makes the reference tests solve the larger cases as well:
// case118 with the pure-Go method (TestPureGoReference), the
// cases of more than 1000 buses with IPOPT (TestReferenceMatchesPGLib,
// build tag ipopt). Minutes on two cores.
var bigGrids = flag.Bool("acopf.big", false, "also solve the larger PGLib cases in the reference tests")

// TestPureGoReference solves the ACOPF in PGLib-OPF's formulation with
// the pure-Go interior-point method solvers.SolveSparse from the flat
// start: its optimum is PGLib-OPF's published objective (0.1 %) for
// case57 (and, with -acopf.big, case118: a minute and a half on a loaded
// 2-core machine; the dense KKT matrix of case300 has about 3 800 rows,
// too many for the dense method).
func TestPureGoReference(t *testing.T) {
	for _, name := range []string{"pglib_opf_case57_ieee", "pglib_opf_case118_ieee"} {
		t.Run(name, func(t *testing.T) {
			c, err := Load(name)
			require.NoError(t, err)
			if len(c.Buses) > 100 && !*bigGrids {
				t.Skip("more than 100 buses: run with -acopf.big")
			}
			m, err := NewModel(c)
			require.NoError(t, err)
			p, err := m.NLP(m.Loads(), Formulation{})
			require.NoError(t, err)
			res, err := solvers.SolveSparse(p, m.FlatStart(), &solvers.Settings{Tol: 1e-6, FeasTol: 1e-8})
			require.NoError(t, err)
			pub := Published[c.Name]
			rel := math.Abs(res.Objective-pub) / pub
			t.Logf("%s: objective %.6e, PGLib %.4e, rel. diff %.2e, %d iterations, %v, status %v, max violation %.1e, stationarity %.1e",
				name, res.Objective, pub, rel, res.Iterations, res.Runtime.Round(time.Millisecond), res.Status, res.MaxViolation, res.Stationarity)
			require.Equal(t, solvers.Success, res.Status)
			assert.LessOrEqual(t, rel, 1e-3)
			assert.LessOrEqual(t, res.MaxViolation, 1e-6)
			pfRes, relViol := violations(m, p, res.Y)
			assert.LessOrEqual(t, pfRes, 1e-8)
			assert.LessOrEqual(t, relViol, 1e-8)
		})
	}
}

// violations returns max|c| of the power flow at y and the largest
// violation of the NLP's other bounds (on y and on the line-limit rows)
// relative to max(1, |bound|).
func violations(m *Model, p *solvers.SparseNLP, y []float64) (pf, rel float64) {
	_, _, npf := m.PowerFlow().Dims()
	c := make([]float64, npf)
	m.PowerFlow().Eval(m.Loads(), y, c, nil)
	for _, v := range c {
		pf = math.Max(pf, math.Abs(v))
	}
	viol := func(v, lo, hi float64) float64 {
		return math.Max(math.Max(lo-v, 0)/math.Max(1, math.Abs(lo)), math.Max(v-hi, 0)/math.Max(1, math.Abs(hi)))
	}
	for i, v := range y {
		rel = math.Max(rel, viol(v, p.Lower[i], p.Upper[i]))
	}
	g := make([]float64, p.M)
	p.Constraints(y, g)
	for i := npf; i < p.M; i++ {
		rel = math.Max(rel, viol(g[i], p.GLower[i], p.GUpper[i]))
	}
	return pf, rel
}
