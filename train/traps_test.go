package train

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestFitNamesNonFiniteEntry checks that Fit, FitUnsupervised's data check
// and Predict name the row and column of the first entry of x or y that
// is not finite.
func TestFitNamesNonFiniteEntry(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(10, 1)
	m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 1, Quiet: true})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		x, y    *mat.Dense
		i, j    int
		v       float64
		want    string
		predict bool
	}{
		{"NaN in y", d.X, d.Y, 7, 1, math.NaN(), "y holds a NaN or an infinity: y[7, 1] = NaN (row 7, column 1, from 0)", false},
		{"Inf in y", d.X, d.Y, 0, 0, math.Inf(-1), "y[0, 0] = -Inf (row 0, column 0", false},
		{"NaN in x", d.X, d.Y, 4, 0, math.NaN(), "x holds a NaN or an infinity: x[4, 0] = NaN (row 4, column 0, from 0)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := mat.DenseCopyOf(tc.x), mat.DenseCopyOf(tc.y)
			bad := y
			if tc.predict {
				bad = x
			}
			bad.Set(tc.i, tc.j, tc.v)
			_, err := m.Fit(x, y)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.predict {
				_, _, err = m.Predict(x)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
			}
		})
	}
}

// hessOnly is a hand-written constraint with a HessVec method but no
// Capabilities method.
type hessOnly struct{}

func (hessOnly) Dims() (nx, ny, nc int) { return 1, 2, 1 }
func (hessOnly) Eval(x, y, c, jy []float64) {
	c[0] = y[0]*y[0] + y[1] - x[0]
	if jy != nil {
		jy[0], jy[1] = 2*y[0], 1
	}
}
func (hessOnly) HessVec(x, y, w, v, out []float64) { out[0], out[1] = 2*w[0]*v[0], 0 }

// TestNewRefusesUndeclaredCapabilities checks that New refuses a
// Constraint or PenaltyConstraint with capability methods but no
// Capabilities method, naming the fix.
func TestNewRefusesUndeclaredCapabilities(t *testing.T) {
	p := problems.FittingEquality{}
	for _, cfg := range []Config{
		{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: hessOnly{}},
		{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Mode: Soft, PenaltyConstraint: hessOnly{}},
	} {
		_, err := New(cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "train: enforce: constraint train.hessOnly has methods HessVec but no Capabilities method")
	}
}

// TestFitDetectsDivergence checks that Fit at a learning rate of 1e6
// stops with an error naming the epoch where the loss has risen past
// Config.DivergenceFactor, that a negative factor turns the check off
// (and the loss then ends orders of magnitude above its start, without an
// error), and that the default rule leaves a working training alone.
func TestFitDetectsDivergence(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(100, 1)
	cfg := Config{Sizes: []int{1, 16, 2}, Hidden: layers.ReLU, Constraint: p.Equalities(), Epochs: 30,
		LearnRate: 1e6, Quiet: true, Standardize: true, Seed: 1}
	m, err := New(cfg)
	require.NoError(t, err)
	h, err := m.Fit(d.X, d.Y)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "training diverged")
	assert.Contains(t, err.Error(), "try a smaller LearnRate")
	require.NotEmpty(t, h)
	assert.Contains(t, err.Error(), fmt.Sprintf("epoch %d:", len(h)))
	assert.Less(t, len(h), cfg.Epochs)

	cfg.DivergenceFactor = -1
	off, err := New(cfg)
	require.NoError(t, err)
	h, err = off.Fit(d.X, d.Y)
	require.NoError(t, err, "the weights stay finite here")
	assert.Greater(t, h.Last().Loss, 1e4*h[0].Loss, "without the check the loss ends far above its start, silently")

	cfg.DivergenceFactor, cfg.LearnRate = 0, 0
	ok, err := New(cfg)
	require.NoError(t, err)
	h, err = ok.Fit(d.X, d.Y)
	require.NoError(t, err)
	assert.Len(t, h, cfg.Epochs)

	cfg.DivergenceFactor = math.NaN()
	_, err = New(cfg)
	assert.ErrorContains(t, err, "DivergenceFactor")
}

