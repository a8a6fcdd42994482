package layers

import (
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/gtest"
)

// TestPredictMatchesGraph checks that MLP.Predict and Dense.Predict compute
// what Forward's graph computes, for every activation and both dtypes.
func TestPredictMatchesGraph(t *testing.T) {
	for _, tc := range []struct {
		name           string
		sizes          []int
		hidden, output Activation
		dt             tensor.Dtype
		tol            float64
	}{
		{"relu64", []int{3, 8, 8, 2}, ReLU, Identity, tensor.Float64, 1e-13},
		{"tanh64", []int{2, 5, 4}, Tanh, Sigmoid, tensor.Float64, 1e-13},
		{"sigmoid64-linear", []int{1, 1}, Sigmoid, Tanh, tensor.Float64, 1e-13},
		{"relu32", []int{3, 6, 2}, ReLU, Identity, tensor.Float32, 1e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const batch = 7
			in := tc.sizes[0]
			g := gorgonia.NewGraph()
			mlp, err := NewMLP(g, tc.sizes, tc.hidden, tc.output, WithSeed(4), WithDtype(tc.dt))
			require.NoError(t, err)
			w := mlp.Weights()
			for i := 1; i < len(w); i += 2 {
				w[i] = randMatrix(uint64(i), 1, len(w[i])) // nonzero biases
			}
			require.NoError(t, mlp.SetWeights(w))
			xv := randMatrix(3, batch, in)
			y, err := mlp.Forward(inputNode(g, tc.dt, "x", batch, in, xv))
			require.NoError(t, err)
			vm := gorgonia.NewTapeMachine(g)
			defer vm.Close()
			require.NoError(t, vm.RunAll())

			got, err := mlp.Predict(mat.NewDense(batch, in, xv))
			require.NoError(t, err)
			r, c := got.Dims()
			assert.Equal(t, [2]int{batch, tc.sizes[len(tc.sizes)-1]}, [2]int{r, c})
			assert.InDeltaSlice(t, gtest.Float64s(y.Value()), got.RawMatrix().Data, tc.tol)

			first, err := mlp.Layers()[0].Predict(mat.NewDense(batch, in, xv))
			require.NoError(t, err)
			want := denseRef(xv, batch, in, w[0], w[1], mlp.Layers()[0].Activation())
			assert.InDeltaSlice(t, want, first.RawMatrix().Data, tc.tol)
		})
	}
}

// TestPredictSeesNewWeights checks that Predict reads the current weights.
func TestPredictSeesNewWeights(t *testing.T) {
	mlp, err := NewMLP(gorgonia.NewGraph(), []int{2, 3, 1}, ReLU, Identity, WithSeed(1))
	require.NoError(t, err)
	x := mat.NewDense(1, 2, []float64{0.5, -0.5})
	w := mlp.Weights()
	for i := range w {
		clear(w[i])
	}
	w[3][0] = 4.25
	require.NoError(t, mlp.SetWeights(w))
	y, err := mlp.Predict(x)
	require.NoError(t, err)
	assert.Equal(t, 4.25, y.At(0, 0))
}

func TestPredictErrors(t *testing.T) {
	mlp, err := NewMLP(gorgonia.NewGraph(), []int{2, 3, 1}, ReLU, Identity, WithSeed(1))
	require.NoError(t, err)
	huge := mlp.Weights()
	for i := range huge {
		for j := range huge[i] {
			huge[i][j] = 1e300
		}
	}
	bigMLP, err := NewMLP(gorgonia.NewGraph(), []int{2, 3, 1}, ReLU, Identity)
	require.NoError(t, err)
	require.NoError(t, bigMLP.SetWeights(huge))
	for _, tc := range []struct {
		name string
		m    *MLP
		x    *mat.Dense
		msg  string
	}{
		{"nil", mlp, nil, "nil or empty"},
		{"empty", mlp, &mat.Dense{}, "nil or empty"},
		{"columns", mlp, mat.NewDense(1, 3, nil), "3 columns, want 2"},
		{"nan", mlp, mat.NewDense(1, 2, []float64{0, math.NaN()}), "NaN at (0, 1)"},
		{"inf", mlp, mat.NewDense(1, 2, []float64{math.Inf(-1), 0}), "-Inf at (0, 0)"},
		{"overflow", bigMLP, mat.NewDense(1, 2, []float64{1, 1}), "output holds +Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.m.Predict(tc.x)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			_, err = tc.m.Layers()[0].Predict(tc.x)
			if tc.name != "overflow" {
				assert.ErrorContains(t, err, tc.msg)
			}
		})
	}
}

