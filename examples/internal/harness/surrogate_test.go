package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// TestWriteSplit checks -writesplit: the file Load writes holds the
// split it used, in the format of the KKT-HardNet split files, so that
// reading it back (problems' loader of those files) gives the same test
// rows; the reference's split is written as the shipped file.
func TestWriteSplit(t *testing.T) {
	s := DefaultSurrogate("pooling")
	s.Resplit, s.WriteSplit = 3, filepath.Join(t.TempDir(), "split.csv")
	_, _, te, err := s.Load(problems.LoadPooling)
	require.NoError(t, err)
	b, err := os.ReadFile(s.WriteSplit)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 2001)
	assert.Equal(t, "row,split", lines[0])
	var test []int
	for i, l := range lines[1:] {
		row, name, ok := strings.Cut(l, ",")
		require.True(t, ok)
		require.Equal(t, strconv.Itoa(i), row)
		if name == "test" {
			test = append(test, i)
		}
	}
	_, ref, err := problems.LoadPooling("")
	require.NoError(t, err)
	want := slices.Sorted(slices.Values(Resplit(ref, 3).Test))
	assert.Equal(t, want, test)
	assert.Equal(t, te.Len(), len(test))

	s.Resplit = 0
	_, _, _, err = s.Load(problems.LoadPooling)
	require.NoError(t, err)
	got, err := os.ReadFile(s.WriteSplit)
	require.NoError(t, err)
	shipped, err := os.ReadFile(filepath.Join("..", "..", "..", "problems", "data", "kkt_hardnet", "Pooling_dataset_split_kkthardnet_repo.csv"))
	require.NoError(t, err)
	assert.Equal(t, string(shipped), string(got), "the reference's split as shipped")

	assert.Error(t, WriteSplit(s.WriteSplit, problems.Split{Train: []int{0, 2}}), "row 1 in no set")
}
