package problems

import (
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// oldObjectiveNode builds f as ObjectiveNode did before it became one
// operation: the chain Square(y)·(Q/2) + Sin(y)·p of gorgonia operations,
// whose products by the (N_O) vectors are matrix–vector (or vector–vector)
// products. The tests and benchmarks compare the operation with it.
func oldObjectiveNode(o SineQuadratic, y *gorgonia.Node) (*gorgonia.Node, error) {
	halfQ := make([]float64, len(o.Q))
	for k, q := range o.Q {
		halfQ[k] = 0.5 * q
	}
	qn, err := vectorNode(y.Graph(), y.Dtype(), "sinequad_halfQ", halfQ)
	if err != nil {
		return nil, err
	}
	pn, err := vectorNode(y.Graph(), y.Dtype(), "sinequad_p", o.P)
	if err != nil {
		return nil, err
	}
	sq, err := gorgonia.Square(y)
	if err != nil {
		return nil, err
	}
	quad, err := gorgonia.Mul(sq, qn)
	if err != nil {
		return nil, err
	}
	sin, err := gorgonia.Sin(y)
	if err != nil {
		return nil, err
	}
	lin, err := gorgonia.Mul(sin, pn)
	if err != nil {
		return nil, err
	}
	return gorgonia.Add(quad, lin)
}

// vectorNode returns an input node of g holding v converted to dt, named
// prefix followed by a hash of v.
func vectorNode(g *gorgonia.ExprGraph, dt tensor.Dtype, prefix string, v []float64) (*gorgonia.Node, error) {
	h := fnv.New64a()
	var b [8]byte
	for _, x := range v {
		bits := math.Float64bits(x)
		for i := range b {
			b[i] = byte(bits >> (8 * i))
		}
		h.Write(b[:])
	}
	var t *tensor.Dense
	switch dt {
	case tensor.Float64:
		t = tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(append([]float64(nil), v...)))
	case tensor.Float32:
		v32 := make([]float32, len(v))
		for i, x := range v {
			v32[i] = float32(x)
		}
		t = tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v32))
	default:
		return nil, fmt.Errorf("problems: ObjectiveNode: dtype %v, want Float64 or Float32", dt)
	}
	name := fmt.Sprintf("%s_%v_%016x", prefix, dt, h.Sum64())
	return gorgonia.NewVector(g, dt, gorgonia.WithShape(len(v)), gorgonia.WithName(name), gorgonia.WithValue(t)), nil
}

// objectiveRun is the result of evaluating an objective builder on one y.
type objectiveRun struct {
	f, grad []float64 // f (one entry per row) and ∂(Σ_i w_i f_i)/∂y
}

// runObjective builds f = build(y) for y of the given shape holding data
// (converted to dt), the cost Σ_i w_i f_i (w_i = 1 + i/10, so that each row
// has its own upstream gradient) and runs it on the TapeMachine (with
// gorgonia.Grad) or the LispMachine.
func runObjective(t *testing.T, build func(*gorgonia.Node) (*gorgonia.Node, error), dt tensor.Dtype, shape tensor.Shape, data []float64, lisp bool) objectiveRun {
	t.Helper()
	g := gorgonia.NewGraph()
	y := gorgonia.NewTensor(g, dt, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backingOf(dt, data)))))
	f, err := build(y)
	require.NoError(t, err)
	cost := f
	if len(shape) == 2 {
		w := make([]float64, shape[0])
		for i := range w {
			w[i] = 1 + float64(i)/10
		}
		wn := gorgonia.NewVector(g, dt, gorgonia.WithShape(shape[0]), gorgonia.WithName("w"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(shape[0]), tensor.WithBacking(backingOf(dt, w)))))
		fw, err := gorgonia.HadamardProd(f, wn)
		require.NoError(t, err)
		cost, err = gorgonia.Sum(fw)
		require.NoError(t, err)
	}
	var vm gorgonia.VM
	var grad *gorgonia.Node
	if lisp {
		vm = gorgonia.NewLispMachine(g)
	} else {
		grads, err := gorgonia.Grad(cost, y)
		require.NoError(t, err)
		grad = grads[0]
		vm = gorgonia.NewTapeMachine(g)
	}
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	var r objectiveRun
	switch v := f.Value().Data().(type) {
	case float64:
		r.f = []float64{v}
	case float32:
		r.f = []float64{float64(v)}
	default:
		r.f = append([]float64(nil), toFloat64(v)...)
	}
	if lisp {
		gv, err := y.Grad()
		require.NoError(t, err)
		r.grad = append([]float64(nil), toFloat64(gv.Data())...)
	} else {
		r.grad = append([]float64(nil), toFloat64(grad.Value().Data())...)
	}
	return r
}

