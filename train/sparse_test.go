package train

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/layers"
)

// sparseRing is a SparseFunc system on a ring of n nodes with outputs
// (u_i, v_i): u_i + 0.2·(2u_i − u_{i−1} − u_{i+1}) + u_i·v_i = x₁ + 0.1·x₂.
func sparseRing(t testing.TB, n int) enforce.Constraint {
	return sparseRingCoupled(t, n, 0.2)
}

// sparseRingCoupled is sparseRing with the coupling k in place of 0.2.
func sparseRingCoupled(t testing.TB, n int, k float64) enforce.Constraint {
	pattern := make([][]int, n)
	for i := range pattern {
		l, r := (i+n-1)%n, (i+1)%n
		pattern[i] = []int{2 * i, 2*i + 1, 2 * l, 2 * r}
	}
	c, err := enforce.SparseFunc(2, 2*n, n, pattern, func(x, y, c []hd.Number) {
		for i := range c {
			u, v := y[2*i], y[2*i+1]
			l, r := y[2*((i+n-1)%n)], y[2*((i+1)%n)]
			c[i] = hd.Sub(hd.Add(u, hd.Scale(k, hd.Sub(hd.Scale(2, u), hd.Add(l, r))), hd.Mul(u, v)),
				hd.Add(x[0], hd.Scale(0.1, x[1])))
		}
	})
	require.NoError(t, err)
	return c
}

// TestFitPredictSaveLoadSparse trains, predicts with, saves and loads a
// model whose constraint takes AdaNP's sparse path: predictions meet the
// tolerance, and the loaded model predicts the same bits on the same path.
func TestFitPredictSaveLoadSparse(t *testing.T) {
	const n = 20
	c := sparseRing(t, n)
	rnd := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(64, 2, nil)
	Y := mat.NewDense(64, 2*n, nil)
	for r := range 64 {
		X.Set(r, 0, 0.5+rnd.Float64())
		X.Set(r, 1, rnd.Float64())
		for j := range 2 * n {
			Y.Set(r, j, 0.1*rnd.NormFloat64())
		}
	}
	s := enforce.Settings{Path: enforce.PathSparse}
	m, err := New(Config{Sizes: []int{2, 16, 2 * n}, Hidden: layers.Tanh, Constraint: c, Epochs: 5, Seed: 3,
		Quiet: true, Train: enforce.Settings{Path: enforce.PathSparse, Measure: enforce.MeanAbs}, Infer: s})
	require.NoError(t, err)
	_, err = m.Fit(X, Y)
	require.NoError(t, err)
	pred, st, err := m.Predict(X)
	require.NoError(t, err)
	assert.True(t, st.Converged(), "%v", st)
	assert.LessOrEqual(t, st.After.Max, 1e-6)
	assert.Equal(t, enforce.PathSparse, m.InferAdaNP().Settings().Path)

	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	loaded, err := Load(&buf, c)
	require.NoError(t, err)
	assert.Equal(t, enforce.PathSparse, loaded.InferAdaNP().Settings().Path)
	again, _, err := loaded.Predict(X)
	require.NoError(t, err)
	assert.True(t, mat.Equal(pred, again))
}

// TestResidualTermSparseMemory trains with the residual term λ_C·‖c‖ on a
// sparse constraint with Fischer–Burmeister rows (latent variables) at
// nc = 2·10⁴ rows and 3·10⁴ columns: the loss follows the nonzeros (the
// view's restricted pattern), where a dense Jacobian would take 4.8 GB per
// sample. The bound, 400 MB of allocation for the whole Fit, is far below
// one dense Jacobian.
func TestResidualTermSparseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10⁴-node training step")
	}
	const n = 10000
	ring := sparseRing(t, n)
	pattern := make([][]int, n)
	for i := range pattern {
		pattern[i] = []int{2 * i}
	}
	g, err := enforce.SparseFunc(2, 2*n, n, pattern, func(_, y, c []hd.Number) {
		for i := range c {
			c[i] = hd.Sub(y[2*i], hd.Const(2))
		}
	})
	require.NoError(t, err)
	c, err := enforce.WithInequalities(ring, g, 1e-6)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(5, 6))
	X := mat.NewDense(4, 2, nil)
	Y := mat.NewDense(4, 2*n, nil)
	for r := range 4 {
		X.Set(r, 0, 0.5+rnd.Float64())
		X.Set(r, 1, rnd.Float64())
		for j := range 2 * n {
			Y.Set(r, j, 0.1*rnd.NormFloat64())
		}
	}
	m, err := New(Config{Sizes: []int{2, 2 * n}, Constraint: c, Epochs: 1, BatchSize: 4, Seed: 1, Quiet: true,
		LambdaC: 1, Train: enforce.Settings{Path: enforce.PathSparse, Measure: enforce.MeanAbs}})
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h, err := m.Fit(X, Y)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Greater(t, h.Last().Residual, 0.0, "the residual term was evaluated")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(400<<20), "bytes allocated by Fit")
}
