package train

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// residual is a small residual network that is not an MLP:
// h₀ = tanh(xW + b), h_{k+1} = h_k + tanh(h_k W_k + b_k), y = h_K W + b.
// It runs on graphs only (no plain-Go Predict).
type residual struct {
	in     *layers.Dense
	blocks []*layers.Dense
	out    *layers.Dense
}

func (r *residual) Forward(x *gorgonia.Node) (*gorgonia.Node, error) {
	h, err := r.in.Forward(x)
	if err != nil {
		return nil, err
	}
	for _, b := range r.blocks {
		z, err := b.Forward(h)
		if err != nil {
			return nil, err
		}
		if h, err = gorgonia.Add(h, z); err != nil {
			return nil, err
		}
	}
	return r.out.Forward(h)
}

func (r *residual) Learnables() gorgonia.Nodes {
	ns := r.in.Learnables()
	for _, b := range r.blocks {
		ns = append(ns, b.Learnables()...)
	}
	return append(ns, r.out.Learnables()...)
}

// residualPredictor is residual with a plain-Go Predict.
type residualPredictor struct{ *residual }

func (r residualPredictor) Predict(x *mat.Dense) (*mat.Dense, error) {
	h, err := r.in.Predict(x)
	if err != nil {
		return nil, err
	}
	for _, b := range r.blocks {
		z, err := b.Predict(h)
		if err != nil {
			return nil, err
		}
		h.Add(h, z)
	}
	return r.out.Predict(h)
}

// newResidual builds a residual network nx → width (blocks times) → ny.
func newResidual(g *gorgonia.ExprGraph, nx, width, ny, blocks int) (*residual, error) {
	var r residual
	var err error
	if r.in, err = layers.NewDense(g, nx, width, layers.Tanh, layers.WithSeed(1), layers.WithName("res.in")); err != nil {
		return nil, err
	}
	for k := range blocks {
		b, err := layers.NewDense(g, width, width, layers.Tanh, layers.WithSeed(uint64(2+k)), layers.WithName(fmt.Sprintf("res.block%d", k)))
		if err != nil {
			return nil, err
		}
		r.blocks = append(r.blocks, b)
	}
	if r.out, err = layers.NewDense(g, width, ny, layers.Identity, layers.WithSeed(99), layers.WithName("res.out")); err != nil {
		return nil, err
	}
	return &r, nil
}

func residualBuilder(nx, width, ny, blocks int) BackboneFunc {
	return func(g *gorgonia.ExprGraph) (Backbone, error) { return newResidual(g, nx, width, ny, blocks) }
}

func residualPredictorBuilder(nx, width, ny, blocks int) BackboneFunc {
	return func(g *gorgonia.ExprGraph) (Backbone, error) {
		r, err := newResidual(g, nx, width, ny, blocks)
		return residualPredictor{r}, err
	}
}

// TestCustomBackbone trains ENFORCE with a residual backbone, predicts
// with it on a graph and in plain Go, and saves and loads it by learnable
// name and shape.
func TestCustomBackbone(t *testing.T) {
	p := problems.FittingEquality{}
	d, test := p.Sample(60, 3), p.Sample(200, 4)
	cfg := Config{Backbone: residualBuilder(1, 8, 2, 2), Constraint: p.Equalities(),
		Epochs: 60, BatchSize: 20, LearnRate: 1e-2, Seed: 2, Standardize: true, Quiet: true}
	m, err := New(cfg)
	require.NoError(t, err)
	assert.Equal(t, []Param{
		{"res.in.W", []int{1, 8}}, {"res.in.b", []int{8}},
		{"res.block0.W", []int{8, 8}}, {"res.block0.b", []int{8}},
		{"res.block1.W", []int{8, 8}}, {"res.block1.b", []int{8}},
		{"res.out.W", []int{8, 2}}, {"res.out.b", []int{2}},
	}, m.Params())
	assert.Equal(t, []int{1, 2}, m.Config().Sizes, "Sizes from the constraint")
	h, err := m.Fit(d.X, d.Y)
	require.NoError(t, err)
	assert.Less(t, h.Last().Task, h[0].Task)
	assert.Positive(t, h.Last().Projected)

	pred, st, err := m.Predict(test.X)
	require.NoError(t, err)
	assert.LessOrEqual(t, st.After.Max, 1e-6)
	onGraph, err := m.Backbone(test.X)
	require.NoError(t, err)

	// The same weights in a backbone with a plain-Go Predict.
	cfg.Backbone = residualPredictorBuilder(1, 8, 2, 2)
	plain, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, plain.SetWeights(m.Weights()))
	sx, sy := m.Standardizers()
	require.NoError(t, plain.SetStandardizers(sx, sy))
	inGo, err := plain.Backbone(test.X)
	require.NoError(t, err)
	assert.InDeltaSlice(t, onGraph.RawMatrix().Data, inGo.RawMatrix().Data, 1e-12, "graph and plain-Go prediction")

	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	saved := buf.Bytes()
	_, err = Load(bytes.NewReader(saved), p.Equalities())
	assert.ErrorContains(t, err, "LoadBackbone")
	loaded, err := LoadBackbone(bytes.NewReader(saved), p.Equalities(), residualBuilder(1, 8, 2, 2))
	require.NoError(t, err)
	got, _, err := loaded.Predict(test.X)
	require.NoError(t, err)
	assert.Equal(t, bits(pred), bits(got), "loaded model predicts the same bits")

	fresh, err := New(Config{Backbone: residualBuilder(1, 8, 2, 2), Constraint: p.Equalities(), Standardize: true, Quiet: true})
	require.NoError(t, err)
	require.NoError(t, fresh.Restore(bytes.NewReader(saved)))
	got, _, err = fresh.Predict(test.X)
	require.NoError(t, err)
	assert.Equal(t, bits(pred), bits(got), "restored model predicts the same bits")

	_, err = LoadBackbone(bytes.NewReader(saved), p.Equalities(), residualBuilder(1, 8, 2, 3))
	assert.ErrorContains(t, err, `"res.block2.W" is missing`)
	_, err = LoadBackbone(bytes.NewReader(saved), p.Equalities(), residualBuilder(1, 6, 2, 2))
	assert.ErrorContains(t, err, `"res.in.W" has shape [1 8], the model's [1 6]`)
	mlp, err := New(Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Standardize: true, Quiet: true})
	require.NoError(t, err)
	assert.ErrorContains(t, mlp.Restore(bytes.NewReader(saved)), "a backbone of kind custom, the model's is mlp")
}

