package train

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// thetaConfig is a small ENFORCE model that learns its projection weights.
func thetaConfig() Config {
	p := problems.FittingEquality{}
	return Config{
		Sizes: []int{1, 6, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(),
		Train:     enforce.Settings{Weights: enforce.TrainableDiagonal},
		Infer:     enforce.Settings{Weights: enforce.TrainableDiagonal},
		LearnRate: 1e-2, Epochs: 20, Seed: 5, Standardize: true, Quiet: true,
	}
}

// TestWeightingGraphGradient checks the gradient the training graph holds
// for the backbone's weights and, with trainable projection weights, θ
// (at a non-zero θ), against central finite differences of the loss, with
// the activation rule off and a fixed depth so that the loss is smooth:
// for TrainableDiagonal and for BatchDiagonal (whose weights couple the
// samples of the batch).
func TestWeightingGraphGradient(t *testing.T) {
	data := problems.FittingEquality{}.Sample(5, 3)
	for _, w := range []enforce.Weighting{enforce.TrainableDiagonal, enforce.BatchDiagonal} {
		t.Run(w.String(), func(t *testing.T) {
			cfg := thetaConfig()
			// c = 2·y1² + 3·y2 − x: Jacobian columns 4·y1 and 3, whose
			// means exceed 1, so BatchDiagonal's weights vary with ŷ.
			c, err := enforce.Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
				c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Scale(2, hyperdual.Mul(y[0], y[0])), hyperdual.Scale(3, y[1])), x[0])
			})
			require.NoError(t, err)
			cfg.Constraint = c
			cfg.Train = enforce.Settings{Weights: w, MinDepth: 2, MaxDepth: 2}
			cfg.Infer = enforce.Settings{Weights: w}
			cfg.AlwaysProject, cfg.LambdaC = true, 0.2
			m, err := New(cfg)
			require.NoError(t, err)
			require.NoError(t, m.FitStandardizers(data.X, data.Y))
			ps := m.Params()
			if w == enforce.TrainableDiagonal {
				require.Equal(t, Param{Name: ThetaName, Shape: []int{2}}, ps[len(ps)-1])
				w := m.Weights()
				require.Equal(t, []float64{0, 0}, w[len(w)-1], "θ starts at 0")
				w[len(w)-1] = []float64{0.4, -0.7}
				require.NoError(t, m.SetWeights(w))
			}

			g, err := m.NewGraph(data.Len())
			require.NoError(t, err)
			require.Len(t, g.Learnables, len(ps))
			require.NoError(t, g.SetBatch(data.X, data.Y))
			vm := gorgonia.NewTapeMachine(g.G, gorgonia.BindDualValues(g.Learnables...))
			defer vm.Close()
			require.NoError(t, vm.RunAll())
			vm.Reset()
			require.True(t, g.Op.Projected())
			assert.True(t, g.Op.GradStats().Exact())
			grads := make([][]float64, len(g.Learnables))
			for i, n := range g.Learnables {
				gv, err := n.Grad()
				require.NoError(t, err)
				grads[i] = append([]float64(nil), gv.Data().([]float64)...)
			}
			require.Greater(t, sumSquares(grads[len(grads)-1]), 1e-12, "the last learnable has a gradient")
			for i, n := range g.Learnables {
				p := m.params[i].Data().([]float64)
				p0 := append([]float64(nil), p...)
				loss := func(v []float64) float64 {
					copy(p, v)
					defer copy(p, p0)
					require.NoError(t, vm.RunAll())
					defer vm.Reset()
					l, err := scalarValue(g.Loss)
					require.NoError(t, err)
					return l
				}
				want := fd.Gradient(nil, loss, p0, &fd.Settings{Formula: fd.Central, Step: 1e-6})
				assert.Less(t, relativeError(grads[i], want), 1e-6, "%s\n got %v\nwant %v", n.Name(), grads[i], want)
			}
		})
	}
}

// TestThetaLearnedSavedLoaded trains θ with the network, then checks that
// Save and Load keep it bit for bit and that Predict projects with it.
func TestThetaLearnedSavedLoaded(t *testing.T) {
	data := problems.FittingEquality{}.Sample(40, 9)
	m, err := New(thetaConfig())
	require.NoError(t, err)
	_, err = m.Fit(data.X, data.Y)
	require.NoError(t, err)
	w := m.Weights()
	theta := w[len(w)-1]
	assert.Greater(t, sumSquares(theta), 1e-8, "θ was learned: %v", theta)

	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	l, err := Load(&buf, problems.FittingEquality{}.Equalities())
	require.NoError(t, err)
	assert.Equal(t, weightBits(m), weightBits(l))
	assert.Equal(t, enforce.TrainableDiagonal, l.Config().Train.Weights)
	x := mat.NewDense(5, 1, []float64{-1.5, -0.5, 0.1, 0.8, 1.7})
	want, st, err := m.Predict(x)
	require.NoError(t, err)
	require.True(t, st.Converged())
	got, _, err := l.Predict(x)
	require.NoError(t, err)
	assert.Equal(t, bits(want), bits(got))

	// Predict uses θ: θ = 0 (W = I) gives other predictions.
	yhat, err := m.Backbone(x)
	require.NoError(t, err)
	theta0, _, err := m.InferAdaNP().ProjectTheta(x, yhat, []float64{0, 0})
	require.NoError(t, err)
	thetaL, _, err := m.InferAdaNP().ProjectTheta(x, yhat, theta)
	require.NoError(t, err)
	assert.Equal(t, bits(thetaL), bits(want))
	assert.NotEqual(t, bits(theta0), bits(want))
}

// TestThetaConfig checks which configurations learn θ.
func TestThetaConfig(t *testing.T) {
	cfg := thetaConfig()
	cfg.Train = enforce.Settings{}
	_, err := New(cfg)
	assert.ErrorContains(t, err, "Train.Weights TrainableDiagonal")

	cfg = thetaConfig()
	cfg.Infer = enforce.Settings{}
	m, err := New(cfg)
	require.NoError(t, err)
	ps := m.Params()
	assert.Equal(t, ThetaName, ps[len(ps)-1].Name, "learned for training only")

	cfg = thetaConfig()
	cfg.Mode, cfg.Infer = MLP, enforce.Settings{}
	m, err = New(cfg)
	require.NoError(t, err)
	for _, p := range m.Params() {
		assert.NotEqual(t, ThetaName, p.Name, "no θ without projection in training")
	}
}

func sumSquares(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return s
}

// TestBatchDiagonalFit trains and predicts with batch-averaged projection
// weights (enforce.BatchDiagonal), in batches, and checks that Predict
// meets the inference tolerance.
func TestBatchDiagonalFit(t *testing.T) {
	data := problems.FittingEquality{}.Sample(40, 9)
	cfg := thetaConfig()
	cfg.Train = enforce.Settings{Weights: enforce.BatchDiagonal}
	cfg.Infer = enforce.Settings{Weights: enforce.BatchDiagonal}
	cfg.BatchSize = 16
	m, err := New(cfg)
	require.NoError(t, err)
	h, err := m.Fit(data.X, data.Y)
	require.NoError(t, err)
	projected := 0.0
	for _, e := range h {
		projected += e.Projected
	}
	require.Greater(t, projected, 0.0, "some training batches were projected")
	_, st, err := m.Predict(data.X)
	require.NoError(t, err)
	assert.True(t, st.Converged(), "%+v", st)
	for _, p := range m.Params() {
		assert.NotEqual(t, ThetaName, p.Name)
	}
}
