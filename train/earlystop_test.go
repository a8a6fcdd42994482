package train

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// earlyStopRun is TestEarlyStopping's run: training data, a validation
// set whose loss soon stops improving, and a Config with Patience.
func earlyStopRun(t *testing.T) (cfg Config, x, y, vx, vy *mat.Dense) {
	p := problems.FittingEquality{}
	d := p.Sample(60, 1)
	v := p.Sample(30, 2)
	vy = mat.NewDense(30, 2, nil)
	for i := range 30 {
		p.Truth(1.3*v.X.At(i, 0), vy.RawRowView(i))
	}
	cfg = Config{Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 400, Quiet: true,
		LearnRate: 0.01, Standardize: true, Patience: 5, Seed: 3, BatchSize: 20}
	return cfg, d.X, d.Y, v.X, vy
}

// TestEarlyStopCheckpoint checks checkpoints of a Fit call that Patience
// stops: the call writes a final checkpoint when it stops (the
// Checkpoint documentation's "one at the end of the call"; there was
// none), holding the best epoch's weights that Fit leaves (the last
// checkpoint held the last epoch's), and Fit on the model Resume returns
// from it returns the call's History without training (it trained on past
// the stop). A run interrupted before the stop and resumed stops at the
// same epoch with the same weights as the uninterrupted run, bit for bit:
// checkpoints carry the best weights and the count.
func TestEarlyStopCheckpoint(t *testing.T) {
	cfg, x, y, vx, vy := earlyStopRun(t)
	ref, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, ref.SetValidation(vx, vy))
	want, err := ref.Fit(x, y)
	require.NoError(t, err)
	require.Less(t, len(want), cfg.Epochs, "stopped early")
	require.Greater(t, len(want), cfg.Patience+2)
	wantW := weightBits(ref)

	resume := func(t *testing.T, dir string) *Model {
		t.Helper()
		c := cfg
		r, err := Resume(dir, c)
		require.NoError(t, err)
		require.NoError(t, r.SetValidation(vx, vy))
		return r
	}

	for _, tc := range []struct {
		name  string
		every time.Duration
		clock bool // a clock that advances a minute per reading: a checkpoint after every batch
	}{{"final checkpoint only", time.Hour, false}, {"every batch", time.Minute, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := cfg
			c.Checkpoint = Checkpoint{Dir: dir, Every: tc.every}
			m, err := New(c)
			require.NoError(t, err)
			if tc.clock {
				m.now = fakeClock()
			}
			require.NoError(t, m.SetValidation(vx, vy))
			h, err := m.Fit(x, y)
			require.NoError(t, err)
			assert.Equal(t, want, h)
			assert.Equal(t, wantW, weightBits(m), "the best epoch's weights")

			r := resume(t, dir)
			assert.Equal(t, wantW, weightBits(r), "the final checkpoint holds the best epoch's weights")
			got, err := r.Fit(x, y)
			require.NoError(t, err)
			assert.Equal(t, want, got, "no training past the stop")
			assert.Equal(t, wantW, weightBits(r))
		})
	}

	t.Run("interrupted", func(t *testing.T) {
		for _, k := range []int{4, 3 * (len(want) - cfg.Patience), 3*len(want) - 1} {
			dir := t.TempDir()
			c := cfg
			c.Checkpoint = Checkpoint{Dir: dir, Every: time.Minute}
			m, err := New(c)
			require.NoError(t, err)
			m.now = fakeClock()
			stopAfter(m, k)
			require.NoError(t, m.SetValidation(vx, vy))
			_, err = m.Fit(x, y)
			require.ErrorIs(t, err, errStop)

			r := resume(t, dir)
			got, err := r.Fit(x, y)
			require.NoError(t, err)
			assert.Equal(t, want, got, "interrupted after batch %d", k)
			assert.Equal(t, wantW, weightBits(r), "interrupted after batch %d", k)
		}
	})
}
