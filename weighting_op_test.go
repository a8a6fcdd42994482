package enforce

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// thetaNet is ℓ = Σ A ⊙ AdaNP(x, Y, θ) on a gorgonia graph with learnable
// Y and θ.
type thetaNet struct {
	g           *G.ExprGraph
	y, th, loss *G.Node
	op          *Op
}

func newThetaNet(t *testing.T, a *AdaNP, X, Y, A *mat.Dense, theta []float64, dt tensor.Dtype, symbolic bool) *thetaNet {
	g := G.NewGraph()
	rows, nx := X.Dims()
	_, ny := Y.Dims()
	val := func(data []float64, shape ...int) *tensor.Dense {
		if dt == tensor.Float32 {
			d := make([]float32, len(data))
			for i, v := range data {
				d[i] = float32(v)
			}
			return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), data...)))
	}
	x := G.NewMatrix(g, dt, G.WithShape(rows, nx), G.WithName("x"), G.WithValue(val(X.RawMatrix().Data, rows, nx)))
	y := G.NewMatrix(g, dt, G.WithShape(rows, ny), G.WithName("Y"), G.WithValue(val(Y.RawMatrix().Data, rows, ny)))
	th := G.NewVector(g, dt, G.WithShape(ny), G.WithName("theta"), G.WithValue(val(theta, ny)))
	am := G.NewMatrix(g, dt, G.WithShape(rows, ny), G.WithName("A"), G.WithValue(val(A.RawMatrix().Data, rows, ny)))
	out, err := a.Apply(x, y, WithTrainableWeights(th))
	require.NoError(t, err)
	op, ok := OpOf(out)
	require.True(t, ok)
	loss := G.Must(G.Sum(G.Must(G.HadamardProd(out, am))))
	if symbolic {
		_, err = G.Grad(loss, y, th)
		require.NoError(t, err)
	}
	return &thetaNet{g: g, y: y, th: th, loss: loss, op: op}
}

// TestOpTrainableWeights checks the θ input of the graph Op: TapeMachine
// and LispMachine gradients with respect to ŷ and θ equal VJPTheta's
// (which TestTrainableDiagonalUnrolledIsExact checks against finite
// differences), in float64 and float32 graphs.
func TestOpTrainableWeights(t *testing.T) {
	rnd := rand.New(rand.NewPCG(41, 42))
	sys := wtSystems(t)[1] // two: nonlinear, 2 inputs, 4 outputs
	a, err := NewAdaNP(sys.c, Settings{Weights: TrainableDiagonal, MinDepth: 2, MaxDepth: 2})
	require.NoError(t, err)
	X, Y, A := wtInputs(rnd, sys, 3)
	theta := ctRandVec(rnd, sys.ny, -1, 1)

	var tr Trace
	_, err = a.ProjectTraceTheta(mat.NewDense(3, sys.ny, nil), X, Y, theta, &tr)
	require.NoError(t, err)
	wantY := mat.NewDense(3, sys.ny, nil)
	wantT := make([]float64, sys.ny)
	require.NoError(t, a.VJPTheta(&tr, A, wantY, nil, wantT))

	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-3
		}
		tape := newThetaNet(t, a, X, Y, A, theta, dt, true)
		m := G.NewTapeMachine(tape.g, G.BindDualValues(tape.y, tape.th))
		require.NoError(t, m.RunAll())
		m.Close()
		assert.InDeltaSlice(t, wantY.RawMatrix().Data, gradOf(t, tape.y), tol, "%v tape ŷ", dt)
		assert.InDeltaSlice(t, wantT, gradOf(t, tape.th), tol, "%v tape θ", dt)
		assert.True(t, tape.op.GradStats().Exact())

		lisp := newThetaNet(t, a, X, Y, A, theta, dt, false)
		lm := G.NewLispMachine(lisp.g)
		require.NoError(t, lm.RunAll())
		lm.Close()
		assert.InDeltaSlice(t, wantY.RawMatrix().Data, gradOf(t, lisp.y), tol, "%v lisp ŷ", dt)
		assert.InDeltaSlice(t, wantT, gradOf(t, lisp.th), tol, "%v lisp θ", dt)
	}
}