// TestBackboneSizes checks how a model with a Backbone learns nx and ny:
// from the constraint, or from Sizes = [nx, ny] when the constraint has no
// inputs.
func TestBackboneSizes(t *testing.T) {
	noInputs, err := enforce.Linear(0, mat.NewDense(1, 2, []float64{1, 1}), nil)
	require.NoError(t, err)
	_, err = New(Config{Backbone: residualBuilder(3, 4, 2, 1), Constraint: noInputs})
	assert.ErrorContains(t, err, "set Config.Sizes to [nx, ny]")
	m, err := New(Config{Backbone: residualBuilder(3, 4, 2, 1), Constraint: noInputs, Sizes: []int{3, 2}, Quiet: true})
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, m.Config().Sizes)
	require.NoError(t, m.SetWeights(m.Weights()), "predict with the initial weights")
	x := mat.NewDense(5, 3, nil)
	pred, st, err := m.Predict(x)
	require.NoError(t, err)
	assert.InDelta(t, 0, pred.At(0, 0)+pred.At(0, 1), 1e-12, "projected onto y₁ + y₂ = 0")
	assert.LessOrEqual(t, st.After.Max, 1e-6)
}

// TestBackboneMustRepeatItsLearnables checks that a BackboneFunc whose
// learnables change between calls is an error, not a silent mix-up.
func TestBackboneMustRepeatItsLearnables(t *testing.T) {
	p := problems.FittingEquality{}
	calls := 0
	build := func(g *gorgonia.ExprGraph) (Backbone, error) {
		calls++
		return layers.NewMLP(g, []int{1, 4, 2}, layers.Tanh, layers.Identity, layers.WithName(fmt.Sprintf("net%d", calls)))
	}
	m, err := New(Config{Backbone: build, Constraint: p.Equalities(), Epochs: 1, Quiet: true})
	require.NoError(t, err)
	d := p.Sample(8, 1)
	_, err = m.Fit(d.X, d.Y)
	assert.ErrorContains(t, err, "the BackboneFunc built learnables")
}

// TestMLPAsBackbone checks that layers.MLP given as a Backbone trains to
// the same bits as the Config's own MLP.
func TestMLPAsBackbone(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(30, 1)
	base := Config{Constraint: p.Equalities(), Epochs: 20, BatchSize: 10, Seed: 5, Standardize: true, Quiet: true}
	own := base
	own.Sizes, own.Hidden = []int{1, 6, 2}, layers.ReLU
	custom := base
	custom.Backbone = func(g *gorgonia.ExprGraph) (Backbone, error) {
		return layers.NewMLP(g, []int{1, 6, 2}, layers.ReLU, layers.Identity, layers.WithSeed(5), layers.WithName("mlp"))
	}
	var preds [][]uint64
	for _, cfg := range []Config{own, custom} {
		m, err := New(cfg)
		require.NoError(t, err)
		_, err = m.Fit(d.X, d.Y)
		require.NoError(t, err)
		pred, _, err := m.Predict(d.X)
		require.NoError(t, err)
		preds = append(preds, bits(pred))
	}
	assert.Equal(t, preds[0], preds[1])
}