func TestActivationApplyValues(t *testing.T) {
	z := []float64{-2, math.Copysign(0, -1), 0.5}
	for _, tc := range []struct {
		a    Activation
		want []float64
	}{
		{Identity, []float64{-2, math.Copysign(0, -1), 0.5}},
		{ReLU, []float64{0, math.Copysign(0, -1), 0.5}},
		{Tanh, []float64{math.Tanh(-2), math.Copysign(0, -1), math.Tanh(0.5)}},
		{Sigmoid, []float64{1 / (1 + math.Exp(2)), 0.5, 1 / (1 + math.Exp(-0.5))}},
	} {
		got := append([]float64(nil), z...)
		tc.a.ApplyValues(got)
		assert.Equal(t, tc.want, got, "%v", tc.a)
	}
}

// TestPredict32 checks a float32 MLP's Predict, on enforce's float32
// matrix product, against the float32 graph and a float64 evaluation of
// the same (float32) weights at the reference size (50-200-200-100
// on 833 rows, which exercises full and partial kernel blocks), for ReLU
// and tanh: within 1e-4 (float32 rounding of sums of 200 products of
// O(1) terms). It also checks that the result is the same bits whatever
// GOMAXPROCS is.
func TestPredict32(t *testing.T) {
	const rows = 833
	sizes := []int{50, 200, 200, 100}
	for _, act := range []Activation{ReLU, Tanh} {
		t.Run(act.String(), func(t *testing.T) {
			g := gorgonia.NewGraph()
			mlp, err := NewMLP(g, sizes, act, Identity, WithSeed(5), WithDtype(tensor.Float32))
			require.NoError(t, err)
			w := mlp.Weights()
			for i := 1; i < len(w); i += 2 {
				w[i] = randMatrix(uint64(i), 1, len(w[i]))
			}
			require.NoError(t, mlp.SetWeights(w))
			w = mlp.Weights() // rounded to float32
			xv := randMatrix(9, rows, sizes[0])
			for i, v := range xv {
				xv[i] = float64(float32(v))
			}
			y, err := mlp.Forward(inputNode(g, tensor.Float32, "x", rows, sizes[0], xv))
			require.NoError(t, err)
			vm := gorgonia.NewTapeMachine(g)
			defer vm.Close()
			require.NoError(t, vm.RunAll())

			got, err := mlp.Predict(mat.NewDense(rows, sizes[0], xv))
			require.NoError(t, err)
			assert.InDeltaSlice(t, gtest.Float64s(y.Value()), got.RawMatrix().Data, 1e-4, "against the graph")
			want, in := xv, sizes[0]
			for l, ly := range mlp.Layers() {
				want = denseRef(want, rows, in, w[2*l], w[2*l+1], ly.Activation())
				in = sizes[l+1]
			}
			assert.InDeltaSlice(t, want, got.RawMatrix().Data, 1e-4, "against float64 arithmetic")

			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			for _, procs := range []int{1, 2, 3, 5} {
				runtime.GOMAXPROCS(procs)
				again, err := mlp.Predict(mat.NewDense(rows, sizes[0], xv))
				require.NoError(t, err)
				require.Equal(t, got.RawMatrix().Data, again.RawMatrix().Data, "GOMAXPROCS=%d", procs)
			}
		})
	}
}

