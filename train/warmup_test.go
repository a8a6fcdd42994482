package train

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestWarmupValidation checks the errors for warm-up epochs that cannot
// be run: negative, outside ENFORCE mode, or leaving no projected epoch.
func TestWarmupValidation(t *testing.T) {
	p := problems.FittingEquality{}
	base := Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 5, Quiet: true}
	for _, c := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"negative", func(c *Config) { c.Warmup = -1 }, "Warmup = -1 is negative"},
		{"MLP", func(c *Config) { c.Warmup, c.Mode = 1, MLP }, "leave it zero in MLP mode"},
		{"Soft", func(c *Config) { c.Warmup, c.Mode = 1, Soft }, "leave it zero in Soft mode"},
		{"all epochs", func(c *Config) { c.Warmup = 5 }, "must be less than Epochs = 5"},
		{"default epochs", func(c *Config) { c.Warmup, c.Epochs = DefaultEpochs, 0 }, "must be less than Epochs"},
	} {
		cfg := base
		c.mod(&cfg)
		_, err := New(cfg)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	cfg := base
	cfg.Warmup = 4
	_, err := New(cfg)
	assert.NoError(t, err)
}

// TestWarmupEpochs checks the mechanics of Config.Warmup, supervised and
// unsupervised: the warm-up epochs are exactly an MLP model's epochs
// (same losses, bit for bit, from the same seed: no projection, the task
// loss alone), report nothing projected and no displacement; the epochs
// after them project (AlwaysProject here, so every batch) and carry on
// from the warm-up's weights and Adam state (one solver: its step count
// runs on); a model saved and loaded keeps the setting.
func TestWarmupEpochs(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(40, 5)
	c := sumIsX(t)
	xu := mat.NewDense(24, 1, nil)
	for i := range 24 {
		xu.Set(i, 0, -1+2*float64(i)/23)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		fit  func(*Model) (History, error)
	}{
		{"Fit", Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), LearnRate: 1e-2,
			BatchSize: 10, Epochs: 6, Seed: 7, Standardize: true, AlwaysProject: true, Quiet: true},
			func(m *Model) (History, error) { return m.Fit(d.X, d.Y) }},
		{"FitUnsupervised", Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c, LambdaC: 1, LearnRate: 1e-2,
			BatchSize: 8, Epochs: 6, Seed: 3, AlwaysProject: true, Quiet: true},
			func(m *Model) (History, error) { return m.FitUnsupervised(xu, halfSquaredNorm) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const warm = 3
			cfg := tc.cfg
			cfg.Warmup = warm
			m, err := New(cfg)
			require.NoError(t, err)
			h, err := tc.fit(m)
			require.NoError(t, err)
			require.Len(t, h, cfg.Epochs)

			mlpCfg := tc.cfg
			mlpCfg.Mode, mlpCfg.AlwaysProject, mlpCfg.LambdaC, mlpCfg.Epochs = MLP, false, 0, warm
			mlp, err := New(mlpCfg)
			require.NoError(t, err)
			hm, err := tc.fit(mlp)
			require.NoError(t, err)
			for e := range warm {
				assert.Equal(t, hm[e].Loss, h[e].Loss, "warm-up epoch %d: an MLP's loss", e+1)
				assert.Equal(t, hm[e].Task, h[e].Task, "warm-up epoch %d", e+1)
				assert.Zero(t, h[e].Projected, "warm-up epoch %d projected", e+1)
				assert.Zero(t, h[e].Depth, "warm-up epoch %d depth", e+1)
				assert.Zero(t, h[e].Displacement, "warm-up epoch %d displacement", e+1)
			}
			for e := warm; e < cfg.Epochs; e++ {
				assert.Equal(t, 1.0, h[e].Projected, "epoch %d after the warm-up", e+1)
				assert.Positive(t, h[e].Depth, "epoch %d after the warm-up", e+1)
			}
			// One Adam for the whole call: its step count (which scales
			// its bias corrections) runs on across the switch.
			require.Positive(t, mlp.solver.Iter())
			assert.Equal(t, cfg.Epochs/warm*mlp.solver.Iter(), m.solver.Iter(), "Adam's steps")

			// Without the warm-up the first epochs differ: the setting is
			// consulted.
			plain, err := New(tc.cfg)
			require.NoError(t, err)
			hp, err := tc.fit(plain)
			require.NoError(t, err)
			assert.NotEqual(t, hp[0].Loss, h[0].Loss)
			assert.Equal(t, 1.0, hp[0].Projected)

			var buf bytes.Buffer
			require.NoError(t, m.Save(&buf))
			l, err := Load(&buf, cfg.Constraint)
			require.NoError(t, err)
			assert.Equal(t, warm, l.Config().Warmup)
		})
	}
}

