package ckptfile

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteAtomic checks that a write failing part of the way leaves the
// previous file as it was and no temporary file behind, and that a
// successful one replaces it.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "checkpoint.json")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	require.NoError(t, WriteAtomic(path, write("first")), "creates the folder")
	boom := errors.New("disk full")
	err := WriteAtomic(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "sec")
		return boom
	})
	require.ErrorIs(t, err, boom)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "first", string(got), "the previous file is intact")
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")
	require.NoError(t, WriteAtomic(path, write("second")))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "second", string(got))
}

// TestFloatsRoundTrip requires every float64, infinities, NaN payloads and
// negative zero included, to come back from JSON with the same bits, and
// a length that is not a multiple of 8 bytes to be an error.
func TestFloatsRoundTrip(t *testing.T) {
	in := Floats{0, math.Copysign(0, -1), 1e-310, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.Float64frombits(0x7ff8000000000123), 0.1}
	data, err := json.Marshal(in)
	require.NoError(t, err)
	var out Floats
	require.NoError(t, json.Unmarshal(data, &out))
	require.Len(t, out, len(in))
	for i := range in {
		assert.Equal(t, math.Float64bits(in[i]), math.Float64bits(out[i]), "entry %d", i)
	}
	assert.Error(t, json.Unmarshal([]byte(`"AAAA"`), &out))
}

// TestChecksum checks that Checksum is the SHA-256 of the compact form:
// white space does not change it, a changed digit does, and a truncated
// document is an error.
func TestChecksum(t *testing.T) {
	a, err := Checksum([]byte(`{"a": [1, 2.5]}`))
	require.NoError(t, err)
	b, err := Checksum([]byte("{\"a\":[1,2.5]}\n"))
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, "45114ee64965e5a9cfed7278f4c1e19f31200fcd5794131ef21554280bbf7a68", a) // printf '{"a":[1,2.5]}' | sha256sum
	c, err := Checksum([]byte(`{"a":[1,2.6]}`))
	require.NoError(t, err)
	assert.NotEqual(t, a, c)
	_, err = Checksum([]byte(`{"a":[1,2`))
	assert.Error(t, err)
}

// TestWriteAtomicFollowsSymlink writes through symbolic links (absolute,
// relative, a chain of two): the file the link points to gets the new
// content atomically, in its own folder, keeping its permissions, and the
// link stays a link with nothing new beside it. A path that was replaced
// by a regular file left the target stale.
func TestWriteAtomicFollowsSymlink(t *testing.T) {
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	for _, tc := range []struct {
		name string
		link func(t *testing.T, linkDir, target string) string
	}{
		{"absolute", func(t *testing.T, linkDir, target string) string {
			p := filepath.Join(linkDir, "checkpoint.json")
			require.NoError(t, os.Symlink(target, p))
			return p
		}},
		{"relative", func(t *testing.T, linkDir, target string) string {
			p := filepath.Join(linkDir, "checkpoint.json")
			rel, err := filepath.Rel(linkDir, target)
			require.NoError(t, err)
			require.NoError(t, os.Symlink(rel, p))
			return p
		}},
		{"chain", func(t *testing.T, linkDir, target string) string {
			require.NoError(t, os.Symlink(target, filepath.Join(linkDir, "mid.json")))
			p := filepath.Join(linkDir, "checkpoint.json")
			require.NoError(t, os.Symlink("mid.json", p))
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			targetDir, linkDir := filepath.Join(root, "store"), filepath.Join(root, "run")
			require.NoError(t, os.Mkdir(targetDir, 0o755))
			require.NoError(t, os.Mkdir(linkDir, 0o755))
			target := filepath.Join(targetDir, "ck.json")
			require.NoError(t, os.WriteFile(target, []byte("old"), 0o600))
			path := tc.link(t, linkDir, target)
			linksBefore := names(t, linkDir)

			require.NoError(t, WriteAtomic(path, write("new")))
			fi, err := os.Lstat(path)
			require.NoError(t, err)
			assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is still a link")
			got, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, "new", string(got), "the target holds the new content")
			fi, err = os.Stat(target)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the target keeps its permissions")
			assert.Equal(t, []string{"ck.json"}, names(t, targetDir), "no temporary file left beside the target")
			assert.Equal(t, linksBefore, names(t, linkDir), "nothing new beside the link")
		})
	}
}

// TestWriteAtomicBadTargets checks the errors for a folder, a link to a
// folder and a dangling link: each names the path and changes nothing.
func TestWriteAtomicBadTargets(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "folder")
	require.NoError(t, os.Mkdir(folder, 0o755))
	toFolder := filepath.Join(dir, "to-folder")
	require.NoError(t, os.Symlink(folder, toFolder))
	dangling := filepath.Join(dir, "dangling")
	absent := filepath.Join(dir, "absent", "ck.json")
	require.NoError(t, os.Symlink(absent, dangling))
	before := names(t, dir)
	for _, tc := range []struct{ path, msg string }{
		{folder, folder + " is a folder"},
		{toFolder, toFolder + " is a symbolic link to " + folder + ", which is a folder"},
		{dangling, dangling + " is a symbolic link to " + absent + ", which does not exist"},
	} {
		err := WriteAtomic(tc.path, func(w io.Writer) error { return nil })
		assert.EqualError(t, err, tc.msg)
	}
	assert.Equal(t, before, names(t, dir))
	entries, err := os.ReadDir(folder)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// names lists the entries of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestConfigDiffs(t *testing.T) {
	doc := func(s string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := doc(`{"seed": 1, "infer": {"Tol": 1e-6, "Diag": [1, 2, 3], "Path": 2}, "old": true}`)
	b := doc(`{"seed":1,"infer":{"Tol":1e-5,"Diag":[1,2,3],"Path":2,"New":5}}`)
	got := ConfigDiffs(a, b)
	want := []string{
		"infer.New: checkpoint absent, Config 5",
		"infer.Tol: checkpoint 1e-6, Config 1e-5",
		"old: checkpoint true, Config absent",
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if d := ConfigDiffs(a, a); d != nil {
		t.Errorf("equal documents: %q", d)
	}
	if d := ConfigDiffs(doc(`{"x": [1, 2]}`), doc(`{"x": [1, 3]}`)); len(d) != 1 || d[0] != "x: checkpoint [1,2], Config [1,3]" {
		t.Errorf("arrays are values: %q", d)
	}
}