// TestPredict32SeesEveryWeightChange checks the float32 MLP's packed-weight
// cache: Predict gives a fresh MLP's result after every kind of change to
// the weights (SetWeights, a write to a weight node's own values, a sign
// flip of a zero weight, which only the bits show), keeps giving it when
// nothing changed, and gives it to concurrent callers (run with -race).
func TestPredict32SeesEveryWeightChange(t *testing.T) {
	sizes := []int{7, 20, 9}
	build := func() *MLP {
		mlp, err := NewMLP(gorgonia.NewGraph(), sizes, ReLU, Identity, WithSeed(3), WithDtype(tensor.Float32))
		require.NoError(t, err)
		return mlp
	}
	x := mat.NewDense(50, sizes[0], randMatrix(4, 50, sizes[0]))
	cached := build()
	check := func(what string) {
		t.Helper()
		fresh := build()
		require.NoError(t, fresh.SetWeights(cached.Weights()))
		want, err := fresh.Predict(x)
		require.NoError(t, err)
		got, err := cached.Predict(x)
		require.NoError(t, err)
		require.Equal(t, want.RawMatrix().Data, got.RawMatrix().Data, what)
	}
	check("new")
	check("unchanged")

	w := cached.Weights()
	w[0][3] += 0.5
	require.NoError(t, cached.SetWeights(w))
	check("SetWeights")

	raw := cached.Layers()[1].w.Value().Data().([]float32)
	raw[5] *= -3
	check("a write to the node's values")

	// A zero weight against an input of +Inf would give NaN either way;
	// here −0 against +0 changes the sign of a zero product, which a
	// comparison with == would miss.
	raw = cached.Layers()[0].w.Value().Data().([]float32)
	raw[0] = 0
	check("+0")
	raw[0] = float32(math.Copysign(0, -1))
	check("−0")
	assert.True(t, math.Signbit(float64(cached.packed.entry.src[0][0])), "repacked from −0")

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := cached.Predict(x); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	check("after concurrent calls")
}

// TestPredictTo checks MLP.PredictTo against Predict, bit for bit, for
// both dtypes, into a contiguous matrix and into a view with a wider
// stride (whose other columns it must leave alone); its errors; and that
// a float32 MLP's PredictTo allocates nothing that grows with the batch.
func TestPredictTo(t *testing.T) {
	sizes := []int{5, 30, 17}
	x := mat.NewDense(100, sizes[0], randMatrix(6, 100, sizes[0]))
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			mlp, err := NewMLP(gorgonia.NewGraph(), sizes, ReLU, Identity, WithSeed(2), WithDtype(dt))
			require.NoError(t, err)
			want, err := mlp.Predict(x)
			require.NoError(t, err)
			dst := mat.NewDense(100, sizes[2], nil)
			require.NoError(t, mlp.PredictTo(dst, x))
			require.Equal(t, want.RawMatrix().Data, dst.RawMatrix().Data)

			wide := mat.NewDense(100, sizes[2]+3, nil)
			for i := range wide.RawMatrix().Data {
				wide.RawMatrix().Data[i] = -9
			}
			view := wide.Slice(0, 100, 1, 1+sizes[2]).(*mat.Dense)
			require.NoError(t, mlp.PredictTo(view, x))
			assert.True(t, mat.Equal(want, view), "into a view")
			for i := range 100 {
				assert.Equal(t, -9.0, wide.At(i, 0))
				assert.Equal(t, -9.0, wide.At(i, sizes[2]+1))
			}

			assert.ErrorContains(t, mlp.PredictTo(nil, x), "nil destination")
			assert.ErrorContains(t, mlp.PredictTo(mat.NewDense(99, sizes[2], nil), x), "destination is 99×17")
			assert.ErrorContains(t, mlp.PredictTo(dst, mat.NewDense(100, 4, nil)), "columns")

			if dt == tensor.Float32 && !raceEnabled { // the race detector allocates for itself
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for range 20 {
					require.NoError(t, mlp.PredictTo(dst, x))
				}
				runtime.ReadMemStats(&after)
				perCall := (after.TotalAlloc - before.TotalAlloc) / 20
				assert.Less(t, perCall, uint64(4096), "bytes allocated per call (the output alone is %d)", 8*100*sizes[2])
			}
		})
	}
}
