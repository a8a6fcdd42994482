package train

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// missedRows returns the rows of y whose max|c| is above tol.
func missedRows(t *testing.T, c enforce.Constraint, x, y *mat.Dense, tol float64) []int {
	t.Helper()
	_, _, nc := c.Dims()
	r, _ := y.Dims()
	var rows []int
	cv := make([]float64, nc)
	for i := range r {
		c.Eval(x.RawRowView(i), y.RawRowView(i), cv, nil)
		for _, v := range cv {
			if v > tol || -v > tol {
				rows = append(rows, i)
				break
			}
		}
	}
	return rows
}

// TestPredictMissed checks that Predict's Stats.Missed lists exactly the
// rows whose prediction misses the inference tolerance (one NP step leaves
// some of them above it), and that with Config.Infer.RequireTol Predict
// fails with a wrapped *enforce.ToleranceError listing the same rows, in
// ENFORCE and MLP modes.
func TestPredictMissed(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(64, 3)
	test := p.Sample(40, 4)
	for _, mode := range []Mode{ENFORCE, MLP} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Mode: mode,
				Epochs: 3, Quiet: true, Seed: 2, Infer: enforce.Settings{MinDepth: 1, MaxDepth: 1}}
			m, err := New(cfg)
			require.NoError(t, err)
			_, err = m.Fit(d.X, d.Y)
			require.NoError(t, err)
			pred, st, err := m.Predict(test.X)
			require.NoError(t, err)
			want := missedRows(t, p.Equalities(), test.X, pred, enforce.DefaultTol)
			require.NotEmpty(t, want, "the test needs rows that miss the tolerance")
			if mode == ENFORCE {
				require.Less(t, len(want), 40, "and rows that meet it")
			}
			assert.Equal(t, want, st.Missed)

			cfg.Infer.RequireTol = true
			strict, err := New(cfg)
			require.NoError(t, err)
			_, err = strict.Fit(d.X, d.Y)
			require.NoError(t, err)
			got, st2, err := strict.Predict(test.X)
			require.Error(t, err)
			assert.Nil(t, got)
			var te *enforce.ToleranceError
			require.True(t, errors.As(err, &te), "%v", err)
			assert.Equal(t, want, te.Samples)
			assert.Equal(t, want, st2.Missed)
		})
	}
}