// TestOpTrainableWeightsGate checks a gated node with a θ input: the
// gate's step uses θ, and a closed gate passes ŷ with a zero θ-gradient.
func TestOpTrainableWeightsGate(t *testing.T) {
	rnd := rand.New(rand.NewPCG(43, 44))
	sys := wtSystems(t)[1]
	a, err := NewAdaNP(sys.c, Settings{Weights: TrainableDiagonal})
	require.NoError(t, err)
	X, Y, A := wtInputs(rnd, sys, 2)
	theta := ctRandVec(rnd, sys.ny, -1, 1)
	for _, open := range []bool{true, false} {
		g := G.NewGraph()
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(append([]float64(nil), X.RawMatrix().Data...)))))
		y := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 4), G.WithName("Y"), G.WithValue(tensor.New(tensor.WithShape(2, 4), tensor.WithBacking(append([]float64(nil), Y.RawMatrix().Data...)))))
		th := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("theta"), G.WithValue(tensor.New(tensor.WithShape(4), tensor.WithBacking(append([]float64(nil), theta...)))))
		am := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 4), G.WithValue(tensor.New(tensor.WithShape(2, 4), tensor.WithBacking(append([]float64(nil), A.RawMatrix().Data...)))))
		var stepped *mat.Dense
		out, err := a.Apply(x, y, WithTrainableWeights(th), WithGate(func(_, _, step *mat.Dense) bool {
			stepped = mat.DenseCopyOf(step)
			return open
		}))
		require.NoError(t, err)
		loss := G.Must(G.Sum(G.Must(G.HadamardProd(out, am))))
		_, err = G.Grad(loss, y, th)
		require.NoError(t, err)
		m := G.NewTapeMachine(g, G.BindDualValues(y, th))
		require.NoError(t, m.RunAll())
		m.Close()
		one, err := NewAdaNP(sys.c, Settings{Weights: TrainableDiagonal, MinDepth: 1, MaxDepth: 1})
		require.NoError(t, err)
		want, _, err := one.ProjectTheta(X, Y, theta)
		require.NoError(t, err)
		assert.Equal(t, want.RawMatrix().Data, stepped.RawMatrix().Data)
		gt := gradOf(t, th)
		if open {
			assert.Greater(t, norm2(gt), 0.0)
		} else {
			assert.Equal(t, make([]float64, 4), gt)
			assert.Equal(t, A.RawMatrix().Data, gradOf(t, y))
		}
	}
}

// TestOpTrainableWeightsErrors checks Apply's checks of the θ node, and
// that the θ input is part of the node's hash.
func TestOpTrainableWeightsErrors(t *testing.T) {
	sys := wtSystems(t)[1]
	at, err := NewAdaNP(sys.c, Settings{Weights: TrainableDiagonal})
	require.NoError(t, err)
	ai, err := NewAdaNP(sys.c, Settings{})
	require.NoError(t, err)
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("x"))
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 4), G.WithName("y"))
	th := G.NewVector(g, tensor.Float64, G.WithShape(4), G.WithName("th"))
	_, err = at.Apply(x, y)
	assert.ErrorContains(t, err, "WithTrainableWeights")
	_, err = ai.Apply(x, y, WithTrainableWeights(th))
	assert.Error(t, err)
	_, err = at.Apply(x, y, WithTrainableWeights(G.NewVector(g, tensor.Float64, G.WithShape(3))))
	assert.Error(t, err)
	_, err = at.Apply(x, y, WithTrainableWeights(G.NewVector(g, tensor.Float32, G.WithShape(4))))
	assert.Error(t, err)
	_, err = at.Apply(x, y, WithTrainableWeights(G.NewVector(G.NewGraph(), tensor.Float64, G.WithShape(4))))
	assert.Error(t, err)
	_, err = at.Apply(x, y, WithTrainableWeights(G.NewMatrix(g, tensor.Float64, G.WithShape(4, 4))))
	assert.Error(t, err)

	n, err := at.Apply(x, y, WithTrainableWeights(th))
	require.NoError(t, err)
	op, _ := OpOf(n)
	assert.Equal(t, 3, op.Arity())
	ni, err := ai.Apply(x, y)
	require.NoError(t, err)
	opi, _ := OpOf(ni)
	opi.a = at // the same AdaNP, without θ
	assert.NotEqual(t, op.Hashcode(), opi.Hashcode())
}
