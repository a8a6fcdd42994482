// Package ckptfile holds what the checkpoints of packages train and dc3
// share: an atomic file write, the SHA-256 checksum of a JSON document and
// a JSON form of float64 slices that is exact for every value, infinities
// and NaNs included.
package ckptfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// Floats is a []float64 that JSON holds as the base64 of its
// little-endian IEEE-754 bits: exact for every value, infinities
// included (an Adam second moment may overflow to +Inf while the weights
// stay finite, and JSON numbers cannot hold infinities).
type Floats []float64

// MarshalJSON implements json.Marshaler.
func (f Floats) MarshalJSON() ([]byte, error) {
	b := make([]byte, 8*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return json.Marshal(b)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Floats) UnmarshalJSON(data []byte) error {
	var b []byte
	if err := json.Unmarshal(data, &b); err != nil {
		return err
	}
	if len(b)%8 != 0 {
		return fmt.Errorf("%d bytes of float64 bits, not a multiple of 8", len(b))
	}
	*f = make(Floats, len(b)/8)
	for i := range *f {
		(*f)[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return nil
}

// Checksum returns the hex SHA-256 of the compact form of the JSON value
// raw (json.Compact), the checksum the checkpoint and model files record:
// it does not change with white space, and a damaged or truncated value
// either fails to compact or sums differently.
func Checksum(raw []byte) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// WriteAtomic replaces the file at path by what write writes, atomically:
// it writes a temporary file in the same folder (created if missing),
// flushes it to stable storage and renames it over path, so that a
// failure at any point leaves an existing file as it was. A new file gets
// permissions 0644; an existing one keeps its permissions.
//
// A symbolic link at path is followed (through any chain of links, as
// Target resolves it): the file it points to is replaced, atomically in
// that file's folder, and the link stays a link, so that a checkpoint
// path linked elsewhere does not leave its target stale. WriteAtomic
// returns an error, and changes nothing, when path is a folder or a link
// to one, a dangling link, or anything else that is not a regular file.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	target, mode, err := Target(path)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	// Make the rename durable where the platform allows syncing a folder.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Target returns the file that an atomic write to path replaces or
// creates: path itself, or the file a symbolic link at path finally points
// to (filepath.EvalSymlinks), and the permissions the written file gets:
// the existing file's, or 0644 for a new one. It returns an error for a
// folder, a dangling link and any other existing path that is not a
// regular file.
func Target(path string) (string, os.FileMode, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, 0o644, nil
	case err != nil:
		return "", 0, err
	}
	target, what := path, path
	if fi.Mode().Type() == fs.ModeSymlink {
		dest, err := os.Readlink(path)
		if err != nil {
			return "", 0, err
		}
		if target, err = filepath.EvalSymlinks(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", 0, fmt.Errorf("%s is a symbolic link to %s, which does not exist", path, dest)
			}
			return "", 0, err
		}
		if fi, err = os.Stat(target); err != nil {
			return "", 0, err
		}
		what = fmt.Sprintf("%s is a symbolic link to %s, which", path, target)
	}
	switch {
	case fi.IsDir():
		return "", 0, fmt.Errorf("%s is a folder", what)
	case !fi.Mode().IsRegular():
		return "", 0, fmt.Errorf("%s is not a regular file (%v)", what, fi.Mode().Type())
	}
	return target, fi.Mode().Perm(), nil
}

// ConfigDiffs lists the fields in which two JSON objects differ, the
// checkpoint's a and a model's b, one line each, "name: checkpoint V,
// Config W" (a value absent from one side reads "absent"), in the order of
// the field names. Where both values of a field are objects, their fields
// are compared in turn and named "field.sub", so that a setting that
// differs is named, not a whole settings object with its weights.
// Values are compared in compact form.
func ConfigDiffs(a, b map[string]json.RawMessage) []string {
	var diffs []string
	for _, k := range unionKeys(a, b) {
		diffs = appendDiffs(diffs, k, a[k], b[k])
	}
	return diffs
}

func appendDiffs(diffs []string, name string, va, vb json.RawMessage) []string {
	ca, cb := compactJSON(va), compactJSON(vb)
	if bytes.Equal(ca, cb) {
		return diffs
	}
	var oa, ob map[string]json.RawMessage
	if json.Unmarshal(ca, &oa) == nil && json.Unmarshal(cb, &ob) == nil && oa != nil && ob != nil {
		for _, k := range unionKeys(oa, ob) {
			diffs = appendDiffs(diffs, name+"."+k, oa[k], ob[k])
		}
		return diffs
	}
	return append(diffs, fmt.Sprintf("%s: checkpoint %s, Config %s", name, orAbsent(ca), orAbsent(cb)))
}

// unionKeys returns the keys of a and b, sorted, each once.
func unionKeys(a, b map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func compactJSON(raw json.RawMessage) []byte {
	if raw == nil {
		return nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

func orAbsent(b []byte) string {
	if b == nil {
		return "absent"
	}
	return string(b)
}
