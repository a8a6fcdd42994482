package train

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestFloat32Backbone checks what Config.Precision Float32 builds: float32
// learnables and graph nodes (inputs, labels, ŷ, ỹ and the loss),
// weights that convert to float64 and back exactly, an error for a weight
// that overflows float32, for an unknown precision and for a custom
// backbone whose learnables are float64, and float64 as what Config
// reports by default.
func TestFloat32Backbone(t *testing.T) {
	p := problems.FittingEquality{}
	cfg := Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Seed: 2, PyTorchInit: true, Quiet: true}
	m64, err := New(cfg)
	require.NoError(t, err)
	assert.Equal(t, enforce.Float64, m64.Config().Precision)

	cfg.Precision = enforce.Float32
	m, err := New(cfg)
	require.NoError(t, err)
	assert.Equal(t, enforce.Float32, m.Config().Precision)
	for _, prm := range m.params {
		assert.Equal(t, tensor.Float32, prm.Dtype())
	}
	w, w64 := m.Weights(), m64.Weights()
	for i := range w {
		for j, v := range w[i] {
			require.Equal(t, float64(float32(w64[i][j])), v, "PyTorchInit draws the float64 model's weights, rounded")
		}
	}
	require.NoError(t, m.SetWeights(w))
	assert.Equal(t, w, m.Weights(), "float32 weights round-trip exactly")
	big := m.Weights()
	big[0][0] = 1e39
	assert.ErrorContains(t, m.SetWeights(big), "overflows float32")
	assert.Equal(t, w, m.Weights(), "a failed SetWeights changes nothing")

	g, err := m.NewGraph(5)
	require.NoError(t, err)
	for _, n := range []*gorgonia.Node{g.X, g.Y, g.YHat, g.YTilde, g.Loss} {
		assert.Equal(t, tensor.Float32, n.Dtype(), n.Name())
	}
	d := p.Sample(5, 1)
	require.NoError(t, g.SetBatch(d.X, d.Y))
	vm := gorgonia.NewTapeMachine(g.G, gorgonia.BindDualValues(g.Learnables...))
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	yhat, _ := g.Outputs()
	want, err := m.Backbone(d.X)
	require.NoError(t, err)
	assert.InDeltaSlice(t, want.RawMatrix().Data, yhat.RawMatrix().Data, 1e-5, "Backbone (plain Go, float32) against the graph")

	bad := cfg
	bad.Precision = enforce.Precision(7)
	_, err = New(bad)
	assert.ErrorContains(t, err, "Config.Precision")

	custom := Config{Constraint: p.Equalities(), Backbone: residualBuilder(1, 6, 2, 1), Precision: enforce.Float32, Quiet: true}
	_, err = New(custom)
	assert.ErrorContains(t, err, "must hold a float32")
}

// meanObjective returns the mean of the §5.3 objective over the rows of
// y, and the largest |c(x, y)|.
func meanObjective(p *problems.NonconvexLinear, x, y *mat.Dense) (obj, maxC float64) {
	n, _ := y.Dims()
	c := make([]float64, p.NC)
	for i := range n {
		obj += p.Objective(nil, y.RawRowView(i)) / float64(n)
		p.Equalities().Eval(x.RawRowView(i), y.RawRowView(i), c, nil)
		for _, v := range c {
			maxC = math.Max(maxC, math.Abs(v))
		}
	}
	return obj, maxC
}

// TestFloat32Accuracy trains the same models with float64 and float32
// backbones (Config.Precision) and requires the same test metrics, within
// the stated tolerances, with every projection meeting its tolerance:
//
//   - the fitting problem (§5.1 at the reduced scale of
//     TestFittingEnforceBeatsMLP, 600 epochs): ENFORCE's test MSE within
//     0.1 % of float64's (measured: 3e-6 relative), max|c| ≤ 1e-6 (the
//     inference tolerance) on every test sample;
//   - the §5.3 nonconvex-linear instance (100, 50) at the -quick scale of
//     examples/nonconvex-linear (400 training inputs, 64-wide ReLU layers,
//     20 epochs of batches of 200, learning rate 1e-3): MLP's and ENFORCE's
//     mean test objective within 0.1 % (relative; measured: 2e-11 for MLP,
//     7e-9 for ENFORCE), ENFORCE's max|c| ≤ 1e-3, the inference tolerance
//     of that set-up.
//
// The two precisions follow different rounding from the first step, so
// their weights drift apart; the tolerances bound the difference of the
// metrics, which is what a user sees.
func TestFloat32Accuracy(t *testing.T) {
	t.Run("fitting", func(t *testing.T) {
		p := problems.FittingEquality{}
		trainSet, testSet := p.Sample(200, 1), p.Sample(2000, 99)
		mse := map[enforce.Precision]float64{}
		for _, prec := range benchPrecisions {
			m, err := New(Config{
				Sizes: []int{1, 32, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(),
				LearnRate: 1e-2, Epochs: 600, Seed: 1, Standardize: true, Quiet: true, Precision: prec,
			})
			require.NoError(t, err)
			_, err = m.Fit(trainSet.X, trainSet.Y)
			require.NoError(t, err)
			pred, st, err := m.Predict(testSet.X)
			require.NoError(t, err)
			assert.True(t, st.Converged(), "%v: every test sample meets the inference tolerance", prec)
			assert.LessOrEqual(t, st.After.Max, 1e-6, "%v: max|c|", prec)
			mse[prec] = meanSquaredError(pred, testSet.Y)
		}
		t.Logf("test MSE: float64 %.10e, float32 %.10e", mse[enforce.Float64], mse[enforce.Float32])
		assert.InEpsilon(t, mse[enforce.Float64], mse[enforce.Float32], 1e-3)
	})
	t.Run("nonconvex-linear", func(t *testing.T) {
		p, err := problems.NewNonconvexLinear(100, 50, 1)
		require.NoError(t, err)
		xTrain, xTest := p.SampleX(400, 1), p.SampleX(200, 2)
		objective := func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return p.ObjectiveNode(y) }
		for _, mode := range []Mode{MLP, ENFORCE} {
			obj := map[enforce.Precision]float64{}
			for _, prec := range benchPrecisions {
				ts := TrainSettings()
				ts.Tol = 1e-3
				m, err := New(Config{
					Sizes: []int{50, 64, 64, 100}, Hidden: layers.ReLU, PyTorchInit: true,
					Constraint: p.Equalities(), Mode: mode, Train: ts, Infer: enforce.Settings{Tol: 1e-3},
					LearnRate: 1e-3, BatchSize: 200, Epochs: 20, Seed: 1, Quiet: true, Precision: prec,
				})
				require.NoError(t, err)
				_, err = m.FitUnsupervised(xTrain, objective)
				require.NoError(t, err)
				pred, st, err := m.Predict(xTest)
				require.NoError(t, err)
				var maxC float64
				obj[prec], maxC = meanObjective(p, xTest, pred)
				if mode == ENFORCE {
					assert.True(t, st.Converged(), "%v: every test sample meets the inference tolerance", prec)
					assert.LessOrEqual(t, maxC, 1e-3, "%v: max|c|", prec)
				}
			}
			t.Logf("%v mean test objective: float64 %.12g, float32 %.12g", mode, obj[enforce.Float64], obj[enforce.Float32])
			assert.InEpsilon(t, obj[enforce.Float64], obj[enforce.Float32], 1e-3, "%v", mode)
		}
	})
}

