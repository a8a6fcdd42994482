package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
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
	// A checkpoint whose inference settings allow one step to a tolerance
	// no step reaches: every prediction misses it, and -evaluate says so
	// after the test line instead of exiting 0.
	ck := filepath.Join(dir, "100x10-ENFORCE-seed1")
	strict := t.TempDir()
	writeStrictCheckpoint(t, filepath.Join(ck, "checkpoint.json"), filepath.Join(strict, "checkpoint.json"))
	var so, sp bytes.Buffer
	assert.NotEqual(t, 0, cli([]string{"-quick", "-soft", "", "-resume", dir, "-evaluate", strict}, &so, &sp))
	assert.Contains(t, so.String(), "200 of 200 predictions above the tolerance")
	assert.Contains(t, sp.String(), "200 of 200 predictions missed the projection's tolerance")

	var eo, ep bytes.Buffer
	assert.NotEqual(t, 0, cli([]string{"-quick", "-soft", "", "-resume", dir, "-evaluate", filepath.Join(dir, "nosuch")}, &eo, &ep))
	assert.NotEqual(t, 0, cli([]string{"-quick", "-soft", "", "-sizes", "0,1", "-evaluate", dir}, &eo, &ep))
	assert.Contains(t, ep.String(), "give the checkpoint's one size with -sizes")
}

// writeStrictCheckpoint copies the train checkpoint src to dst with the
// inference settings (of the run's configuration and of the model) set
// to one step and a tolerance of 1e-300, and both SHA-256 checksums
// recomputed as train writes them (over the compact JSON).
func writeStrictCheckpoint(t *testing.T, src, dst string) {
	t.Helper()
	raw, err := os.ReadFile(src)
	require.NoError(t, err)
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &env))
	var ck map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(env["checkpoint"], &ck))
	strict := func(doc json.RawMessage) json.RawMessage {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(doc, &m))
		var s map[string]any
		require.NoError(t, json.Unmarshal(m["infer"], &s))
		_, lower := s["maxDepth"]
		if lower {
			s["maxDepth"], s["minDepth"], s["tol"] = 1, 1, 1e-300
		} else {
			s["MaxDepth"], s["MinDepth"], s["Tol"] = 1, 1, 1e-300
		}
		m["infer"] = marshal(t, s)
		return marshal(t, m)
	}
	ck["config"] = strict(ck["config"])
	var model map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(ck["model"], &model))
	model["model"] = strict(model["model"])
	model["sha256"] = marshal(t, sum(model["model"]))
	ck["model"] = marshal(t, model)
	env["checkpoint"] = marshal(t, ck)
	env["sha256"] = marshal(t, sum(env["checkpoint"]))
	require.NoError(t, os.WriteFile(dst, marshal(t, env), 0o644))
}

func marshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// sum is the hex SHA-256 of compact JSON.
func sum(compact json.RawMessage) string {
	s := sha256.Sum256(compact)
	return hex.EncodeToString(s[:])
}