// TestNotFitted checks that Predict, Backbone, BackboneTo, Save and
// SaveFile refuse a model whose weights are New's with ErrNotFitted, and
// that training, a training graph, SetWeights and Load each make it
// usable.
func TestNotFitted(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(20, 1)
	cfg := Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 1, Quiet: true}
	fresh := func() *Model {
		m, err := New(cfg)
		require.NoError(t, err)
		return m
	}
	m := fresh()
	_, _, err := m.Predict(d.X)
	assert.ErrorIs(t, err, ErrNotFitted)
	_, err = m.Backbone(d.X)
	assert.ErrorIs(t, err, ErrNotFitted)
	assert.ErrorIs(t, m.BackboneTo(mat.NewDense(20, 2, nil), d.X), ErrNotFitted)
	var buf bytes.Buffer
	assert.ErrorIs(t, m.Save(&buf), ErrNotFitted)
	assert.Zero(t, buf.Len())
	path := filepath.Join(t.TempDir(), "model.json")
	assert.ErrorIs(t, m.SaveFile(path), ErrNotFitted)
	assert.NoFileExists(t, path)

	for _, tc := range []struct {
		name string
		fit  func(m *Model) error
	}{
		{"Fit", func(m *Model) error { _, err := m.Fit(d.X, d.Y); return err }},
		{"NewGraph", func(m *Model) error { _, err := m.NewGraph(4); return err }},
		{"SetWeights", func(m *Model) error { return m.SetWeights(m.Weights()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fresh()
			require.NoError(t, tc.fit(m))
			_, _, err := m.Predict(d.X)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, m.Save(&buf))
			loaded, err := Load(&buf, p.Equalities())
			require.NoError(t, err)
			_, _, err = loaded.Predict(d.X)
			assert.NoError(t, err, "a loaded model")
		})
	}
}

// TestSquareConstraint checks that a model accepts a square system
// (nc = ny), trains in ENFORCE and Soft modes, and predicts its solution:
// the backbone's ŷ only picks the start of Newton's method.
func TestSquareConstraint(t *testing.T) {
	c, err := enforce.Func(1, 2, 2, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(y[0], hd.Scale(0.3, hd.Mul(y[1], y[1]))), x[0])
		c[1] = hd.Sub(hd.Add(y[1], hd.Scale(0.3, hd.Sin(y[0]))), hd.Scale(0.5, x[0]))
	})
	require.NoError(t, err)
	x := mat.NewDense(16, 1, nil)
	for i := range 16 {
		x.Set(i, 0, -0.5+float64(i)/15)
	}
	for _, mode := range []Mode{ENFORCE, Soft} {
		m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: c, Mode: mode, Epochs: 3, Quiet: true})
		require.NoError(t, err, "%v", mode)
		y := mat.NewDense(16, 2, nil) // labels: the solution, by projecting zeros
		a, err := enforce.NewAdaNP(c, enforce.Settings{Tol: 1e-12})
		require.NoError(t, err)
		_, err = a.ProjectTo(y, x, mat.NewDense(16, 2, nil))
		require.NoError(t, err)
		h, err := m.Fit(x, y)
		require.NoError(t, err, "%v", mode)
		require.Len(t, h, 3)
		pred, st, err := m.Predict(x)
		require.NoError(t, err)
		if mode == ENFORCE {
			assert.True(t, st.Converged(), "%v", st)
			assert.True(t, mat.EqualApprox(y, pred, 1e-5), "ENFORCE predicts the solution")
		}
	}
}

