package layers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/gtest"
)

// flatten concatenates weight slices; unflatten splits θ like ref.
func flatten(w [][]float64) []float64 {
	var out []float64
	for _, s := range w {
		out = append(out, s...)
	}
	return out
}

func unflatten(theta []float64, ref [][]float64) [][]float64 {
	out := make([][]float64, len(ref))
	for i, s := range ref {
		out[i], theta = theta[:len(s)], theta[len(s):]
	}
	return out
}

// mseProblem is an MLP with a scalar loss mean((f(x) − t)²) and its
// gradient with respect to the learnables, on a compiled tape machine.
type mseProblem struct {
	mlp  *MLP
	loss *gorgonia.Node
	m    gorgonia.VM
}

func newMSEProblem(t testing.TB, dt tensor.Dtype, sizes []int, hidden, output Activation, batch int) *mseProblem {
	g := gorgonia.NewGraph()
	mlp, err := NewMLP(g, sizes, hidden, output, WithSeed(5), WithDtype(dt))
	require.NoError(t, err)
	in, out := sizes[0], sizes[len(sizes)-1]
	x := inputNode(g, dt, "x", batch, in, randMatrix(1, batch, in))
	target := inputNode(g, dt, "target", batch, out, randMatrix(2, batch, out))
	y, err := mlp.Forward(x)
	require.NoError(t, err)
	diff, err := gorgonia.Sub(y, target)
	require.NoError(t, err)
	sq, err := gorgonia.Square(diff)
	require.NoError(t, err)
	loss, err := gorgonia.Mean(sq)
	require.NoError(t, err)
	_, err = gorgonia.Grad(loss, mlp.Learnables()...)
	require.NoError(t, err)
	return &mseProblem{mlp: mlp, loss: loss, m: gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(mlp.Learnables()...))}
}

// run evaluates the loss and its gradient at the current weights.
func (p *mseProblem) run(t testing.TB) (float64, []float64) {
	p.m.Reset()
	require.NoError(t, p.m.RunAll())
	var grad []float64
	for _, n := range p.mlp.Learnables() {
		gv, err := n.Grad()
		require.NoError(t, err)
		grad = append(grad, gtest.Float64s(gv)...)
	}
	return gtest.Float64s(p.loss.Value())[0], grad
}

func TestMLPGradientMatchesFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		hidden, output Activation
	}{
		{Tanh, Identity},
		{ReLU, Identity},
		{Sigmoid, Tanh},
		{Identity, Sigmoid},
	} {
		t.Run(tc.hidden.String()+"-"+tc.output.String(), func(t *testing.T) {
			p := newMSEProblem(t, tensor.Float64, []int{3, 5, 4, 2}, tc.hidden, tc.output, 6)
			defer p.m.Close()
			ref := p.mlp.Weights()
			theta := flatten(ref)
			_, grad := p.run(t)
			require.Len(t, grad, p.mlp.NumParams())

			want := fd.Gradient(nil, func(th []float64) float64 {
				require.NoError(t, p.mlp.SetWeights(unflatten(th, ref)))
				loss, _ := p.run(t)
				return loss
			}, theta, &fd.Settings{Formula: fd.Central, Step: 1e-6})
			for i := range want {
				assert.InDelta(t, want[i], grad[i], 1e-7*(1+abs(want[i])), "parameter %d", i)
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestMLPFloat32MatchesFloat64(t *testing.T) {
	sizes := []int{3, 8, 8, 2}
	p64 := newMSEProblem(t, tensor.Float64, sizes, Tanh, Identity, 5)
	defer p64.m.Close()
	p32 := newMSEProblem(t, tensor.Float32, sizes, Tanh, Identity, 5)
	defer p32.m.Close()
	assert.Equal(t, tensor.Float32, p32.mlp.Dtype())
	assert.Equal(t, tensor.Float32, p32.loss.Dtype())

	loss64, grad64 := p64.run(t)
	loss32, grad32 := p32.run(t)
	assert.InDelta(t, loss64, loss32, 1e-5*(1+loss64))
	assert.InDeltaSlice(t, grad64, grad32, 1e-5)
}

func TestMLPAccessors(t *testing.T) {
	g := gorgonia.NewGraph()
	sizes := []int{3, 7, 2}
	m, err := NewMLP(g, sizes, ReLU, Sigmoid, WithName("net"))
	require.NoError(t, err)
	assert.Equal(t, sizes, m.Sizes())
	m.Sizes()[0] = 100
	assert.Equal(t, sizes, m.Sizes(), "Sizes returns a copy")
	assert.Equal(t, ReLU, m.Hidden())
	assert.Equal(t, Sigmoid, m.Output())
	assert.Equal(t, tensor.Float64, m.Dtype())
	assert.Equal(t, 4*7+8*2, m.NumParams())
	require.Len(t, m.Layers(), 2)
	assert.Equal(t, ReLU, m.Layers()[0].Activation())
	assert.Equal(t, Sigmoid, m.Layers()[1].Activation())
	names := []string{}
	for _, n := range m.Learnables() {
		names = append(names, n.Name())
	}
	assert.Equal(t, []string{"net.0.W", "net.0.b", "net.1.W", "net.1.b"}, names)

	x := inputNode(g, tensor.Float64, "x", 4, 3, randMatrix(3, 4, 3))
	y, err := m.Forward(x)
	require.NoError(t, err)
	assert.Equal(t, tensor.Shape{4, 2}, y.Shape())
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	w := m.Weights()
	h := denseRef(randMatrix(3, 4, 3), 4, 3, w[0], w[1], ReLU)
	assert.InDeltaSlice(t, denseRef(h, 4, 7, w[2], w[3], Sigmoid), gtest.Float64s(y.Value()), 1e-12)
}

func TestMLPErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	for _, tc := range []struct {
		name   string
		sizes  []int
		hidden Activation
		opts   []Option
	}{
		{"no sizes", nil, Tanh, nil},
		{"one size", []int{3}, Tanh, nil},
		{"zero size", []int{3, 0, 2}, Tanh, nil},
		{"negative size", []int{3, -4, 2}, Tanh, nil},
		{"bad activation", []int{3, 2}, Activation(-1), nil},
		{"bad dtype", []int{3, 2}, Tanh, []Option{WithDtype(tensor.Complex128)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMLP(g, tc.sizes, tc.hidden, Identity, tc.opts...)
			assert.Error(t, err)
			assert.Nil(t, m)
		})
	}
	_, err := NewMLP(nil, []int{2, 2}, Tanh, Identity)
	assert.Error(t, err)

	m, err := NewMLP(g, []int{3, 4, 2}, Tanh, Identity)
	require.NoError(t, err)
	_, err = m.Forward(inputNode(g, tensor.Float64, "x", 2, 4, make([]float64, 8)))
	assert.Error(t, err)
	_, err = NewMLP(g, []int{3, 4, 2}, Tanh, Identity, WithName("mlp"))
	assert.ErrorContains(t, err, "already in the graph")
}

func TestMLPSetWeights(t *testing.T) {
	p := newMSEProblem(t, tensor.Float64, []int{2, 3, 1}, Tanh, Identity, 4)
	defer p.m.Close()
	before := p.mlp.Weights()
	loss0, _ := p.run(t)

	bad := p.mlp.Weights()
	bad[3] = append(bad[3], 0)
	assert.Error(t, p.mlp.SetWeights(bad))
	assert.Error(t, p.mlp.SetWeights(bad[:2]))
	assert.Equal(t, before, p.mlp.Weights(), "failed SetWeights writes nothing")

	zero := p.mlp.Weights()
	for _, s := range zero {
		floats.Scale(0, s)
	}
	require.NoError(t, p.mlp.SetWeights(zero))
	loss, _ := p.run(t)
	assert.NotEqual(t, loss0, loss, "the compiled machine sees the new weights")
	assert.InDelta(t, mean(sq(randMatrix(2, 4, 1))), loss, 1e-12, "a zero network predicts 0")

	require.NoError(t, p.mlp.SetWeights(before))
	loss, _ = p.run(t)
	assert.Equal(t, loss0, loss)
}

func sq(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * x
	}
	return out
}

func mean(v []float64) float64 { return floats.Sum(v) / float64(len(v)) }

func BenchmarkMLPForwardBackward(b *testing.B) {
	for _, bc := range []struct {
		name  string
		dt    tensor.Dtype
		sizes []int
		batch int
	}{
		{"f64-1x64-batch1000", tensor.Float64, []int{1, 64, 2}, 1000},
		{"f64-2x200-batch200", tensor.Float64, []int{50, 200, 200, 100}, 200},
		{"f32-2x200-batch200", tensor.Float32, []int{50, 200, 200, 100}, 200},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newMSEProblem(b, bc.dt, bc.sizes, ReLU, Identity, bc.batch)
			defer p.m.Close()
			b.ReportAllocs()
			for b.Loop() {
				p.m.Reset()
				if err := p.m.RunAll(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
