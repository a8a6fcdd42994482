package harness

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// TestResplit checks -resplit: a partition of every row into sets of the
// reference split's sizes, the same for the same seed, another for
// another seed, and a checkpoint folder of its own.
func TestResplit(t *testing.T) {
	ref := problems.Split{Train: []int{5, 0, 7, 2, 9, 1}, Val: []int{3, 8}, Test: []int{4, 6}}
	a := Resplit(ref, 1)
	assert.Len(t, a.Train, 6)
	assert.Len(t, a.Val, 2)
	assert.Len(t, a.Test, 2)
	all := slices.Concat(a.Train, a.Val, a.Test)
	slices.Sort(all)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, all, "a partition of every row")
	assert.Equal(t, a, Resplit(ref, 1), "deterministic")
	assert.NotEqual(t, a, Resplit(ref, 2), "another seed, another partition")

	// Loaded: the sizes of the reference's split, other rows.
	s := DefaultSurrogate("pooling")
	s.DataDir = ""
	_, tr0, te0, err := s.Load(problems.LoadPooling)
	require.NoError(t, err)
	s.Resplit = 3
	dir, tr, te, err := s.Load(problems.LoadPooling)
	require.NoError(t, err)
	assert.Contains(t, dir, "embedded")
	assert.Equal(t, tr0.Len(), tr.Len())
	assert.Equal(t, te0.Len(), te.Len())
	assert.NotEqual(t, te0.Y.RawRowView(0), te.Y.RawRowView(0))
	assert.Contains(t, s.SplitName(), "-resplit 3")

	// Another data set is another checkpoint.
	s.Resume = "ck"
	cfg := s.Config(train.MLP, 2, 4, 5, nil, train.TrainSettings(), train.TrainSettings())
	assert.Equal(t, filepath.Join("ck", "MLP-seed2-resplit3"), cfg.Checkpoint.Dir)
	s.Resplit = 0
	cfg = s.Config(train.MLP, 2, 4, 5, nil, train.TrainSettings(), train.TrainSettings())
	assert.Equal(t, filepath.Join("ck", "MLP-seed2"), cfg.Checkpoint.Dir)
}
