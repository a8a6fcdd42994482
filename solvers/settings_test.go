package solvers

import (
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// TestSettingsRejected checks that Solve (and SQP.Solve) returns an error
// naming the field, and no result, for every numeric field of Settings set
// to NaN, ±Inf or a negative value, instead of running to the iteration
// limit (NaN tolerances) or silently using the default (negative ones).
// The field list comes from reflection, so a numeric field added to
// Settings is checked too.
func TestSettingsRejected(t *testing.T) {
	qp, y0 := equalityQP([]float64{1, 2}, mat.NewDense(1, 2, []float64{1, 1}), []float64{1})
	typ := reflect.TypeFor[Settings]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var bad []any
		switch f.Type.Kind() {
		case reflect.Float64:
			bad = []any{math.NaN(), math.Inf(1), math.Inf(-1), -1e-12, -1.0}
		case reflect.Int:
			bad = []any{-1, math.MinInt}
		default:
			t.Fatalf("Settings.%s has kind %v: add its invalid values here", f.Name, f.Type.Kind())
		}
		for _, v := range bad {
			var s Settings
			reflect.ValueOf(&s).Elem().Field(i).Set(reflect.ValueOf(v))
			res, err := Solve(qp, y0, &s)
			if assert.Error(t, err, "%s = %v", f.Name, v) {
				assert.Contains(t, err.Error(), "Settings."+f.Name, "%s = %v", f.Name, v)
			}
			assert.Nil(t, res, "%s = %v", f.Name, v)
			_, err = SQP{Settings: s}.Solve(qp, y0)
			assert.Error(t, err, "SQP: %s = %v", f.Name, v)
		}
	}
}

// TestSettingsZeroMeansDefault checks the documented meaning of zero
// fields: the defaults, the same result as nil Settings.
func TestSettingsZeroMeansDefault(t *testing.T) {
	qp, y0 := equalityQP([]float64{1, 2}, mat.NewDense(1, 2, []float64{1, 1}), []float64{1})
	want, err := Solve(qp, y0, nil)
	require.NoError(t, err)
	for _, s := range []*Settings{{}, {Tol: DefaultTol, FeasTol: DefaultFeasTol, MaxIterations: DefaultMaxIterations}} {
		got, err := Solve(qp, y0, s)
		require.NoError(t, err)
		assert.Equal(t, want.Y, got.Y)
		assert.Equal(t, want.Status, got.Status)
		assert.Equal(t, want.Iterations, got.Iterations)
	}
}
