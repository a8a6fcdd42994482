package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

func TestRegressionMetrics(t *testing.T) {
	truth := mat.NewDense(4, 2, []float64{1, 10, 2, 20, 3, 30, 4, 40})
	for _, tc := range []struct {
		name                        string
		pred                        []float64
		mse, r2, mape, nrmse, relL1 float64
	}{
		{"exact", []float64{1, 10, 2, 20, 3, 30, 4, 40}, 0, 1, 0, 0, 0},
		// Output 1 off by +0.5 everywhere, output 2 exact: MSE = 0.25/2,
		// SS_res = 1, SS_tot = 5 → R² = (0.8 + 1)/2; MAPE of output 1 =
		// 0.5·(1/1 + 1/2 + 1/3 + 1/4)/4, of output 2 = 0, their mean half
		// that; NRMSE = 100·(0.5/√1.25)/2.
		{"offset", []float64{1.5, 10, 2.5, 20, 3.5, 30, 4.5, 40}, 0.125, 0.9,
			0.5 * (1 + 0.5 + 1.0/3 + 0.25) / 4, 100 * 0.5 / math.Sqrt(1.25) / 2, 100 * 2.0 / 110},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pred := mat.NewDense(4, 2, tc.pred)
			assert.InDelta(t, tc.mse, MSE(pred, truth), 1e-14)
			assert.InDelta(t, tc.r2, R2(pred, truth), 1e-14)
			assert.InDeltaSlice(t, []float64{tc.mape, 0}, MAPE(pred, truth), 1e-15)
			assert.InDelta(t, tc.mape/2, MeanMAPE(pred, truth), 1e-15)
			assert.InDelta(t, tc.nrmse, NRMSE(pred, truth), 1e-12)
			assert.InDelta(t, tc.relL1, RelL1(pred, truth), 1e-12)
		})
	}
	assert.Panics(t, func() { MSE(mat.NewDense(2, 2, nil), truth) }, "shape mismatch")
}

// TestMAPEZeroTargets checks scikit-learn's treatment of targets at and
// near zero: |e|/max(|y*|, 2⁻⁵²), its documented formula (scikit-learn is
// not installed here, so the expected values are worked by hand).
func TestMAPEZeroTargets(t *testing.T) {
	truth := mat.NewDense(2, 2, []float64{0, 1e-20, 2, 2})
	pred := mat.NewDense(2, 2, []float64{1, 0, 1, 1})
	got := MAPE(pred, truth)
	assert.Equal(t, (1/MAPEEps+0.5)/2, got[0])
	assert.Equal(t, (1e-20/MAPEEps+0.5)/2, got[1])
	assert.InDelta(t, 2251799813685248.2, got[0], 1)
	assert.Equal(t, 2.220446049250313e-16, MAPEEps)
	assert.Equal(t, 0.0, MeanMAPE(truth, truth))
}

// difference is c(y) = y₁ − y₂ (no input).
func difference(t *testing.T) enforce.Constraint {
	c, err := enforce.Linear(0, mat.NewDense(1, 2, []float64{1, -1}), nil)
	require.NoError(t, err)
	return c
}

func TestResidualAndInfeasible(t *testing.T) {
	// c(y) = y₁ − y₂, also read as one inequality g(y) = y₁ − y₂ ≤ 0.
	c := difference(t)
	y := mat.NewDense(4, 2, []float64{1, 1, 2, 1, 0, 3, 1, 0.5})
	mean, max, err := Residual(c, nil, y)
	require.NoError(t, err)
	assert.InDelta(t, (0+1+3+0.5)/4.0, mean, 1e-15)
	assert.InDelta(t, 3, max, 1e-15)

	pct, err := Infeasible(c, nil, y, 0)
	require.NoError(t, err)
	assert.Equal(t, []float64{50}, pct, "rows 2 and 4 have g > 0")
	pct, err = Infeasible(c, nil, y, 0.75)
	require.NoError(t, err)
	assert.Equal(t, []float64{25}, pct)

	_, _, err = Residual(c, nil, mat.NewDense(2, 3, nil))
	assert.ErrorContains(t, err, "ny=2")
	_, _, err = Residual(c, nil, mat.NewDense(1, 2, []float64{math.NaN(), 0}))
	assert.ErrorContains(t, err, "sample 0")
	_, err = Infeasible(nil, nil, y, 0)
	assert.Error(t, err)
	withX, err := enforce.Linear(1, mat.NewDense(1, 2, []float64{1, -1}), nil)
	require.NoError(t, err)
	_, _, err = Residual(withX, nil, y)
	assert.ErrorContains(t, err, "x is nil")
	_, _, err = Residual(withX, mat.NewDense(3, 1, nil), y)
	assert.ErrorContains(t, err, "x is 3×1")
}
