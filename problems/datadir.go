package problems

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// DataEnv is the environment variable that, when set, names the shared
// data folder returned by DataDir.
const DataEnv = "ENFORCE_DATA"

// ErrNoData is returned (wrapped) by DataDir when no data folder is found.
var ErrNoData = errors.New("shared data not found: set ENFORCE_DATA or place ../shared/data beside the checkout")

// DataDir returns the shared data folder, the one that holds kkt_hardnet/.
// If the environment variable ENFORCE_DATA is set, DataDir returns it
// (after checking that it is a folder). Otherwise it walks up from the
// working directory and returns the first <ancestor>/shared/data that
// exists; this finds ../shared/data when the repository is checked out
// beside a shared/ folder (the checkout /work/main and the data in
// /work/shared/data), as well as a shared/data inside the checkout.
// The data files are never part of the repository.
func DataDir() (string, error) {
	if dir := os.Getenv(DataEnv); dir != "" {
		if !isDir(dir) {
			return "", fmt.Errorf("problems: %s=%q is not a folder: %w", DataEnv, dir, ErrNoData)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("problems: %w", err)
	}
	for dir := wd; ; {
		if cand := filepath.Join(dir, "shared", "data"); isDir(cand) {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("problems: searched the ancestors of %s: %w", wd, ErrNoData)
		}
		dir = parent
	}
}

// isDir reports whether path is an existing folder.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// kktHardNetFile returns the path of a KKT-HardNet data file: it looks in
// dataDir/kkt_hardnet and then in dataDir itself.
func kktHardNetFile(dataDir, name string) (string, error) {
	for _, p := range []string{filepath.Join(dataDir, "kkt_hardnet", name), filepath.Join(dataDir, name)} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("problems: %s not found in %s or %s/kkt_hardnet", name, dataDir, dataDir)
}

// readTable reads a CSV file with a header whose first nx+ny columns are
// the wanted ones, named want; further columns must have empty names and
// empty values (ED_Col_Data.csv has 14 such trailing columns). It returns
// the first nx columns as X and the next ny as Y. Every value must be a
// finite decimal number (see parseNumber).
func readTable(path string, want []string, nx int) (Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return Dataset{}, fmt.Errorf("problems: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
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
	var data []float64
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
			v, err := parseNumber(s)
			if err != nil {
				return Dataset{}, fmt.Errorf("problems: %s:%d: column %d (%q): %w", path, line, j+1, want[j], err)
			}
			data = append(data, v)
		}
	}
	n := len(data) / ncol
	if n == 0 {
		return Dataset{}, fmt.Errorf("problems: %s: no data rows", path)
	}
	x := mat.NewDense(n, nx, nil)
	y := mat.NewDense(n, ncol-nx, nil)
	for i := range n {
		row := data[i*ncol : (i+1)*ncol]
		x.SetRow(i, row[:nx])
		y.SetRow(i, row[nx:])
	}
	return Dataset{X: x, Y: y}, nil
}

// readSplit reads a `row,split` CSV file assigning each of the n data rows
// to "train", "val" or "test". Each set lists its rows in increasing order.
func readSplit(path string, n int) (Split, error) {
	f, err := os.Open(path)
	if err != nil {
		return Split{}, fmt.Errorf("problems: %w", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
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

// loadKKTHardNet reads a data file and its split file from dataDir.
func loadKKTHardNet(dataDir, dataFile, splitFile string, cols []string, nx int) (Dataset, Split, error) {
	dp, err := kktHardNetFile(dataDir, dataFile)
	if err != nil {
		return Dataset{}, Split{}, err
	}
	sp, err := kktHardNetFile(dataDir, splitFile)
	if err != nil {
		return Dataset{}, Split{}, err
	}
	all, err := readTable(dp, cols, nx)
	if err != nil {
		return Dataset{}, Split{}, err
	}
	split, err := readSplit(sp, all.Len())
	if err != nil {
		return Dataset{}, Split{}, err
	}
	return all, split, nil
}