// backingOf returns data as a []float64 copy or a []float32.
func backingOf(dt tensor.Dtype, data []float64) any {
	if dt == tensor.Float32 {
		d32 := make([]float32, len(data))
		for i, v := range data {
			d32[i] = float32(v)
		}
		return d32
	}
	return append([]float64(nil), data...)
}

// sineQuadTestData returns a nonconvex instance with N_O = n and batch×n
// entries of y, N(0, 3²) draws.
func sineQuadTestData(t *testing.T, n, batch int) (SineQuadratic, []float64) {
	t.Helper()
	p, err := NewNonconvexLinear(n, 1, 5)
	require.NoError(t, err)
	rnd := newRand(3, 0)
	data := make([]float64, batch*n)
	for i := range data {
		data[i] = 3 * rnd.NormFloat64()
	}
	return p.SineQuadratic, data
}

// TestObjectiveNodeOp compares the operation with the chain it replaces:
// float64 values and gradients bit for bit, float32 to 1e-6 relative to
// the size of the terms (the chain's math32 and float32 sums are the less
// accurate), for a batch and one sample, on both machines.
func TestObjectiveNodeOp(t *testing.T) {
	const n, batch = 30, 7
	o, data := sineQuadTestData(t, n, batch)
	newBuild := o.ObjectiveNode
	oldBuild := func(y *gorgonia.Node) (*gorgonia.Node, error) { return oldObjectiveNode(o, y) }
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for _, shape := range []tensor.Shape{{batch, n}, {n}} {
			for _, lisp := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%v/lisp=%t", dt, shape, lisp), func(t *testing.T) {
					d := data[:shape.TotalSize()]
					got := runObjective(t, newBuild, dt, shape, d, lisp)
					want := runObjective(t, oldBuild, dt, shape, d, lisp)
					rows := len(got.f)
					require.Len(t, want.f, rows)
					if dt == tensor.Float64 {
						assert.Equal(t, want.f, got.f, "values bit for bit")
						assert.Equal(t, want.grad, got.grad, "gradients bit for bit")
						return
					}
					grad := make([]float64, n)
					for i := range rows {
						y := float32Row(d[i*n : (i+1)*n])
						var scale, gscale float64
						for k, v := range y {
							scale += math.Abs(0.5*o.Q[k]*v*v) + math.Abs(o.P[k]*math.Sin(v))
							gscale = math.Max(gscale, math.Abs(o.Q[k]*v)+math.Abs(o.P[k]))
						}
						assert.InDelta(t, want.f[i], got.f[i], 1e-6*scale, "row %d: f against the chain", i)
						assert.InDelta(t, o.Objective(nil, y), got.f[i], 1e-7*scale, "row %d: f against float64", i)
						w := 1.0
						if len(shape) == 2 {
							w = float64(float32(1 + float64(i)/10))
						}
						o.ObjectiveGrad(nil, y, grad)
						for k := range grad {
							j := i*n + k
							assert.InDelta(t, want.grad[j], got.grad[j], 1e-6*w*gscale, "∇f[%d] against the chain", j)
							assert.InDelta(t, w*grad[k], got.grad[j], 1e-7*w*gscale, "∇f[%d] against float64", j)
						}
					}
				})
			}
		}
	}
}

// float32Row returns v rounded to float32, as float64.
func float32Row(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(float32(x))
	}
	return out
}

