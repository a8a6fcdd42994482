package harness

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/train"
)

func TestAdaNPSettings(t *testing.T) {
	ts, infer, err := AdaNPSettings(WeightsAuto)
	require.NoError(t, err)
	want := train.TrainSettings()
	want.Weights, want.Reg = enforce.AutoDiagonal, 1e-8
	assert.Equal(t, want, ts)
	assert.Equal(t, enforce.Settings{Weights: enforce.AutoDiagonal, Reg: 1e-8}, infer)

	ts, infer, err = AdaNPSettings(WeightsStandardised)
	require.NoError(t, err)
	assert.Equal(t, train.TrainSettings(), ts)
	assert.Equal(t, enforce.Settings{}, infer)

	_, _, err = AdaNPSettings("identity")
	assert.ErrorContains(t, err, `-weights "identity"`)
}
