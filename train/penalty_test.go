package train

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// penaltyForms pairs each Penalty with its per-sample value for a
// one-constraint problem.
var penaltyForms = []struct {
	pen  Penalty
	want func(c []float64) float64
}{
	{SquaredNorm, func(c []float64) float64 { return c[0] * c[0] }},
	{Norm, func(c []float64) float64 { return math.Abs(c[0]) }},
	{SquaredHinge, func(c []float64) float64 { return math.Pow(max(c[0], 0), 2) }},
	{SquaredNormMeanAbs, func(c []float64) float64 { return c[0]*c[0] + math.Abs(c[0]) }},
}

// TestSoftPenaltyForms builds a Soft graph for each Penalty and checks its
// loss, Loss − Task, against the penalty computed from the graph's own
// ŷ in plain Go: λ(1/N)Σ‖c‖², λ(1/N)Σ‖c‖, λ(1/N)Σ_iΣ_j max(0, c_j)² and
// λ(1/N)Σ(‖c‖² + mean_j|c_j|).
func TestSoftPenaltyForms(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(16, 3)
	c := p.Equalities()
	const lambda = 0.7
	for _, tc := range penaltyForms {
		t.Run(tc.pen.String(), func(t *testing.T) {
			m, err := New(Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c, Mode: Soft,
				LambdaC: lambda, Penalty: tc.pen, Seed: 2, Quiet: true})
			require.NoError(t, err)
			assert.Equal(t, tc.pen, m.Config().Penalty)
			g, err := m.NewGraph(16)
			require.NoError(t, err)
			require.NoError(t, g.SetBatch(d.X, d.Y))
			vm := gorgonia.NewTapeMachine(g.G)
			defer vm.Close()
			require.NoError(t, vm.RunAll())
			yhat, _ := g.Outputs()
			var sum float64
			var pos, neg int
			cv := make([]float64, 1)
			for i := range 16 {
				c.Eval(d.X.RawRowView(i), yhat.RawRowView(i), cv, nil)
				sum += tc.want(cv)
				if cv[0] > 0 {
					pos++
				} else {
					neg++
				}
			}
			require.Positive(t, pos, "both signs of c, so that the forms differ")
			require.Positive(t, neg)
			got := g.Loss.Value().Data().(float64) - g.Task.Value().Data().(float64)
			assert.InDelta(t, lambda*sum/16, got, 1e-12)
		})
	}
}

// TestPenaltyErrors requires clear errors for a Penalty outside Soft
// mode, an unknown Penalty and SquaredHinge on a constraint with latent
// variables.
func TestPenaltyErrors(t *testing.T) {
	p := problems.FittingInequality{}
	fb, err := p.Constraint()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"ENFORCE", Config{Penalty: Norm}, "leave it zero in ENFORCE mode"},
		{"MLP", Config{Mode: MLP, Penalty: SquaredHinge}, "leave it zero in MLP mode"},
		{"unknown", Config{Mode: Soft, Penalty: Penalty(9)}, "Penalty(9)"},
		{"penalty constraint in MLP mode", Config{Mode: MLP, PenaltyConstraint: p.Inequalities()}, "leave it nil in MLP mode"},
		{"latent penalty constraint", Config{Mode: Soft, Constraint: fb, PenaltyConstraint: fb}, "has 2 latent variables"},
		{"penalty constraint dims", Config{Mode: Soft, PenaltyConstraint: problems.FittingEquality{}.Equalities()}, "want nx 0 or 1, ny 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Sizes, cfg.Hidden = []int{1, 4, 1}, layers.ReLU
			if cfg.Constraint == nil {
				cfg.Constraint = p.Inequalities()
			}
			_, err := New(cfg)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	// SquaredHinge on the Fischer–Burmeister system itself: New accepts
	// it (Load must), training refuses it.
	m, err := New(Config{Sizes: []int{1, 4, 1}, Hidden: layers.ReLU, Mode: Soft, Penalty: SquaredHinge, Constraint: fb, Quiet: true})
	require.NoError(t, err)
	d := p.Sample(8, 1)
	_, err = m.Fit(d.X, d.Y)
	assert.ErrorContains(t, err, "set Config.PenaltyConstraint to g")

	var q Penalty
	require.NoError(t, q.UnmarshalText([]byte("squaredhinge")))
	assert.Equal(t, SquaredHinge, q)
	assert.Error(t, q.UnmarshalText([]byte("hinge")))
	_, err = Penalty(-1).MarshalText()
	assert.Error(t, err)
}

// TestOutputStdFloor fits the standardisation on labels with a column of
// spread 1e-21: by default that column gets σ = 1 (the reference's 1e-5
// floor), with a negative OutputStdFloor its exact σ; the inputs, of
// spread 1e-7, are never floored. Both models round-trip through Save and
// Load.
func TestOutputStdFloor(t *testing.T) {
	c := sumIsX(t)
	const n = 8
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 2, nil)
	for i := range n {
		s := float64(2*(i%2) - 1) // ±1
		x.Set(i, 0, 1+1e-7*s)
		y.Set(i, 0, s)
		y.Set(i, 1, 1e-21*s)
	}
	for _, tc := range []struct {
		name      string
		floor     float64
		wantFloor float64
		wantStd   float64
	}{
		{"default", 0, layers.DefaultStdFloor, 1},
		{"exact", -1, -1, 1e-21},
		{"higher", 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: c, Mode: MLP,
				Standardize: true, OutputStdFloor: tc.floor, Quiet: true})
			require.NoError(t, err)
			assert.Equal(t, tc.wantFloor, m.Config().OutputStdFloor)
			require.NoError(t, m.FitStandardizers(x, y))
			require.NoError(t, m.SetWeights(m.Weights()))
			sx, sy := m.Standardizers()
			assert.InDelta(t, 1e-7, sx.Std[0], 1e-15, "inputs are not floored")
			assert.Equal(t, []float64{1, tc.wantStd}, sy.Std, "σ = 1 is 1 with or without the floor")

			var buf bytes.Buffer
			require.NoError(t, m.Save(&buf))
			loaded, err := Load(&buf, c)
			require.NoError(t, err)
			assert.Equal(t, tc.wantFloor, loaded.Config().OutputStdFloor)
			_, ly := loaded.Standardizers()
			assert.Equal(t, sy, ly)
		})
	}
	_, err := New(Config{Sizes: []int{1, 2}, Constraint: c, OutputStdFloor: math.NaN()})
	assert.ErrorContains(t, err, "OutputStdFloor")
}

