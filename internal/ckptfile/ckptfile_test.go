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
