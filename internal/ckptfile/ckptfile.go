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
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
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
// failure at any point leaves an existing file as it was. The file gets
// permissions 0644.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
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
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Make the rename durable where the platform allows syncing a folder.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
