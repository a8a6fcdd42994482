package train

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
)

// TestObjectiveGateResidualTerm checks that the activation rule of
// FitUnsupervised evaluates the constraint for its residual term only
// when λ_C ≠ 0: with LambdaC < 0 its measure is the objective alone, the
// same value without an evaluation of c; with the default λ_C it is the
// objective plus λ_C·mean‖c‖.
func TestObjectiveGateResidualTerm(t *testing.T) {
	var evals atomic.Int64
	c, err := enforce.Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		evals.Add(1)
		c[0] = hyperdual.Sub(hyperdual.Add(y[0], hyperdual.Mul(y[1], y[1])), x[0])
	})
	require.NoError(t, err)
	x := mat.NewDense(3, 1, []float64{1, 2, 3})
	y := mat.NewDense(3, 2, []float64{0.5, 0.5, 1, 1, 0, 2})
	f := (0.25 + 1 + 2) / 3.0 // mean ½Σ_j y_j²
	res := (0.25 + 0 + 1) / 3.0
	for _, tc := range []struct {
		lambdaC float64
		want    float64
		evals   bool
	}{{-1, f, false}, {0, f + res, true}, {2, f + 2*res, true}} {
		m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: c, LambdaC: tc.lambdaC, Quiet: true})
		require.NoError(t, err)
		g, err := m.newGraph(3, halfSquaredNorm, false)
		require.NoError(t, err)
		require.NoError(t, g.SetBatch(x, nil))
		evals.Store(0)
		got, err := g.measure(y)
		require.NoError(t, err)
		assert.InDelta(t, tc.want, got, 1e-12, "λ_C %v", tc.lambdaC)
		assert.Equal(t, tc.evals, evals.Load() > 0, "λ_C %v: constraint evaluated", tc.lambdaC)
	}
}
