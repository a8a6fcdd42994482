package problems

import (
	"os"
	"path/filepath"
	"strings"
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

// TestEngineeringDataByteOrderMark checks that the engineering loaders
// read a copy of the data (DataEnv) saved with a UTF-8 byte order mark,
// as Excel's "CSV UTF-8" and R's write.csv(fileEncoding = "UTF-8-BOM")
// write it, with the first header name quoted or not: LoadPooling then
// returns what it returns for the embedded copy. Before, the mark made
// the first column's name differ from the expected one, and a quoted name
// after it was a CSV syntax error.
func TestEngineeringDataByteOrderMark(t *testing.T) {
	want, wantSplit, err := LoadPooling("")
	require.NoError(t, err)
	for _, quote := range []bool{false, true} {
		dir := t.TempDir()
		for _, name := range []string{"Pooling_dataset.csv", "Pooling_dataset_split_kkthardnet_repo.csv"} {
			raw, err := embedded.ReadFile(kktHardNetDir + "/" + name)
			require.NoError(t, err)
			if quote {
				header, rest, ok := strings.Cut(string(raw), "\n")
				require.True(t, ok)
				first, others, _ := strings.Cut(header, ",")
				raw = []byte(`"` + first + `",` + others + "\n" + rest)
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), append([]byte("\ufeff"), raw...), 0o644))
		}
		got, split, err := LoadPooling(dir)
		require.NoError(t, err, "quoted first name: %v", quote)
		assert.Equal(t, want, got)
		assert.Equal(t, wantSplit, split)
	}
}

// TestReadTableByteOrderMark checks readTable and readSplit on small files
// that start with a byte order mark, and that a mark anywhere else is
// still part of the text (here, of an unexpected column name).
func TestReadTableByteOrderMark(t *testing.T) {
	write := func(content string) string {
		p := filepath.Join(t.TempDir(), "t.csv")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	d, err := readTable(write("\ufeff\"a\",\"b\"\n1,2\n"), []string{"a", "b"}, 1)
	require.NoError(t, err)
	assert.Equal(t, []float64{1}, d.X.RawMatrix().Data)
	assert.Equal(t, []float64{2}, d.Y.RawMatrix().Data)

	_, err = readTable(write("a,\ufeffb\n1,2\n"), []string{"a", "b"}, 1)
	assert.ErrorContains(t, err, `column 1 is "\ufeffb", want "b"`)

	s, err := readSplit(strings.NewReader("\ufeffrow,split\n0,train\n1,test\n"), "split.csv", 2)
	require.NoError(t, err)
	assert.Equal(t, Split{Train: []int{0}, Test: []int{1}}, s)
}
