package data

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata is the module's fixture folder.
const testdata = "../testdata"

func TestLoadCSV(t *testing.T) {
	d, err := LoadCSV(filepath.Join(testdata, "xy.csv"), []string{"x2", "x1"}, []string{"y1"})
	require.NoError(t, err)
	require.Equal(t, 3, d.Len())
	assert.Equal(t, []float64{-1, 0.5, 2, 1.5, 100, -0.25}, d.X.RawMatrix().Data, "columns in the requested order")
	assert.Equal(t, []float64{0.25, -3, 0}, d.Y.RawMatrix().Data)

	d, err = LoadCSV(filepath.Join(testdata, "xy.csv"), []string{" id "}, nil)
	require.NoError(t, err)
	assert.Nil(t, d.Y, "no label columns: unsupervised data")
	assert.Equal(t, []float64{1, 2, 3}, d.X.RawMatrix().Data)
}

func TestLoadCSVErrors(t *testing.T) {
	write := func(content string) string {
		p := filepath.Join(t.TempDir(), "data.csv")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	xy := []string{"x"}
	for _, tc := range []struct {
		name   string
		path   string
		x, y   []string
		msg    string
		inFile bool // the message names the file and line
	}{
		{"missing file", filepath.Join(testdata, "absent.csv"), xy, nil, "no such file", false},
		{"no xCols", filepath.Join(testdata, "xy.csv"), nil, []string{"y1"}, "xCols is empty", false},
		{"missing column", filepath.Join(testdata, "xy.csv"), []string{"x3"}, nil, `no column named "x3"`, false},
		{"requested twice", filepath.Join(testdata, "xy.csv"), []string{"x1"}, []string{"x1"}, `"x1" is requested twice`, false},
		{"ragged", filepath.Join(testdata, "xy_ragged.csv"), xy, []string{"y"}, "xy_ragged.csv: record on line 3: wrong number of fields", false},
		{"NaN fixture", filepath.Join(testdata, "xy_nan.csv"), xy, []string{"y"}, `xy_nan.csv:3: column 2 ("y"): "NaN" is not a finite decimal number`, false},
		{"empty file", write(""), xy, nil, "empty file", false},
		{"header only", write("x,y\n"), xy, nil, "no data rows", false},
		{"duplicate header", write("x,x\n1,2\n"), xy, nil, "more than once", false},
		{"Inf", write("x\n1\n+Inf\n"), xy, nil, `:3: column 1 ("x"): "+Inf" is not a finite decimal number`, true},
		{"inf lower case", write("x\ninf\n"), xy, nil, `"inf" is not a finite`, true},
		{"underscore", write("x\n1_000\n"), xy, nil, `"1_000" is not a finite`, true},
		{"hex", write("x\n0x1p-2\n"), xy, nil, `"0x1p-2" is not a finite`, true},
		{"overflow", write("x\n1e400\n"), xy, nil, `"1e400" is outside the float64 range`, true},
		{"underflow to zero", write("x\n1e-400\n"), xy, nil, `:2: column 1 ("x"): "1e-400" is outside the float64 range`, true},
		{"negative underflow", write("x\n-0.0001e-320\n"), xy, nil, `"-0.0001e-320" is outside the float64 range`, true},
		{"smallest subnormal", write("x\n1\n4.9e-324\n"), xy, nil, `:3: column 1 ("x"): "4.9e-324" is outside the float64 range`, true},
		{"subnormal", write("x\n2e-308\n"), xy, nil, `"2e-308" is outside the float64 range`, true},
		{"empty cell", write("x,y\n1,2\n,3\n"), xy, nil, `:3: column 1 ("x"): empty value`, true},
		{"garbage", write("x\n1.2.3\n"), xy, nil, `"1.2.3" is not a finite`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := LoadCSV(tc.path, tc.x, tc.y)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			if tc.inFile {
				assert.Contains(t, err.Error(), tc.path+":")
			}
			assert.Zero(t, d.Len())
		})
	}
}

// TestParseFloatRange checks the edges of the float64 range that
// ParseFloat accepts: zero written in any form, the smallest normal and
// the largest finite magnitudes, and nothing in between zero and the
// smallest normal magnitude (a nonzero literal that would read as 0 or as
// a subnormal).
func TestParseFloatRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"0", 0}, {"-0", math.Copysign(0, -1)}, {"0e-400", 0}, {"0.000e5", 0}, {"-0.0E-999", math.Copysign(0, -1)}, {"00", 0},
		{"2.2250738585072014e-308", 0x1p-1022}, {"-2.2250738585072014e-308", -0x1p-1022},
		{"1.7976931348623157e308", math.MaxFloat64}, {"1e-300", 1e-300}, {".5", 0.5}, {"5.", 5},
	} {
		got, err := ParseFloat(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, math.Float64bits(tc.want), math.Float64bits(got), tc.in)
	}
	for _, in := range []string{"2.225073858507201e-308", "1e-308", "4.9e-324", "1e-324", "1e-400", "-1e-400", "0.0001e-320", "1e400", "-1e400"} {
		_, err := ParseFloat(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), "outside the float64 range", in)
		}
	}
}

// TestLoadCSVByteOrderMark checks that a UTF-8 byte order mark at the
// start of the file is skipped before parsing: the first header name may
// then be quoted, as R's write.csv(fileEncoding = "UTF-8-BOM") writes it
// (rejected before as a bare quote in a field), and a file holding only
// the mark is empty.
func TestLoadCSVByteOrderMark(t *testing.T) {
	for _, tc := range []struct {
		name, content string
	}{
		{"unquoted", "\ufeffx,y\n1,2\n3,4\n"},
		{"quoted (R write.csv)", "\ufeff\"x\",\"y\"\n1,2\n3,4\n"},
		{"quoted, row names", "\ufeff\"\",\"x\",\"y\"\n\"1\",1,2\n\"2\",3,4\n"},
		{"no mark", "\"x\",\"y\"\n1,2\n3,4\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "data.csv")
			require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o644))
			d, err := LoadCSV(p, []string{"x"}, []string{"y"})
			require.NoError(t, err)
			assert.Equal(t, []float64{1, 3}, d.X.RawMatrix().Data)
			assert.Equal(t, []float64{2, 4}, d.Y.RawMatrix().Data)
		})
	}
	p := filepath.Join(t.TempDir(), "data.csv")
	require.NoError(t, os.WriteFile(p, []byte("\ufeff"), 0o644))
	_, err := LoadCSV(p, []string{"x"}, nil)
	assert.ErrorContains(t, err, "empty file")
}