// TestWarmupDivergenceReference checks that the divergence rule
// (Config.DivergenceFactor) takes its ℓ₀ afresh when the warm-up ends:
// here the warm-up's loss is a tiny objective (1e-8·½‖y‖², about 3e-9)
// and the projected epochs add the displacement (about 1e-3), a rise of
// 10⁵ that is no divergence. Measured from the warm-up's first batch the
// rule would stop the run; a real divergence after the warm-up is still
// caught.
func TestWarmupDivergenceReference(t *testing.T) {
	c := sumIsX(t)
	x, tiny := tinyObjectiveCase()
	cfg := Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c, LambdaC: -1, LearnRate: 1e-3,
		BatchSize: 8, Epochs: 4, Warmup: 2, Seed: 5, AlwaysProject: true, Quiet: true}
	m, err := New(cfg)
	require.NoError(t, err)
	h, err := m.FitUnsupervised(x, tiny)
	require.NoError(t, err)
	require.Len(t, h, 4)
	require.Greater(t, h[2].Loss, 1e4*max(h[0].Loss, 1e-8), "the case: the projected epochs' loss is orders of magnitude above the warm-up's")

	// A rate 10⁹ times higher after the warm-up: the projected epochs
	// diverge, and the rule measured against their own ℓ₀ says so.
	cfg.Schedule = func(e int, _ History) float64 {
		if e > cfg.Warmup {
			return 1e9
		}
		return 1
	}
	m, err = New(cfg)
	require.NoError(t, err)
	_, err = m.FitUnsupervised(x, tiny)
	require.ErrorContains(t, err, "epoch 3: training diverged")
}

// TestWarmupDivergenceResumed checks that a call resumed in the middle of
// the first projected epoch keeps the divergence rule's ℓ₀ taken at that
// epoch's first batch: it stops with the uninterrupted call's error, and a
// checkpoint of the warm-up's epochs does not carry the warm-up's ℓ₀ into
// the projected ones.
func TestWarmupDivergenceResumed(t *testing.T) {
	c := sumIsX(t)
	x, tiny := tinyObjectiveCase()
	for _, tc := range []struct {
		name string
		lr   float64 // the learning rate's factor after the warm-up
		stop int     // the batch after which the first call stops
	}{
		{"diverges, stopped in the first projected epoch", 1e9, 5},
		{"diverges, stopped in the warm-up", 1e9, 3},
		{"trains, stopped in the first projected epoch", 1, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The rate is 1e-3 in the warm-up and 1e-3·lr after it.
			after := func(e int, _ History) float64 {
				if e > 2 {
					return tc.lr
				}
				return 1
			}
			cfg := Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c, LambdaC: -1, LearnRate: 1e-3, Schedule: after,
				BatchSize: 8, Epochs: 4, Warmup: 2, Seed: 5, AlwaysProject: true, Quiet: true}
			m, err := New(cfg)
			require.NoError(t, err)
			_, want := m.FitUnsupervised(x, tiny)

			cfg.Checkpoint = Checkpoint{Dir: t.TempDir(), Every: time.Minute}
			m, err = New(cfg)
			require.NoError(t, err)
			m.now = fakeClock()
			stopAfter(m, tc.stop)
			_, err = m.FitUnsupervised(x, tiny)
			require.ErrorIs(t, err, errStop)
			r, err := Resume(cfg.Checkpoint.Dir, cfg)
			require.NoError(t, err)
			r.now = fakeClock()
			_, got := r.FitUnsupervised(x, tiny)
			if want == nil {
				require.NoError(t, got)
				return
			}
			require.Error(t, got)
			require.Equal(t, want.Error(), got.Error())
		})
	}
}

// tinyObjectiveCase is the divergence tests' data: 16 inputs in [0.5, 1.5]
// and the objective 1e-8·½‖y‖², tiny beside the displacement.
func tinyObjectiveCase() (*mat.Dense, Objective) {
	x := mat.NewDense(16, 1, nil)
	for i := range 16 {
		x.Set(i, 0, 0.5+float64(i)/15)
	}
	tiny := func(xn, y *gorgonia.Node) (*gorgonia.Node, error) {
		f, err := halfSquaredNorm(xn, y)
		if err != nil {
			return nil, err
		}
		return gorgonia.Mul(f, gorgonia.NewConstant(1e-8))
	}
	return x, tiny
}
