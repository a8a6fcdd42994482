package losses

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/gtest"
)

func TestSquaredLosses(t *testing.T) {
	const n, m = 5, 3
	pv, tv := randData(1, n*m, -2, 2), randData(2, n*m, -2, 2)
	var sum float64
	for i := range pv {
		d := pv[i] - tv[i]
		sum += d * d
	}
	for _, tc := range []struct {
		name  string
		build func(p, t *gorgonia.Node) (*gorgonia.Node, error)
		want  float64
	}{
		{"MSE", MSE, sum / (n * m)},
		{"SumSquaredMean", SumSquaredMean, sum / n},
		{"Displacement", func(p, t *gorgonia.Node) (*gorgonia.Node, error) { return Displacement(p, t, 0.5) }, 0.5 * sum / n},
		{"Displacement-zero", func(p, t *gorgonia.Node) (*gorgonia.Node, error) { return Displacement(p, t, 0) }, 0},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(tc.name+"/"+dt.String(), func(t *testing.T) {
				g := gorgonia.NewGraph()
				p := matrixNode(g, dt, "p", n, m, pv)
				target := matrixNode(g, dt, "t", n, m, tv)
				l, err := tc.build(p, target)
				require.NoError(t, err)
				assert.True(t, l.IsScalar())
				assert.Equal(t, dt, l.Dtype())
				_, err = gorgonia.Grad(l, p)
				require.NoError(t, err)
				vm := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(p))
				defer vm.Close()
				require.NoError(t, vm.RunAll())
				tol, gradTol := 1e-14, 1e-9
				if dt == tensor.Float32 {
					tol, gradTol = 1e-6, 1e-4
				}
				assert.InDelta(t, tc.want, scalar(l), tol*(1+tc.want))

				// The loss is quadratic, so central differences are exact up to rounding.
				gp, err := p.Grad()
				require.NoError(t, err)
				want := fd.Gradient(nil, func(v []float64) float64 {
					if tc.want == 0 {
						return 0
					}
					var s float64
					for i := range v {
						d := v[i] - tv[i]
						s += d * d
					}
					return s * tc.want / sum
				}, pv, &fd.Settings{Formula: fd.Central, Step: 1e-3})
				assert.InDeltaSlice(t, want, gtest.Float64s(gp), gradTol)
			})
		}
	}
}

func TestSquaredLossesOnVectors(t *testing.T) {
	g := gorgonia.NewGraph()
	mk := func(name string, v []float64) *gorgonia.Node {
		return gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(len(v)), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithBacking(v))))
	}
	p, target := mk("p", []float64{1, 2, 3, 4}), mk("t", []float64{0, 0, 0, 0})
	a, err := MSE(p, target)
	require.NoError(t, err)
	b, err := SumSquaredMean(p, target)
	require.NoError(t, err)
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	require.NoError(t, m.RunAll())
	assert.InDelta(t, 7.5, scalar(a), 1e-15)
	assert.InDelta(t, 7.5, scalar(b), 1e-15, "one output per sample: the normalisations agree")
}

func TestSquaredLossErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	a := matrixNode(g, tensor.Float64, "a", 3, 2, make([]float64, 6))
	for _, tc := range []struct {
		name string
		b    *gorgonia.Node
	}{
		{"nil", nil},
		{"shape", matrixNode(g, tensor.Float64, "b", 2, 3, make([]float64, 6))},
		{"dtype", matrixNode(g, tensor.Float32, "b32", 3, 2, make([]float64, 6))},
		{"graph", matrixNode(gorgonia.NewGraph(), tensor.Float64, "bo", 3, 2, make([]float64, 6))},
		{"scalar", gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("s"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []func(a, b *gorgonia.Node) (*gorgonia.Node, error){MSE, SumSquaredMean} {
				n, err := f(a, tc.b)
				assert.Error(t, err)
				assert.Nil(t, n)
			}
			_, err := Displacement(a, tc.b, 1)
			assert.Error(t, err)
		})
	}
	ints := gorgonia.NewMatrix(g, tensor.Int, gorgonia.WithShape(3, 2), gorgonia.WithName("i"))
	_, err := MSE(ints, ints)
	assert.Error(t, err)
	for _, l := range []float64{-0.1, math.NaN(), math.Inf(1)} {
		_, err := Displacement(a, a, l)
		assert.Error(t, err, "λ = %v", l)
	}
}

// TestScalarConstantsDoNotCollide guards against gorgonia merging constants
// by their printed value: 0.5 as float32 and as float64 print alike.
func TestScalarConstantsDoNotCollide(t *testing.T) {
	g := gorgonia.NewGraph()
	a := scalarConstant(g, tensor.Float64, 0.5)
	b := scalarConstant(g, tensor.Float32, 0.5)
	c := scalarConstant(g, tensor.Float64, 0.25)
	assert.Equal(t, tensor.Float64, a.Dtype())
	assert.Equal(t, tensor.Float32, b.Dtype())
	assert.NotSame(t, a, c)
	assert.Same(t, a, scalarConstant(g, tensor.Float64, 0.5))
}