// TestObjectiveNodeOpFiniteDifferences checks the float64 gradient of the
// operation against central differences of its values.
func TestObjectiveNodeOpFiniteDifferences(t *testing.T) {
	const n, batch = 8, 3
	o, data := sineQuadTestData(t, n, batch)
	op, err := newSineQuadOp(o, tensor.Shape{batch, n}, tensor.Float64)
	require.NoError(t, err)
	up := []float64{1, -0.5, 2}
	cost := func(y []float64) float64 {
		f := op.value64(y, batch)
		var s float64
		for i, v := range f {
			s += up[i] * v
		}
		return s
	}
	g, err := op.grad(tensor.New(tensor.WithShape(batch, n), tensor.WithBacking(data)),
		tensor.New(tensor.WithShape(batch), tensor.WithBacking(up)))
	require.NoError(t, err)
	const h = 1e-6
	for j := range data {
		yp, ym := append([]float64(nil), data...), append([]float64(nil), data...)
		yp[j] += h
		ym[j] -= h
		fd := (cost(yp) - cost(ym)) / (2 * h)
		assert.InDelta(t, fd, g.([]float64)[j], 1e-6*(1+math.Abs(fd)), "∂/∂y[%d]", j)
	}
}

// TestObjectiveNodeOpNonFinite checks that NaN and infinite entries of y
// give non-finite values and gradients where the chain gave them.
func TestObjectiveNodeOpNonFinite(t *testing.T) {
	const n, batch = 4, 3
	o, data := sineQuadTestData(t, n, batch)
	data[1] = math.NaN()
	data[n+2] = math.Inf(1)
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		got := runObjective(t, o.ObjectiveNode, dt, tensor.Shape{batch, n}, data, false)
		want := runObjective(t, func(y *gorgonia.Node) (*gorgonia.Node, error) { return oldObjectiveNode(o, y) },
			dt, tensor.Shape{batch, n}, data, false)
		for i := range want.f {
			assert.Equal(t, math.IsNaN(want.f[i]), math.IsNaN(got.f[i]), "%v f[%d] = %v, chain %v", dt, i, got.f[i], want.f[i])
			assert.Equal(t, math.IsInf(want.f[i], 0), math.IsInf(got.f[i], 0), "%v f[%d]", dt, i)
		}
		assert.True(t, math.IsNaN(got.f[0]) && math.IsNaN(got.f[1]) && !math.IsNaN(got.f[2]), "%v: %v", dt, got.f)
		for j := range want.grad {
			assert.Equal(t, math.IsNaN(want.grad[j]), math.IsNaN(got.grad[j]), "%v ∇f[%d] = %v, chain %v", dt, j, got.grad[j], want.grad[j])
		}
	}
}

