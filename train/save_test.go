package train

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// trainedModel returns a briefly trained model on the fitting problem.
func trainedModel(t *testing.T, cfg Config) *Model {
	t.Helper()
	p := problems.FittingEquality{}
	if cfg.Sizes == nil {
		cfg.Sizes = []int{1, 8, 2}
	}
	cfg.Constraint = p.Equalities()
	if cfg.Epochs == 0 {
		cfg.Epochs = 30
	}
	cfg.Quiet = true
	m, err := New(cfg)
	require.NoError(t, err)
	d := p.Sample(40, 5)
	_, err = m.Fit(d.X, d.Y)
	require.NoError(t, err)
	return m
}

// TestSaveLoadPredictBitIdentical saves trained models, loads them and
// checks that the loaded models predict exactly the same bits, with the
// same weights, standardisation and settings.
func TestSaveLoadPredictBitIdentical(t *testing.T) {
	p := problems.FittingEquality{}
	xTest := p.Sample(500, 77).X
	for _, cfg := range []Config{
		{Hidden: layers.Tanh, Standardize: true, Seed: 3},
		{Hidden: layers.ReLU, Sizes: []int{1, 6, 5, 2}, Seed: 4, LambdaD: -1, LambdaC: 0.2, BatchSize: 16,
			Infer: enforce.Settings{Tol: 1e-9, Weights: enforce.AutoDiagonal}},
		{Hidden: layers.Sigmoid, Mode: Soft, LambdaC: 0.7, Standardize: true, Seed: 5},
		{Hidden: layers.Tanh, Mode: MLP, Seed: 6, AlwaysProject: true, PyTorchInit: true},
	} {
		t.Run(cfg.Mode.String(), func(t *testing.T) {
			m := trainedModel(t, cfg)
			want, wantStats, err := m.Predict(xTest)
			require.NoError(t, err)

			var buf bytes.Buffer
			require.NoError(t, m.Save(&buf))
			loaded, err := Load(bytes.NewReader(buf.Bytes()), p.Equalities())
			require.NoError(t, err)
			got, gotStats, err := loaded.Predict(xTest)
			require.NoError(t, err)
			assert.Equal(t, bits(want), bits(got), "predictions")
			assert.Equal(t, wantStats, gotStats)
			assert.Equal(t, weightBits(m), weightBits(loaded), "weights")
			sx, sy := m.Standardizers()
			lx, ly := loaded.Standardizers()
			assert.Equal(t, sx, lx)
			assert.Equal(t, sy, ly)
			mc, lc := m.Config(), loaded.Config()
			mc.Constraint, lc.Constraint = nil, nil
			mc.Progress, lc.Progress, mc.Quiet, lc.Quiet = nil, nil, false, false
			mc.Init, mc.PyTorchInit = 0, false // used by New only
			assert.Equal(t, mc, lc, "configuration")

			// The same through files.
			path := filepath.Join(t.TempDir(), "model.json")
			require.NoError(t, m.SaveFile(path))
			fromFile, err := LoadFile(path, p.Equalities())
			require.NoError(t, err)
			got, _, err = fromFile.Predict(xTest)
			require.NoError(t, err)
			assert.Equal(t, bits(want), bits(got), "predictions after SaveFile/LoadFile")
		})
	}
}

// TestRestore loads weights into a model built from the same Config.
func TestRestore(t *testing.T) {
	cfg := Config{Hidden: layers.Tanh, Standardize: true, Seed: 3}
	m := trainedModel(t, cfg)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	cfg.Constraint, cfg.Sizes, cfg.Seed = problems.FittingEquality{}.Equalities(), []int{1, 8, 2}, 99
	fresh, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, fresh.Restore(&buf))
	x := problems.FittingEquality{}.Sample(50, 1).X
	want, _, err := m.Predict(x)
	require.NoError(t, err)
	got, _, err := fresh.Predict(x)
	require.NoError(t, err)
	assert.Equal(t, bits(want), bits(got))
}

// otherDims is a constraint on (nx, ny, nc) = (2, 3, 1): c = Σy − Σx.
type otherDims struct{}

func (otherDims) Dims() (nx, ny, nc int) { return 2, 3, 1 }
func (otherDims) Eval(x, y, c, jy []float64) {
	c[0] = y[0] + y[1] + y[2] - x[0] - x[1]
	if jy != nil {
		jy[0], jy[1], jy[2] = 1, 1, 1
	}
}

// TestLoadRejectsOtherArchitecture checks that a saved model cannot be
// loaded for a constraint of other dimensions or restored into a model of
// another architecture, and that damaged files are rejected, all with
// errors that say what is wrong.
func TestLoadRejectsOtherArchitecture(t *testing.T) {
	m := trainedModel(t, Config{Hidden: layers.Tanh, Standardize: true, Seed: 3})
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	saved := buf.Bytes()

	_, err := Load(bytes.NewReader(saved), otherDims{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "constraint")
	ineq, err := problems.FittingInequality{}.Constraint()
	require.NoError(t, err)
	_, err = Load(bytes.NewReader(saved), ineq)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(nx, ny, nc, latent)")

	p := problems.FittingEquality{}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"sizes", Config{Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Standardize: true}, "layer sizes [1 8 2], the model has [1 16 2]"},
		{"depth", Config{Sizes: []int{1, 8, 8, 2}, Hidden: layers.Tanh, Standardize: true}, "layer sizes"},
		{"activation", Config{Sizes: []int{1, 8, 2}, Hidden: layers.ReLU, Standardize: true}, "activations tanh/identity, the model has relu/identity"},
		{"mode", Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Standardize: true, Mode: Soft}, "mode ENFORCE, the model has Soft"},
		{"standardize", Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh}, "Standardize true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Constraint, tc.cfg.Quiet = p.Equalities(), true
			other, err := New(tc.cfg)
			require.NoError(t, err)
			before := weightBits(other)
			err = other.Restore(bytes.NewReader(saved))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "another architecture")
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, weightBits(other), "a failed Restore changes nothing")
		})
	}

	edit := func(f func(map[string]any)) []byte {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(saved, &doc))
		f(doc)
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "reading a saved model"},
		{"not json", []byte("weights: 1 2 3"), "reading a saved model"},
		{"other format", edit(func(d map[string]any) { d["format"] = "something" }), "not a saved model"},
		{"newer version", edit(func(d map[string]any) { d["version"] = 2 }), "format version 2"},
		{"unknown field", edit(func(d map[string]any) { d["extra"] = 1 }), "unknown field"},
		{"short weights", edit(func(d map[string]any) { d["weights"].([]any)[0] = []any{1.0} }), "weights of the file"},
		{"missing layer", edit(func(d map[string]any) { d["weights"] = d["weights"].([]any)[:2] }), "weights of the file"},
		{"sizes disagree with constraint", edit(func(d map[string]any) { d["sizes"] = []any{1, 8, 3} }), "predicted outputs"},
		{"bad activation", edit(func(d map[string]any) { d["hidden"] = "swish" }), "unknown activation"},
		{"bad mode", edit(func(d map[string]any) { d["mode"] = "hard" }), "unknown mode"},
		{"bad std", edit(func(d map[string]any) { d["xScale"].(map[string]any)["std"] = []any{0.0} }), "input standardisation"},
		{"bad settings", edit(func(d map[string]any) { d["infer"].(map[string]any)["tol"] = -1.0 }), "Tol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m *Model
			var err error
			require.NotPanics(t, func() { m, err = Load(bytes.NewReader(tc.data), p.Equalities()) })
			require.Error(t, err)
			assert.Nil(t, m)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "train: "), err.Error())
		})
	}
}
