package harness

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// Trials trains one model per seed and mode by calling fit, seeds first,
// first+1, …, first+seeds−1 in the outer loop and modes in the inner. It
// returns each mode's results in seed order and every model's history,
// labelled "MODE seed S" in the order trained. An error of fit is
// returned with the mode and seed.
func Trials[R any](modes []train.Mode, first uint64, seeds int,
	fit func(mode train.Mode, seed uint64) (R, train.History, error)) (map[train.Mode][]R, []report.Run, error) {
	results := map[train.Mode][]R{}
	var runs []report.Run
	for s := range seeds {
		seed := first + uint64(s)
		for _, mode := range modes {
			r, h, err := fit(mode, seed)
			if err != nil {
				return nil, nil, fmt.Errorf("%v, seed %d: %w", mode, seed, err)
			}
			results[mode] = append(results[mode], r)
			runs = append(runs, report.Run{Label: fmt.Sprintf("%v seed %d", mode, seed), History: h})
		}
	}
	return results, runs, nil
}

// Progress sets cfg's progress reporting to lines lines per model on w,
// announcing the model with the line "training " + what, or makes cfg
// quiet when lines is 0.
func Progress(cfg *train.Config, w io.Writer, lines int, what string) {
	if lines <= 0 {
		cfg.Quiet = true
		return
	}
	cfg.LogEvery, cfg.Progress = max(1, cfg.Epochs/lines), w
	fmt.Fprintf(w, "training %s\n", what)
}

// Fitted is one model trained by Fit and its predictions on the test
// inputs.
type Fitted struct {
	Model   *train.Model
	History train.History
	// Pred are the predictions on the test inputs, Stats AdaNP's
	// statistics of that prediction (zero for models without AdaNP).
	Pred  *mat.Dense
	Stats enforce.Stats
	// Train is the training wall time, Predict the median wall time of
	// one prediction of the timing batch.
	Train, Predict time.Duration
}

// Base returns f; it lets a program's result type that embeds Fitted
// satisfy Measured.
func (f Fitted) Base() Fitted { return f }

// Measured is a program's result that embeds Fitted.
type Measured interface{ Base() Fitted }

// TimeCells returns the mean ± std over rs of the inference time (format
// inferFormat, in seconds) and the training time (format trainFormat, in
// seconds), as table cells.
func TimeCells[R Measured](rs []R, inferFormat, trainFormat string) []string {
	return []string{
		report.SummarizeFunc(rs, func(r R) float64 { return r.Base().Predict.Seconds() }).Format(inferFormat),
		report.SummarizeFunc(rs, func(r R) float64 { return r.Base().Train.Seconds() }).Format(trainFormat),
	}
}

// AdaNPCells returns the mean ± std over rs of how AdaNP acted, as table
// cells: the mean depth at inference, the test samples not converged, the
// share of training batches projected (report.Projection) and the mean
// depth over those batches.
func AdaNPCells[R Measured](rs []R) []string {
	col := func(f func(Fitted) float64, format string) string {
		return report.SummarizeFunc(rs, func(r R) float64 { return f(r.Base()) }).Format(format)
	}
	return []string{
		col(func(f Fitted) float64 { return f.Stats.MeanDepth }, "%.2f"),
		col(func(f Fitted) float64 { return float64(f.Stats.NotConverged) }, "%.0f"),
		col(func(f Fitted) float64 { share, _ := report.Projection(f.History); return 100 * share }, "%.1f %%"),
		col(func(f Fitted) float64 { _, depth := report.Projection(f.History); return depth }, "%.2f"),
	}
}

// AdaNPColumns are the headers of AdaNPCells.
var AdaNPColumns = []string{"AdaNP depth", "not converged", "projected batches", "train depth"}

// Fit trains the model cfg describes on trainSet (resuming it from its
// checkpoint, see NewModel), predicts testX, and times the prediction of
// the first timeRows rows of testX (all of them if timeRows is 0 or
// larger) as the median of 11 runs after a warm-up. The training time is
// the model's (train.Model.TrainingTime), over every process of a resumed
// run.
func Fit(cfg train.Config, trainSet problems.Dataset, testX *mat.Dense, timeRows int) (Fitted, error) {
	var f Fitted
	var err error
	if f.Model, err = NewModel(cfg); err != nil {
		return f, err
	}
	if f.History, err = f.Model.Fit(trainSet.X, trainSet.Y); err != nil {
		return f, err
	}
	f.Train = f.Model.TrainingTime()
	if f.Pred, f.Stats, err = f.Model.Predict(testX); err != nil {
		return f, err
	}
	n, nx := testX.Dims()
	batch := testX
	if timeRows > 0 && timeRows < n {
		batch = testX.Slice(0, timeRows, 0, nx).(*mat.Dense)
	}
	f.Predict, err = report.MedianTime(11, func() error {
		_, _, err := f.Model.Predict(batch)
		return err
	})
	return f, err
}

// SortedRows returns the indices of the rows of x sorted by their first
// column, thinned to at most most rows at an even stride (all rows if most
// is 0): the points of a curve against x.
func SortedRows(x *mat.Dense, most int) []int {
	n, _ := x.Dims()
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return x.At(order[a], 0) < x.At(order[b], 0) })
	stride := 1
	if most > 0 {
		stride = max(1, n/most)
	}
	idx := make([]int, 0, (n+stride-1)/stride)
	for k := 0; k < n; k += stride {
		idx = append(idx, order[k])
	}
	return idx
}

// Column returns m's column j at the rows idx.
func Column(m *mat.Dense, j int, idx []int) []float64 {
	v := make([]float64, len(idx))
	for k, i := range idx {
		v[k] = m.At(i, j)
	}
	return v
}

// AbsResidual returns the series |c_k(x_i, y_i)| against x_i (the first
// input) over the rows idx, floored at floor so that a log axis can show
// an exact zero.
func AbsResidual(label string, c enforce.Constraint, x, y *mat.Dense, k int, idx []int, floor float64) report.Series {
	_, _, nc := c.Dims()
	r := make([]float64, nc)
	s := report.Series{Label: label, X: make([]float64, len(idx)), Y: make([]float64, len(idx))}
	for n, i := range idx {
		c.Eval(x.RawRowView(i), y.RawRowView(i), r, nil)
		s.X[n] = x.At(i, 0)
		s.Y[n] = max(math.Abs(r[k]), floor)
	}
	return s
}