// TestPenaltyConstraint trains a Soft model whose Constraint is the
// Fischer–Burmeister system of §5.2 and whose SquaredHinge penalty acts on
// the raw inequalities g (Config.PenaltyConstraint): the graph's penalty
// is λ(1/N)Σ_iΣ_j max(0, g_j)², the model reports residuals of the
// Fischer–Burmeister constraint, and it saves, loads and predicts.
func TestPenaltyConstraint(t *testing.T) {
	p := problems.FittingInequality{}
	fb, err := p.Constraint()
	require.NoError(t, err)
	g := p.Inequalities()
	d := p.SampleNoisy(32, 4)
	const lambda = 2.0
	cfg := Config{Sizes: []int{1, 8, 1}, Hidden: layers.Tanh, Mode: Soft, Constraint: fb, PenaltyConstraint: g,
		Penalty: SquaredHinge, LambdaC: lambda, Seed: 5, Standardize: true, Epochs: 3, BatchSize: 16, Quiet: true}
	m, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, m.FitStandardizers(d.X, d.Y))
	w := m.Weights()
	w[len(w)-1][0] = 1.5 // shift ŷ up, so that some predictions leave the envelope
	require.NoError(t, m.SetWeights(w))
	gr, err := m.NewGraph(32)
	require.NoError(t, err)
	require.NoError(t, gr.SetBatch(d.X, d.Y))
	vm := gorgonia.NewTapeMachine(gr.G)
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	yhat, _ := gr.Outputs()
	var sum float64
	var violated, inside int
	gv := make([]float64, 2)
	for i := range 32 {
		g.Eval(d.X.RawRowView(i), yhat.RawRowView(i), gv, nil)
		for _, v := range gv {
			if v > 0 {
				violated++
				sum += v * v
			} else {
				inside++
			}
		}
	}
	require.Positive(t, violated, "some predictions leave the envelope, so the penalty is not zero")
	require.Positive(t, inside, "and some g_j are negative, which the hinge ignores")
	got := gr.Loss.Value().Data().(float64) - gr.Task.Value().Data().(float64)
	assert.InDelta(t, lambda*sum/32, got, 1e-12)

	_, err = m.Fit(d.X, d.Y)
	require.NoError(t, err)
	pred, stats, err := m.Predict(d.X)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	loaded, err := Load(&buf, fb)
	require.NoError(t, err)
	lp, lstats, err := loaded.Predict(d.X)
	require.NoError(t, err)
	assert.Equal(t, bits(pred), bits(lp))
	assert.Equal(t, stats, lstats)
	assert.Equal(t, SquaredHinge, loaded.Config().Penalty)
	assert.Nil(t, loaded.Config().PenaltyConstraint)
}

// TestSoftPenaltyFloat32 is TestSoftPenaltyForms on a float32 backbone
// (Config.Precision), for every Penalty with its PenaltyConstraint where
// it has one: the graph's penalty equals the plain-Go one to float32
// rounding, a short Fit keeps the loss finite, and save → load keeps the
// precision, the penalty and the predictions' bits.
func TestSoftPenaltyFloat32(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(16, 3)
	c := p.Equalities()
	const lambda = 0.7
	for _, tc := range penaltyForms {
		t.Run(tc.pen.String(), func(t *testing.T) {
			m, err := New(Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c, Mode: Soft,
				LambdaC: lambda, Penalty: tc.pen, Precision: enforce.Float32, Epochs: 3, BatchSize: 8, Seed: 2, Quiet: true})
			require.NoError(t, err)
			g, err := m.NewGraph(16)
			require.NoError(t, err)
			require.NoError(t, g.SetBatch(d.X, d.Y))
			vm := gorgonia.NewTapeMachine(g.G)
			require.NoError(t, vm.RunAll())
			yhat, _ := g.Outputs()
			var sum float64
			cv := make([]float64, 1)
			for i := range 16 {
				c.Eval(d.X.RawRowView(i), yhat.RawRowView(i), cv, nil)
				sum += tc.want(cv)
			}
			got := float64(g.Loss.Value().Data().(float32) - g.Task.Value().Data().(float32))
			assert.InDelta(t, lambda*sum/16, got, 1e-5*(1+lambda*sum/16))
			vm.Close()

			h, err := m.Fit(d.X, d.Y)
			require.NoError(t, err)
			require.False(t, math.IsNaN(h.Last().Loss) || math.IsInf(h.Last().Loss, 0))
			var buf bytes.Buffer
			require.NoError(t, m.Save(&buf))
			back, err := Load(&buf, c)
			require.NoError(t, err)
			assert.Equal(t, enforce.Float32, back.Config().Precision)
			assert.Equal(t, tc.pen, back.Config().Penalty)
			want, err := m.Backbone(d.X)
			require.NoError(t, err)
			gotY, err := back.Backbone(d.X)
			require.NoError(t, err)
			assert.Equal(t, want.RawMatrix().Data, gotY.RawMatrix().Data)
		})
	}
}
