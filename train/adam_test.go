package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// valueGrad is a learnable for gorgonia's solvers: a value and its gradient.
type valueGrad struct{ w, g *tensor.Dense }

func (p valueGrad) Value() gorgonia.Value { return p.w }

func (p valueGrad) Grad() (gorgonia.Value, error) { return p.g, nil }

// TestAdamMatchesGorgonia runs train's Adam and gorgonia's AdamSolver side
// by side for 3000 steps on three learnables, from the same weights and
// with the same random gradients (magnitudes from 1e-12 to 1e3, some exact
// zeros, signs mixed), and requires the same weight bits after every step
// and zeroed gradients: the solver a checkpoint saves takes exactly the
// steps Fit took with gorgonia's.
func TestAdamMatchesGorgonia(t *testing.T) {
	for _, eta := range []float64{1e-3, 0.05} {
		rng := rand.New(rand.NewPCG(7, 8))
		sizes := []int{12, 4, 1}
		mine := &adam{eta: eta}
		theirs := gorgonia.NewAdamSolver(gorgonia.WithLearnRate(eta))
		w := make([][]float64, len(sizes))
		g := make([][]float64, len(sizes))
		model := make([]gorgonia.ValueGrad, len(sizes))
		for i, n := range sizes {
			w[i], g[i] = make([]float64, n), make([]float64, n)
			tw := make([]float64, n)
			for j := range w[i] {
				w[i][j] = rng.NormFloat64()
				tw[j] = w[i][j]
			}
			model[i] = valueGrad{
				w: tensor.New(tensor.WithShape(n), tensor.WithBacking(tw)),
				g: tensor.New(tensor.WithShape(n), tensor.WithBacking(make([]float64, n))),
			}
		}
		for step := 1; step <= 3000; step++ {
			for i := range sizes {
				tg := model[i].(valueGrad).g.Data().([]float64)
				for j := range g[i] {
					v := rng.NormFloat64() * math.Pow(10, -12+15*rng.Float64())
					if rng.IntN(10) == 0 {
						v = 0
					}
					g[i][j], tg[j] = v, v
				}
			}
			require.NoError(t, mine.step(anys(w), anys(g)))
			require.NoError(t, theirs.Step(model))
			for i := range sizes {
				tw := model[i].(valueGrad).w.Data().([]float64)
				for j := range w[i] {
					if math.Float64bits(w[i][j]) != math.Float64bits(tw[j]) {
						require.Failf(t, "weights differ", "η %g, step %d, learnable %d[%d]: train %v, gorgonia %v", eta, step, i, j, w[i][j], tw[j])
					}
				}
				assert.Equal(t, make([]float64, len(g[i])), g[i], "step zeroes the gradient")
			}
		}
		assert.Equal(t, 3000, mine.iter)
	}
}

// TestAdamShapeErrors checks that a step with gradients that do not fit
// the weights or the moments is an error, not a panic.
func TestAdamShapeErrors(t *testing.T) {
	a := &adam{eta: 1e-3}
	assert.Error(t, a.step(anys([][]float64{{1, 2}}), anys(nil)))
	assert.Error(t, a.step(anys([][]float64{{1, 2}}), anys([][]float64{{1}})))
	require.NoError(t, a.step(anys([][]float64{{1, 2}}), anys([][]float64{{1, 1}})))
	assert.Error(t, a.step(anys([][]float64{{1, 2}, {3}}), anys([][]float64{{1, 1}, {1}})), "more learnables than moments")
	assert.Error(t, a.step(anys([][]float64{{1, 2, 3}}), anys([][]float64{{1, 1, 1}})), "a learnable of another size")
	assert.Equal(t, 1, a.iter, "a failed step does not count")
}

// anys returns the slices of s as the []any that adam.step takes.
func anys(s [][]float64) []any {
	if s == nil {
		return nil
	}
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
