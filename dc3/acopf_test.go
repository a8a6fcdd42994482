package dc3

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/problems/acopf"
)

// case57Completion loads MATPOWER 6.0's case57, its model and DC3's
// completion on it.
func case57Completion(t *testing.T) (*acopf.Case, *acopf.Model, *ACOPFCompletion) {
	t.Helper()
	c, err := acopf.Load("matpower6_case57")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	a, err := NewACOPFCompletion(m)
	require.NoError(t, err)
	return c, m, a
}

// TestACOPFCompletion completes MATPOWER 6.0's case57 from the partial
// variables of its own operating point (Pg of six generators, Vm of the
// seven generator buses) and a flat start of the others: the power flow
// then holds to the tolerance and y_p is unchanged. The VJP matches
// central differences of a linear loss through the completion.
func TestACOPFCompletion(t *testing.T) {
	c, m, a := case57Completion(t)
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

// TestACOPFCompletionNode completes a batch of two samples on a graph and
// checks the values against Complete and the gradient with respect to
// y_p against VJP.
func TestACOPFCompletionNode(t *testing.T) {
	c, m, a := case57Completion(t)
	nb := len(c.Buses)
	partial := a.Partial()
	op, x0 := m.OperatingPoint(), m.Loads()
	nx, ny := m.Dims()
	const n = 2
	xv, pv := make([]float64, n*nx), make([]float64, n*len(partial))
	for s := range n {
		for j := range nx {
			xv[s*nx+j] = x0[j] * (1 + 0.05*float64(s))
		}
		for i, k := range partial {
			pv[s*len(partial)+i] = op[k]
		}
	}
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, nx), gorgonia.WithName("x"), gorgonia.WithValue(tensor.New(tensor.WithShape(n, nx), tensor.WithBacking(xv))))
	yp := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, len(partial)), gorgonia.WithName("yp"), gorgonia.WithValue(tensor.New(tensor.WithShape(n, len(partial)), tensor.WithBacking(append([]float64(nil), pv...)))))
	y, err := a.Node(x, yp)
	require.NoError(t, err)
	wv := make([]float64, n*ny)
	for k := range wv {
		wv[k] = math.Cos(float64(k))
	}
	w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, ny), gorgonia.WithName("w"), gorgonia.WithValue(tensor.New(tensor.WithShape(n, ny), tensor.WithBacking(wv))))
	loss := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(w, y))))
	grads, err := gorgonia.Grad(loss, yp)
	require.NoError(t, err)
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	yv := y.Value().Data().([]float64)
	gv := grads[0].Value().Data().([]float64)
	for s := range n {
		want := make([]float64, ny)
		for i := range nb {
			want[i] = 1
		}
		_, ok, err := a.Complete(xv[s*nx:(s+1)*nx], pv[s*len(partial):(s+1)*len(partial)], want)
		require.NoError(t, err)
		require.True(t, ok)
		for k := range want {
			assert.InDelta(t, want[k], yv[s*ny+k], 1e-9, "sample %d, y[%d]", s, k)
		}
		gp := make([]float64, len(partial))
		require.NoError(t, a.VJP(xv[s*nx:(s+1)*nx], want, wv[s*ny:(s+1)*ny], gp))
		for i := range gp {
			assert.InDelta(t, gp[i], gv[s*len(partial)+i], 1e-8*(1+math.Abs(gp[i])), "sample %d, ∂/∂y_p[%d]", s, i)
		}
	}
	_, err = a.Node(yp, yp)
	assert.Error(t, err)
}
