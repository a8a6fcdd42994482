package acopfcost

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/problems/acopf"
)

// TestObjective checks the graph's per-sample values against
// acopf.Model.Objective over the scale, in float64 and float32, and the
// errors.
func TestObjective(t *testing.T) {
	c, err := acopf.Load("case57_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	_, ny := m.Dims()
	const rows, scale = 3, 1e4
	y0 := m.OperatingPoint()
	ys := make([]float64, rows*ny)
	for i := range rows {
		for j, v := range y0 {
			ys[i*ny+j] = v * (1 + 0.01*float64(i))
		}
	}
	f, err := Objective(m, scale)
	require.NoError(t, err)
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		g := gorgonia.NewGraph()
		var back any = ys
		if dt == tensor.Float32 {
			f32 := make([]float32, len(ys))
			for i, v := range ys {
				f32[i] = float32(v)
			}
			back = f32
		}
		y := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(rows, ny), gorgonia.WithName("y"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(rows, ny), tensor.WithBacking(back))))
		out, err := f(nil, y)
		require.NoError(t, err)
		vm := gorgonia.NewTapeMachine(g)
		require.NoError(t, vm.RunAll())
		vm.Close()
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-4
		}
		for i := range rows {
			want := m.Objective(ys[i*ny:(i+1)*ny]) / scale
			var got float64
			switch d := out.Value().Data().(type) {
			case []float64:
				got = d[i]
			case []float32:
				got = float64(d[i])
			}
			assert.InDelta(t, want, got, tol*math.Abs(want), "%v row %d", dt, i)
		}
	}
	for _, s := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := Objective(m, s)
		assert.Error(t, err, "scale %v", s)
	}
}