// TestBackboneTo checks Model.BackboneTo against Backbone, bit for bit,
// on each of the three paths (an MLP's PredictTo in both precisions, a
// backbone with only Predict, one with neither, which runs on a graph),
// with and without standardisation, its errors, and that without
// standardisation an MLP's allocates nothing that grows with the batch.
func TestBackboneTo(t *testing.T) {
	p := problems.FittingEquality{}
	d, test := p.Sample(40, 5), p.Sample(30, 6)
	cases := []struct {
		name string
		cfg  Config
	}{
		{"MLP float64", Config{Sizes: []int{1, 8, 2}, Hidden: layers.ReLU}},
		{"MLP float32", Config{Sizes: []int{1, 8, 2}, Hidden: layers.ReLU, Precision: enforce.Float32}},
		{"Predict only", Config{Backbone: residualPredictorBuilder(1, 8, 2, 1)}},
		{"graph", Config{Backbone: residualBuilder(1, 8, 2, 1)}},
	}
	for _, c := range cases {
		for _, std := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/standardize=%v", c.name, std), func(t *testing.T) {
				cfg := c.cfg
				cfg.Constraint, cfg.Epochs, cfg.BatchSize, cfg.Seed, cfg.Standardize, cfg.Quiet = p.Equalities(), 3, 20, 1, std, true
				m, err := New(cfg)
				require.NoError(t, err)
				_, err = m.Fit(d.X, d.Y)
				require.NoError(t, err)
				want, err := m.Backbone(test.X)
				require.NoError(t, err)
				dst := mat.NewDense(30, 2, nil)
				require.NoError(t, m.BackboneTo(dst, test.X))
				require.Equal(t, want.RawMatrix().Data, dst.RawMatrix().Data)

				assert.ErrorContains(t, m.BackboneTo(nil, test.X), "nil destination")
				assert.ErrorContains(t, m.BackboneTo(mat.NewDense(30, 3, nil), test.X), "destination is 30×3")
				assert.Error(t, m.BackboneTo(dst, mat.NewDense(30, 2, nil)), "x of the wrong width")
				var nilModel *Model
				assert.Error(t, nilModel.BackboneTo(dst, test.X))

				if c.name == "MLP float32" && !raceEnabled { // the race detector allocates for itself
					// BackboneTo's promise: nothing that grows with the batch.
					// Bytes per call at 200 and at 2000 rows: the same up to
					// what the runtime and other goroutines allocate
					// meanwhile (TotalAlloc counts the whole process), far
					// below the 28 800 bytes more that a 2000-row output
					// would take.
					perCall := func(rows int) uint64 {
						x, out := mat.NewDense(rows, 1, nil), mat.NewDense(rows, 2, nil)
						require.NoError(t, m.BackboneTo(out, x)) // warm
						var before, after runtime.MemStats
						runtime.ReadMemStats(&before)
						for range 10 {
							require.NoError(t, m.BackboneTo(out, x))
						}
						runtime.ReadMemStats(&after)
						return (after.TotalAlloc - before.TotalAlloc) / 10
					}
					small, big := perCall(200), perCall(2000)
					assert.Less(t, big, small+2048, "bytes per call at 2000 rows (%d) against 200 rows (%d)", big, small)
					assert.Less(t, big, uint64(8192), "bytes per call (the output alone is %d)", 8*2000*2)
				}
			})
		}
	}
}

// TestBackboneConcurrent checks the Model's promise that Predict and
// Backbone may be called from several goroutines while no training runs:
// concurrent calls on inputs of different sizes give the bits of
// sequential ones, with and without standardisation (whose inputs go to
// buffers the model shares among calls) and in both precisions.
func TestBackboneConcurrent(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(40, 5)
	for _, prec := range []enforce.Precision{enforce.Float64, enforce.Float32} {
		for _, std := range []bool{false, true} {
			m, err := New(Config{Sizes: []int{1, 8, 2}, Hidden: layers.ReLU, Constraint: p.Equalities(),
				Epochs: 2, BatchSize: 20, Seed: 1, Standardize: std, Precision: prec, Quiet: true})
			require.NoError(t, err)
			_, err = m.Fit(d.X, d.Y)
			require.NoError(t, err)
			inputs := make([]*mat.Dense, 8)
			wantB, wantP := make([][]float64, 8), make([][]float64, 8)
			for i := range inputs {
				inputs[i] = p.Sample(10+7*i, uint64(20+i)).X
				yb, err := m.Backbone(inputs[i])
				require.NoError(t, err)
				yp, _, err := m.Predict(inputs[i])
				require.NoError(t, err)
				wantB[i], wantP[i] = yb.RawMatrix().Data, yp.RawMatrix().Data
			}
			var wg sync.WaitGroup
			errs := make([]error, len(inputs))
			for i := range inputs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 20 {
						yb, err := m.Backbone(inputs[i])
						if err == nil && !slices.Equal(yb.RawMatrix().Data, wantB[i]) {
							err = fmt.Errorf("Backbone of input %d differs from the sequential call", i)
						}
						if err == nil {
							var yp *mat.Dense
							if yp, _, err = m.Predict(inputs[i]); err == nil && !slices.Equal(yp.RawMatrix().Data, wantP[i]) {
								err = fmt.Errorf("Predict of input %d differs from the sequential call", i)
							}
						}
						if err != nil {
							errs[i] = err
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, err := range errs {
				assert.NoError(t, err, "%v standardize=%v", prec, std)
			}
		}
	}
}
