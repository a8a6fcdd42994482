package layers

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/gtest"
)

func TestDenseForward(t *testing.T) {
	for _, tc := range []struct {
		name         string
		batch, in, o int
		act          Activation
		dt           tensor.Dtype
		tol          float64
	}{
		{"relu64", 5, 3, 4, ReLU, tensor.Float64, 1e-12},
		{"tanh64-batch1", 1, 2, 3, Tanh, tensor.Float64, 1e-12},
		{"sigmoid64-1x1", 4, 1, 1, Sigmoid, tensor.Float64, 1e-12},
		{"identity32", 6, 4, 2, Identity, tensor.Float32, 1e-5},
		{"relu32-batch1", 1, 3, 2, ReLU, tensor.Float32, 1e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			d, err := NewDense(g, tc.in, tc.o, tc.act, WithDtype(tc.dt), WithSeed(3))
			require.NoError(t, err)
			b := randMatrix(9, 1, tc.o)
			require.NoError(t, d.SetWeights([][]float64{d.Weights()[0], b}))
			xv := randMatrix(1, tc.batch, tc.in)
			x := inputNode(g, tc.dt, "x", tc.batch, tc.in, xv)
			y, err := d.Forward(x)
			require.NoError(t, err)
			assert.Equal(t, tensor.Shape{tc.batch, tc.o}, y.Shape())
			assert.Equal(t, tc.dt, y.Dtype())

			m := gorgonia.NewTapeMachine(g)
			defer m.Close()
			require.NoError(t, m.RunAll())
			want := denseRef(xv, tc.batch, tc.in, d.Weights()[0], b, tc.act)
			assert.InDeltaSlice(t, want, gtest.Float64s(y.Value()), tc.tol)
		})
	}
}

func TestDenseErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	for _, tc := range []struct {
		name    string
		in, out int
		act     Activation
		opts    []Option
	}{
		{"zero in", 0, 2, Tanh, nil},
		{"negative out", 2, -1, Tanh, nil},
		{"bad activation", 2, 2, Activation(42), nil},
		{"int dtype", 2, 2, Tanh, []Option{WithDtype(tensor.Int)}},
		{"bad init", 2, 2, Tanh, []Option{WithInit(Init(5))}},
		{"empty name", 2, 2, Tanh, []Option{WithName("")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDense(g, tc.in, tc.out, tc.act, tc.opts...)
			assert.Error(t, err)
			assert.Nil(t, d)
		})
	}
	_, err := NewDense(nil, 2, 2, Tanh)
	assert.Error(t, err)

	_, err = NewDense(g, 2, 3, Tanh, WithName("layer"))
	require.NoError(t, err)
	_, err = NewDense(g, 2, 3, Tanh, WithName("layer"))
	assert.ErrorContains(t, err, "already in the graph")
}

func TestDenseForwardErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	d, err := NewDense(g, 3, 2, Tanh)
	require.NoError(t, err)
	other := gorgonia.NewGraph()
	for _, tc := range []struct {
		name string
		x    *gorgonia.Node
	}{
		{"nil", nil},
		{"wrong columns", inputNode(g, tensor.Float64, "x4", 5, 4, make([]float64, 20))},
		{"wrong dtype", inputNode(g, tensor.Float32, "x32", 5, 3, make([]float64, 15))},
		{"other graph", inputNode(other, tensor.Float64, "xo", 5, 3, make([]float64, 15))},
		{"vector", gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("v"))},
		{"scalar", gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("s"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y, err := d.Forward(tc.x)
			assert.Error(t, err)
			assert.Nil(t, y)
		})
	}
}

func TestDenseDefaultNamesAreDistinct(t *testing.T) {
	g := gorgonia.NewGraph()
	a, err := NewDense(g, 2, 3, Tanh)
	require.NoError(t, err)
	b, err := NewDense(g, 2, 3, Tanh, WithSeed(1))
	require.NoError(t, err)
	assert.Equal(t, "dense.W", a.Weight().Name())
	assert.Equal(t, "dense_1.W", b.Weight().Name())
	assert.NotSame(t, a.Weight(), b.Weight(), "same-named variables would be merged by gorgonia")
	assert.NotEqual(t, a.Weights()[0], b.Weights()[0])
	c, err := NewMLP(g, []int{2, 3}, Tanh, Tanh)
	require.NoError(t, err)
	d, err := NewMLP(g, []int{2, 3}, Tanh, Tanh)
	require.NoError(t, err)
	assert.Equal(t, "mlp.0.W", c.Learnables()[0].Name())
	assert.Equal(t, "mlp_1.0.b", d.Learnables()[1].Name())
}

