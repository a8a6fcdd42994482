package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// MaxWidth is the widest line that WriteText and Wrapf write, in bytes
// (so also in characters, and as byte-counting tools such as mawk's
// length measure it): a wider table is printed as several blocks of
// columns, each repeating the first column (the method), and a longer
// title, note or line of text is wrapped at spaces.
const MaxWidth = 120

// SmokeNote is the note a smoke run's table (Table.Smoke) prints first.
const SmokeNote = "smoke run (-quick): a reduced setting (fewer epochs, samples or sizes) that checks the program runs; " +
	"our rows are not comparable with the paper's numbers beside them."

// Table is a results table whose rows are usually pairs: the paper's
// numbers and ours for the same method. Cells are preformatted strings
// (use Stat.Format), so a table prints exactly what a reader compares.
type Table struct {
	// Title is printed above the table.
	Title string
	// Columns are the column headers.
	Columns []string
	// Rows are the cells, one slice per row, each at most len(Columns)
	// long (missing cells print empty).
	Rows [][]string
	// Notes are printed below the table, one per line.
	Notes []string
	// AlignRight right-aligns the cells (for columns of numbers), as
	// tabwriter.AlignRight does; WriteText only.
	AlignRight bool
	// Keep is the number of leading columns that every block of a table
	// split to fit MaxWidth repeats (what names a row); 0 means 1.
	Keep int
	// Smoke marks the table as a smoke run's (a program's -quick): the
	// title starts with "SMOKE RUN (-quick): " and SmokeNote is the first
	// note, so that its rows are not read as the paper's setting.
	Smoke bool
}

// NewTable returns an empty table with the given title and column headers.
func NewTable(title string, columns ...string) *Table {
	return &Table{Title: title, Columns: columns}
}

// AddRow appends a row of cells. It panics if there are more cells than
// columns.
func (t *Table) AddRow(cells ...string) {
	if len(cells) > len(t.Columns) {
		panic(fmt.Sprintf("report: row of %d cells in a table of %d columns", len(cells), len(t.Columns)))
	}
	t.Rows = append(t.Rows, cells)
}

