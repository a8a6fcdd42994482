package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

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

// WriteText writes the table as aligned plain text for a terminal.
func (t *Table) WriteText(w io.Writer) error {
	var tb strings.Builder
	tw := tabwriter.NewWriter(&tb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Columns, "\t"))
	for _, row := range t.Rows {
		cells := make([]string, len(t.Columns))
		for j := range cells {
			cells[j] = cell(row, j)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	for line := range strings.Lines(tb.String()) {
		b.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
	for _, n := range t.Notes {
		b.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the table as a GitHub Markdown table, the title in
// bold above it and the notes as a list below it. Pipes in cells are
// escaped.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		b.WriteString("**" + t.Title + "**\n\n")
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
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString("- " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
