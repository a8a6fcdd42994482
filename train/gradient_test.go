package train

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestGraphGradientMatchesFiniteDifferences checks the gradient that a
// training Graph holds for the backbone's weights, which flows from the
// loss through AdaNP (the exact unrolled VJP, curvature included), the
// un-standardisation and the MLP, against central finite differences of
// the loss. AdaNP takes a fixed number of steps so that the loss is a
// smooth function of the weights, and the activation rule is off (it
// switches between two smooth branches).
func TestGraphGradientMatchesFiniteDifferences(t *testing.T) {
	p := problems.FittingEquality{}
	data := p.Sample(5, 3)
	for _, tc := range []struct {
		depth       int
		lambdaC     float64
		standardize bool
		hidden      layers.Activation
	}{
		{depth: 1, lambdaC: 0.3, standardize: true, hidden: layers.Tanh},
		{depth: 3, lambdaC: 0, standardize: true, hidden: layers.Sigmoid},
		{depth: 2, lambdaC: 0.1, standardize: false, hidden: layers.Tanh},
		{depth: 2, lambdaC: 0.1, standardize: true, hidden: layers.ReLU},
	} {
		t.Run(fmt.Sprintf("depth=%d/λC=%g/std=%v/%v", tc.depth, tc.lambdaC, tc.standardize, tc.hidden), func(t *testing.T) {
			m, err := New(Config{
				Sizes: []int{1, 4, 3, 2}, Hidden: tc.hidden, Constraint: p.Equalities(),
				Train:   enforce.Settings{MinDepth: tc.depth, MaxDepth: tc.depth},
				LambdaC: tc.lambdaC, AlwaysProject: true, Standardize: tc.standardize, Seed: 7, Quiet: true,
			})
			require.NoError(t, err)
			if tc.standardize {
				require.NoError(t, m.FitStandardizers(data.X, data.Y))
			}
			g, err := m.NewGraph(data.Len())
			require.NoError(t, err)
			require.NoError(t, g.SetBatch(data.X, data.Y))
			vm := gorgonia.NewTapeMachine(g.G, gorgonia.BindDualValues(g.Learnables...))
			defer vm.Close()
			require.NoError(t, vm.RunAll())
			vm.Reset()
			require.True(t, g.Op.Projected())
			require.Equal(t, tc.depth, g.Op.Stats().Depth)
			// The loss must have a displacement term, so it depends on ŷ
			// and ỹ separately.
			yhat, yt := g.Outputs()
			require.Greater(t, meanSquaredError(yhat, yt), 1e-4)

			// Read every gradient first: the machine accumulates gradients
			// over runs until a solver step zeroes them.
			grads := make([][]float64, len(g.Learnables))
			for i, n := range g.Learnables {
				gv, err := n.Grad()
				require.NoError(t, err)
				grads[i] = append([]float64(nil), gv.Data().([]float64)...)
			}
			for i, n := range g.Learnables {
				got := grads[i]
				w := m.params[i].Data().([]float64)
				w0 := append([]float64(nil), w...)
				loss := func(v []float64) float64 {
					copy(w, v)
					defer copy(w, w0)
					require.NoError(t, vm.RunAll())
					defer vm.Reset()
					l, err := scalarValue(g.Loss)
					require.NoError(t, err)
					return l
				}
				want := fd.Gradient(nil, loss, w0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
				assert.Less(t, relativeError(got, want), 1e-6, "%s\n got %v\nwant %v", n.Name(), got, want)
			}
		})
	}
}

// relativeError returns ‖a − b‖∞ / max(‖b‖∞, 1e-3).
func relativeError(a, b []float64) float64 {
	var d, s float64
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
		s = math.Max(s, math.Abs(b[i]))
	}
	return d / math.Max(s, 1e-3)
}
