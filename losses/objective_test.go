package losses

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/gtest"
)

// sinObjective is f(x, y) = Σ_j sin y_j + ½ y_j² per sample, returned with
// the given shape: "vector" (N), "column" (N, 1) or "scalar" (the sum over
// the batch).
func sinObjective(shape string) func(x, y *gorgonia.Node) (*gorgonia.Node, error) {
	return func(_, y *gorgonia.Node) (*gorgonia.Node, error) {
		s, err := gorgonia.Sin(y)
		if err != nil {
			return nil, err
		}
		sq, err := gorgonia.Square(y)
		if err != nil {
			return nil, err
		}
		half, err := gorgonia.Mul(sq, scalarConstant(y.Graph(), y.Dtype(), 0.5))
		if err != nil {
			return nil, err
		}
		v, err := gorgonia.Add(s, half)
		if err != nil {
			return nil, err
		}
		switch shape {
		case "scalar":
			return gorgonia.Sum(v)
		case "column":
			r, err := gorgonia.Sum(v, 1)
			if err != nil {
				return nil, err
			}
			return gorgonia.Reshape(r, tensor.Shape{y.Shape()[0], 1})
		}
		return gorgonia.Sum(v, 1)
	}
}

func TestObjective(t *testing.T) {
	const n, ny = 4, 3
	yv := randData(3, n*ny, -1, 1)
	f := func(v []float64) float64 {
		var s float64
		for _, y := range v {
			s += math.Sin(y) + 0.5*y*y
		}
		return s
	}
	for _, tc := range []struct {
		shape string
		want  float64
	}{
		{"vector", f(yv) / n},
		{"column", f(yv) / n},
		{"scalar", f(yv)},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			t.Run(tc.shape+"/"+dt.String(), func(t *testing.T) {
				g := gorgonia.NewGraph()
				x := matrixNode(g, dt, "x", n, 1, make([]float64, n))
				y := matrixNode(g, dt, "y", n, ny, yv)
				l, err := Objective(sinObjective(tc.shape), x, y)
				require.NoError(t, err)
				assert.True(t, l.IsScalar())
				_, err = gorgonia.Grad(l, y)
				require.NoError(t, err)
				m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(y))
				defer m.Close()
				require.NoError(t, m.RunAll())
				tol := 1e-14
				if dt == tensor.Float32 {
					tol = 1e-6
				}
				assert.InDelta(t, tc.want, scalar(l), tol*(1+math.Abs(tc.want)))
				gy, err := y.Grad()
				require.NoError(t, err)
				k := tc.want / f(yv)
				want := fd.Gradient(nil, func(v []float64) float64 { return k * f(v) }, yv, nil)
				assert.InDeltaSlice(t, want, gtest.Float64s(gy), 1e-5)
			})
		}
	}
}

func TestObjectiveErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	y := matrixNode(g, tensor.Float64, "y", 4, 2, make([]float64, 8))
	for _, tc := range []struct {
		name string
		f    func(x, y *gorgonia.Node) (*gorgonia.Node, error)
		y    *gorgonia.Node
	}{
		{"nil f", nil, y},
		{"nil y", sinObjective("vector"), nil},
		{"vector y", sinObjective("vector"), gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(4), gorgonia.WithName("v"))},
		{"f fails", func(_, _ *gorgonia.Node) (*gorgonia.Node, error) { return nil, errors.New("boom") }, y},
		{"f returns nil", func(_, _ *gorgonia.Node) (*gorgonia.Node, error) { return nil, nil }, y},
		{"f panics", func(_, _ *gorgonia.Node) (*gorgonia.Node, error) { panic("boom") }, y},
		{"per-entry objective", func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sin(y) }, y},
		{"wrong length", func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(y, 0) }, y},
		{"int objective", func(_, _ *gorgonia.Node) (*gorgonia.Node, error) {
			return gorgonia.NewVector(g, tensor.Int, gorgonia.WithShape(4), gorgonia.WithName("vi")), nil
		}, y},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Objective(tc.f, nil, tc.y)
			assert.Error(t, err)
			assert.Nil(t, l)
		})
	}
}
