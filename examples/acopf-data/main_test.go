package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runArgs runs the command and returns its standard output and error.
func runArgs(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestGenerateMerge labels 3 samples of case57 (the pure-Go reference, or
// IPOPT under the tag) in one process and in two shards, merges the
// shards into the single process's bytes, runs a finished shard again
// (nothing is solved), and reads the data set back with info.
func TestGenerateMerge(t *testing.T) {
	dir := t.TempDir()
	common := []string{"generate", "-case", "case57_ieee", "-n", "3", "-seed", "5"}
	out, errOut, err := runArgs(t, append(common, "-out", filepath.Join(dir, "single"))...)
	require.NoError(t, err, errOut)
	single := filepath.Join(dir, "single", "pglib_opf_case57_ieee-seed5-n3.shard-0-of-1.tsv")
	assert.Contains(t, out, single+": shard 0/1 complete, 3 samples")
	assert.Contains(t, errOut, "sample 2 (3/3): solved in ")
	assert.Regexp(t, `3 samples solved now \(0 failed\), [0-9.]+ s per solve`, errOut)

	for _, k := range []string{"0/2", "1/2"} {
		_, errOut, err := runArgs(t, append(common, "-shard", k, "-out", filepath.Join(dir, "shards"))...)
		require.NoError(t, err, errOut)
	}
	shards, err := filepath.Glob(filepath.Join(dir, "shards", "*.shard-*-of-2.tsv"))
	require.NoError(t, err)
	require.Len(t, shards, 2)

	// A finished shard: nothing to solve.
	before, err := os.ReadFile(shards[0])
	require.NoError(t, err)
	out, errOut, err = runArgs(t, append(common, "-shard", "0/2", "-out", filepath.Join(dir, "shards"))...)
	require.NoError(t, err)
	assert.Contains(t, out, "complete, 2 samples")
	assert.NotContains(t, errOut, "solved in")
	after, err := os.ReadFile(shards[0])
	require.NoError(t, err)
	assert.Equal(t, before, after)

	merged := filepath.Join(dir, "merged.tsv")
	out, errOut, err = runArgs(t, append([]string{"merge", "-out", merged}, shards...)...)
	require.NoError(t, err, errOut)
	assert.Contains(t, out, "3 samples of pglib_opf_case57_ieee from 2 shard files")
	want, err := os.ReadFile(single)
	require.NoError(t, err)
	got, err := os.ReadFile(merged)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the merged shards are the single process's file")

	out, _, err = runArgs(t, "info", merged)
	require.NoError(t, err)
	assert.Contains(t, out, "case pglib_opf_case57_ieee (sha256 aa3b48f7")
	assert.Contains(t, out, "formulation pglib")
	assert.Contains(t, out, "seed 5, 3 samples, loads glocal-uniform alpha=U[0.9,1.1] eta=U[1-0.1,1+0.1]")
	assert.Contains(t, out, "labelled 3, failed 0, mean objective")

	// A missing shard is refused and nothing is written.
	_, _, err = runArgs(t, "merge", "-out", filepath.Join(dir, "bad.tsv"), shards[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "shard 1/2 is missing")
	_, err = os.Stat(filepath.Join(dir, "bad.tsv"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	// info refuses a shard's file.
	_, _, err = runArgs(t, "info", shards[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a shard's file")
}

// TestFlags: bad flags are usage errors (exit status 2), -h is help
// (exit status 0).
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  error
		msg  string
	}{
		{nil, errUsage, "usage:"},
		{[]string{"frobnicate"}, errUsage, `unknown command "frobnicate"`},
		{[]string{"help"}, flag.ErrHelp, ""},
		{[]string{"generate", "-h"}, flag.ErrHelp, "-shard"},
		{[]string{"generate", "-n", "3"}, errUsage, "-case and a positive -n are required"},
		{[]string{"generate", "-case", "case57_ieee", "-n", "3", "-shard", "2/2"}, errUsage, "want 0 ≤ K < OF"},
		{[]string{"generate", "-case", "case57_ieee", "-n", "3", "-formulation", "dc"}, errUsage, `unknown -formulation "dc"`},
		{[]string{"generate", "-case", "case57_ieee", "-n", "3", "-common", "1.1"}, errUsage, "want lo,hi"},
		{[]string{"generate", "-case", "case57_ieee", "-n", "3", "-common", "1.1,0.9"}, errUsage, "common factor range"},
		{[]string{"generate", "-case", "case57_ieee", "-n", "3", "-bogus"}, errUsage, "flag provided but not defined"},
		{[]string{"merge", "-out", "x.tsv"}, errUsage, "at least one shard file"},
		{[]string{"info"}, errUsage, "one data set file"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, err := runArgs(t, tc.args...)
			require.ErrorIs(t, err, tc.err)
			assert.Contains(t, out+errOut, tc.msg)
		})
	}
}

// TestDeployFlags: every flag that the cluster files and the
// documentation pass to "acopf-data generate" or "acopf-data merge" is one
// the command defines, so that they cannot drift apart silently.
func TestDeployFlags(t *testing.T) {
	files := []string{"../../deploy/slurm/acopf-data.sbatch", "../../deploy/k8s/acopf-data-job.yaml",
		"../../deploy/k8s/acopf-data-merge.yaml", "../../deploy/Containerfile", "../../docs/acopf-data.md"}
	usage := map[string]string{}
	for _, sub := range []string{"generate", "merge"} {
		_, errOut, err := runArgs(t, sub, "-h")
		require.ErrorIs(t, err, flag.ErrHelp)
		usage[sub] = errOut
	}
	flagRE := regexp.MustCompile(`(?:^|\s)-([a-z]+)\b`)
	seen := map[string]int{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(string(text), "\n") {
			for sub, u := range usage {
				_, rest, ok := strings.Cut(line, "acopf-data "+sub+" ")
				if !ok {
					continue
				}
				seen[sub]++
				for _, m := range flagRE.FindAllStringSubmatch(rest, -1) {
					assert.Regexp(t, `\n  -`+m[1]+`[ \n]`, u, "%s: %q: acopf-data %s has no flag -%s", f, line, sub, m[1])
				}
			}
		}
	}
	assert.Positive(t, seen["generate"])
	assert.Positive(t, seen["merge"])
}
