package enforce

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAutoMeasure checks that AutoMeasure is the zero Measure, that the
// deprecated DefaultMeasure is the same value, and that an AdaNP resolves
// it to MaxAbs.
func TestAutoMeasure(t *testing.T) {
	var zero Measure
	assert.Equal(t, AutoMeasure, zero)
	assert.Equal(t, AutoMeasure, DefaultMeasure)
	assert.Equal(t, "default measure", AutoMeasure.String())
	c := missedCases(t)[0].c
	a, err := NewAdaNP(c, Settings{Measure: AutoMeasure})
	require.NoError(t, err)
	assert.Equal(t, MaxAbs, a.Settings().Measure)
}
