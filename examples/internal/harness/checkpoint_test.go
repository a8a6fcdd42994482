package harness

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

func TestRunDir(t *testing.T) {
	assert.Equal(t, "", RunDir("", "ENFORCE", 1))
	assert.Equal(t, filepath.Join("root", "Soft_(λ_C=5)-seed3"), RunDir("root", "Soft (λ_C=5)", "seed3"))
	assert.Equal(t, filepath.Join("root", "a_b-2"), RunDir("root", "a/b", 2))

	var c Common
	var cfg train.Config
	c.Checkpoint(&cfg, "MLP", "seed1")
	assert.Equal(t, "", cfg.Checkpoint.Dir, "no -resume, no checkpoints")
	c.Resume = "ck"
	c.Checkpoint(&cfg, "MLP", "seed1")
	assert.Equal(t, filepath.Join("ck", "MLP-seed1"), cfg.Checkpoint.Dir)
}

// TestFitResumes checks what -resume promises: a model whose run finished
// is not trained again and gives the same results, a model is resumed from
// its checkpoint, and a checkpoint of another configuration is an error.
func TestFitResumes(t *testing.T) {
	p := problems.FittingEquality{}
	trainSet, test := p.Sample(64, 1), p.Sample(32, 2)
	cfg := train.Config{
		Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Mode: train.ENFORCE,
		LearnRate: 1e-2, BatchSize: 16, Epochs: 3, Seed: 4, Quiet: true,
	}
	plain, err := Fit(cfg, trainSet, test.X, 0)
	require.NoError(t, err)

	c := Common{Resume: t.TempDir()}
	c.Checkpoint(&cfg, cfg.Mode, "seed4")
	first, err := Fit(cfg, trainSet, test.X, 0)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(cfg.Checkpoint.Dir, train.CheckpointFile))
	require.NoError(t, err, "a checkpoint was written")
	assert.Equal(t, plain.History, first.History, "checkpointing does not change training")
	assert.True(t, equalDense(plain.Pred.RawMatrix().Data, first.Pred.RawMatrix().Data))

	again, err := Fit(cfg, trainSet, test.X, 0)
	require.NoError(t, err)
	assert.Equal(t, first.History, again.History, "a finished run is returned, not trained again")
	assert.True(t, equalDense(first.Pred.RawMatrix().Data, again.Pred.RawMatrix().Data))
	// The checkpoint records the time up to its own writing, so the
	// resumed model reports at most the first process's time.
	assert.LessOrEqual(t, again.Train, first.Train, "no training time added")

	other := cfg
	other.LearnRate = 2e-2
	_, err = Fit(other, trainSet, test.X, 0)
	assert.ErrorContains(t, err, "resuming from")
}

func equalDense(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLayers checks -layers and Common.Sizes: the default is one hidden
// layer (two for the surrogates), and -layers N gives N of width Width.
func TestLayers(t *testing.T) {
	c := Common{Width: 64}
	assert.Equal(t, []int{1, 64, 2}, c.Sizes(1, 2), "zero means one hidden layer")
	f := New("x", "test")
	c.Register(f, "seed")
	require.NoError(t, f.Parse([]string{"-layers", "2"}))
	assert.Equal(t, []int{3, 64, 64, 9}, c.Sizes(3, 9), "-layers 2: the reference's 1-64-64-n")
	s := DefaultSurrogate("distillation")
	assert.Equal(t, []int{3, 64, 64, 9}, s.Sizes(3, 9), "the surrogates' default")
}
