package train

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// fittingLike returns (½y₁)² + a·x² + y₂ = 0, the fitting problem's
// constraint for a = 1.
func fittingLike(t *testing.T, a float64) enforce.Constraint {
	t.Helper()
	c, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
		h := hd.Scale(0.5, y[0])
		c[0] = hd.Add(hd.Add(hd.Mul(h, h), hd.Scale(a, hd.Mul(x[0], x[0]))), y[1])
	})
	require.NoError(t, err)
	return c
}

// scaled is a constraint whose values and Jacobian are another's times
// 1 + eps: the rounding another machine might give.
type scaled struct {
	enforce.Constraint
	eps float64
}

func (s scaled) Eval(x, y, c, jy []float64) {
	s.Constraint.Eval(x, y, c, jy)
	for i := range c {
		c[i] *= 1 + s.eps
	}
	for i := range jy {
		jy[i] *= 1 + s.eps
	}
}

// TestLoadRefusesOtherConstraint checks the constraint fingerprint: a
// model saved with one constraint loads with an equal one (another
// instance, or values that differ by rounding), and Load, Restore and
// Resume refuse one of the same sizes with other values, with an error
// wrapping ErrConstraintMismatch that names the probe point.
func TestLoadRefusesOtherConstraint(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(50, 1)
	for _, std := range []bool{false, true} {
		cfg := Config{Sizes: []int{1, 6, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 2, Quiet: true, Standardize: std}
		m, err := New(cfg)
		require.NoError(t, err)
		_, err = m.Fit(d.X, d.Y)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, m.Save(&buf))
		saved := buf.Bytes()
		assert.Contains(t, string(saved), `"fingerprint"`)

		for _, c := range []enforce.Constraint{p.Equalities(), fittingLike(t, 1), scaled{p.Equalities(), 1e-13}} {
			_, err := Load(bytes.NewReader(saved), c)
			assert.NoError(t, err, "%T", c)
		}
		for _, c := range []enforce.Constraint{fittingLike(t, 1.001), scaled{p.Equalities(), 1e-6}} {
			_, err := Load(bytes.NewReader(saved), c)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrConstraintMismatch), "%v", err)
			assert.Contains(t, err.Error(), "train: the constraint differs from the one the model was saved with: at the file's probe point 0")

			other := cfg
			other.Constraint = c
			fresh, err := New(other)
			require.NoError(t, err)
			assert.ErrorIs(t, fresh.Restore(bytes.NewReader(saved)), ErrConstraintMismatch)
		}
	}
}

// TestResumeRefusesOtherConstraint checks that Resume, given a Config
// whose constraint differs from the checkpoint's, refuses it.
func TestResumeRefusesOtherConstraint(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(30, 1)
	dir := t.TempDir()
	cfg := Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 2, Quiet: true,
		Checkpoint: Checkpoint{Dir: dir, Every: 1}}
	m, err := New(cfg)
	require.NoError(t, err)
	_, err = m.Fit(d.X, d.Y)
	require.NoError(t, err)
	_, err = Resume(dir, cfg)
	require.NoError(t, err)
	cfg.Constraint = fittingLike(t, 2)
	_, err = Resume(dir, cfg)
	assert.ErrorIs(t, err, ErrConstraintMismatch)
}

// TestLoadWithoutFingerprint checks that a file written before
// fingerprints existed loads with any constraint of its sizes, unchecked.
func TestLoadWithoutFingerprint(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "model_v2.json"))
	require.NoError(t, err)
	require.NotContains(t, string(raw), "fingerprint")
	_, err = Load(bytes.NewReader(raw), fittingLike(t, 3))
	assert.NoError(t, err)
}
