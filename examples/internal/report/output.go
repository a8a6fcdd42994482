package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/enforce-nn/enforce/train"
)

// Plot is one figure to write: its file name, layout and series.
type Plot struct {
	Name   string
	Fig    Figure
	Series []Series
}

// WriteOutputs creates dir, saves every plot as dir/Name and the runs'
// per-epoch history as dir/history (CSV), and returns the names of the
// files written, the history last.
func WriteOutputs(dir string, plots []Plot, history string, runs ...Run) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var names []string
	for _, pl := range plots {
		if err := SavePlot(filepath.Join(dir, pl.Name), pl.Fig, pl.Series...); err != nil {
			return names, err
		}
		names = append(names, pl.Name)
	}
	if err := WriteFile(filepath.Join(dir, history), func(w io.Writer) error { return WriteHistoryCSV(w, runs...) }); err != nil {
		return names, err
	}
	return append(names, history), nil
}

// WriteFile creates the file path, calls write with it and closes it,
// returning the first error, that of Close included.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("report: writing %s: %w", path, cerr)
		}
	}()
	return write(f)
}

// DepthAndShare returns, for each run, its mean AdaNP depth (solid) and
// its share of projected batches (dashed) against the epoch.
func DepthAndShare(runs ...Run) []Series {
	depth := HistorySeries(func(e train.Epoch) float64 { return e.Depth }, false, runs...)
	share := HistorySeries(func(e train.Epoch) float64 { return e.Projected }, false, runs...)
	for i := range depth {
		depth[i].Label += ": depth"
		share[i].Label += ": share projected"
		share[i].Dashed = true
	}
	return append(depth, share...)
}
