package acopf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/solvers"
)

// TestPureGoReference solves case57's ACOPF in PGLib-OPF's formulation
// with the pure-Go interior-point method solvers.SolveSparse from the
// flat start: its optimum is PGLib-OPF's published objective (0.1 %).
func TestPureGoReference(t *testing.T) {
	c, err := Load("case57_ieee")
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	p, err := m.NLP(m.Loads(), Formulation{})
	require.NoError(t, err)
	res, err := solvers.SolveSparse(p, m.FlatStart(), &solvers.Settings{Tol: 1e-6, FeasTol: 1e-8})
	require.NoError(t, err)
	pub := Published[c.Name]
	rel := math.Abs(res.Objective-pub) / pub
	t.Logf("objective %.6e, PGLib %.4e, rel. diff %.2e, %d iterations, %v, status %v, max violation %.1e, stationarity %.1e",
		res.Objective, pub, rel, res.Iterations, res.Runtime, res.Status, res.MaxViolation, res.Stationarity)
	require.Equal(t, solvers.Success, res.Status)
	assert.LessOrEqual(t, rel, 1e-3)
	assert.LessOrEqual(t, res.MaxViolation, 1e-6)
}
