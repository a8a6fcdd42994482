package layers

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestActivationNames(t *testing.T) {
	for _, tc := range []struct {
		act  Activation
		name string
	}{
		{Identity, "identity"},
		{ReLU, "relu"},
		{Tanh, "tanh"},
		{Sigmoid, "sigmoid"},
	} {
		assert.Equal(t, tc.name, tc.act.String())
		got, err := ParseActivation(tc.name)
		require.NoError(t, err)
		assert.Equal(t, tc.act, got)
		got, err = ParseActivation(" " + string(rune(tc.name[0]-'a'+'A')) + tc.name[1:])
		require.NoError(t, err)
		assert.Equal(t, tc.act, got, "parsing is case-insensitive")
	}
	_, err := ParseActivation("softplus")
	assert.Error(t, err)
	assert.Equal(t, "Activation(9)", Activation(9).String())
}

func TestActivationJSON(t *testing.T) {
	type cfg struct {
		Hidden, Output Activation
	}
	b, err := json.Marshal(cfg{Tanh, Sigmoid})
	require.NoError(t, err)
	assert.JSONEq(t, `{"Hidden":"tanh","Output":"sigmoid"}`, string(b))
	var back cfg
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, cfg{Tanh, Sigmoid}, back)
	assert.Error(t, json.Unmarshal([]byte(`{"Hidden":"gelu"}`), &back))
	_, err = json.Marshal(cfg{Hidden: Activation(-1)})
	assert.Error(t, err)
}

func TestActivationApply(t *testing.T) {
	in := []float64{-2, -0.5, 0, 0.5, 2}
	for _, tc := range []struct {
		act Activation
		f   func(float64) float64
	}{
		{Identity, func(z float64) float64 { return z }},
		{ReLU, func(z float64) float64 { return math.Max(z, 0) }},
		{Tanh, math.Tanh},
		{Sigmoid, func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }},
	} {
		t.Run(tc.act.String(), func(t *testing.T) {
			g := gorgonia.NewGraph()
			x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(len(in)), gorgonia.WithName("x"),
				gorgonia.WithValue(tensor.New(tensor.WithBacking(append([]float64(nil), in...)))))
			y, err := tc.act.Apply(x)
			require.NoError(t, err)
			m := gorgonia.NewTapeMachine(g)
			defer m.Close()
			require.NoError(t, m.RunAll())
			got := y.Value().Data().([]float64)
			for i, z := range in {
				assert.InDelta(t, tc.f(z), got[i], 1e-12, "z=%v", z)
			}
		})
	}
	_, err := Activation(7).Apply(gorgonia.NewScalar(gorgonia.NewGraph(), tensor.Float64))
	assert.Error(t, err)
	_, err = ReLU.Apply(nil)
	assert.Error(t, err)
}
