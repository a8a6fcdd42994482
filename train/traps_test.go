package train

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

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
