package train

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestDistillationProjects trains ENFORCE on the extractive distillation
// data (paper §5.4.1) at a small scale: 3 epochs of batches of 64 over the
// 3015 training rows, standardised. One output (x_D,IL, about 1e-20) has a
// standard deviation of 2e-21; projected with W = I in original units,
// every batch was rejected by the activation rule (ENFORCE trained exactly
// as the MLP) and a forced projection drove the loss to 1e31. In the
// standardised metric the rule must accept most batches, the projection
// take at least one step, and the loss stay of the MLP's order.
func TestDistillationProjects(t *testing.T) {
	dir, err := problems.DataDir()
	if err != nil {
		t.Skipf("distillation data not available: %v", err)
	}
	all, split, err := problems.LoadDistillation(dir)
	require.NoError(t, err)
	trainSet, _, testSet := all.Partition(split)
	base := Config{
		Sizes: []int{3, 32, 32, 9}, Hidden: layers.ReLU, Constraint: problems.Distillation{}.Equalities(),
		BatchSize: 64, Epochs: 3, Seed: 1, Standardize: true, Quiet: true,
	}
	fit := func(cfg Config) (History, *Model) {
		m, err := New(cfg)
		require.NoError(t, err)
		h, err := m.Fit(trainSet.X, trainSet.Y)
		require.NoError(t, err)
		return h, m
	}
	mlpCfg := base
	mlpCfg.Mode = MLP
	mlp, _ := fit(mlpCfg)

	for _, always := range []bool{false, true} {
		cfg := base
		cfg.AlwaysProject = always
		h, m := fit(cfg)
		for _, ep := range h {
			assert.GreaterOrEqual(t, ep.Projected, 0.9, "AlwaysProject=%v epoch %d: batches projected", always, ep.Epoch)
			assert.GreaterOrEqual(t, ep.Depth, 1.0, "AlwaysProject=%v epoch %d: mean depth", always, ep.Epoch)
			// mean|c| ≤ ε_T per sample bounds ‖c‖₂ ≤ Σ|c_i| ≤ 6ε_T.
			assert.LessOrEqual(t, ep.Residual, 6e-4, "the training tolerance holds")
		}
		last := h.Last()
		assert.False(t, math.IsNaN(last.Loss) || math.IsInf(last.Loss, 0))
		assert.Less(t, last.Loss, h[0].Loss, "AlwaysProject=%v: the loss falls", always)
		assert.Less(t, last.Task, 2*mlp.Last().Task, "AlwaysProject=%v: the task loss stays of the MLP's order", always)

		pred, st, err := m.Predict(testSet.X)
		require.NoError(t, err)
		assert.LessOrEqual(t, st.After.Max, 1e-6)
		t.Logf("AlwaysProject=%v: train task %.3e (MLP %.3e), projected %.0f%%, depth %.2f; test MSE %.3e, max|c| %.1e",
			always, last.Task, mlp.Last().Task, 100*last.Projected, last.Depth, meanSquaredError(pred, testSet.Y), st.After.Max)
	}
}

// TestStandardisedMetric checks the weights of the standardised metric,
// W = diag(σ_max²/σ_j²) capped at 1e300, and that explicit weights are
// kept.
func TestStandardisedMetric(t *testing.T) {
	p := problems.FittingEquality{}
	x := mat.NewDense(2, 1, []float64{-1, 1})
	for _, tc := range []struct {
		name     string
		stdY     []float64
		weights  enforce.Weighting
		wantDiag []float64 // nil: the settings' weights are kept
	}{
		{"ratio 4", []float64{2, 0.5}, enforce.Identity, []float64{1, 16}},
		{"capped", []float64{1e200, 1}, enforce.Identity, []float64{1, 1e300}},
		{"AutoDiagonal kept", []float64{2, 0.5}, enforce.AutoDiagonal, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := TrainSettings()
			ts.Weights = tc.weights
			m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Standardize: true,
				Train: ts, Infer: enforce.Settings{Weights: tc.weights}, Quiet: true})
			require.NoError(t, err)
			assert.Equal(t, tc.weights, m.TrainAdaNP().Settings().Weights, "before the output standardisation")
			sx, err := layers.FitStandardizer(x)
			require.NoError(t, err)
			require.NoError(t, m.SetStandardizers(sx, &layers.Standardizer{Mean: []float64{0, 0}, Std: tc.stdY}))
			for _, a := range []*enforce.AdaNP{m.TrainAdaNP(), m.InferAdaNP()} {
				s := a.Settings()
				if tc.wantDiag == nil {
					assert.Equal(t, tc.weights, s.Weights)
					continue
				}
				assert.Equal(t, enforce.Diagonal, s.Weights)
				assert.InDeltaSlice(t, tc.wantDiag, s.Diag, 1e-12*tc.wantDiag[1])
			}
			c := m.Config()
			assert.Equal(t, tc.weights, c.Train.Weights, "Config reports the settings as given")
			assert.Equal(t, tc.weights, c.Infer.Weights)
		})
	}
}
