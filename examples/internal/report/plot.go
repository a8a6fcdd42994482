package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
// a 6×4-inch plot area (576×384 pixels in PNG) with the legend to its
// right, outside the data.
type Figure struct {
	Title, XLabel, YLabel string
	// LogX and LogY use logarithmic axes; every value on them must then
	// be positive.
	LogX, LogY bool
	// Width and Height are the size of the plot in inches; the legend
	// widens the image by its own width.
	Width, Height float64
}

// SavePlot draws the series into a new plot described by fig and saves it
// to path; the format follows the extension (.png, .svg, .pdf).
//
// Every series is drawn in the colour of its method (MethodColor), so a
// method has the same colour in every figure; series whose labels name no
// method take the Okabe–Ito colours no method in the figure uses, in the
// order given. A series with an empty label continues the one before it:
// same colour and dashes, no legend entry of its own (the lower half of an
// envelope, say). The legend lists each label once, to the right of the
// plot area, so it never hides data. The axes span the data with a margin
// of marginFrac of their range (of the decades on a log axis), and a
// logarithmic axis labels at most about six ticks.
//
// SavePlot returns an error for a series with mismatched or non-finite
// coordinates, non-positive values on a logarithmic axis, or when the file
// cannot be written.
func SavePlot(path string, fig Figure, series ...Series) error {
	if len(series) == 0 {
		return errors.New("report: no series to plot")
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format == "" {
		return fmt.Errorf("report: %q has no file extension to choose a format", path)
	}
	p := plot.New()
	p.Title.Text = fig.Title
	p.X.Label.Text = fig.XLabel
	p.Y.Label.Text = fig.YLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{}
	if fig.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if fig.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(2)
	listed := map[string]bool{}
	xr, yr := newSpan(), newSpan()
	data := make([]plotter.XYs, len(series))
	for i, s := range series {
		xys, err := points(s, fig)
		if err != nil {
			return fmt.Errorf("report: series %d (%q): %w", i, s.Label, err)
		}
		for _, pt := range xys {
			xr.add(pt.X)
			yr.add(pt.Y)
		}
		data[i] = xys
	}
	colors := seriesColors(series)
	dashed := false
	for i, s := range series {
		xys := data[i]
		if s.Label != "" || i == 0 {
			dashed = s.Dashed
		}
		var thumb plot.Thumbnailer
		if s.Points {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color = colors[i]
			sc.GlyphStyle.Radius = vg.Points(1.5)
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(sc)
			thumb = sc
		} else {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return err
			}
			l.Color = colors[i]
			l.Width = vg.Points(1.4)
			if dashed {
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(l)
			thumb = l
		}
		if s.Label != "" && !listed[s.Label] {
			listed[s.Label] = true
			legend.Add(s.Label, thumb)
		}
	}
	p.X.Min, p.X.Max = axisRange(xr.lo, xr.hi, fig.LogX)
	p.Y.Min, p.Y.Max = axisRange(yr.lo, yr.hi, fig.LogY)

	w, h := fig.Width, fig.Height
	if w <= 0 {
		w = 6
	}
	if h <= 0 {
		h = 4
	}
	plotW, height := vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch
	var legendW vg.Length
	if len(listed) > 0 {
		r := legend.Rectangle(draw.Canvas{})
		legendW = r.Max.X - r.Min.X + 2*legendGap
	}
	c, err := draw.NewFormattedCanvas(plotW+legendW, height, format)
	if err != nil {
		return fmt.Errorf("report: %q: %w", path, err)
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	if legendW > 0 {
		legend.Draw(draw.Crop(dc, plotW+legendGap, -legendGap, 0, -legendGap))
	}
	return WriteFile(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}

// legendGap is the space around the legend.
const legendGap = vg.Length(8)

// marginFrac is the share of an axis's data range (of its decades on a
// log axis) left free at either end.
const marginFrac = 0.03

// span is the range of the values added to it.
type span struct{ lo, hi float64 }

func newSpan() span { return span{math.Inf(1), math.Inf(-1)} }

func (s *span) add(v float64) {
	s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
}

// axisRange returns the range of an axis whose data span [lo, hi]: that
// span widened by marginFrac at either end (in log10 on a log axis). A
// single value v is widened to v ± max(|v|/10, 1) on a linear axis and to
// [v/2, 2v] on a log axis. lo ≤ hi must hold, and lo > 0 on a log axis.
func axisRange(lo, hi float64, log bool) (min, max float64) {
	if log {
		a, b := math.Log10(lo), math.Log10(hi)
		if a == b {
			return lo / 2, hi * 2
		}
		m := marginFrac * (b - a)
		return math.Pow(10, a-m), math.Pow(10, b+m)
	}
	if lo == hi {
		d := math.Max(math.Abs(lo)/10, 1)
		return lo - d, hi + d
	}
	m := marginFrac * (hi - lo)
	return lo - m, hi + m
}

// Okabe–Ito colours (Okabe & Ito 2008), distinguishable with the common
// forms of colour blindness.
var (
	okabeBlack         = color.RGBA{0x00, 0x00, 0x00, 0xff}
	okabeOrange        = color.RGBA{0xe6, 0x9f, 0x00, 0xff}
	okabeSkyBlue       = color.RGBA{0x56, 0xb4, 0xe9, 0xff}
	okabeBluishGreen   = color.RGBA{0x00, 0x9e, 0x73, 0xff}
	okabeBlue          = color.RGBA{0x00, 0x72, 0xb2, 0xff}
	okabeVermillion    = color.RGBA{0xd5, 0x5e, 0x00, 0xff}
	okabeReddishPurple = color.RGBA{0xcc, 0x79, 0xa7, 0xff}
	grey               = color.RGBA{0x99, 0x99, 0x99, 0xff}
)

// methodColors are the fixed colours of the methods and references the
// figures show, keyed by the name a series label starts with.
var methodColors = map[string]color.Color{
	"ENFORCE":        okabeBlue,
	"MLP":            okabeOrange,
	"Soft":           okabeBluishGreen,
	"Soft (λ_C=1)":   okabeBluishGreen,
	"Soft (λ_C=5)":   okabeSkyBlue,
	"Soft (λ_C=0.1)": okabeVermillion,
	"DC3":            okabeReddishPurple,
	"KKT-HardNet":    okabeVermillion,
	"truth":          okabeBlack,
	"reference":      okabeBlack,
	"y = x":          okabeBlack,
	"envelope":       okabeBlack,
	"training data":  grey,
	"training":       grey,
}

// otherColors are given in turn to series whose labels name no method.
var otherColors = []color.Color{okabeSkyBlue, okabeVermillion, okabeReddishPurple, okabeBluishGreen, okabeOrange, okabeBlue, okabeBlack}

// MethodColor returns the fixed colour of the method a series label
// names: the longest key of the table (ENFORCE, MLP, Soft and its λ_C
// variants, DC3, KKT-HardNet, truth, reference, y = x, envelope, training
// data) that the label equals or starts with before a space, a comma or a
// colon. ok is false when the label names none.
func MethodColor(label string) (c color.Color, ok bool) {
	best := -1
	for name, col := range methodColors {
		if len(name) > best && hasMethodPrefix(label, name) {
			best, c = len(name), col
		}
	}
	return c, best >= 0
}

// seriesColors returns the colour of each series: its method's, the
// previous series' for an empty label, else the next Okabe–Ito colour
// that no method in the figure uses, one per distinct label.
func seriesColors(series []Series) []color.Color {
	used := map[color.Color]bool{}
	for _, s := range series {
		if c, ok := MethodColor(s.Label); ok {
			used[c] = true
		}
	}
	var free []color.Color
	for _, c := range otherColors {
		if !used[c] {
			free = append(free, c)
		}
	}
	byLabel := map[string]color.Color{}
	out := make([]color.Color, len(series))
	next := 0
	for i, s := range series {
		switch c, ok := MethodColor(s.Label); {
		case ok:
			out[i] = c
		case s.Label == "" && i > 0:
			out[i] = out[i-1]
		case byLabel[s.Label] != nil:
			out[i] = byLabel[s.Label]
		default:
			out[i] = otherColors[next%len(otherColors)]
			if len(free) > 0 {
				out[i] = free[next%len(free)]
			}
			byLabel[s.Label] = out[i]
			next++
		}
	}
	return out
}

// linearTicks label a linear axis at the multiples of a round step (1, 2
// or 5 times a power of ten) that gives three to six labels, with an
// unlabelled tick halfway between, and format them with the step's
// decimals (0.2, 0.4, not 0.30000000000000004; zero as 0).
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	step := niceStep((hi - lo) / 5)
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	const eps = 1e-9 // of a step: lo and hi on a multiple count as on it
	for k := math.Ceil(lo/step*2 - eps); k/2 <= hi/step+eps; k++ {
		v := k / 2 * step
		t := plot.Tick{Value: math.Min(math.Max(v, lo), hi)}
		switch {
		case k == 0:
			t.Label = "0"
		case math.Mod(k, 2) == 0:
			t.Label = strconv.FormatFloat(v, 'f', decimals, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// niceStep returns the smallest of 1, 2 and 5 times a power of ten that
// is at least raw (raw > 0).
func niceStep(raw float64) float64 {
	p := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// logTicks label at most about six decades of a log axis (every k-th
// decade over a wide range), mark the other decades, and add the minor
// ticks 2…9 when the axis spans at most three decades. Labels are exact:
// 0.01, 0.1, 1, 10, 100 and 1e-05, 1e+06 beyond. An axis narrower than
// two labelled decades is labelled at 1, 2 and 5 times the powers of ten,
// or, narrower still, as a linear axis.
type logTicks struct{}

// maxLogLabels is the most labelled decades on a log axis.
const maxLogLabels = 6

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	decades := e1 - e0
	step := (decades + maxLogLabels - 1) / maxLogLabels
	var ticks []plot.Tick
	labelled := 0
	for e := e0; e <= e1; e++ {
		v := math.Pow10(e)
		t := plot.Tick{Value: v}
		if ((e%step)+step)%step == 0 {
			t.Label = tickLabel(1, e)
			if v >= lo && v <= hi {
				labelled++
			}
		}
		ticks = append(ticks, t)
		if decades <= 3 && e < e1 {
			for m := 2; m < 10; m++ {
				ticks = append(ticks, plot.Tick{Value: float64(m) * v})
			}
		}
	}
	if labelled >= 2 {
		return ticks
	}
	// Narrow: label 1, 2 and 5 times the powers of ten.
	labelled = 0
	for i, t := range ticks {
		m := int(math.Round(t.Value / math.Pow10(int(math.Floor(math.Log10(t.Value)+1e-9)))))
		if m == 1 || m == 2 || m == 5 {
			e := int(math.Floor(math.Log10(t.Value) + 1e-9))
			ticks[i].Label = tickLabel(m, e)
			if t.Value >= lo && t.Value <= hi {
				labelled++
			}
		}
	}
	if labelled >= 2 {
		return ticks
	}
	return linearTicks{}.Ticks(lo, hi)
}

// tickLabel formats m·10^e: as a decimal for −3 ≤ e ≤ 3 (0.002, 50),
// otherwise as 2e-05, 1e+06.
func tickLabel(m, e int) string {
	if e >= -3 && e <= 3 {
		return strconv.FormatFloat(float64(m)*math.Pow10(e), 'f', max(0, -e), 64)
	}
	return fmt.Sprintf("%de%+03d", m, e)
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
