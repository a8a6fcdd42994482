package train

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

func TestClipNormKernel(t *testing.T) {
	norm := func(g []any) float64 {
		var ss float64
		for _, v := range g {
			switch d := v.(type) {
			case []float64:
				for _, x := range d {
					ss += x * x
				}
			case []float32:
				for _, x := range d {
					ss += float64(x) * float64(x)
				}
			}
		}
		return math.Sqrt(ss)
	}
	g := []any{[]float64{3, 0}, []float32{0, 4}} // norm 5
	clipNorm(g, 10)
	assert.Equal(t, []any{[]float64{3, 0}, []float32{0, 4}}, g, "below the bound: unchanged")
	clipNorm(g, 1)
	assert.InDelta(t, 1, norm(g), 1e-7)
	assert.InDelta(t, 0.6, g[0].([]float64)[0], 1e-15)
	assert.InDelta(t, 0.8, g[1].([]float32)[1], 1e-7)

	huge := []any{[]float64{3e200, 4e200}} // the plain sum of squares overflows
	clipNorm(huge, 2)
	assert.InDelta(t, 1.2, huge[0].([]float64)[0], 1e-14)
	assert.InDelta(t, 1.6, huge[0].([]float64)[1], 1e-14)

	zero := []any{[]float64{0, 0}}
	clipNorm(zero, 1)
	assert.Equal(t, []float64{0, 0}, zero[0])
}

// TestClipNorm trains one batch and reads Adam's first moment, which
// after one step is (1 − β₁)·g: with ClipNorm its norm is (1 − β₁)·ClipNorm,
// without it (1 − β₁)·‖g‖, larger. A bound above ‖g‖ changes nothing, bit
// for bit.
func TestClipNorm(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(40, 1)
	for _, mode := range []Mode{MLP, ENFORCE} {
		for _, prec := range []enforce.Precision{enforce.Float64, enforce.Float32} {
			fit := func(clip float64) (mnorm float64, w [][]float64) {
				m, err := New(Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Mode: mode, Constraint: p.Equalities(),
					Epochs: 1, BatchSize: 40, Quiet: true, Precision: prec, Seed: 3, ClipNorm: clip})
				require.NoError(t, err)
				_, err = m.Fit(d.X, d.Y)
				require.NoError(t, err)
				mm, _ := m.solver.Moments()
				var ss float64
				for _, r := range mm {
					for _, x := range r {
						ss += x * x
					}
				}
				return math.Sqrt(ss), m.Weights()
			}
			free, w0 := fit(0)
			const c = 1e-3
			require.Greater(t, free, 10*(1-0.9)*c, "%v %v: the test needs a gradient above the bound", mode, prec)
			clipped, w1 := fit(c)
			assert.InEpsilon(t, (1-0.9)*c, clipped, 1e-5, "%v %v", mode, prec)
			assert.NotEqual(t, w0, w1)
			_, w2 := fit(1e300)
			assert.Equal(t, w0, w2, "%v %v: a bound above the norm changes nothing", mode, prec)
		}
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err := New(Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), ClipNorm: bad})
		assert.ErrorContains(t, err, "Config.ClipNorm", "%v", bad)
	}
}

// TestClipNormCheckpoint: a checkpoint records ClipNorm, and Resume with
// another one names the difference.
func TestClipNormCheckpoint(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(40, 1)
	dir := t.TempDir()
	cfg := Config{Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 2, BatchSize: 20,
		Quiet: true, Seed: 3, ClipNorm: 0.5, Checkpoint: Checkpoint{Dir: dir}}
	m, err := New(cfg)
	require.NoError(t, err)
	_, err = m.Fit(d.X, d.Y)
	require.NoError(t, err)
	_, err = Resume(dir, cfg)
	require.NoError(t, err)
	cfg.ClipNorm = 0
	_, err = Resume(dir, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "clipNorm")
}
