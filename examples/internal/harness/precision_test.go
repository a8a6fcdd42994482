package harness

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/train"
)

// TestPrecision checks -precision: float64 by default, float32 and
// float64 parsed (case ignored), anything else a flag error, and the value
// passed to the train.Config that Surrogate.Config builds.
func TestPrecision(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want enforce.Precision
	}{
		{nil, enforce.Auto},
		{[]string{"-precision", "float32"}, enforce.Float32},
		{[]string{"-precision", "Float64"}, enforce.Float64},
	} {
		s := DefaultSurrogate("distillation")
		f := New("x", "test")
		s.Common.Register(f, "seed")
		require.NoError(t, f.Parse(tc.args), "%v", tc.args)
		assert.Equal(t, tc.want, s.Precision, "%v", tc.args)
		assert.Equal(t, map[bool]string{false: "float64", true: "float32"}[tc.want == enforce.Float32], s.PrecisionName())
		assert.Equal(t, tc.want, s.Config(train.MLP, 1, 3, 9, nil, enforce.Settings{}, enforce.Settings{}).Precision, "%v", tc.args)
	}
	var c Common
	f := New("x", "test")
	c.Register(f, "seed")
	f.SetOutput(io.Discard)
	assert.Error(t, f.Parse([]string{"-precision", "float16"}))
}