// TestObjectiveNodeOpInstances checks that two instances applied to one y
// in one graph stay two operations with their own values, and that the
// hash tells instances, dtypes and shapes apart.
func TestObjectiveNodeOpInstances(t *testing.T) {
	const n, batch = 5, 2
	o1, data := sineQuadTestData(t, n, batch)
	o2 := SineQuadratic{Q: append([]float64(nil), o1.Q...), P: append([]float64(nil), o1.P...)}
	o2.P[n-1] += 0.25
	for _, withGrad := range []bool{false, true} {
		g := gorgonia.NewGraph()
		y := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(batch, n), gorgonia.WithName("y"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(batch, n), tensor.WithBacking(data))))
		f1, err := o1.ObjectiveNode(y)
		require.NoError(t, err)
		f2, err := o2.ObjectiveNode(y)
		require.NoError(t, err)
		require.NotSame(t, f1, f2, "different instances are not merged")
		var dy *gorgonia.Node
		if withGrad { // the machine may add f2 into f1's memory: only the gradient is checked
			s, err := gorgonia.Add(f1, f2)
			require.NoError(t, err)
			cost, err := gorgonia.Sum(s)
			require.NoError(t, err)
			grads, err := gorgonia.Grad(cost, y)
			require.NoError(t, err)
			dy = grads[0]
		}
		vm := gorgonia.NewTapeMachine(g)
		require.NoError(t, vm.RunAll())
		g1, g2 := make([]float64, n), make([]float64, n)
		for i := range batch {
			row := data[i*n : (i+1)*n]
			if !withGrad {
				assert.InDelta(t, o1.Objective(nil, row), f1.Value().Data().([]float64)[i], 1e-12)
				assert.InDelta(t, o2.Objective(nil, row), f2.Value().Data().([]float64)[i], 1e-12)
				continue
			}
			o1.ObjectiveGrad(nil, row, g1)
			o2.ObjectiveGrad(nil, row, g2)
			for k := range g1 {
				assert.InDelta(t, g1[k]+g2[k], dy.Value().Data().([]float64)[i*n+k], 1e-12)
			}
		}
		vm.Close()
	}

	hashes := map[uint32]string{}
	for _, c := range []struct {
		o     SineQuadratic
		shape tensor.Shape
		dt    tensor.Dtype
	}{
		{o1, tensor.Shape{batch, n}, tensor.Float64},
		{o2, tensor.Shape{batch, n}, tensor.Float64},
		{o1, tensor.Shape{batch, n}, tensor.Float32},
		{o1, tensor.Shape{n}, tensor.Float64},
	} {
		op, err := newSineQuadOp(c.o, c.shape, c.dt)
		require.NoError(t, err)
		for _, h := range []uint32{op.Hashcode(), (&sineQuadGradOp{f: op}).Hashcode()} {
			assert.NotContains(t, hashes, h, "%v", op)
			hashes[h] = op.String()
		}
	}
}

// TestObjectiveNodeOpErrors checks the errors for bad shapes, dtypes and
// values.
func TestObjectiveNodeOpErrors(t *testing.T) {
	const n = 4
	o, data := sineQuadTestData(t, n, 2)
	g := gorgonia.NewGraph()
	for _, c := range []struct {
		name  string
		dt    tensor.Dtype
		shape tensor.Shape
	}{
		{"columns", tensor.Float64, tensor.Shape{2, n + 1}},
		{"length", tensor.Float32, tensor.Shape{n - 1}},
		{"rank 3", tensor.Float64, tensor.Shape{2, 1, n}},
		{"int", tensor.Int, tensor.Shape{2, n}},
	} {
		y := gorgonia.NewTensor(g, c.dt, len(c.shape), gorgonia.WithShape(c.shape...), gorgonia.WithName("y_"+c.name))
		_, err := o.ObjectiveNode(y)
		assert.Error(t, err, c.name)
	}
	y := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, n), gorgonia.WithName("y"))
	_, err := SineQuadratic{Q: o.Q, P: o.P[:n-1]}.ObjectiveNode(y)
	assert.Error(t, err, "len(P) ≠ len(Q)")

	op, err := newSineQuadOp(o, tensor.Shape{2, n}, tensor.Float64)
	require.NoError(t, err)
	good := tensor.New(tensor.WithShape(2, n), tensor.WithBacking(data))
	_, err = op.Do()
	assert.Error(t, err, "no input")
	_, err = op.Do(tensor.New(tensor.WithShape(2, n), tensor.WithBacking(backingOf(tensor.Float32, data))))
	assert.Error(t, err, "float32 value for a float64 op")
	_, err = op.Do(tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(data)))
	assert.Error(t, err, "transposed shape")
	_, err = op.InferShape(tensor.Shape{2, n + 1})
	assert.Error(t, err)
	grad := &sineQuadGradOp{f: op}
	_, err = grad.Do(good, tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{1, 2, 3})))
	assert.Error(t, err, "upstream gradient of the wrong length")
	_, err = grad.Do(good, gorgonia.NewF64(1))
	assert.Error(t, err, "scalar upstream gradient for a batch")
	_, err = grad.Do(good)
	assert.Error(t, err, "no upstream gradient")
	v, err := grad.Do(good, tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{1, 2})))
	require.NoError(t, err)
	assert.Equal(t, tensor.Shape{2, n}, v.Shape())
}