func TestInit(t *testing.T) {
	weights := func(t *testing.T, in, out int, act Activation, opts ...Option) []float64 {
		d, err := NewDense(gorgonia.NewGraph(), in, out, act, opts...)
		require.NoError(t, err)
		assert.Equal(t, make([]float64, out), d.Weights()[1], "bias starts at zero")
		return d.Weights()[0]
	}
	maxAbs := func(v []float64) float64 {
		var m float64
		for _, x := range v {
			m = math.Max(m, math.Abs(x))
		}
		return m
	}
	const in, out = 40, 30
	glorot, he := math.Sqrt(6.0/(in+out)), math.Sqrt(6.0/in)
	for _, tc := range []struct {
		name  string
		act   Activation
		opts  []Option
		bound float64
	}{
		{"relu default is He", ReLU, nil, he},
		{"tanh default is Glorot", Tanh, nil, glorot},
		{"identity default is Glorot", Identity, nil, glorot},
		{"sigmoid default is Glorot", Sigmoid, nil, glorot},
		{"explicit Glorot on relu", ReLU, []Option{WithInit(Glorot)}, glorot},
		{"explicit He on tanh", Tanh, []Option{WithInit(He)}, he},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := weights(t, in, out, tc.act, tc.opts...)
			m := maxAbs(w)
			assert.LessOrEqual(t, m, tc.bound)
			assert.Greater(t, m, 0.95*tc.bound, "1200 uniform draws reach the bound")
		})
	}

	t.Run("determinism", func(t *testing.T) {
		a := weights(t, 5, 4, Tanh, WithSeed(11))
		assert.Equal(t, a, weights(t, 5, 4, Tanh, WithSeed(11)))
		assert.NotEqual(t, a, weights(t, 5, 4, Tanh, WithSeed(12)))
		f32 := weights(t, 5, 4, Tanh, WithSeed(11), WithDtype(tensor.Float32))
		for i := range a {
			assert.Equal(t, float32(a[i]), float32(f32[i]))
		}
	})

	t.Run("mlp layer 0 equals dense", func(t *testing.T) {
		m, err := NewMLP(gorgonia.NewGraph(), []int{5, 4, 3}, Tanh, Tanh, WithSeed(11))
		require.NoError(t, err)
		assert.Equal(t, weights(t, 5, 4, Tanh, WithSeed(11)), m.Weights()[0])
		assert.NotEqual(t, m.Weights()[0][:12], m.Weights()[2][:12], "layers draw from different streams")
	})

	assert.Equal(t, "default", DefaultInit.String())
	assert.Equal(t, "glorot", Glorot.String())
	assert.Equal(t, "he", He.String())
	assert.Equal(t, "Init(9)", Init(9).String())
}

func TestDenseSetWeights(t *testing.T) {
	d, err := NewDense(gorgonia.NewGraph(), 2, 3, Tanh, WithDtype(tensor.Float32))
	require.NoError(t, err)
	before := d.Weights()
	for _, w := range [][][]float64{
		nil,
		{make([]float64, 6)},
		{make([]float64, 5), make([]float64, 3)},
		{make([]float64, 6), make([]float64, 2)},
	} {
		assert.Error(t, d.SetWeights(w))
	}
	assert.Equal(t, before, d.Weights(), "failed SetWeights writes nothing")
	w := [][]float64{{1, 2, 3, 4, 5, 6}, {0.5, -0.5, 0.25}}
	require.NoError(t, d.SetWeights(w))
	assert.Equal(t, w, d.Weights())
	got := d.Weights()
	got[0][0] = 99
	assert.Equal(t, 1.0, d.Weights()[0][0], "Weights returns copies")
	in, out := d.Dims()
	assert.Equal(t, [2]int{2, 3}, [2]int{in, out})
	assert.Equal(t, Tanh, d.Activation())
	assert.Equal(t, tensor.Float32, d.Dtype())
	assert.Equal(t, gorgonia.Nodes{d.Weight(), d.Bias()}, d.Learnables())
}
