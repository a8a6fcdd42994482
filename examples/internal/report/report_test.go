package report

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
		{"format", filepath.Join(dir, "fig.xyz"), "xyz", Figure{}, []Series{{X: x, Y: x}}},
		{"folder", filepath.Join(dir, "missing", "fig.png"), "missing", Figure{}, []Series{{X: x, Y: x}}},
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
	for _, tc := range []struct {
		name   string
		lo, hi float64
		want   []string
	}{
		{"eight decades: every second", 2e-5, 300, []string{"1e-04", "0.01", "1", "100"}},
		{"sixteen decades: every third", 1e-16, 0.5, []string{"1e-15", "1e-12", "1e-09", "1e-06", "0.001"}},
		{"three decades: all", 0.002, 3, []string{"0.01", "0.1", "1"}},
		{"one decade: 1, 2, 5", 0.15, 0.9, []string{"0.2", "0.5"}},
		{"narrower: linear", 0.31, 0.38, []string{"0.32", "0.34", "0.36", "0.38"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var labels []string
			for _, tick := range (logTicks{}).Ticks(tc.lo, tc.hi) {
				if tick.Label != "" && tick.Value >= tc.lo && tick.Value <= tc.hi {
					labels = append(labels, tick.Label)
				}
			}
			assert.Equal(t, tc.want, labels)
			assert.LessOrEqual(t, len(labels), maxLogLabels)
		})
	}
}

func TestLinearTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi float64
		want   []string
	}{
		{"epochs", 0.1, 30.9, []string{"10", "20", "30"}},
		{"depth", 0.95, 3.9, []string{"1", "2", "3"}},
		{"share", 0, 1, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{"symmetric", -4.3, 4.3, []string{"-4", "-2", "0", "2", "4"}},
		{"small", 0.31, 0.38, []string{"0.32", "0.34", "0.36", "0.38"}},
		{"around zero", -0.3, 0.2, []string{"-0.3", "-0.2", "-0.1", "0", "0.1", "0.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var labels []string
			for _, tick := range (linearTicks{}).Ticks(tc.lo, tc.hi) {
				assert.True(t, tick.Value >= tc.lo-1e-12 && tick.Value <= tc.hi+1e-12, "tick %v outside [%v, %v]", tick.Value, tc.lo, tc.hi)
				if tick.Label != "" {
					labels = append(labels, tick.Label)
				}
			}
			assert.Equal(t, tc.want, labels)
		})
	}
}

func TestAxisRange(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lo, hi         float64
		log            bool
		wantLo, wantHi float64
	}{
		{"linear", 0, 10, false, -0.3, 10.3},
		{"linear flat", 3, 3, false, 2, 4},
		{"linear flat large", -50, -50, false, -55, -45},
		{"log", 1e-4, 1, true, math.Pow(10, -4.12), math.Pow(10, 0.12)},
		{"log flat", 3, 3, true, 1.5, 6},
		// The bug this replaces: headroom for a legend inside the plot
		// stretched a log axis over 1e-16…0.5 to 1e+05.
		{"log wide", 1e-16, 0.5, true, math.Pow(10, -16-0.03*(16+math.Log10(0.5))), math.Pow(10, math.Log10(0.5)+0.03*(16+math.Log10(0.5)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := axisRange(tc.lo, tc.hi, tc.log)
			assert.InEpsilon(t, tc.wantLo, lo, 1e-12)
			assert.InEpsilon(t, tc.wantHi, hi, 1e-12)
			assert.LessOrEqual(t, lo, tc.lo)
			assert.GreaterOrEqual(t, hi, tc.hi)
		})
	}
}

func TestMethodColor(t *testing.T) {
	enforce, ok := MethodColor("ENFORCE")
	require.True(t, ok)
	for _, label := range []string{"ENFORCE seed 3", "ENFORCE: depth", "ENFORCE seed 1: share projected", "ENFORCE, y₁"} {
		c, ok := MethodColor(label)
		assert.True(t, ok, label)
		assert.Equal(t, enforce, c, label)
	}
	_, ok = MethodColor("ENFORCEMENT")
	assert.False(t, ok, "a method name must end at a space, comma or colon")
	_, ok = MethodColor("λ_D = 0.5")
	assert.False(t, ok)
	soft, _ := MethodColor("Soft")
	soft1, _ := MethodColor("Soft (λ_C=1) seed 2")
	soft5, _ := MethodColor("Soft (λ_C=5)")
	assert.Equal(t, soft, soft1, "the default Soft and Soft (λ_C=1) are one method")
	assert.NotEqual(t, soft, soft5, "the longest name wins")
	// The methods compared in one figure have distinct colours.
	seen := map[any]string{}
	for _, m := range []string{"MLP", "Soft (λ_C=5)", "Soft (λ_C=1)", "Soft (λ_C=0.1)", "DC3", "ENFORCE", "truth"} {
		c, ok := MethodColor(m)
		require.True(t, ok, m)
		assert.NotContains(t, seen, c, "%s and %s share a colour", m, seen[c])
		seen[c] = m
	}
}

