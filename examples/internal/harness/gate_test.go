package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// TestReplayGate replays the activation rule on the distillation data
// before training: with the reference's metric (AutoDiagonal, original
// units) one NP step raises the standardised squared error of every batch,
// most through D (y1) and x_B_R125 (y7), the outputs of smallest spread,
// which is why examples/distillation projects no batch; in the metric of
// standardised units it lowers that of every batch.
func TestReplayGate(t *testing.T) {
	s := DefaultSurrogate("distillation")
	s.DataDir = ""
	_, trainSet, _, err := s.Load(problems.LoadDistillation)
	require.NoError(t, err)
	set := trainSet.Rows(seq(640))
	p := problems.Distillation{}
	for _, tc := range []struct {
		weights  string
		rejected int
	}{{WeightsAuto, 10}, {WeightsStandardised, 0}} {
		ts, infer, err := AdaNPSettings(tc.weights)
		require.NoError(t, err)
		m, err := train.New(s.Config(train.ENFORCE, 1, 3, 9, p.Equalities(), ts, infer))
		require.NoError(t, err)
		require.NoError(t, m.FitStandardizers(set.X, set.Y))
		require.NoError(t, m.SetWeights(m.Weights())) // the initial weights, on purpose (train.ErrNotFitted)
		r, err := ReplayGate(m, set, 64)
		require.NoError(t, err)
		assert.Equal(t, 10, r.Batches, tc.weights)
		assert.Equal(t, tc.rejected, r.Rejected, tc.weights)
		require.Len(t, r.Delta, 9)
		if tc.weights == WeightsAuto {
			top := Largest(r.Delta, 2)
			assert.ElementsMatch(t, []int{0, 6}, top, "D and x_B_R125 gain most")
		}
	}
	m, err := train.New(s.Config(train.MLP, 1, 3, 9, p.Equalities(), train.TrainSettings(), train.TrainSettings()))
	require.NoError(t, err)
	_, err = ReplayGate(m, set, 64)
	assert.ErrorContains(t, err, "not an ENFORCE model")
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
