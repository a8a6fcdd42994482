package problems

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/data"
)

// testdata is the module's fixture folder.
const testdata = "../testdata"

// TestReadTableRejectsNonFinite checks that the engineering loaders'
// reader rejects values strconv.ParseFloat would accept, naming the file,
// line and column.
func TestReadTableRejectsNonFinite(t *testing.T) {
	for _, bad := range []string{"NaN", "Inf", "-inf", "1_000", "0x10", "1e999", "1e-999", "1e-310"} {
		t.Run(bad, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "t.csv")
			require.NoError(t, os.WriteFile(p, []byte("a,b,\n1,2,\n3,"+bad+",\n"), 0o644))
			_, err := readTable(p, []string{"a", "b"}, 1)
			require.Error(t, err)
			assert.Contains(t, err.Error(), p+`:3: column 2 ("b"): "`+bad+`"`)
		})
	}
	p := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(p, []byte("a,b,\n1, 2.5e-1 ,\n"), 0o644))
	d, err := readTable(p, []string{"a", "b"}, 1)
	require.NoError(t, err)
	assert.Equal(t, 0.25, d.Y.At(0, 0))
}

// TestDeprecatedDataAliases checks that the names that moved to package
// data still work from problems: LoadCSV reads the same data, RandomSplit
// gives the same split for the same seed, and Dataset and Split are the
// same types.
func TestDeprecatedDataAliases(t *testing.T) {
	path := filepath.Join(testdata, "xy.csv")
	old, err := LoadCSV(path, []string{"x2", "x1"}, []string{"y1"})
	require.NoError(t, err)
	d, err := data.LoadCSV(path, []string{"x2", "x1"}, []string{"y1"})
	require.NoError(t, err)
	var same data.Dataset = old
	assert.Equal(t, d, same)
	assert.Equal(t, data.RandomSplit(50, 0.6, 0.2, 7), RandomSplit(50, 0.6, 0.2, 7))
	var s data.Split = RandomSplit(10, 0.5, 0, 1)
	assert.Len(t, s.Train, 5)
	_, err = LoadCSV(filepath.Join(testdata, "absent.csv"), []string{"x"}, nil)
	assert.ErrorContains(t, err, "data: LoadCSV")
}
