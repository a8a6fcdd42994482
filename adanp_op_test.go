package enforce

import (
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/gtest"
)

// opNet is backbone → AdaNP → loss on a gorgonia graph:
//
//	x  = X·Wx                 (so that x is computed and has a gradient)
//	ŷ  = tanh(x·W1)·W2
//	ỹ  = AdaNP(x, ŷ)
//	ℓ  = Σ A ⊙ ỹ
type opNet struct {
	g          *G.ExprGraph
	wx, w1, w2 *G.Node
	loss, out  *G.Node
	op         *Op
}

// symbolicOff makes newOpNet skip gorgonia.Grad, for the LispMachine.
var symbolicOff bool

func newOpNet(t *testing.T, a *AdaNP, X, A *mat.Dense, hidden int, seed uint64, dt tensor.Dtype, opts ...ApplyOption) *opNet {
	rnd := rand.New(rand.NewPCG(seed, 1))
	rows, nx := X.Dims()
	_, ny := a.Dims()
	g := G.NewGraph()
	val := func(m *mat.Dense) *tensor.Dense {
		r, c := m.Dims()
		if dt == tensor.Float32 {
			d := make([]float32, r*c)
			for i, v := range m.RawMatrix().Data {
				d[i] = float32(v)
			}
			return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(d))
		}
		return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(append([]float64(nil), m.RawMatrix().Data...)))
	}
	learn := func(r, c int, scale float64, name string) *G.Node {
		return G.NewMatrix(g, dt, G.WithShape(r, c), G.WithName(name), G.WithValue(val(randDense(rnd, r, c, scale))))
	}
	n := &opNet{g: g}
	Xn := G.NewMatrix(g, dt, G.WithShape(rows, nx), G.WithName("X"), G.WithValue(val(X)))
	An := G.NewMatrix(g, dt, G.WithShape(rows, ny), G.WithName("A"), G.WithValue(val(A)))
	wxInit := mat.NewDense(nx, nx, nil)
	for i := 0; i < nx; i++ {
		wxInit.Set(i, i, 1)
	}
	n.wx = G.NewMatrix(g, dt, G.WithShape(nx, nx), G.WithName("Wx"), G.WithValue(val(wxInit)))
	n.w1 = learn(nx, hidden, 0.5, "W1")
	n.w2 = learn(hidden, ny, 0.2, "W2")
	x := G.Must(G.Mul(Xn, n.wx))
	h := G.Must(G.Tanh(G.Must(G.Mul(x, n.w1))))
	yhat := G.Must(G.Mul(h, n.w2))
	out, err := a.Apply(x, yhat, opts...)
	require.NoError(t, err)
	n.out = out
	n.op, _ = OpOf(out)
	n.loss = G.Must(G.Sum(G.Must(G.HadamardProd(out, An))))
	if !symbolicOff {
		_, err = G.Grad(n.loss, n.wx, n.w1, n.w2)
		require.NoError(t, err)
	}
	return n
}

// lossAt runs the graph forward with w's values replaced by v.
func (n *opNet) lossAt(t *testing.T, w *G.Node, v []float64) float64 {
	old := w.Value().(*tensor.Dense).Clone().(*tensor.Dense)
	r, c := w.Shape()[0], w.Shape()[1]
	require.NoError(t, G.Let(w, tensor.New(tensor.WithShape(r, c), tensor.WithBacking(append([]float64(nil), v...)))))
	m := G.NewTapeMachine(n.g)
	defer m.Close()
	require.NoError(t, m.RunAll())
	l := n.loss.Value().Data().(float64)
	require.NoError(t, G.Let(w, old))
	return l
}

func gradOf(t *testing.T, n *G.Node) []float64 {
	gv, err := n.Grad()
	require.NoError(t, err)
	return gtest.Float64s(gv)
}

func TestOpGradientThroughGraph(t *testing.T) {
	rnd := rand.New(rand.NewPCG(21, 22))
	quad := newNPQuad(rnd, 5, 2, 0.3)
	aff := newNPAffine(rnd, 2, 5, 2)
	for _, tc := range []struct {
		name string
		c    Constraint
		mode GradMode
		s    Settings
	}{
		{"quadratic/unrolled", quad, Unrolled, Settings{}},
		{"quadratic/unrolled/autodiagonal/globalised/recompute", quad, Unrolled,
			Settings{Weights: AutoDiagonal, LineSearch: true, MaxStep: 0.2, Recompute: true}},
		{"quadratic/unrolled/damping", quad, Unrolled, Settings{Damping: 0.1}},
		{"affine/unrolled", aff, Unrolled, Settings{}},
		{"affine/projector", aff, Projector, Settings{}},
		{"affine/implicit", aff, Implicit, Settings{}},
		{"affine/final-projector", aff, FinalProjector, Settings{}},
		{"affine-constant/implicit", npConstAffine{aff}, Implicit, Settings{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.MinDepth, s.MaxDepth, s.Grad = 3, 3, tc.mode
			a, err := NewAdaNP(tc.c, s)
			require.NoError(t, err)
			X := randDense(rnd, 4, 2, 0.4)
			A := randDense(rnd, 4, 5, 1)
			net := newOpNet(t, a, X, A, 6, 7, tensor.Float64)
			m := G.NewTapeMachine(net.g, G.BindDualValues(net.wx, net.w1, net.w2))
			require.NoError(t, m.RunAll())
			m.Close()
			assert.Equal(t, 3, net.op.Stats().Depth)
			assert.True(t, net.op.Projected())
			for _, w := range []*G.Node{net.wx, net.w1, net.w2} {
				got := gradOf(t, w)
				w0 := append([]float64(nil), w.Value().Data().([]float64)...)
				want := fd.Gradient(nil, func(v []float64) float64 { return net.lossAt(t, w, v) }, w0,
					&fd.Settings{Formula: fd.Central, Step: 1e-6})
				assert.Less(t, relErr(got, want), 1e-6, "%s\n got %v\nwant %v", w.Name(), got, want)
			}
		})
	}
}

