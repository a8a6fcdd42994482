package data

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// LoadCSV reads your own data from a CSV file (comma-separated, RFC 4180
// quoting) whose first row names the columns. It returns the columns named
// xCols, in that order, as X and those named yCols as Y (nil when yCols is
// empty, for unsupervised data); other columns are ignored and may hold
// anything. Names are compared after trimming spaces. A UTF-8 byte order
// mark at the start of the file (as Excel's "CSV UTF-8" and R's
// write.csv(fileEncoding = "UTF-8-BOM") write) is skipped before the file
// is parsed, so the first name may be quoted after it.
//
// Every selected value must be a finite decimal number such as 12, -0.5 or
// 1.5e-3: LoadCSV returns an error naming the file, line and column for an
// empty cell, NaN, Inf, a value outside the float64 range (one that
// overflows, or a nonzero value below the smallest normal magnitude
// 2.2250738585072014e-308, which would read as 0 or as a subnormal), and
// the other forms strconv.ParseFloat would accept (1_000, 0x1p-2). Zero in
// any form (0, -0.0, 0e-400) is read as zero. It also returns an
// error for a missing, duplicated or twice-requested column name, a row
// with another number of fields than the header, and a file without data
// rows.
func LoadCSV(path string, xCols, yCols []string) (Dataset, error) {
	if len(xCols) == 0 {
		return Dataset{}, errors.New("data: LoadCSV: no input columns (xCols is empty)")
	}
	f, err := os.Open(path)
	if err != nil {
		return Dataset{}, fmt.Errorf("data: LoadCSV: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(skipBOM(f))
	header, err := r.Read()
	if err == io.EOF {
		return Dataset{}, fmt.Errorf("data: %s: empty file (want a header row)", path)
	}
	if err != nil {
		return Dataset{}, fmt.Errorf("data: %s: %w", path, err)
	}
	index := make(map[string]int, len(header))
	for j, name := range header {
		name = strings.TrimSpace(name)
		if _, dup := index[name]; dup && name != "" {
			index[name] = -1 // ambiguous, rejected if requested
			continue
		}
		index[name] = j
	}
	want := append(append([]string(nil), xCols...), yCols...)
	cols := make([]int, len(want))
	requested := make(map[string]bool, len(want))
	for k, name := range want {
		name = strings.TrimSpace(name)
		j, ok := index[name]
		switch {
		case requested[name]:
			return Dataset{}, fmt.Errorf("data: LoadCSV: column %q is requested twice", name)
		case name == "" || !ok:
			return Dataset{}, fmt.Errorf("data: %s: no column named %q (the header has %q)", path, name, header)
		case j < 0:
			return Dataset{}, fmt.Errorf("data: %s: the header names column %q more than once", path, name)
		}
		requested[name] = true
		cols[k] = j
	}
	var data []float64
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Dataset{}, fmt.Errorf("data: %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		for k, j := range cols {
			v, err := ParseFloat(rec[j])
			if err != nil {
				return Dataset{}, fmt.Errorf("data: %s:%d: column %d (%q): %w", path, line, j+1, strings.TrimSpace(want[k]), err)
			}
			data = append(data, v)
		}
	}
	n := len(data) / len(cols)
	if n == 0 {
		return Dataset{}, fmt.Errorf("data: %s: no data rows", path)
	}
	nx := len(xCols)
	d := Dataset{X: mat.NewDense(n, nx, nil)}
	if len(yCols) > 0 {
		d.Y = mat.NewDense(n, len(yCols), nil)
	}
	for i := range n {
		row := data[i*len(cols) : (i+1)*len(cols)]
		d.X.SetRow(i, row[:nx])
		if d.Y != nil {
			d.Y.SetRow(i, row[nx:])
		}
	}
	return d, nil
}

// bom is the UTF-8 encoding of the byte order mark U+FEFF.
const bom = "\ufeff"

// skipBOM returns a reader of r's bytes after a leading UTF-8 byte order
// mark, if r starts with one.
func skipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(bom)); err == nil && string(b) == bom {
		br.Discard(len(bom))
	}
	return br
}

// ParseFloat parses a finite decimal number as LoadCSV reads every value:
// optional sign, digits with an
// optional decimal point, optional exponent; surrounding spaces are
// ignored. Unlike strconv.ParseFloat alone, it rejects NaN, Inf, digit
// separators (1_000), hexadecimal floats and values outside the float64
// range: those that overflow, and nonzero values of magnitude below the
// smallest normal float64 (2.2250738585072014e-308), which ParseFloat
// rounds to 0 or to a subnormal without an error. Zero in any form (0,
// -0.0, 0e-400) is accepted.
func ParseFloat(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty value")
	}
	for _, r := range t {
		if !strings.ContainsRune("0123456789+-.eE", r) {
			return 0, fmt.Errorf("%q is not a finite decimal number", s)
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%q is outside the float64 range", s)
	case err != nil:
		return 0, fmt.Errorf("%q is not a finite decimal number", s)
	case math.Abs(v) < 0x1p-1022 && nonzeroMantissa(t):
		return 0, fmt.Errorf("%q is outside the float64 range (nonzero, below the smallest normal magnitude 2.2250738585072014e-308)", s)
	}
	return v, nil
}

// nonzeroMantissa reports whether the decimal number t has a nonzero digit
// before its exponent.
func nonzeroMantissa(t string) bool {
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		t = t[:i]
	}
	return strings.ContainsAny(t, "123456789")
}
