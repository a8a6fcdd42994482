package report

import (
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/enforce-nn/enforce/train"
)

// Run is the training history of one model, labelled for a CSV file or a
// plot legend (for example "ENFORCE seed 2").
type Run struct {
	Label   string
	History train.History
}

// historyHeader are the CSV columns written by WriteHistoryCSV.
var historyHeader = []string{"run", "epoch", "loss", "task", "displacement", "residual", "depth", "projected"}

// WriteHistoryCSV writes the per-epoch histories of runs as one CSV table
// with the header run, epoch, loss, task, displacement, residual, depth,
// projected (the fields of train.Epoch), one row per run and epoch.
func WriteHistoryCSV(w io.Writer, runs ...Run) error {
	if len(runs) == 0 {
		return errors.New("report: no runs")
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(historyHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, r := range runs {
		for _, e := range r.History {
			rec := []string{r.Label, strconv.Itoa(e.Epoch), f(e.Loss), f(e.Task), f(e.Displacement), f(e.Residual), f(e.Depth), f(e.Projected)}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// HistorySeries returns one line per run of the quantity field(e) against
// the epoch, for Plot. Epochs where field is not positive are left out
// when logY is true, so that a log axis stays finite.
func HistorySeries(field func(train.Epoch) float64, logY bool, runs ...Run) []Series {
	out := make([]Series, 0, len(runs))
	for _, r := range runs {
		s := Series{Label: r.Label}
		for _, e := range r.History {
			v := field(e)
			if logY && !(v > 0) {
				continue
			}
			s.X = append(s.X, float64(e.Epoch))
			s.Y = append(s.Y, v)
		}
		out = append(out, s)
	}
	return out
}

// Projection summarises how AdaNP acted during training: the share of
// training batches it projected (over all epochs) and the mean number of
// NP steps over those batches (0 when none was projected).
func Projection(h train.History) (share, depth float64) {
	var projected, depthSum float64
	for _, e := range h {
		projected += e.Projected
		depthSum += e.Depth * e.Projected
	}
	if len(h) > 0 {
		share = projected / float64(len(h))
	}
	if projected > 0 {
		depth = depthSum / projected
	}
	return share, depth
}

// Select returns the runs whose label starts with method followed by the
// end of the label, a space, a comma or a colon ("ENFORCE seed 2" for
// "ENFORCE", but not "ENFORCE-like").
func Select(method string, runs ...Run) []Run {
	var out []Run
	for _, r := range runs {
		if hasMethodPrefix(r.Label, method) {
			out = append(out, r)
		}
	}
	return out
}

// hasMethodPrefix reports whether label names method: it is method, or
// starts with method followed by a space, a comma or a colon.
func hasMethodPrefix(label, method string) bool {
	if !strings.HasPrefix(label, method) {
		return false
	}
	rest := label[len(method):]
	return rest == "" || rest[0] == ' ' || rest[0] == ',' || rest[0] == ':'
}
