package train

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

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

// TestSaveLoadPredictBitIdentical saves trained models, float64 and
// float32 backbones (Config.Precision), loads them and checks that the
// loaded models predict exactly the same bits, with the same weights,
// standardisation and settings, precision included.
func TestSaveLoadPredictBitIdentical(t *testing.T) {
	p := problems.FittingEquality{}
	xTest := p.Sample(500, 77).X
	for _, cfg := range []Config{
		{Hidden: layers.Tanh, Standardize: true, Seed: 3},
		{Hidden: layers.ReLU, Sizes: []int{1, 6, 5, 2}, Seed: 4, LambdaD: -1, LambdaC: 0.2, BatchSize: 16,
			Infer: enforce.Settings{Tol: 1e-9, Weights: enforce.AutoDiagonal}},
		{Hidden: layers.Sigmoid, Mode: Soft, LambdaC: 0.7, Standardize: true, Seed: 5},
		{Hidden: layers.Tanh, Mode: MLP, Seed: 6, AlwaysProject: true, PyTorchInit: true},
		{Hidden: layers.Tanh, Mode: Soft, Penalty: SquaredHinge, Standardize: true, OutputStdFloor: -1, Seed: 7},
		{Hidden: layers.Tanh, Mode: Soft, Penalty: Norm, Standardize: true, OutputStdFloor: 0.5, Seed: 8},
		{Hidden: layers.Tanh, Standardize: true, Seed: 9, Precision: enforce.Float32},
		{Hidden: layers.ReLU, Mode: MLP, Seed: 10, PyTorchInit: true, Precision: enforce.Float32},
	} {
		t.Run(cfg.Mode.String()+"/"+cfg.Penalty.String()+"/"+cfg.Precision.String(), func(t *testing.T) {
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

	// edit changes the model of the saved document and records the
	// checksum of the result, so that the content checks are reached.
	edit := func(f func(map[string]any)) []byte {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(saved, &doc))
		model := doc["model"].(map[string]any)
		f(model)
		raw, err := json.Marshal(model)
		require.NoError(t, err)
		doc["sha256"], err = checksum(raw)
		require.NoError(t, err)
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		return b
	}
	editDoc := func(f func(map[string]any)) []byte {
		var doc map[string]any
		require.NoError(t, json.Unmarshal(saved, &doc))
		f(doc)
		b, err := json.Marshal(doc)
		require.NoError(t, err)
		return b
	}
	params := func(d map[string]any) []any { return d["params"].([]any) }
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "reading a saved model"},
		{"not json", []byte("weights: 1 2 3"), "reading a saved model"},
		{"other format", editDoc(func(d map[string]any) { d["format"] = "something" }), "not a saved model"},
		{"newer version", editDoc(func(d map[string]any) { d["version"] = 3 }), "format version 3"},
		{"unknown field", editDoc(func(d map[string]any) { d["extra"] = 1 }), "unknown field"},
		{"unknown model field", edit(func(d map[string]any) { d["extra"] = 1 }), "unknown field"},
		{"checksum", editDoc(func(d map[string]any) { d["model"].(map[string]any)["seed"] = 4.0 }), "damaged"},
		{"short weights", edit(func(d map[string]any) { params(d)[0].(map[string]any)["values"] = []any{1.0} }), "takes 8 values, got 1"},
		{"missing learnable", edit(func(d map[string]any) { d["params"] = params(d)[:3] }), `"mlp.1.b" is missing`},
		{"extra learnable", edit(func(d map[string]any) {
			d["params"] = append(params(d), map[string]any{"name": "x", "shape": []any{1.0}, "values": []any{1.0}})
		}), `"x" is not a learnable`},
		{"duplicate learnable", edit(func(d map[string]any) { d["params"] = append(params(d), params(d)[0]) }), "appears twice"},
		{"wrong shape", edit(func(d map[string]any) { params(d)[0].(map[string]any)["shape"] = []any{8.0, 1.0} }), "has shape [8 1], the model's [1 8]"},
		{"NaN weight", edit(func(d map[string]any) { params(d)[0].(map[string]any)["values"].([]any)[0] = "NaN" }), "cannot unmarshal"},
		{"backbone kind", edit(func(d map[string]any) { d["backbone"] = "transformer" }), "unknown backbone kind"},
		{"sizes disagree with constraint", edit(func(d map[string]any) { d["sizes"] = []any{1, 8, 3} }), "predicted outputs"},
		{"bad activation", edit(func(d map[string]any) { d["hidden"] = "swish" }), "unknown activation"},
		{"bad mode", edit(func(d map[string]any) { d["mode"] = "hard" }), "unknown mode"},
		{"bad std", edit(func(d map[string]any) { d["xScale"].(map[string]any)["std"] = []any{0.0} }), "input standardisation"},
		{"bad settings", edit(func(d map[string]any) { d["infer"].(map[string]any)["tol"] = -1.0 }), "Tol"},
		{"trailing garbage", append(append([]byte(nil), saved...), "x"...), "data after the document"},
		{"second document", append(append([]byte(nil), saved...), saved...), "data after the document"},
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

// TestLoadRejectsFlippedDigit changes single digits of a saved file's
// weights, standardisation and settings: every change must be rejected,
// never loaded as a different model. White space may change freely.
func TestLoadRejectsFlippedDigit(t *testing.T) {
	m := trainedModel(t, Config{Hidden: layers.Tanh, Standardize: true, Seed: 3})
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	saved := buf.String()
	c := problems.FittingEquality{}.Equalities()

	flips := 0
	model := strings.Index(saved, `"model"`)
	require.Positive(t, model)
	for i := model; i < len(saved); i += 37 {
		ch := saved[i]
		if ch < '0' || ch > '9' {
			continue
		}
		flipped := saved[:i] + string('0'+(ch-'0'+1)%10) + saved[i+1:]
		_, err := Load(strings.NewReader(flipped), c)
		require.Error(t, err, "digit %d flipped", i)
		flips++
	}
	assert.Greater(t, flips, 20)

	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, buf.Bytes()))
	for _, doc := range []string{compact.String(), "\n\t" + saved + "\n\n  "} {
		loaded, err := Load(strings.NewReader(doc), c)
		require.NoError(t, err)
		assert.Equal(t, weightBits(m), weightBits(loaded))
	}
}

