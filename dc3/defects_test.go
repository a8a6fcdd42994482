package dc3

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/problems"
)

// TestFitRecoversFromNonFiniteObjective: a Fit that stops on a
// non-finite objective (inputs of 1e300 overflow the first layer) leaves
// the model able to train: the next Fit on ordinary inputs succeeds and
// its predictions are finite.
func TestFitRecoversFromNonFiniteObjective(t *testing.T) {
	p, err := problems.NewNonconvexLinear(10, 4, 1)
	require.NoError(t, err)
	m, err := New(p, Config{Hidden: []int{8, 8}, BatchSize: 20, Epochs: 2, Seed: 1, Quiet: true})
	require.NoError(t, err)
	defer m.Close()
	huge := mat.NewDense(20, 4, nil)
	for i := range 20 {
		for j := range 4 {
			huge.Set(i, j, 1e300*float64(1+i+j))
		}
	}
	_, err = m.Fit(huge)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "objective")
	x := p.SampleX(40, 2)
	hist, err := m.Fit(x)
	require.NoError(t, err, "the model trains again")
	assert.Len(t, hist, 2)
	y, err := m.Predict(x)
	require.NoError(t, err)
	for _, v := range y.RawMatrix().Data {
		require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
	}
}

// TestNilAndNonFiniteInputs: Fit and Predict return errors, not panics,
// for a nil x, and errors naming the entry for a NaN or infinite one
// (Predict used to return NaN predictions without an error); Predict
// returns an error, not Inf or NaN, where a finite input overflows.
func TestNilAndNonFiniteInputs(t *testing.T) {
	p, err := problems.NewNonconvexLinear(10, 4, 1)
	require.NoError(t, err)
	m, err := New(p, Config{Hidden: []int{8}, BatchSize: 10, Epochs: 1, Quiet: true})
	require.NoError(t, err)
	defer m.Close()
	assert.NotPanics(t, func() {
		_, err := m.Fit(nil)
		assert.Error(t, err)
		_, err = m.Predict(nil)
		assert.Error(t, err)
	})
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		x := p.SampleX(10, 1)
		x.Set(3, 2, bad)
		_, err := m.Predict(x)
		require.Error(t, err, "Predict with %v", bad)
		assert.Contains(t, err.Error(), "x[3][2]")
		_, err = m.Fit(x)
		require.Error(t, err, "Fit with %v", bad)
		assert.Contains(t, err.Error(), "x[3][2]")
	}
	_, err = m.Fit(p.SampleX(10, 1))
	assert.NoError(t, err, "a rejected input leaves the model usable")
	huge := p.SampleX(10, 1)
	huge.Set(4, 0, 1e308)
	_, err = m.Predict(huge)
	require.Error(t, err, "an overflowing prediction")
	assert.Contains(t, err.Error(), "x[4]")
}

// TestNewtonCompletionValidate: index lists that overlap, leave a
// variable out, hold an index out of range or have the wrong lengths are
// rejected with an error by Validate, Complete, VJP and the graph, where
// Complete used to complete a wrong set of variables silently.
func TestNewtonCompletionValidate(t *testing.T) {
	p, err := problems.NewNonconvexQuadratic(6, 2, 1)
	require.NoError(t, err)
	c := p.Equalities()
	x, yp, y, g, gp := make([]float64, 2), make([]float64, 4), make([]float64, 6), make([]float64, 6), make([]float64, 4)
	good := &NewtonCompletion{C: c, Partial: []int{0, 1, 2, 3}, Other: []int{4, 5}}
	require.NoError(t, good.Validate())
	_, _, err = good.Complete(x, yp, y)
	require.NoError(t, err)
	for _, tc := range []struct {
		name           string
		partial, other []int
		want           string
	}{
		{"overlap", []int{0, 1, 2, 4}, []int{4, 5}, "variable 4 is in Partial and in Other"},
		{"repeat", []int{0, 0, 2, 3}, []int{4, 5}, "variable 0 is in Partial and in Partial"},
		{"out of range", []int{0, 1, 2, 6}, []int{4, 5}, "out of range"},
		{"negative", []int{0, 1, 2, -1}, []int{4, 5}, "out of range"},
		{"incomplete", []int{0, 1, 2}, []int{4, 5}, "want 4 and 2"},
		{"too many others", []int{0, 1, 2}, []int{3, 4, 5}, "want 4 and 2"},
	} {
		nc := &NewtonCompletion{C: c, Partial: tc.partial, Other: tc.other}
		err := nc.Validate()
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want, tc.name)
		_, _, err = nc.Complete(x, make([]float64, len(tc.partial)), y)
		assert.Error(t, err, "%s: Complete", tc.name)
		assert.Error(t, nc.VJP(x, y, g, make([]float64, len(tc.partial))), "%s: VJP", tc.name)
		assert.Error(t, func() error { _, err := nc.node(nil, nil); return err }(), "%s: graph", tc.name)
	}
	assert.Error(t, (&NewtonCompletion{Partial: []int{0}, Other: []int{1}}).Validate(), "nil C")
	_, _, err = good.Complete(x, yp[:3], y)
	assert.Error(t, err, "short y_p")
	assert.Error(t, good.VJP(x, y, g[:5], gp), "short g")
}
