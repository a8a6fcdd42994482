package train

import (
	"errors"
	"fmt"
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

// TestNewRejectsBadConfig checks that invalid configurations are errors.
func TestNewRejectsBadConfig(t *testing.T) {
	c := problems.FittingEquality{}.Equalities()
	good := Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no sizes", func(c *Config) { c.Sizes = nil }, "Sizes"},
		{"zero width", func(c *Config) { c.Sizes = []int{1, 0, 2} }, "positive"},
		{"no constraint", func(c *Config) { c.Constraint = nil }, "Constraint is nil"},
		{"outputs", func(c *Config) { c.Sizes = []int{1, 8, 3} }, "predicted outputs"},
		{"inputs", func(c *Config) { c.Sizes = []int{2, 8, 2} }, "nx=1 inputs"},
		{"mode", func(c *Config) { c.Mode = Mode(7) }, "Mode(7)"},
		{"activation", func(c *Config) { c.Hidden = layers.Activation(9) }, "Activation(9)"},
		{"lambdaD NaN", func(c *Config) { c.LambdaD = math.NaN() }, "LambdaD"},
		{"lambdaC negative for Soft", func(c *Config) { c.Mode, c.LambdaC = Soft, -1 }, "Soft penalty weight"},
		{"lambdaC NaN", func(c *Config) { c.LambdaC = math.NaN() }, "LambdaC"},
		{"hidden unset", func(c *Config) { c.Hidden = layers.Identity }, "Hidden is unset (Identity): the MLP [1 8 2] would be linear"},
		{"backbone with hidden", func(c *Config) { c.Backbone = residualBuilder(1, 4, 2, 1) }, "leave them zero with a Backbone"},
		{"backbone with long sizes", func(c *Config) { c.Hidden, c.Backbone = 0, residualBuilder(1, 4, 2, 1) }, "must be nil or [nx, ny]"},
		{"backbone output width", func(c *Config) { c.Hidden, c.Sizes, c.Backbone = 0, nil, residualBuilder(1, 4, 3, 1) }, "to a (1, 2) float64 output"},
		{"backbone error", func(c *Config) {
			c.Hidden, c.Sizes = 0, nil
			c.Backbone = func(*gorgonia.ExprGraph) (Backbone, error) { return nil, errors.New("no luck") }
		}, "no luck"},
		{"backbone nil", func(c *Config) {
			c.Hidden, c.Sizes = 0, nil
			c.Backbone = func(*gorgonia.ExprGraph) (Backbone, error) { return nil, nil }
		}, "nil Backbone"},
		{"backbone panics", func(c *Config) {
			c.Hidden, c.Sizes = 0, nil
			c.Backbone = func(*gorgonia.ExprGraph) (Backbone, error) { panic("oops") }
		}, "oops"},
		{"lambdaC Inf", func(c *Config) { c.LambdaC = math.Inf(1) }, "LambdaC"},
		{"learn rate", func(c *Config) { c.LearnRate = -1e-3 }, "LearnRate"},
		{"epochs", func(c *Config) { c.Epochs = -1 }, "Epochs"},
		{"batch", func(c *Config) { c.BatchSize = -5 }, "BatchSize"},
		{"log", func(c *Config) { c.LogEvery = -1 }, "LogEvery"},
		{"train settings", func(c *Config) { c.Train = enforce.Settings{Tol: -1} }, "training settings"},
		{"infer settings", func(c *Config) { c.Infer = enforce.Settings{MinDepth: 5, MaxDepth: 2} }, "inference settings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.edit(&cfg)
			var m *Model
			var err error
			require.NotPanics(t, func() { m, err = New(cfg) })
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestBadInputs checks that bad data passed to Fit, FitUnsupervised,
// Predict and the graph API are errors, never panics.
func TestBadInputs(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(10, 1)
	nan := mat.DenseCopyOf(d.X)
	nan.Set(3, 0, math.NaN())
	inf := mat.DenseCopyOf(d.Y)
	inf.Set(2, 1, math.Inf(-1))
	newModel := func(std bool) *Model {
		m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 2, Standardize: std, Quiet: true})
		require.NoError(t, err)
		return m
	}
	objective := func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(y) }
	for _, tc := range []struct {
		name string
		call func(m *Model) error
		want string
	}{
		{"Fit nil x", func(m *Model) error { _, err := m.Fit(nil, d.Y); return err }, "no inputs"},
		{"Fit empty x", func(m *Model) error { _, err := m.Fit(&mat.Dense{}, d.Y); return err }, "no inputs"},
		{"Fit nil y", func(m *Model) error { _, err := m.Fit(d.X, nil); return err }, "no labels"},
		{"Fit rows", func(m *Model) error { _, err := m.Fit(d.X, p.Sample(9, 1).Y); return err }, "10 rows and y 9"},
		{"Fit x columns", func(m *Model) error { _, err := m.Fit(mat.NewDense(10, 2, nil), d.Y); return err }, "x has 2 columns"},
		{"Fit y columns", func(m *Model) error { _, err := m.Fit(d.X, mat.NewDense(10, 3, nil)); return err }, "y has 3 columns"},
		{"Fit NaN x", func(m *Model) error { _, err := m.Fit(nan, d.Y); return err }, "NaN"},
		{"Fit Inf y", func(m *Model) error { _, err := m.Fit(d.X, inf); return err }, "infinity"},
		{"FitUnsupervised nil objective", func(m *Model) error { _, err := m.FitUnsupervised(d.X, nil); return err }, "nil objective"},
		{"FitUnsupervised NaN", func(m *Model) error { _, err := m.FitUnsupervised(nan, objective); return err }, "NaN"},
		{"FitUnsupervised bad objective shape", func(m *Model) error {
			_, err := m.FitUnsupervised(d.X, func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return y, nil })
			return err
		}, "objective has shape"},
		{"FitUnsupervised objective error", func(m *Model) error {
			_, err := m.FitUnsupervised(d.X, func(_, _ *gorgonia.Node) (*gorgonia.Node, error) { return nil, errors.New("boom") })
			return err
		}, "boom"},
		{"FitUnsupervised objective panics", func(m *Model) error {
			_, err := m.FitUnsupervised(d.X, func(_, _ *gorgonia.Node) (*gorgonia.Node, error) { panic("bang") })
			return err
		}, "bang"},
		{"Predict nil", func(m *Model) error { _, _, err := m.Predict(nil); return err }, "no inputs"},
		{"Predict columns", func(m *Model) error { _, _, err := m.Predict(mat.NewDense(3, 2, nil)); return err }, "x has 2 columns"},
		{"Predict NaN", func(m *Model) error { _, _, err := m.Predict(nan); return err }, "NaN"},
		{"Backbone NaN", func(m *Model) error { _, err := m.Backbone(nan); return err }, "NaN"},
		{"NewGraph batch", func(m *Model) error { _, err := m.NewGraph(0); return err }, "batch size 0"},
		{"NewObjectiveGraph nil", func(m *Model) error { _, err := m.NewObjectiveGraph(3, nil); return err }, "nil objective"},
		{"SetBatch rows", func(m *Model) error {
			g, err := m.NewGraph(4)
			require.NoError(t, err)
			return g.SetBatch(d.X, d.Y)
		}, "10 rows, the graph takes 4"},
		{"SetBatch labels on objective graph", func(m *Model) error {
			g, err := m.NewObjectiveGraph(10, objective)
			require.NoError(t, err)
			return g.SetBatch(d.X, d.Y)
		}, "labels given"},
		{"SetWeights length", func(m *Model) error { return m.SetWeights([][]float64{{1}}) }, "SetWeights"},
		{"SetWeights NaN", func(m *Model) error {
			w := m.Weights()
			w[1][0] = math.NaN()
			return m.SetWeights(w)
		}, "not finite"},
		{"SetStandardizers off", func(m *Model) error {
			return m.SetStandardizers(&layers.Standardizer{Mean: []float64{0}, Std: []float64{1}}, nil)
		}, "Standardize is off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call(newModel(false)) })
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	t.Run("overflowing labels", func(t *testing.T) {
		huge := mat.NewDense(10, 2, nil)
		for i := range 10 {
			huge.Set(i, 0, math.Copysign(1e308, float64(i%2)-0.5))
		}
		_, err := newModel(true).Fit(d.X, huge)
		assert.ErrorContains(t, err, "standard deviation of column 0 overflows")
	})

	t.Run("unfitted standardisation", func(t *testing.T) {
		m := newModel(true)
		_, _, err := m.Predict(d.X)
		assert.ErrorContains(t, err, "has not been fitted")
		_, err = m.NewGraph(10)
		assert.ErrorContains(t, err, "Standardizers")
		assert.ErrorContains(t, m.SetStandardizers(&layers.Standardizer{Mean: []float64{0, 0}, Std: []float64{1, 1}}, nil), "Dim 1")
		_, err = m.Fit(d.X, d.Y)
		require.NoError(t, err)
		_, _, err = m.Predict(d.X)
		assert.NoError(t, err)
	})

}

// TestDivergenceStops trains with huge learning rates, in every mode, both
// kinds of training and both precisions (a float32 network of more than
// eight weights per tensor runs the AVX2 Adam step and finiteness checks
// where the CPU has them): Fit must stop with an error naming the epoch and
// leave finite weights, never silently NaN ones.
func TestDivergenceStops(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(20, 1)
	objective := func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(y) }
	for _, mode := range []Mode{MLP, Soft, ENFORCE} {
		for _, prec := range []enforce.Precision{enforce.Float64, enforce.Float32} {
			for _, lr := range []float64{1e300, math.MaxFloat64} {
				for _, unsup := range []bool{false, true} {
					if unsup && lr < math.MaxFloat64 {
						continue // the linear objective stays finite: weights grow by lr per step
					}
					t.Run(fmt.Sprintf("%v/%v/lr=%g/unsupervised=%v", mode, prec, lr, unsup), func(t *testing.T) {
						m, err := New(Config{Sizes: []int{1, 12, 2}, Hidden: layers.Tanh, Mode: mode, Constraint: p.Equalities(),
							Epochs: 50, BatchSize: 5, LearnRate: lr, Quiet: true, Precision: prec})
						require.NoError(t, err)
						var h History
						require.NotPanics(t, func() {
							if unsup {
								h, err = m.FitUnsupervised(d.X, objective)
							} else {
								h, err = m.Fit(d.X, d.Y)
							}
						})
						require.Error(t, err)
						assert.Regexp(t, `^train: epoch \d+: `, err.Error())
						assert.Less(t, len(h), 50)
						for i, w := range m.Weights() {
							for j, v := range w {
								require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "weight %d[%d] = %v", i, j, v)
							}
						}
					})
				}
			}
		}
	}
}