// TestSaveFileKeepsOldFileOnFailure saves over an existing model with a
// save that fails: the old file must be intact and no temporary file left.
func TestSaveFileKeepsOldFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.json")
	good := trainedModel(t, Config{Hidden: layers.Tanh, Seed: 3})
	require.NoError(t, good.SaveFile(path))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "a new file")
	require.NoError(t, os.Chmod(path, 0o600))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	bad := trainedModel(t, Config{Hidden: layers.Tanh, Seed: 4})
	bad.params[0].Data().([]float64)[0] = math.NaN() // as a diverged run outside Fit could leave it
	err = bad.SaveFile(path)
	require.ErrorContains(t, err, `learnable "mlp.0.W" is not finite`)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the old file is untouched")

	err = good.SaveFile(filepath.Join(dir, "missing", "model.json"))
	assert.Error(t, err)

	other := trainedModel(t, Config{Hidden: layers.Tanh, Seed: 5})
	require.NoError(t, other.SaveFile(path))
	fi, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "an existing file keeps its permissions")
	loaded, err := LoadFile(path, problems.FittingEquality{}.Equalities())
	require.NoError(t, err)
	assert.Equal(t, weightBits(other), weightBits(loaded))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary files are left")
}

// TestNilModelAndIO checks that nil models, writers and readers are
// errors, not panics.
func TestNilModelAndIO(t *testing.T) {
	var nilModel *Model
	c := problems.FittingEquality{}.Equalities()
	x := mat.NewDense(1, 1, []float64{0.5})
	m := trainedModel(t, Config{Hidden: layers.Tanh, Seed: 3})
	var buf bytes.Buffer
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Save nil model", func() error { return nilModel.Save(&buf) }},
		{"Save nil writer", func() error { return m.Save(nil) }},
		{"SaveFile nil model", func() error { return nilModel.SaveFile(filepath.Join(t.TempDir(), "m.json")) }},
		{"Load nil reader", func() error { _, err := Load(nil, c); return err }},
		{"Load nil constraint", func() error { _, err := Load(&buf, nil); return err }},
		{"LoadBackbone nil func", func() error { _, err := LoadBackbone(&buf, c, nil); return err }},
		{"Restore nil model", func() error { return nilModel.Restore(&buf) }},
		{"Restore nil reader", func() error { return m.Restore(nil) }},
		{"Predict", func() error { _, _, err := nilModel.Predict(x); return err }},
		{"Backbone", func() error { _, err := nilModel.Backbone(x); return err }},
		{"Fit", func() error { _, err := nilModel.Fit(x, x); return err }},
		{"FitUnsupervised", func() error {
			_, err := nilModel.FitUnsupervised(x, func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return gorgonia.Sum(y) })
			return err
		}},
		{"NewGraph", func() error { _, err := nilModel.NewGraph(1); return err }},
		{"SetWeights", func() error { return nilModel.SetWeights(nil) }},
		{"FitStandardizers", func() error { return nilModel.FitStandardizers(x, nil) }},
		{"SetBatch zero Graph", func() error { return (&Graph{}).SetBatch(x, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			assert.Error(t, err)
		})
	}
	assert.NotPanics(t, func() {
		assert.Nil(t, nilModel.Weights())
		assert.Nil(t, nilModel.Params())
		nilModel.SetProgress(nil)
	})
}

