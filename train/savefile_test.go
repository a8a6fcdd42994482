package train

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestSaveFileFollowsSymlink saves through symbolic links (absolute,
// relative, and a chain of two): the links stay links, the file they point
// to holds the new model with its permissions kept, and no temporary file
// is left in either folder.
func TestSaveFileFollowsSymlink(t *testing.T) {
	m := trainedModel(t, Config{Hidden: layers.Tanh, Seed: 3})
	other := trainedModel(t, Config{Hidden: layers.Tanh, Seed: 4})
	for _, tc := range []struct {
		name string
		link func(t *testing.T, target, linkDir string) string // returns the path to save to
	}{
		{"absolute", func(t *testing.T, target, linkDir string) string {
			p := filepath.Join(linkDir, "link.json")
			require.NoError(t, os.Symlink(target, p))
			return p
		}},
		{"relative", func(t *testing.T, target, linkDir string) string {
			rel, err := filepath.Rel(linkDir, target)
			require.NoError(t, err)
			p := filepath.Join(linkDir, "link.json")
			require.NoError(t, os.Symlink(rel, p))
			return p
		}},
		{"chain", func(t *testing.T, target, linkDir string) string {
			mid := filepath.Join(linkDir, "mid.json")
			require.NoError(t, os.Symlink(target, mid))
			p := filepath.Join(linkDir, "link.json")
			require.NoError(t, os.Symlink("mid.json", p))
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			targetDir, linkDir := t.TempDir(), t.TempDir()
			target := filepath.Join(targetDir, "model.json")
			require.NoError(t, m.SaveFile(target))
			require.NoError(t, os.Chmod(target, 0o600))
			link := tc.link(t, target, linkDir)
			linksBefore := dirNames(t, linkDir)

			require.NoError(t, other.SaveFile(link))

			fi, err := os.Lstat(link)
			require.NoError(t, err)
			assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is still a link")
			fi, err = os.Stat(target)
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular())
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the target keeps its permissions")
			loaded, err := LoadFile(target, problems.FittingEquality{}.Equalities())
			require.NoError(t, err)
			assert.Equal(t, weightBits(other), weightBits(loaded), "the target holds the new model")
			assert.Equal(t, []string{"model.json"}, dirNames(t, targetDir), "no temporary file beside the target")
			assert.Equal(t, linksBefore, dirNames(t, linkDir), "nothing new beside the link")
		})
	}
}

// TestSaveFileBadTargets checks the errors for a path that is a folder, a
// link to a folder, a dangling link and a device (os.DevNull): each names
// the problem and leaves the path as it was.
func TestSaveFileBadTargets(t *testing.T) {
	m := trainedModel(t, Config{Hidden: layers.Tanh, Seed: 3})
	dir := t.TempDir()
	folder := filepath.Join(dir, "folder")
	require.NoError(t, os.Mkdir(folder, 0o755))
	toFolder := filepath.Join(dir, "to-folder")
	require.NoError(t, os.Symlink(folder, toFolder))
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink(filepath.Join(dir, "absent", "model.json"), dangling))
	before := dirNames(t, dir)

	for _, tc := range []struct {
		name, path, msg string
	}{
		{"folder", folder, "is a folder"},
		{"link to a folder", toFolder, "is a folder"},
		{"dangling link", dangling, "is a symbolic link to " + filepath.Join(dir, "absent", "model.json") + ", which does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.SaveFile(tc.path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "train: SaveFile: "+tc.path)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	assert.Equal(t, before, dirNames(t, dir), "nothing created or replaced")
	fi, err := os.Lstat(dangling)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type())
	entries, err := os.ReadDir(folder)
	require.NoError(t, err)
	assert.Empty(t, entries)

	if fi, err := os.Stat(os.DevNull); err == nil && !fi.Mode().IsRegular() {
		err := m.SaveFile(os.DevNull)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "train: SaveFile: "+os.DevNull+" is not a regular file")
	}
}

// dirNames returns the names in a folder.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}
