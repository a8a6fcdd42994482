package harnesstest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/examples/internal/report"
)

// TestUnsplit checks that Unsplit joins the blocks of a table that
// report.Table split to fit report.MaxWidth back into one line per row,
// the same text as the table printed without a width limit.
func TestUnsplit(t *testing.T) {
	cols := []string{"method"}
	for j := range 9 {
		cols = append(cols, fmt.Sprintf("measure number %d", j))
	}
	tab := report.NewTable("title", cols...)
	tab.AddRow("MLP (paper)", "1", "", "3")
	tab.AddRow("ENFORCE (ours)", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9")
	tab.AddNote("a note")
	var b bytes.Buffer
	require.NoError(t, tab.WriteText(&b))
	require.Greater(t, strings.Count(b.String(), "\nmethod"), 1, "split")
	got := Unsplit("before\n"+b.String()+"after\n", "method")
	lines := strings.Split(got, "\n")
	require.Len(t, lines, 8, got)
	assert.Equal(t, []string{"before", "title"}, lines[:2])
	assert.Equal(t, strings.Join(cols, " "), strings.Join(strings.Fields(lines[2]), " "))
	assert.Equal(t, "MLP (paper) 1 3", strings.Join(strings.Fields(lines[3]), " "))
	assert.Regexp(t, `^ENFORCE \(ours\)(\s+0\.[1-9]){9}$`, lines[4])
	assert.Equal(t, []string{"a note", "after", ""}, lines[5:])
}