// BenchmarkObjectiveNode compares the operation with the chain it replaces
// on the loss of the nonconvex benchmarks, Mean(f(y)), forward and
// backward on the TapeMachine for a 200×100 batch (the paper's batch and
// N_O), with y ~ N(0, σ²) for σ = 0.1 (an untrained network's outputs,
// where math32's Sin and Cos take their shortest path) and σ = 3. Run it
// several times to alternate the two.
func BenchmarkObjectiveNode(b *testing.B) {
	const n, batch = 100, 200
	p, err := NewNonconvexLinear(n, 50, PaperSeed)
	if err != nil {
		b.Fatal(err)
	}
	builds := []struct {
		name  string
		build func(*gorgonia.Node) (*gorgonia.Node, error)
	}{
		{"chain", func(y *gorgonia.Node) (*gorgonia.Node, error) { return oldObjectiveNode(p.SineQuadratic, y) }},
		{"op", p.ObjectiveNode},
	}
	for _, sigma := range []float64{0.1, 3} {
		rnd := newRand(4, 0)
		data := make([]float64, batch*n)
		for i := range data {
			data[i] = sigma * rnd.NormFloat64()
		}
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			for _, c := range builds {
				b.Run(fmt.Sprintf("σ=%g/%v/%s", sigma, dt, c.name), func(b *testing.B) {
					g := gorgonia.NewGraph()
					y := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(batch, n), gorgonia.WithName("y"),
						gorgonia.WithValue(tensor.New(tensor.WithShape(batch, n), tensor.WithBacking(backingOf(dt, data)))))
					f, err := c.build(y)
					if err != nil {
						b.Fatal(err)
					}
					cost, err := gorgonia.Mean(f)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := gorgonia.Grad(cost, y); err != nil {
						b.Fatal(err)
					}
					vm := gorgonia.NewTapeMachine(g)
					defer vm.Close()
					b.ReportAllocs()
					for b.Loop() {
						if err := vm.RunAll(); err != nil {
							b.Fatal(err)
						}
						vm.Reset()
					}
				})
			}
		}
	}
}

// TestObjectiveNodeOpCache checks that the float32 gradient is the same,
// bit for bit, whether it takes the derivative from the value pass (its y
// is the last evaluated) or computes it afresh (another y was evaluated
// since, or none), and that a y changed in place after the value pass is
// not mistaken for the cached one.
func TestObjectiveNodeOpCache(t *testing.T) {
	const n, batch = 6, 4
	o, data := sineQuadTestData(t, n, 2*batch)
	op, err := newSineQuadOp(o, tensor.Shape{batch, n}, tensor.Float32)
	require.NoError(t, err)
	y1 := tensor.New(tensor.WithShape(batch, n), tensor.WithBacking(backingOf(tensor.Float32, data[:batch*n])))
	y2 := tensor.New(tensor.WithShape(batch, n), tensor.WithBacking(backingOf(tensor.Float32, data[batch*n:])))
	up := tensor.New(tensor.WithShape(batch), tensor.WithBacking([]float32{1, -2, 0.5, 3}))
	gradOf := func(y *tensor.Dense) []float32 {
		t.Helper()
		g, err := op.grad(y, up)
		require.NoError(t, err)
		return g.([]float32)
	}
	fresh := gradOf(y1) // nothing cached
	_, err = op.Do(y1)
	require.NoError(t, err)
	assert.Equal(t, fresh, gradOf(y1), "cached derivative")
	_, err = op.Do(y2)
	require.NoError(t, err)
	assert.Equal(t, fresh, gradOf(y1), "another y cached")

	_, err = op.Do(y1)
	require.NoError(t, err)
	y1.Data().([]float32)[3] += 1 // y1's memory now holds another y
	other, err := newSineQuadOp(o, tensor.Shape{batch, n}, tensor.Float32)
	require.NoError(t, err)
	want, err := other.grad(y1, up)
	require.NoError(t, err)
	assert.Equal(t, want, gradOf(y1), "changed in place")
	assert.NotEqual(t, fresh, gradOf(y1))
}
