package dc3

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems/acopf"
)

// TestACOPFCompletion completes MATPOWER 6.0's case57 from the partial
// variables of its own operating point (Pg of six generators, Vm of the
// seven generator buses) and a flat start of the others: the power flow
// then holds to the tolerance and y_p is unchanged. The VJP matches
// central differences of a linear loss through the completion.
func TestACOPFCompletion(t *testing.T) {
	c, err := acopf.Load("matpower6_case57")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	a, err := NewACOPFCompletion(m)
	require.NoError(t, err)
	nb, ng := len(c.Buses), len(c.Gens)
	partial := a.Partial()
	require.Len(t, partial, 2*ng-1)
	op := m.OperatingPoint()
	x := m.Loads()
	yp := make([]float64, len(partial))
	for i, k := range partial {
		yp[i] = op[k]
	}
	flat := func() []float64 {
		y := make([]float64, len(op))
		for i := range nb {
			y[i] = 1
		}
		return y
	}
	y := flat()
	res, ok, err := a.Complete(x, yp, y)
	require.NoError(t, err)
	require.True(t, ok, "max|c| = %g", res)
	for i, k := range partial {
		assert.Equal(t, yp[i], y[k])
	}
	pf := m.PowerFlow()
	_, _, nc := pf.Dims()
	cv := make([]float64, nc)
	pf.Eval(x, y, cv, nil)
	for _, v := range cv {
		require.LessOrEqual(t, math.Abs(v), DefaultNewtonTol)
	}

	w := make([]float64, len(y))
	for k := range w {
		w[k] = math.Sin(float64(3*k + 1))
	}
	gp := make([]float64, len(yp))
	require.NoError(t, a.VJP(x, y, w, gp))
	loss := func(yp []float64) float64 {
		z := append([]float64(nil), y...)
		_, ok, err := a.Complete(x, yp, z)
		require.NoError(t, err)
		require.True(t, ok)
		var s float64
		for k := range z {
			s += w[k] * z[k]
		}
		return s
	}
	const h = 1e-6
	for i := range yp {
		p, q := append([]float64(nil), yp...), append([]float64(nil), yp...)
		p[i] += h
		q[i] -= h
		fd := (loss(p) - loss(q)) / (2 * h)
		assert.InDelta(t, fd, gp[i], 1e-5*(1+math.Abs(fd)), "∂L/∂y_p[%d]", i)
	}

	_, _, err = a.Complete(x[:3], yp, y)
	assert.Error(t, err)
	assert.Error(t, a.VJP(x[:3], y, w, gp))
}
