package train

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestFittingEnforceBeatsMLP is the paper's §5.1 experiment at reduced
// scale: the equality-constrained fitting problem (f = 5), ENFORCE and an
// unconstrained MLP trained with the same seed, data order and
// architecture. ENFORCE's test predictions must satisfy the constraint to
// the inference tolerance and fit better than the MLP's.
//
// Scale: the paper trains a 1×64 ReLU network on 100 points for 50,000
// epochs at learning rate 1e-3. That is minutes of CPU, so this test
// trains a 1×32 tanh network on 200 points, full batch, at learning rate
// 1e-2, for 1500 epochs (1000 with -short). With 100 points, or with ReLU
// at this width and budget, both models underfit the 5-fold oscillation
// and the comparison is decided by initialisation noise (at 800 epochs and
// 100 points the MLP won on one seed of five). With 200 points and tanh,
// ENFORCE won on each of seeds 1–10, by a factor of at least 2.8 in test
// MSE at 1500 epochs and 1.85 at 1000 epochs (0.0096 against 0.062 for
// seed 1 at 1500 epochs), so the assertion below has a wide margin.
func TestFittingEnforceBeatsMLP(t *testing.T) {
	epochs := 1500
	if testing.Short() {
		epochs = 1000
	}
	p := problems.FittingEquality{}
	trainSet, testSet := p.Sample(200, 1), p.Sample(5000, 99)
	fit := func(mode Mode) (float64, float64, bool) {
		m, err := New(Config{
			Sizes: []int{1, 32, 2}, Hidden: layers.Tanh,
			Constraint: p.Equalities(), Mode: mode,
			LearnRate: 1e-2, Epochs: epochs, Seed: 1,
			Standardize: true, Quiet: true,
		})
		require.NoError(t, err)
		h, err := m.Fit(trainSet.X, trainSet.Y)
		require.NoError(t, err)
		require.Len(t, h, epochs)
		pred, st, err := m.Predict(testSet.X)
		require.NoError(t, err)
		return meanSquaredError(pred, testSet.Y), st.After.Max, st.Converged()
	}
	mlpMSE, mlpMax, _ := fit(MLP)
	enfMSE, enfMax, converged := fit(ENFORCE)
	t.Logf("test MSE: ENFORCE %.3e, MLP %.3e; max|c|: ENFORCE %.1e, MLP %.1e", enfMSE, mlpMSE, enfMax, mlpMax)
	assert.True(t, converged, "every test sample meets the inference tolerance")
	assert.LessOrEqual(t, enfMax, 1e-6, "ENFORCE max|c| on the test set")
	assert.LessOrEqual(t, enfMSE, mlpMSE, "ENFORCE test MSE must not exceed the MLP's")
	assert.Greater(t, mlpMax, 1e-2, "the MLP alone does not satisfy the constraint")
}