// AddNote appends a line printed below the table.
func (t *Table) AddNote(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// cell returns row[j], or "" past its end.
func cell(row []string, j int) string {
	if j < len(row) {
		return row[j]
	}
	return ""
}

// WriteText writes the table as aligned plain text for a terminal, no
// line wider than MaxWidth: the columns that do not fit beside the first
// go into further blocks below, each with the first column again, and the
// title and notes are wrapped.
func (t *Table) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, line := range wrap(t.title(), MaxWidth) {
		b.WriteString(line + "\n")
	}
	for k, cols := range t.blocks() {
		if k > 0 {
			b.WriteString("\n")
		}
		var tb strings.Builder
		var flags uint
		end := "" // AlignRight aligns only cells that a tab ends
		if t.AlignRight {
			flags, end = tabwriter.AlignRight, "\t"
		}
		tw := tabwriter.NewWriter(&tb, 0, 0, 2, ' ', flags)
		pick := func(row []string) string {
			cells := make([]string, len(cols))
			for i, j := range cols {
				cells[i] = cell(row, j)
			}
			return strings.Join(cells, "\t") + end
		}
		fmt.Fprintln(tw, pick(t.Columns))
		for _, row := range t.Rows {
			fmt.Fprintln(tw, pick(row))
		}
		tw.Flush()
		for line := range strings.Lines(tb.String()) {
			b.WriteString(strings.TrimRight(line, " \n") + "\n")
		}
	}
	for _, n := range t.notes() {
		for _, line := range wrap(n, MaxWidth) {
			b.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// title returns the title, marked when the table is a smoke run's.
func (t *Table) title() string {
	if t.Smoke {
		return "SMOKE RUN (-quick): " + t.Title
	}
	return t.Title
}

// notes returns the notes, SmokeNote first when the table is a smoke
// run's.
func (t *Table) notes() []string {
	if t.Smoke {
		return append([]string{SmokeNote}, t.Notes...)
	}
	return t.Notes
}

// blocks splits the columns into groups that print within MaxWidth, each
// starting with the Keep leading columns; a column too wide to fit even
// beside those gets a block of its own.
func (t *Table) blocks() [][]int {
	// width[j] bounds the bytes that column j takes in a line: tabwriter
	// pads cells to the widest in characters, and a cell then takes its
	// bytes beyond its characters on top.
	width := make([]int, len(t.Columns))
	for j := range width {
		chars, extra := 0, 0
		for _, c := range append([]string{t.Columns[j]}, columnCells(t.Rows, j)...) {
			n := utf8.RuneCountInString(c)
			chars, extra = max(chars, n), max(extra, len(c)-n)
		}
		width[j] = chars + extra
	}
	if len(width) == 0 {
		return [][]int{nil}
	}
	keep := min(max(t.Keep, 1), len(width))
	// Each column takes its width and 2 spaces of padding, but the first
	// column's padding only counts when cells are right-aligned (padding
	// on the left).
	lead, leadWidth := make([]int, keep), -2
	if t.AlignRight {
		leadWidth = 0
	}
	for j := range keep {
		lead[j], leadWidth = j, leadWidth+2+width[j]
	}
	// Fill blocks up to limit, in order; then lower the limit as far as
	// it goes without needing another block, so that the blocks come out
	// about even instead of a last one with a single column.
	pack := func(limit int) [][]int {
		var out [][]int
		cur, used := slices.Clone(lead), leadWidth
		for j := keep; j < len(width); j++ {
			if len(cur) > keep && used+2+width[j] > limit {
				out = append(out, cur)
				cur, used = slices.Clone(lead), leadWidth
			}
			cur, used = append(cur, j), used+2+width[j]
		}
		return append(out, cur)
	}
	best := pack(MaxWidth)
	n := len(best)
	lo, hi := leadWidth, MaxWidth // pack(hi) has n blocks
	for lo < hi {
		mid := (lo + hi) / 2
		if len(pack(mid)) <= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return pack(hi)
}

// columnCells returns the cells of column j of rows.
func columnCells(rows [][]string, j int) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = cell(row, j)
	}
	return out
}

// Wrapf formats as fmt.Fprintf does and writes the text with every line
// longer than MaxWidth bytes wrapped at spaces (continuation lines
// indented by two spaces).
func Wrapf(w io.Writer, format string, args ...any) error {
	var b strings.Builder
	for line := range strings.Lines(fmt.Sprintf(format, args...)) {
		body, nl := strings.CutSuffix(line, "\n")
		if body == "" {
			b.WriteString(line)
			continue
		}
		b.WriteString(strings.Join(wrap(body, MaxWidth), "\n"))
		if nl {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap splits s into lines of at most width bytes at spaces (a word
// longer than width stays whole), continuation lines indented by two
// spaces; an empty s gives no line, and an s that fits is returned as it
// is.
func wrap(s string, width int) []string {
	if s == "" {
		return nil
	}
	if len(s) <= width {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "" || line == "  ":
			line += word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = "  " + word
		}
	}
	return append(lines, line)
}

// WriteMarkdown writes the table as a GitHub Markdown table, the title in
// bold above it and the notes as a list below it. Pipes in cells are
// escaped.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if title := t.title(); title != "" {
		b.WriteString("**" + title + "**\n\n")
	}
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	line := func(cells []string) {
		b.WriteString("|")
		for j := range t.Columns {
			b.WriteString(" " + esc(cell(cells, j)) + " |")
		}
		b.WriteString("\n")
	}
	line(t.Columns)
	b.WriteString("|" + strings.Repeat("---|", len(t.Columns)) + "\n")
	for _, row := range t.Rows {
		line(row)
	}
	if notes := t.notes(); len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