func TestOpLispMachineMatchesTape(t *testing.T) {
	rnd := rand.New(rand.NewPCG(23, 24))
	quad := newNPQuad(rnd, 5, 2, 0.3)
	a, err := NewAdaNP(quad, Settings{MinDepth: 2, MaxDepth: 2})
	require.NoError(t, err)
	X := randDense(rnd, 3, 2, 0.4)
	A := randDense(rnd, 3, 5, 1)

	tape := newOpNet(t, a, X, A, 4, 9, tensor.Float64)
	m := G.NewTapeMachine(tape.g, G.BindDualValues(tape.wx, tape.w1, tape.w2))
	require.NoError(t, m.RunAll())
	m.Close()

	symbolicOff = true
	lisp := newOpNet(t, a, X, A, 4, 9, tensor.Float64)
	symbolicOff = false
	lm := G.NewLispMachine(lisp.g)
	require.NoError(t, lm.RunAll())
	lm.Close()
	for i, w := range []*G.Node{lisp.wx, lisp.w1, lisp.w2} {
		want := gradOf(t, []*G.Node{tape.wx, tape.w1, tape.w2}[i])
		assert.InDeltaSlice(t, want, gradOf(t, w), 1e-12, w.Name())
	}
}

func TestOpFloat32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(25, 26))
	quad := newNPQuad(rnd, 5, 2, 0.3)
	a, err := NewAdaNP(quad, Settings{})
	require.NoError(t, err)
	X := randDense(rnd, 8, 2, 0.4)
	A := randDense(rnd, 8, 5, 1)
	net := newOpNet(t, a, X, A, 6, 3, tensor.Float32)
	m := G.NewTapeMachine(net.g, G.BindDualValues(net.wx, net.w1, net.w2))
	defer m.Close()
	require.NoError(t, m.RunAll())
	out := net.out.Value().Data().([]float32)
	y := mat.NewDense(8, 5, nil)
	for i, v := range out {
		y.RawMatrix().Data[i] = float64(v)
	}
	// Rounding ỹ to float32 costs up to about 1e-7·‖∂c/∂y‖·|y|.
	assert.Less(t, maxResidual(quad, X, y), 1e-6)
	assert.True(t, net.op.Stats().Converged())
	assert.Len(t, gradOf(t, net.w1), 2*6)
	// Auto precision in a float32 graph: the node projects in Float32;
	// the AdaNP it was applied from is unchanged.
	assert.Equal(t, Float32, net.op.AdaNP().Settings().Precision)
	assert.Equal(t, Auto, a.Settings().Precision)
}

func TestOpGate(t *testing.T) {
	rnd := rand.New(rand.NewPCG(27, 28))
	quad := newNPQuad(rnd, 5, 2, 0.3)
	a, err := NewAdaNP(quad, Settings{})
	require.NoError(t, err)
	X := randDense(rnd, 4, 2, 0.4)
	A := randDense(rnd, 4, 5, 1)
	project := false
	gateCalls := 0
	net := newOpNet(t, a, X, A, 6, 3, tensor.Float64, WithGate(func(x, yhat, step *mat.Dense) bool {
		gateCalls++
		_, c := step.Dims()
		assert.Equal(t, 5, c)
		return project
	}))
	m := G.NewTapeMachine(net.g, G.BindDualValues(net.wx, net.w1, net.w2))
	defer m.Close()
	require.NoError(t, m.RunAll())
	assert.False(t, net.op.Projected())
	assert.Equal(t, 1, gateCalls)
	assert.Zero(t, net.op.Stats().Depth)
	// Bypassed: ỹ = ŷ, so ∂ℓ/∂W2 = hᵀA, which is non-zero.
	assert.NotZero(t, gradOf(t, net.w2)[0])

	project = true
	m.Reset()
	require.NoError(t, m.RunAll())
	assert.True(t, net.op.Projected())
	assert.True(t, net.op.Stats().Converged())
}

