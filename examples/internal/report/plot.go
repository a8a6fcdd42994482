package report

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one curve or point cloud of a Figure.
type Series struct {
	// Label names the series in the legend; an empty label is left out.
	Label string
	// X and Y are the coordinates; they must have the same length.
	X, Y []float64
	// Points draws markers instead of a line (a line joins the points in
	// the order given, so sort them by X first).
	Points bool
	// Dashed draws the line dashed.
	Dashed bool
}

// Figure describes one plot: its labels and axis scales. The zero size is
// 6×4 inches (576×384 pixels in PNG).
type Figure struct {
	Title, XLabel, YLabel string
	// LogX and LogY use logarithmic axes; every value on them must then
	// be positive.
	LogX, LogY bool
	// Width and Height are the size in inches.
	Width, Height float64
}

// SavePlot draws the series into a new plot described by fig and saves it
// to path, with the legend top right above the data; the format follows the extension (.png, .svg, .pdf). It returns
// an error for a series with mismatched or non-finite coordinates,
// non-positive values on a logarithmic axis, or when the file cannot be
// written.
func SavePlot(path string, fig Figure, series ...Series) error {
	if len(series) == 0 {
		return errors.New("report: no series to plot")
	}
	p := plot.New()
	p.Title.Text = fig.Title
	p.X.Label.Text = fig.XLabel
	p.Y.Label.Text = fig.YLabel
	if fig.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if fig.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	for i, s := range series {
		xys, err := points(s, fig)
		if err != nil {
			return fmt.Errorf("report: series %d (%q): %w", i, s.Label, err)
		}
		col := plotutil.Color(i)
		if s.Points {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color = col
			sc.GlyphStyle.Radius = vg.Points(1.5)
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(sc)
			if s.Label != "" {
				p.Legend.Add(s.Label, sc)
			}
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = col
		l.Width = vg.Points(1.2)
		if s.Dashed {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(l)
		if s.Label != "" {
			p.Legend.Add(s.Label, l)
		}
	}
	// Headroom above the data for the legend, which sits top right.
	if fig.LogY {
		p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, 0.35)
	} else {
		p.Y.Max += 0.35 * (p.Y.Max - p.Y.Min)
	}
	w, h := fig.Width, fig.Height
	if w <= 0 {
		w = 6
	}
	if h <= 0 {
		h = 4
	}
	if filepath.Ext(path) == "" {
		return fmt.Errorf("report: %q has no file extension to choose a format", path)
	}
	return p.Save(vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch, path)
}

// logTicks are plot.LogTicks labelled exactly: 0.01, 0.1, 1, 10, 100 and
// 1e-05, 1e+06 beyond (plot.LogTicks prints 9.999999999999999e-05).
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		e := int(math.Round(math.Log10(t.Value)))
		if e >= -3 && e <= 3 {
			ticks[i].Label = strconv.FormatFloat(math.Pow10(e), 'f', max(0, -e), 64)
		} else {
			ticks[i].Label = fmt.Sprintf("1e%+03d", e)
		}
	}
	return ticks
}

// points validates s against fig's scales and returns its coordinates.
func points(s Series, fig Figure) (plotter.XYs, error) {
	if len(s.X) != len(s.Y) {
		return nil, fmt.Errorf("%d x values and %d y values", len(s.X), len(s.Y))
	}
	if len(s.X) == 0 {
		return nil, errors.New("no points")
	}
	xys := make(plotter.XYs, len(s.X))
	for i := range s.X {
		x, y := s.X[i], s.Y[i]
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0):
			return nil, fmt.Errorf("point %d = (%v, %v) is not finite", i, x, y)
		case fig.LogX && x <= 0:
			return nil, fmt.Errorf("point %d has x = %v on a logarithmic axis", i, x)
		case fig.LogY && y <= 0:
			return nil, fmt.Errorf("point %d has y = %v on a logarithmic axis", i, y)
		}
		xys[i].X, xys[i].Y = x, y
	}
	return xys, nil
}