func TestSettingsRoundTripNewFields(t *testing.T) {
	s := enforce.Settings{Tol: 1e-5, Grad: enforce.FinalProjector, Recompute: true, MaxStep: 0.5, LineSearch: true}
	assert.Equal(t, s, fromSettings(s).settings())
	// Version 1's Implicit was today's FinalProjector.
	v1 := fromSettings(enforce.Settings{Grad: enforce.Implicit}).v1Grad()
	assert.Equal(t, enforce.FinalProjector, v1.settings().Grad)
	assert.Equal(t, enforce.Unrolled, fromSettings(enforce.Settings{}).v1Grad().settings().Grad)
}

// TestSaveWritesEncoderBytes checks that Save writes the bytes a
// json.Encoder with SetIndent("", "  ") writes for its envelope (what Save
// wrote before it indented the document itself), and that Load, which no
// longer reads the envelope with a json.Decoder, still rejects an unknown
// envelope field and accepts the known ones in any letter case, as
// encoding/json matches struct fields.
func TestSaveWritesEncoderBytes(t *testing.T) {
	m := trainedModel(t, Config{Hidden: layers.Tanh, Standardize: true, Epochs: 2})
	var got bytes.Buffer
	require.NoError(t, m.Save(&got))
	var env envelope
	require.NoError(t, json.Unmarshal(got.Bytes(), &env))
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(&env))
	assert.Equal(t, want.String(), got.String())

	for _, tc := range []struct {
		key string
		ok  bool
	}{{"Format", true}, {"SHA256", true}, {"checksum", false}} {
		var doc map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(got.Bytes(), &doc))
		field := strings.ToLower(tc.key)
		if field == "checksum" {
			doc[field] = json.RawMessage(`"x"`)
		} else {
			doc[tc.key], doc[field] = doc[field], nil
			delete(doc, field)
		}
		raw, err := json.Marshal(doc)
		require.NoError(t, err)
		_, err = Load(bytes.NewReader(raw), problems.FittingEquality{}.Equalities())
		if tc.ok {
			assert.NoError(t, err, tc.key)
		} else {
			assert.ErrorContains(t, err, `unknown field "checksum"`)
		}
	}
}
