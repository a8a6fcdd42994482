package train

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// everySetting returns enforce.Settings with every field set, by
// reflection, to a valid value that is neither zero nor the default of
// Config.Train or Config.Infer, for a constraint with ny outputs. Fields
// named in the table get its value; any other field (one added to Settings
// after this test) gets a generic non-zero value of its kind, and the test
// fails if it has no such value or if NewAdaNP rejects it, so that a new
// field must be given a value here and a place in the file format.
func everySetting(t *testing.T, ny int) enforce.Settings {
	t.Helper()
	diag := make([]float64, ny)
	for i := range diag {
		diag[i] = 0.5 + float64(i)
	}
	known := map[string]any{
		"Tol":                  3e-7,
		"MinDepth":             2,
		"MaxDepth":             57,
		"Measure":              enforce.MeanAbs, // not Infer's default; Train cannot ask for MaxAbs
		"Reg":                  1e-9,
		"Weights":              enforce.Diagonal,
		"Diag":                 diag,
		"Grad":                 enforce.Implicit, // Chord accepts Implicit and FinalProjector
		"Recompute":            true,
		"Precision":            enforce.Float64, // Float32 excludes Damping on the dense path; TestSaveLoadFloat32Bits saves it
		"MaxStep":              12.5,
		"LineSearch":           true,
		"RequireTol":           true,
		"Damping":              0.02,
		"Smoothing":            0.5,                // above the problem's ε_FB
		"Path":                 enforce.PathSparse, // Chord needs it
		"Chord":                2,
		"ChordCG":              3,
		"EqualitySteps":        2,
		"SmoothingFirstDepth":  20,
		"StopWhenFeasible":     true,
		"Nonmonotone":          5,
		"SmoothingNonmonotone": 3,
		"SmoothingPatience":    4,
		"SmoothingFromAttempt": true,
		"SmoothingLadder":      []float64{1e-2, 0.1}, // between the problem's ε_FB and Smoothing
	}
	var s enforce.Settings
	v := reflect.ValueOf(&s).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if val, ok := known[name]; ok {
			f.Set(reflect.ValueOf(val))
			continue
		}
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f.SetInt(1)
		case reflect.Float32, reflect.Float64:
			f.SetFloat(0.25)
		default:
			t.Fatalf("enforce.Settings.%s (%v) is new: give it a non-default value in everySetting and save it", name, f.Type())
		}
		t.Logf("enforce.Settings.%s is not in everySetting's table; trying %v", name, f.Interface())
	}
	for i := range v.NumField() {
		require.False(t, v.Field(i).IsZero(), "field %s is zero", v.Type().Field(i).Name)
	}
	return s
}

// TestSaveLoadEverySetting sets every field of both Train and Infer
// settings to a non-default value, saves and loads the model, and checks
// field by field (by reflection, so a field added to enforce.Settings is
// checked too) that the loaded model has the same settings, as given and
// as its AdaNPs use them.
func TestSaveLoadEverySetting(t *testing.T) {
	// A sparse WithInequalities constraint (Smoothing needs one, Chord
	// the sparse path): y = x with y ≤ 0.5.
	eq, err := enforce.SparseFunc(1, 1, 1, [][]int{{0}}, func(x, y, c []hd.Number) { c[0] = hd.Sub(y[0], x[0]) })
	require.NoError(t, err)
	g, err := enforce.SparseFunc(1, 1, 1, [][]int{{0}}, func(_, y, c []hd.Number) { c[0] = hd.Sub(y[0], hd.Const(0.5)) })
	require.NoError(t, err)
	c, err := enforce.WithInequalities(eq, g, 1e-3)
	require.NoError(t, err)
	s := everySetting(t, 1)
	m, err := New(Config{Sizes: []int{1, 4, 1}, Hidden: layers.Tanh, Constraint: c,
		Train: s, Infer: s, Quiet: true})
	require.NoError(t, err, "everySetting's values must be valid")
	require.NoError(t, m.SetWeights(m.Weights()))

	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	loaded, err := Load(&buf, c)
	require.NoError(t, err)

	for _, tc := range []struct {
		name      string
		want, got enforce.Settings
	}{
		{"Config().Train", m.Config().Train, loaded.Config().Train},
		{"Config().Infer", m.Config().Infer, loaded.Config().Infer},
		{"TrainAdaNP", m.TrainAdaNP().Settings(), loaded.TrainAdaNP().Settings()},
		{"InferAdaNP", m.InferAdaNP().Settings(), loaded.InferAdaNP().Settings()},
	} {
		want, got := reflect.ValueOf(tc.want), reflect.ValueOf(tc.got)
		for i := range want.NumField() {
			name := want.Type().Field(i).Name
			assert.Equal(t, reflect.ValueOf(s).Field(i).Interface(), want.Field(i).Interface(), "%s.%s before saving", tc.name, name)
			assert.Equal(t, want.Field(i).Interface(), got.Field(i).Interface(), "%s.%s after Load", tc.name, name)
		}
	}
}

// TestSaveLoadFloat32Bits checks that a model whose inference uses
// Settings.Precision Float32 predicts the same bits after Save and Load,
// on a problem where Float32 and Float64 predict different bits (so that a
// loaded model falling back to Float64 would show).
func TestSaveLoadFloat32Bits(t *testing.T) {
	p, err := problems.NewNonconvexQuadratic(40, 12, 3)
	require.NoError(t, err)
	c := p.Equalities()
	nx, ny := p.Dims()
	x := p.SampleX(16, 4)
	cfg := Config{Sizes: []int{nx, 8, ny}, Hidden: layers.Tanh, Constraint: c, Seed: 5, Quiet: true,
		Infer: enforce.Settings{Tol: 1e-9, Precision: enforce.Float32}}
	m, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, m.SetWeights(m.Weights()))
	want, _, err := m.Predict(x)
	require.NoError(t, err)

	cfg.Infer.Precision = enforce.Float64
	m64, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, m64.SetWeights(m64.Weights()))
	p64, _, err := m64.Predict(x)
	require.NoError(t, err)
	require.NotZero(t, differ(bits(want), bits(p64)), "Float32 and Float64 must differ here for the test to mean anything")

	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	loaded, err := Load(&buf, c)
	require.NoError(t, err)
	got, _, err := loaded.Predict(x)
	require.NoError(t, err)
	assert.Equal(t, enforce.Float32, loaded.Config().Infer.Precision)
	assert.Equal(t, 0, differ(bits(want), bits(got)), "entries of a loaded Float32 model's predictions that differ")
}

// differ returns the number of positions where a and b differ, or
// len(a)+len(b) when their lengths differ.
func differ(a, b []uint64) int {
	if len(a) != len(b) {
		return len(a) + len(b)
	}
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}