func TestSeriesColors(t *testing.T) {
	mlp, _ := MethodColor("MLP")
	enf, _ := MethodColor("ENFORCE")
	// The same methods in another order, as two figures of one run may
	// list them: each keeps its colour.
	a := seriesColors([]Series{{Label: "MLP seed 1"}, {Label: "ENFORCE seed 1"}})
	b := seriesColors([]Series{{Label: "ENFORCE seed 1"}, {Label: "truth"}, {Label: "MLP seed 1"}})
	assert.Equal(t, []color.Color{mlp, enf}, a)
	assert.Equal(t, enf, b[0])
	assert.Equal(t, mlp, b[2])

	// Unlabelled series continue the one before; other labels take
	// colours no method in the figure uses, one per label.
	c := seriesColors([]Series{{Label: "envelope ±h(x)"}, {}, {Label: "λ_D = 0"}, {Label: "λ_D = 0.5"}, {Label: "λ_D = 0"}, {Label: "MLP"}})
	assert.Equal(t, c[0], c[1], "the unlabelled lower envelope")
	assert.Equal(t, c[2], c[4], "one colour per label")
	assert.NotEqual(t, c[2], c[3])
	for _, i := range []int{2, 3} {
		assert.NotEqual(t, mlp, c[i], "a free colour, not the MLP's")
		assert.NotEqual(t, c[0], c[i], "a free colour, not the envelope's")
	}
}

