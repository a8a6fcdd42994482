package train

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestSeedType checks that Config.Seed and layers.WithSeed take the same
// type (the call compiles without a conversion) and draw the same weights,
// for a seed beyond the range of int64 too.
func TestSeedType(t *testing.T) {
	for _, seed := range []uint64{0, 7, 1<<63 + 5, ^uint64(0)} {
		cfg := Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: problems.FittingEquality{}.Equalities(), Seed: seed, Quiet: true}
		m, err := New(cfg)
		require.NoError(t, err)
		mlp, err := layers.NewMLP(gorgonia.NewGraph(), cfg.Sizes, cfg.Hidden, cfg.Output, layers.WithSeed(cfg.Seed))
		require.NoError(t, err)
		assert.Equal(t, mlp.Weights(), m.Weights(), "seed %d", seed)
	}
}

// TestTrainInferDefaults pins the rule of Config.Train and Config.Infer:
// a zero field means that AdaNP's own default (TrainSettings()'s for
// Train, enforce's for Infer), so setting one field changes only that
// field, and Model.Config reports Train with its defaults filled in, which
// New maps to the same settings again.
func TestTrainInferDefaults(t *testing.T) {
	ts := TrainSettings()
	withTrain := func(f func(*enforce.Settings)) enforce.Settings {
		s := TrainSettings()
		f(&s)
		return s
	}
	for _, tc := range []struct {
		name         string
		train, infer enforce.Settings
		wantTrain    enforce.Settings // as Model.Config reports it
		wantInfer    enforce.Settings // as the inference AdaNP uses it and Model.Config reports it
	}{
		{"zero", enforce.Settings{}, enforce.Settings{}, ts,
			enforce.Settings{Tol: enforce.DefaultTol, MinDepth: enforce.DefaultMinDepth, MaxDepth: enforce.DefaultMaxDepth, Measure: enforce.MaxAbs}},
		{"TrainSettings", TrainSettings(), enforce.Settings{}, ts,
			enforce.Settings{Tol: enforce.DefaultTol, MinDepth: enforce.DefaultMinDepth, MaxDepth: enforce.DefaultMaxDepth, Measure: enforce.MaxAbs}},
		{"one depth field each", enforce.Settings{MaxDepth: 5}, enforce.Settings{MaxDepth: 7},
			withTrain(func(s *enforce.Settings) { s.MaxDepth = 5 }),
			enforce.Settings{Tol: enforce.DefaultTol, MinDepth: enforce.DefaultMinDepth, MaxDepth: 7, Measure: enforce.MaxAbs}},
		{"Tol keeps mean|c| in Train", enforce.Settings{Tol: 1e-7}, enforce.Settings{Tol: 1e-3},
			withTrain(func(s *enforce.Settings) { s.Tol = 1e-7 }),
			enforce.Settings{Tol: 1e-3, MinDepth: enforce.DefaultMinDepth, MaxDepth: enforce.DefaultMaxDepth, Measure: enforce.MaxAbs}},
		{"MeanAbs in Infer", enforce.Settings{Measure: enforce.MeanAbs}, enforce.Settings{Measure: enforce.MeanAbs},
			ts, enforce.Settings{Tol: enforce.DefaultTol, MinDepth: enforce.DefaultMinDepth, MaxDepth: enforce.DefaultMaxDepth, Measure: enforce.MeanAbs}},
		{"other fields", enforce.Settings{Weights: enforce.AutoDiagonal, Reg: 1e-8, MinDepth: 2, LineSearch: true},
			enforce.Settings{Weights: enforce.AutoDiagonal, Reg: 1e-8, Grad: enforce.Projector},
			withTrain(func(s *enforce.Settings) {
				s.Weights, s.Reg, s.MinDepth, s.LineSearch = enforce.AutoDiagonal, 1e-8, 2, true
			}),
			enforce.Settings{Tol: enforce.DefaultTol, MinDepth: enforce.DefaultMinDepth, MaxDepth: enforce.DefaultMaxDepth,
				Measure: enforce.MaxAbs, Weights: enforce.AutoDiagonal, Reg: 1e-8, Grad: enforce.Projector}},
		{"MaxAbs in Train", enforce.Settings{Measure: enforce.MaxAbs}, enforce.Settings{},
			withTrain(func(s *enforce.Settings) { s.Measure = enforce.MaxAbs }),
			enforce.Settings{Tol: enforce.DefaultTol, MinDepth: enforce.DefaultMinDepth, MaxDepth: enforce.DefaultMaxDepth, Measure: enforce.MaxAbs}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: problems.FittingEquality{}.Equalities(),
				Train: tc.train, Infer: tc.infer, Quiet: true}
			m, err := New(cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.wantTrain, m.Config().Train, "Config().Train")
			used := tc.wantTrain
			if used.MinDepth == 0 {
				used.MinDepth = enforce.DefaultMinDepth
			}
			assert.Equal(t, used, m.TrainAdaNP().Settings(), "training AdaNP")
			assert.Equal(t, tc.wantInfer, m.InferAdaNP().Settings(), "inference AdaNP")
			assert.Equal(t, tc.wantInfer, m.Config().Infer, "Config().Infer")

			again, err := New(m.Config())
			require.NoError(t, err)
			assert.Equal(t, m.Config().Train, again.Config().Train, "New(m.Config()) keeps Train")
			assert.Equal(t, m.TrainAdaNP().Settings(), again.TrainAdaNP().Settings())
		})
	}
}
