package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEvaluate trains the -quick models with checkpoints, then evaluates
// the ENFORCE and MLP checkpoints with -evaluate: the same test numbers
// as the training run printed, the position of the run, and errors for a
// missing folder and for more than one size.
func TestEvaluate(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the -quick models")
	}
	dir := t.TempDir()
	var out, progress bytes.Buffer
	require.Equal(t, 0, cli([]string{"-quick", "-soft", "", "-out", t.TempDir(), "-resume", dir}, &out, &progress), progress.String())
	for _, name := range []string{"ENFORCE", "MLP"} {
		line := regexp.MustCompile(`\[100/10 ` + name + ` seed 1\] test: obj\. (\S+), gap to ref\. (\S+), max eq\. (\S+)`).FindStringSubmatch(progress.String())
		require.NotNil(t, line, "%s's test line in\n%s", name, progress.String())
		var eo, ep bytes.Buffer
		ck := filepath.Join(dir, "100x10-"+name+"-seed1")
		require.Equal(t, 0, cli([]string{"-quick", "-soft", "", "-resume", dir, "-evaluate", ck}, &eo, &ep), ep.String())
		assert.Contains(t, eo.String(), "after 20 epochs (+0 batches)")
		assert.Contains(t, eo.String(), "test obj. "+line[1]+", gap to ref. "+line[2]+", max eq. "+line[3])
		if name == "ENFORCE" {
			assert.Contains(t, eo.String(), "0 of 200 predictions above the tolerance")
		}
	}
	var eo, ep bytes.Buffer
	assert.NotEqual(t, 0, cli([]string{"-quick", "-soft", "", "-resume", dir, "-evaluate", filepath.Join(dir, "nosuch")}, &eo, &ep))
	assert.NotEqual(t, 0, cli([]string{"-quick", "-soft", "", "-sizes", "0,1", "-evaluate", dir}, &eo, &ep))
	assert.Contains(t, ep.String(), "give the checkpoint's one size with -sizes")
}
