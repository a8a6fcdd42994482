package train

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"

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
