package report

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/train"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want Stat
		text string
	}{
		{"empty", nil, Stat{}, "–"},
		{"one", []float64{2}, Stat{Mean: 2, N: 1}, "2.00"},
		{"three", []float64{1, 2, 3}, Stat{Mean: 2, Std: 1, N: 3}, "2.00 ± 1.00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.xs)
			assert.Equal(t, tc.want, s)
			assert.Equal(t, tc.text, s.Format("%.2f"))
		})
	}
}

func TestTable(t *testing.T) {
	tab := NewTable("Table 1", "method", "R²", "note")
	tab.AddRow("MLP (paper)", "0.994")
	tab.AddRow("MLP (ours)", "0.996", "a|b")
	tab.AddNote("seeds: %d", 1)
	var txt, md bytes.Buffer
	require.NoError(t, tab.WriteText(&txt))
	require.NoError(t, tab.WriteMarkdown(&md))
	assert.Equal(t, "Table 1\nmethod       R²     note\nMLP (paper)  0.994\nMLP (ours)   0.996  a|b\nseeds: 1\n", txt.String())
	assert.Equal(t, "**Table 1**\n\n| method | R² | note |\n|---|---|---|\n| MLP (paper) | 0.994 |  |\n| MLP (ours) | 0.996 | a\\|b |\n\n- seeds: 1\n", md.String())
	assert.Panics(t, func() { tab.AddRow("a", "b", "c", "d") })
}

func history(n int) train.History {
	h := make(train.History, n)
	for i := range h {
		h[i] = train.Epoch{Epoch: i + 1, Loss: 1 / float64(i+1), Task: 0.5, Depth: float64(i % 2)}
	}
	return h
}

func TestWriteHistoryCSV(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteHistoryCSV(&b, Run{"MLP", history(2)}, Run{"ENFORCE, seed 1", history(1)}))
	assert.Equal(t, "run,epoch,loss,task,displacement,residual,depth,projected\n"+
		"MLP,1,1,0.5,0,0,0,0\nMLP,2,0.5,0.5,0,0,1,0\n\"ENFORCE, seed 1\",1,1,0.5,0,0,0,0\n", b.String())
	assert.Error(t, WriteHistoryCSV(&b))

	s := HistorySeries(func(e train.Epoch) float64 { return e.Depth }, true, Run{"a", history(4)})
	require.Len(t, s, 1)
	assert.Equal(t, []float64{2, 4}, s[0].X, "zero depths are left out of a log axis")
}

func TestSavePlot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fig.png")
	x := []float64{1, 2, 3, 4}
	err := SavePlot(path, Figure{Title: "t", XLabel: "epoch", YLabel: "loss", LogY: true},
		Series{Label: "line", X: x, Y: []float64{1, 0.5, 0.2, 0.1}},
		Series{Label: "dashed", X: x, Y: []float64{2, 1, 0.5, 0.2}, Dashed: true},
		Series{Label: "points", X: x, Y: []float64{1, 1, 1, 1}, Points: true})
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(data, []byte("\x89PNG")), "a PNG file")
	assert.Less(t, len(data), 300_000)

	for _, tc := range []struct {
		name, path, want string
		fig              Figure
		s                []Series
	}{
		{"no series", path, "no series", Figure{}, nil},
		{"lengths", path, "2 x values and 1 y values", Figure{}, []Series{{X: x[:2], Y: x[:1]}}},
		{"nan", path, "not finite", Figure{}, []Series{{X: x[:1], Y: []float64{math.NaN()}}}},
		{"log", path, "logarithmic", Figure{LogX: true}, []Series{{X: []float64{0}, Y: []float64{1}}}},
		{"extension", filepath.Join(dir, "fig"), "extension", Figure{}, []Series{{X: x, Y: x}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := SavePlot(tc.path, tc.fig, tc.s...)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tc.want), err.Error())
		})
	}
}

func TestMedianTime(t *testing.T) {
	calls := 0
	d, err := MedianTime(3, func() error { calls++; return nil })
	require.NoError(t, err)
	assert.Equal(t, 4, calls, "one warm-up and three timed calls")
	assert.GreaterOrEqual(t, d, time.Duration(0))
	_, err = MedianTime(0, func() error { return nil })
	assert.Error(t, err)
	boom := errors.New("boom")
	_, err = MedianTime(2, func() error { return boom })
	assert.ErrorIs(t, err, boom)
}

func TestSavePlotFlat(t *testing.T) {
	for _, logY := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "flat.png")
		require.NoError(t, SavePlot(path, Figure{LogY: logY}, Series{X: []float64{1, 2}, Y: []float64{3, 3}}))
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Positive(t, info.Size())
	}
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tick := range (logTicks{}).Ticks(2e-5, 300) {
		if tick.Label != "" {
			labels = append(labels, tick.Label)
		}
	}
	assert.Equal(t, []string{"1e-04", "0.001", "0.01", "0.1", "1", "10", "100", "1000"}, labels)
}

func TestWriteOutputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "figs")
	runs := []Run{{"ENFORCE, seed 1", history(3)}}
	plots := []Plot{{Name: "depth.png", Fig: Figure{Title: "depth", XLabel: "epoch", YLabel: "steps"}, Series: DepthAndShare(runs...)}}
	names, err := WriteOutputs(dir, plots, "h.csv", runs...)
	require.NoError(t, err)
	assert.Equal(t, []string{"depth.png", "h.csv"}, names)
	for _, n := range names {
		info, err := os.Stat(filepath.Join(dir, n))
		require.NoError(t, err)
		assert.Positive(t, info.Size())
	}
	s := DepthAndShare(runs...)
	require.Len(t, s, 2)
	assert.Equal(t, "ENFORCE, seed 1: depth", s[0].Label)
	assert.True(t, s[1].Dashed)
}

func TestProjection(t *testing.T) {
	h := train.History{{Projected: 1, Depth: 2}, {Projected: 0.5, Depth: 1}, {}}
	share, depth := Projection(h)
	assert.InDelta(t, 0.5, share, 1e-15)
	assert.InDelta(t, 2.5/1.5, depth, 1e-15)
	share, depth = Projection(nil)
	assert.Zero(t, share)
	assert.Zero(t, depth)
}
