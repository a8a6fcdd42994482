package problems

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/data"
)

// DataEnv is the environment variable that, when set, names a folder from
// which DataDir (and so the examples) read the KKT-HardNet data instead of
// the copy embedded in this package.
const DataEnv = "ENFORCE_DATA"

// ErrNoData is returned (wrapped) by DataDir when ENFORCE_DATA names
// something that is not a folder.
var ErrNoData = errors.New("data folder not found")

// kktHardNetDir is the folder of the embedded copy inside embedded.
const kktHardNetDir = "data/kkt_hardnet"

// embedded holds the KKT-HardNet files that LoadDistillation and
// LoadPooling read when they are given no folder, with their licence
// notice and provenance (data/kkt_hardnet/README.md).
//
//go:embed data/kkt_hardnet/*.csv data/kkt_hardnet/README.md data/kkt_hardnet/LICENSE
var embedded embed.FS

// DataDir returns the folder named by the environment variable
// ENFORCE_DATA, after checking that it is a folder, or "" (and no error)
// when the variable is unset or empty. Pass the result to LoadDistillation
// or LoadPooling: "" selects the copy of the data embedded in this package,
// so the loaders work in a fresh clone and in any program that imports
// problems, with no files beside it.
func DataDir() (string, error) {
	dir := os.Getenv(DataEnv)
	if dir == "" {
		return "", nil
	}
	if !isDir(dir) {
		return "", fmt.Errorf("problems: %s=%q is not a folder: %w", DataEnv, dir, ErrNoData)
	}
	return dir, nil
}

// isDir reports whether path is an existing folder.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// openKKTHardNet opens a KKT-HardNet data file: from the embedded copy
// when dataDir is "", else from dataDir/kkt_hardnet or dataDir itself. It
// returns the file and the name to quote in errors.
func openKKTHardNet(dataDir, name string) (io.ReadCloser, string, error) {
	if dataDir == "" {
		p := kktHardNetDir + "/" + name
		f, err := embedded.Open(p)
		if err != nil {
			return nil, "", fmt.Errorf("problems: embedded %s: %w", p, err)
		}
		return f, "embedded " + name, nil
	}
	for _, p := range []string{filepath.Join(dataDir, "kkt_hardnet", name), filepath.Join(dataDir, name)} {
		if _, err := os.Stat(p); err == nil {
			f, err := os.Open(p)
			if err != nil {
				return nil, "", fmt.Errorf("problems: %w", err)
			}
			return f, p, nil
		}
	}
	return nil, "", fmt.Errorf("problems: %s not found in %s or %s", name, dataDir, filepath.Join(dataDir, "kkt_hardnet"))
}

// readTable reads a CSV file with a header whose first nx+ny columns are
// the wanted ones, named want; further columns must have empty names and
// empty values (ED_Col_Data.csv has 14 such trailing columns). It returns
// the first nx columns as X and the next ny as Y. Every value must be a
// finite decimal number (see data.ParseFloat).
func readTable(path string, want []string, nx int) (Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return Dataset{}, fmt.Errorf("problems: %w", err)
	}
	defer f.Close()
	return readTableFrom(f, path, want, nx)
}

// readTableFrom is readTable reading from f; path names it in errors.
func readTableFrom(f io.Reader, path string, want []string, nx int) (Dataset, error) {
	r := newCSVReader(f)
	header, err := r.Read()
	if err != nil {
		return Dataset{}, fmt.Errorf("problems: %s: reading header: %w", path, err)
	}
	if len(header) < len(want) {
		return Dataset{}, fmt.Errorf("problems: %s: header has %d columns, want at least %d", path, len(header), len(want))
	}
	for j, name := range header {
		if j < len(want) && strings.TrimSpace(name) != want[j] {
			return Dataset{}, fmt.Errorf("problems: %s: column %d is %q, want %q", path, j, name, want[j])
		}
		if j >= len(want) && strings.TrimSpace(name) != "" {
			return Dataset{}, fmt.Errorf("problems: %s: unexpected column %d %q", path, j, name)
		}
	}
	ncol := len(want)
	var vals []float64
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Dataset{}, fmt.Errorf("problems: %s: %w", path, err)
		}
		for j, s := range rec {
			if j >= ncol {
				if strings.TrimSpace(s) != "" {
					return Dataset{}, fmt.Errorf("problems: %s:%d: unexpected value %q in column %d", path, line, s, j)
				}
				continue
			}
			v, err := data.ParseFloat(s)
			if err != nil {
				return Dataset{}, fmt.Errorf("problems: %s:%d: column %d (%q): %w", path, line, j+1, want[j], err)
			}
			vals = append(vals, v)
		}
	}
	n := len(vals) / ncol
	if n == 0 {
		return Dataset{}, fmt.Errorf("problems: %s: no data rows", path)
	}
	x := mat.NewDense(n, nx, nil)
	y := mat.NewDense(n, ncol-nx, nil)
	for i := range n {
		row := vals[i*ncol : (i+1)*ncol]
		x.SetRow(i, row[:nx])
		y.SetRow(i, row[nx:])
	}
	return Dataset{X: x, Y: y}, nil
}

// readSplit reads a `row,split` CSV file assigning each of the n data rows
// to "train", "val" or "test". Each set lists its rows in increasing order.
func readSplit(f io.Reader, path string, n int) (Split, error) {
	recs, err := newCSVReader(f).ReadAll()
	if err != nil {
		return Split{}, fmt.Errorf("problems: %s: %w", path, err)
	}
	if len(recs) == 0 || len(recs[0]) != 2 || recs[0][0] != "row" || recs[0][1] != "split" {
		return Split{}, fmt.Errorf("problems: %s: want header row,split", path)
	}
	which := make([]string, n)
	for k, rec := range recs[1:] {
		i, err := strconv.Atoi(rec[0])
		if err != nil || i < 0 || i >= n {
			return Split{}, fmt.Errorf("problems: %s:%d: bad row %q for %d data rows", path, k+2, rec[0], n)
		}
		if which[i] != "" {
			return Split{}, fmt.Errorf("problems: %s:%d: row %d assigned twice", path, k+2, i)
		}
		which[i] = rec[1]
	}
	var s Split
	for i, w := range which {
		switch w {
		case "train":
			s.Train = append(s.Train, i)
		case "val":
			s.Val = append(s.Val, i)
		case "test":
			s.Test = append(s.Test, i)
		case "":
			return Split{}, fmt.Errorf("problems: %s: row %d is not assigned", path, i)
		default:
			return Split{}, fmt.Errorf("problems: %s: row %d has unknown split %q", path, i, w)
		}
	}
	return s, nil
}

// loadKKTHardNet reads a data file and its split file from dataDir, or
// from the embedded copy when dataDir is "".
func loadKKTHardNet(dataDir, dataFile, splitFile string, cols []string, nx int) (Dataset, Split, error) {
	df, dp, err := openKKTHardNet(dataDir, dataFile)
	if err != nil {
		return Dataset{}, Split{}, err
	}
	defer df.Close()
	sf, sp, err := openKKTHardNet(dataDir, splitFile)
	if err != nil {
		return Dataset{}, Split{}, err
	}
	defer sf.Close()
	all, err := readTableFrom(df, dp, cols, nx)
	if err != nil {
		return Dataset{}, Split{}, err
	}
	split, err := readSplit(sf, sp, all.Len())
	if err != nil {
		return Dataset{}, Split{}, err
	}
	return all, split, nil
}