func TestSavePlotLegendOutside(t *testing.T) {
	dir := t.TempDir()
	x := []float64{1, 2}
	size := func(name string, s ...Series) image.Point {
		path := filepath.Join(dir, name)
		require.NoError(t, SavePlot(path, Figure{Width: 3, Height: 2}, s...))
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		cfg, err := png.DecodeConfig(f)
		require.NoError(t, err)
		return image.Pt(cfg.Width, cfg.Height)
	}
	bare := size("bare.png", Series{X: x, Y: x})
	assert.Equal(t, image.Pt(3*96, 2*96), bare, "no labels, no legend: the plot's size at 96 dpi")
	withLegend := size("legend.png", Series{Label: "ENFORCE seed 1", X: x, Y: x}, Series{Label: "MLP seed 1", X: x, Y: x})
	assert.Greater(t, withLegend.X, bare.X, "the legend widens the image instead of covering the plot")
	assert.Equal(t, bare.Y, withLegend.Y)
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

func TestSelect(t *testing.T) {
	runs := []Run{{Label: "MLP seed 1"}, {Label: "ENFORCE seed 1"}, {Label: "ENFORCEMENT seed 1"}, {Label: "ENFORCE"}, {Label: "Soft (λ_C=1) seed 2"}}
	var labels []string
	for _, r := range Select("ENFORCE", runs...) {
		labels = append(labels, r.Label)
	}
	assert.Equal(t, []string{"ENFORCE seed 1", "ENFORCE"}, labels)
	assert.Len(t, Select("Soft (λ_C=1)", runs...), 1)
	assert.Empty(t, Select("DC3", runs...))
}

// TestTableWithinMaxWidth checks that a table wider than MaxWidth prints
// as blocks of columns, each line within MaxWidth, each block starting
// with the method column, every cell once; that long titles and notes are
// wrapped at spaces; and that a table that fits prints as before.
func TestTableWithinMaxWidth(t *testing.T) {
	cols := []string{"method"}
	for j := range 12 {
		cols = append(cols, fmt.Sprintf("column %d [unit]", j))
	}
	tab := NewTable(strings.Repeat("title word ", 20), cols...)
	for _, name := range []string{"MLP (paper)", "ENFORCE (ours)"} {
		row := []string{name}
		for j := range 12 {
			row = append(row, fmt.Sprintf("(%d.%d ± 0.1)e-7", j, len(name)))
		}
		tab.AddRow(row...)
	}
	tab.AddNote("%s", strings.Repeat("note word ", 30))
	var b bytes.Buffer
	require.NoError(t, tab.WriteText(&b))
	text := b.String()
	for line := range strings.Lines(text) {
		assert.LessOrEqual(t, len(strings.TrimSuffix(line, "\n")), MaxWidth, "bytes of %q", line)
	}
	blocks := strings.Count(text, "\nmethod ")
	assert.Greater(t, blocks, 1, "split into blocks")
	assert.Equal(t, blocks, strings.Count(text, "\nENFORCE (ours) "), "the method column in every block")
	for j := range 12 {
		assert.Equal(t, 1, strings.Count(text, fmt.Sprintf("column %d [unit]", j)), "column %d once", j)
		assert.Equal(t, 1, strings.Count(text, fmt.Sprintf("(%d.14 ± 0.1)e-7", j)), "cell %d once", j)
	}
	assert.Equal(t, 30, strings.Count(text, "note"), "notes wrapped, not cut")
	assert.Equal(t, 50, strings.Count(text, "word"), "title and notes wrapped, not cut")
	assert.Contains(t, text, "\n  note word", "continuation lines indented")
}

// TestTableSmoke checks that a smoke run's table says so in its title and
// first note, in text and Markdown.
func TestTableSmoke(t *testing.T) {
	tab := NewTable("Table 1", "method", "R²")
	tab.AddRow("MLP (paper)", "0.994")
	tab.AddRow("MLP (smoke)", "0.5")
	tab.AddNote("seeds: 1")
	tab.Smoke = true
	var txt, md bytes.Buffer
	require.NoError(t, tab.WriteText(&txt))
	require.NoError(t, tab.WriteMarkdown(&md))
	assert.True(t, strings.HasPrefix(txt.String(), "SMOKE RUN (-quick): Table 1\n"), txt.String())
	assert.Contains(t, txt.String(), "MLP (smoke)  0.5\nsmoke run (-quick): a reduced setting")
	assert.True(t, strings.HasSuffix(txt.String(), "seeds: 1\n"))
	assert.Contains(t, md.String(), "**SMOKE RUN (-quick): Table 1**")
	assert.Contains(t, md.String(), "- "+SmokeNote+"\n- seeds: 1\n")
}

// TestWrapf checks that Wrapf wraps only the lines longer than MaxWidth
// bytes, at spaces, and keeps empty lines and the final newline.
func TestWrapf(t *testing.T) {
	var b bytes.Buffer
	long := strings.Repeat("σ word ", 30)
	require.NoError(t, Wrapf(&b, "short %d\n\n%s\nend", 1, long))
	lines := strings.Split(b.String(), "\n")
	assert.Equal(t, "short 1", lines[0])
	assert.Equal(t, "", lines[1])
	assert.Equal(t, "end", lines[len(lines)-1])
	for _, l := range lines {
		assert.LessOrEqual(t, len(l), MaxWidth, "bytes of %q", l)
	}
	assert.Equal(t, 30, strings.Count(b.String(), "σ"))
	assert.Equal(t, 30, strings.Count(b.String(), "word"))
}

// TestTableKeepAlignRight checks Keep (every block repeats the leading
// columns) and AlignRight (cells end at the column's right edge).
func TestTableKeepAlignRight(t *testing.T) {
	cols := []string{"case", "precision"}
	for j := range 10 {
		cols = append(cols, fmt.Sprintf("measure %d [ms]", j))
	}
	tab := NewTable("", cols...)
	tab.Keep, tab.AlignRight = 2, true
	for _, p := range []string{"float64", "float32"} {
		row := []string{"quadratic (104, 200, 150)", p}
		for j := range 10 {
			cell := fmt.Sprintf("%d.5 µs", j)
			if (j+len(p))%3 == 0 {
				cell = "–" // fewer characters than bytes
			}
			row = append(row, cell)
		}
		tab.AddRow(row...)
	}
	var b bytes.Buffer
	require.NoError(t, tab.WriteText(&b))
	text := b.String()
	blocks := strings.Split(strings.TrimSuffix(text, "\n"), "\n\n")
	require.Greater(t, len(blocks), 1, text)
	for _, block := range blocks {
		lines := strings.Split(block, "\n")
		require.Len(t, lines, 3)
		assert.Regexp(t, `^\s*case\s+precision\s`, lines[0])
		assert.Regexp(t, `^\s*quadratic \(104, 200, 150\)\s+float64\s`, lines[1])
		assert.Regexp(t, `^\s*quadratic \(104, 200, 150\)\s+float32\s`, lines[2])
		assert.Equal(t, utf8.RuneCountInString(lines[0]), utf8.RuneCountInString(lines[1]), "right-aligned: lines end together")
		for _, l := range lines {
			assert.LessOrEqual(t, len(l), MaxWidth)
		}
	}
}