// scaleApart returns a constraint y₂ = 10⁴·(y₁² + x) and n samples of it,
// whose outputs lie 10⁴ apart in scale (y₁ in [1, 2], y₂ near 10⁴–5·10⁴).
func scaleApart(t *testing.T, n int) (enforce.Constraint, *mat.Dense, *mat.Dense) {
	t.Helper()
	c, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(y[1], hd.Scale(1e4, hd.Add(hd.Mul(y[0], y[0]), x[0])))
	})
	require.NoError(t, err)
	x, y := mat.NewDense(n, 1, nil), mat.NewDense(n, 2, nil)
	for i := range n {
		xi, y1 := float64(i)/float64(n), 1+float64((7*i)%n)/float64(n)
		x.Set(i, 0, xi)
		y.Set(i, 0, y1)
		y.Set(i, 1, 1e4*(y1*y1+xi))
	}
	return c, x, y
}

// TestFitWarnsWhenProjectionMisses checks Epoch.Missed and
// Epoch.MaxResidual and the warning: trained without Standardize on
// outputs 10⁴ apart, nearly every training sample's projection misses the
// training tolerance (all but one here; before, nothing said so: History
// held only the mean residual); Missed counts them, MaxResidual is far
// above the tolerance, and Fit warns once, on Progress, naming the fix. With Standardize none misses and nothing is
// written but the progress lines; with Quiet nothing at all.
func TestFitWarnsWhenProjectionMisses(t *testing.T) {
	c, x, y := scaleApart(t, 64)
	for _, tc := range []struct {
		name        string
		standardize bool
		quiet       bool
		warns       bool
	}{{"raw outputs", false, false, true}, {"raw outputs, Quiet", false, true, false}, {"standardised", true, false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			m, err := New(Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c, Epochs: 3, BatchSize: 16,
				Standardize: tc.standardize, Quiet: tc.quiet, Progress: &log})
			require.NoError(t, err)
			h, err := m.Fit(x, y)
			require.NoError(t, err)
			require.Len(t, h, 3)
			for _, e := range h {
				require.Equal(t, 1.0, e.Projected)
				assert.GreaterOrEqual(t, e.MaxResidual, e.Residual, "max|c| ≥ mean ‖c‖ for one equation")
				if tc.standardize {
					assert.Zero(t, e.Missed)
					assert.LessOrEqual(t, e.MaxResidual, 1e-3)
				} else {
					assert.Greater(t, e.Missed, 56, "(nearly) every sample misses")
					assert.LessOrEqual(t, e.Missed, 64)
					assert.Greater(t, e.MaxResidual, 1.0)
				}
			}
			warnings := strings.Count(log.String(), "warning:")
			if tc.warns {
				assert.Equal(t, 1, warnings, log.String())
				assert.Contains(t, log.String(), fmt.Sprintf("epoch 1: warning: %d of the 64 training samples AdaNP projected missed the training tolerance mean|c| ≤ 0.0001", h[0].Missed))
				assert.Contains(t, log.String(), "set Config.Standardize")
			} else {
				assert.Zero(t, warnings, log.String())
			}
			if tc.quiet {
				assert.Empty(t, log.String())
			}
		})
	}
}

// TestEpochMaxResidual checks Epoch.MaxResidual against the residuals of
// the output the loss sees, recomputed from the graph of a one-batch,
// one-epoch run (MLP mode: ỹ = ŷ, the backbone's output before the step).
func TestEpochMaxResidual(t *testing.T) {
	c, x, y := scaleApart(t, 16)
	m, err := New(Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c, Epochs: 1, Mode: MLP, Quiet: true})
	require.NoError(t, err)
	require.NoError(t, m.SetWeights(m.Weights()))
	before, err := m.Backbone(x)
	require.NoError(t, err)
	h, err := m.Fit(x, y)
	require.NoError(t, err)
	want := 0.0
	cv := make([]float64, 1)
	for i := range 16 {
		c.Eval(x.RawRowView(i), before.RawRowView(i), cv, nil)
		want = math.Max(want, math.Abs(cv[0]))
	}
	assert.InDelta(t, want, h[0].MaxResidual, 1e-9*want)
	assert.Zero(t, h[0].Missed, "nothing projected in MLP mode")
}
