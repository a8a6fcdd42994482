// Package harnesstest checks, in the example programs' tests, that a
// program follows the command-line convention of package harness, and
// holds the checks their smoke tests share.
package harnesstest

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems"
)

// CLI is a program's entry point: it runs the program with the arguments
// args (without the program name) and returns its exit status.
type CLI func(args []string, stdout, stderr io.Writer) int

// CheckConvention checks that -h prints the usage, naming every flag in
// flags, and exits with status 0 without running the program (nothing on
// stdout), and that an unknown flag exits with status 2, again without
// running it.
func CheckConvention(t *testing.T, cli CLI, flags ...string) {
	t.Helper()
	for _, help := range []string{"-h", "-help"} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 0, cli([]string{help}, &stdout, &stderr), help)
		assert.Empty(t, stdout.String(), "%s must not run the program", help)
		assert.Contains(t, stderr.String(), "Usage: go run ./examples/", help)
		for _, f := range flags {
			assert.Contains(t, stderr.String(), "  -"+f, "%s lists -%s", help, f)
		}
	}
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, cli([]string{"-no-such-flag"}, &stdout, &stderr))
	assert.Empty(t, stdout.String(), "a bad flag must not run the program")
	assert.Contains(t, stderr.String(), "no-such-flag")
}

// Files requires that every name exists in dir and is not empty.
func Files(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, f := range names {
		info, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Positive(t, info.Size(), f)
	}
}

// DataDir returns problems.DataDir's folder: "" (the copy embedded in
// package problems) unless ENFORCE_DATA names another.
func DataDir(t *testing.T) string {
	t.Helper()
	dir, err := problems.DataDir()
	require.NoError(t, err)
	return dir
}

// GoRun builds and runs the command in the test's working directory (the
// package's folder) with args, and returns its combined output; it fails
// the test if the command fails. It skips under -short.
func GoRun(t *testing.T, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	b, err := exec.Command("go", append([]string{"run", "."}, args...)...).CombinedOutput()
	require.NoError(t, err, string(b))
	return string(b)
}

// CheckNonconvexQuick runs the nonconvex benchmark command of the test's
// folder with -quick (a few seconds) and checks that it prints the table,
// that ENFORCE's predictions meet the inference tolerance max|c| ≤ 1e-3,
// and that it writes the table, the history and the plots.
func CheckNonconvexQuick(t *testing.T) {
	t.Helper()
	out := t.TempDir()
	s := GoRun(t, "-quick", "-out", out)
	assert.Contains(t, s, "reference: ")
	for _, suffix := range []string{"-table.md", "-history.csv", "-objective.png", "-depth.png"} {
		files, err := filepath.Glob(filepath.Join(out, "*"+suffix))
		require.NoError(t, err)
		assert.Len(t, files, 1, suffix)
	}
	assert.Contains(t, s, "SMOKE RUN (-quick): Nonconvex", "the table says it is a smoke run")
	found := false
	for _, line := range strings.Split(s, "\n") {
		// The first block of the table: method (two words), obj., paper
		// obj., gap to ref., max eq.
		if f := strings.Fields(line); len(f) > 5 && f[0] == "ENFORCE" && f[1] == "(smoke)" && !found {
			found = true
			maxEq, err := strconv.ParseFloat(f[5], 64)
			require.NoError(t, err)
			assert.LessOrEqual(t, maxEq, 1e-3, "ENFORCE meets the inference tolerance")
		}
	}
	assert.True(t, found, "ENFORCE (smoke) row in\n%s", s)
}

// Unsplit returns text with the tables that report.Table.WriteText split
// into blocks of columns (to fit report.MaxWidth) joined again, so that a
// test can match a whole row on one line: the rows of a block whose
// header starts with header, after an empty line, are appended to the
// rows of the first block with the same label (the text before the first
// two spaces), without repeating the label.
func Unsplit(text, header string) string {
	label := func(line string) string {
		if i := strings.Index(line, "  "); i >= 0 {
			return line[:i]
		}
		return line
	}
	lines := strings.Split(text, "\n")
	var out []string
	var first map[string]int // label → index in out of the current table's first-block row
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if label(line) == header {
			if first != nil && len(out) > 0 && out[len(out)-1] == "" {
				// A later block: join its rows to the first block's.
				out = out[:len(out)-1] // the empty line before it
				out[first[header]] += line[len(header):]
				j := i + 1
				for ; j < len(lines) && lines[j] != ""; j++ {
					k, ok := first[label(lines[j])]
					if !ok {
						break
					}
					out[k] += lines[j][len(label(lines[j])):]
				}
				i = j - 1
				continue
			}
			first = map[string]int{}
		}
		if first != nil && line != "" {
			if _, seen := first[label(line)]; !seen {
				first[label(line)] = len(out)
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// Flat returns text with every run of white space, line breaks included,
// replaced by one space, so that a test can find a phrase that
// report.Wrapf or a table's note may have wrapped.
func Flat(text string) string { return strings.Join(strings.Fields(text), " ") }