func TestOpHashAndErrors(t *testing.T) {
	rnd := rand.New(rand.NewPCG(29, 30))
	quad := newNPQuad(rnd, 5, 2, 0.3)
	a1, err := NewAdaNP(quad, Settings{})
	require.NoError(t, err)
	a2, err := NewAdaNP(quad, Settings{Tol: 1e-4, Measure: MeanAbs})
	require.NoError(t, err)
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("x"))
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 5), G.WithName("y"))
	n1, err := a1.Apply(x, y)
	require.NoError(t, err)
	n2, err := a2.Apply(x, y)
	require.NoError(t, err)
	assert.NotEqual(t, n1.Op().Hashcode(), n2.Op().Hashcode())
	assert.NotEqual(t, n1.ID(), n2.ID(), "different settings must not be merged")
	assert.True(t, strings.HasPrefix(n2.Op().(*Op).String(), "AdaNP(mean|c|≤0.0001"), n2.Op().(*Op).String())

	_, err = a1.Apply(x, G.NewMatrix(g, tensor.Float64, G.WithShape(3, 4)))
	assert.Error(t, err)
	_, err = a1.Apply(nil, y)
	assert.Error(t, err)
	_, err = a1.Apply(x, nil)
	assert.Error(t, err)
	_, err = a1.Apply(G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2)), y)
	assert.Error(t, err)
	_, err = a1.Apply(G.NewMatrix(g, tensor.Float32, G.WithShape(3, 2)), y)
	assert.Error(t, err)
	_, err = a1.Apply(x, G.NewMatrix(g, tensor.Int, G.WithShape(3, 5)))
	assert.Error(t, err)
	_, err = AdaNPNode(x, y, quad, Settings{Tol: -1})
	assert.Error(t, err)
	aS, err := NewAdaNP(npSphere{ny: 5}, Settings{})
	require.NoError(t, err)
	_, err = aS.Apply(G.NewMatrix(g, tensor.Float64, G.WithShape(3, 1)), y, WithInputGradient(true))
	assert.ErrorContains(t, err, "JacobianX")

	// A forward pass on non-finite data is an error from the machine, not
	// a panic and not a NaN.
	g2 := G.NewGraph()
	xv := tensor.New(tensor.WithShape(1, 1), tensor.WithBacking([]float64{1}))
	yv := tensor.New(tensor.WithShape(1, 5), tensor.WithBacking([]float64{nan(), 0, 0, 0, 0}))
	xn := G.NewMatrix(g2, tensor.Float64, G.WithShape(1, 1), G.WithValue(xv))
	yn := G.NewMatrix(g2, tensor.Float64, G.WithShape(1, 5), G.WithValue(yv))
	_, err = aS.Apply(xn, yn)
	require.NoError(t, err)
	m := G.NewTapeMachine(g2)
	defer m.Close()
	assert.ErrorContains(t, m.RunAll(), "not finite")
}

func nan() float64 { var z float64; return z / z }

func TestOpGatedNodesAreNeverMerged(t *testing.T) {
	rnd := rand.New(rand.NewPCG(31, 32))
	a, err := NewAdaNP(newNPQuad(rnd, 5, 2, 0.3), Settings{})
	require.NoError(t, err)
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("x"))
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 5), G.WithName("y"))
	gate := func(v bool) Gate { return func(_, _, _ *mat.Dense) bool { return v } }
	n1, err := a.Apply(x, y, WithGate(gate(true)))
	require.NoError(t, err)
	n2, err := a.Apply(x, y, WithGate(gate(false)))
	require.NoError(t, err)
	assert.NotEqual(t, n1.ID(), n2.ID())
}

// opCounting counts the curvature products of the backward pass.
type opCounting struct {
	*npQuad
	n *atomic.Int64
}

func (c opCounting) Capabilities() Capabilities {
	k := c.npQuad.Capabilities()
	k.HessVec = c.HessVec
	return k
}

func (c opCounting) HessVec(x, y, w, v, out []float64) {
	c.n.Add(1)
	c.npQuad.HessVec(x, y, w, v, out)
}

// TestOpOneBackwardForYAndX: with the x-gradient on, the backward pass
// runs once for ŷ and x, not once per input.
func TestOpOneBackwardForYAndX(t *testing.T) {
	rnd := rand.New(rand.NewPCG(25, 26))
	quad := newNPQuad(rnd, 5, 2, 0.3)
	X := randDense(rnd, 4, 2, 0.4)
	A := randDense(rnd, 4, 5, 1)
	count := func(xGrad bool) int64 {
		var n atomic.Int64
		a, err := NewAdaNP(opCounting{quad, &n}, Settings{MinDepth: 2, MaxDepth: 2})
		require.NoError(t, err)
		net := newOpNet(t, a, X, A, 6, 7, tensor.Float64, WithInputGradient(xGrad))
		m := G.NewTapeMachine(net.g, G.BindDualValues(net.wx, net.w1, net.w2))
		defer m.Close()
		require.NoError(t, m.RunAll())
		return n.Load()
	}
	withX, withoutX := count(true), count(false)
	assert.Positive(t, withoutX)
	assert.Equal(t, withoutX, withX)
}