// graphOnly hides an MLP's Predict, so that a model runs it on a graph.
type graphOnly struct{ mlp *layers.MLP }

func (b graphOnly) Forward(x *gorgonia.Node) (*gorgonia.Node, error) { return b.mlp.Forward(x) }
func (b graphOnly) Learnables() gorgonia.Nodes                       { return b.mlp.Learnables() }

// TestFloat32CustomBackbone trains a custom float32 backbone (Config.Backbone
// with Precision Float32) and checks that its graph-based prediction
// agrees with the plain-Go float32 Predict of the same MLP to float32
// rounding.
func TestFloat32CustomBackbone(t *testing.T) {
	p := problems.FittingEquality{}
	d, test := p.Sample(60, 3), p.Sample(200, 4)
	build := func(hide bool) BackboneFunc {
		return func(g *gorgonia.ExprGraph) (Backbone, error) {
			mlp, err := layers.NewMLP(g, []int{1, 16, 2}, layers.Tanh, layers.Identity,
				layers.WithSeed(3), layers.WithName("net"), layers.WithDtype(tensor.Float32))
			if hide {
				return graphOnly{mlp}, err
			}
			return mlp, err
		}
	}
	cfg := Config{Backbone: build(true), Constraint: p.Equalities(), Precision: enforce.Float32,
		Epochs: 30, BatchSize: 20, LearnRate: 1e-2, Seed: 2, Quiet: true}
	m, err := New(cfg)
	require.NoError(t, err)
	h, err := m.Fit(d.X, d.Y)
	require.NoError(t, err)
	assert.Less(t, h.Last().Task, h[0].Task)
	onGraph, err := m.Backbone(test.X)
	require.NoError(t, err)
	pred, st, err := m.Predict(test.X)
	require.NoError(t, err)
	assert.LessOrEqual(t, st.After.Max, 1e-6)
	assert.Equal(t, 200, pred.RawMatrix().Rows)

	cfg.Backbone = build(false)
	plain, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, plain.SetWeights(m.Weights()))
	inGo, err := plain.Backbone(test.X)
	require.NoError(t, err)
	assert.InDeltaSlice(t, onGraph.RawMatrix().Data, inGo.RawMatrix().Data, 1e-5)
}

// TestFloat32GOMAXPROCS trains a float32 model of the §5.3 shape (its
// products large enough to be split over the cores) with GOMAXPROCS 1, 2
// and 3 and requires the same weights and predictions, bit for bit.
func TestFloat32GOMAXPROCS(t *testing.T) {
	p, err := problems.NewNonconvexLinear(100, 50, 1)
	require.NoError(t, err)
	x := p.SampleX(400, 1)
	y := randomMatrix(400, 100, 5)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want [][]uint64
	var wantPred []uint64
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		m, err := New(Config{
			Sizes: []int{50, 64, 64, 100}, Hidden: layers.ReLU, PyTorchInit: true, Constraint: p.Equalities(), Mode: MLP,
			BatchSize: 200, Epochs: 3, Seed: 1, Quiet: true, Precision: enforce.Float32,
		})
		require.NoError(t, err)
		_, err = m.Fit(x, y)
		require.NoError(t, err)
		pred, err := m.Backbone(x)
		require.NoError(t, err)
		if want == nil {
			want, wantPred = weightBits(m), bits(pred)
			continue
		}
		assert.Equal(t, want, weightBits(m), "weights, GOMAXPROCS=%d", procs)
		assert.Equal(t, wantPred, bits(pred), "predictions, GOMAXPROCS=%d", procs)
	}
}
