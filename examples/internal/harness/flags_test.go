package harness

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testFlags is a program with two flags that -quick changes and one it
// does not.
func testFlags() (*Flags, *int, *string, *float64, *string) {
	f := New("prog", "A test program.")
	epochs, act, lr, out := new(int), new(string), new(float64), new(string)
	f.IntVar(epochs, "epochs", 1000, "epochs")
	f.StringVar(act, "act", "relu", "activation")
	f.Float64Var(lr, "lr", 1e-3, "learning rate")
	f.Out(out)
	f.Quick("epochs", "20").Quick("act", "tanh")
	return f, epochs, act, lr, out
}

func TestQuickDefaults(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		wantEpochs int
		wantAct    string
		wantLR     float64
	}{
		{"defaults", nil, 1000, "relu", 1e-3},
		{"quick", []string{"-quick"}, 20, "tanh", 1e-3},
		{"explicit flags keep their values", []string{"-epochs", "7", "-quick"}, 7, "tanh", 1e-3},
		{"in either order", []string{"-quick", "-act", "relu", "-lr", "0.1"}, 20, "relu", 0.1},
		{"an explicit value equal to the default", []string{"-quick", "-epochs", "1000"}, 1000, "tanh", 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, epochs, act, lr, _ := testFlags()
			require.NoError(t, f.Parse(tc.args))
			assert.Equal(t, tc.wantEpochs, *epochs)
			assert.Equal(t, tc.wantAct, *act)
			assert.Equal(t, tc.wantLR, *lr)
		})
	}
}

func TestOut(t *testing.T) {
	f, _, _, _, out := testFlags()
	require.NoError(t, f.Parse([]string{"-quick"}))
	assert.Equal(t, filepath.Join(filepath.Dir(DefaultOut("x")), "prog"), *out, "-quick keeps the default folder")
	assert.Equal(t, "enforce-figures", filepath.Base(filepath.Dir(DefaultOut("x"))))
	f, _, _, _, out = testFlags()
	require.NoError(t, f.Parse([]string{"-out", ""}))
	assert.Empty(t, *out)
}

func TestParseErrors(t *testing.T) {
	f, _, _, _, _ := testFlags()
	f.SetOutput(&bytes.Buffer{})
	assert.ErrorIs(t, f.Parse([]string{"-h"}), flag.ErrHelp)
	f, _, _, _, _ = testFlags()
	assert.ErrorContains(t, f.Parse([]string{"stray"}), `unexpected argument "stray"`)
	f, _, _, _, _ = testFlags()
	f.Quick("missing", "1")
	assert.ErrorContains(t, f.Parse([]string{"-quick"}), "-missing, which is not a flag")
	f, _, _, _, _ = testFlags()
	f.Quick("lr", "fast")
	assert.ErrorContains(t, f.Parse([]string{"-quick"}), "-quick value of -lr")
}

func TestFlagsMain(t *testing.T) {
	ran := false
	run := func() error { ran = true; return nil }
	for _, tc := range []struct {
		name   string
		args   []string
		run    func() error
		status int
		ran    bool
		stderr []string
	}{
		{"help", []string{"-h"}, run, 0, false, []string{"Usage: go run ./examples/prog [flags]", "A test program.", "-quick sets: -epochs 20, -act tanh", "  -out string"}},
		{"bad flag", []string{"-epochs", "many"}, run, 2, false, []string{"invalid value"}},
		{"stray argument", []string{"x"}, run, 2, false, []string{"prog: unexpected argument"}},
		{"run", []string{"-quick"}, run, 0, true, nil},
		{"run fails", nil, func() error { return errors.New("boom") }, 1, false, []string{"prog: boom"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran = false
			f, _, _, _, _ := testFlags()
			var stderr bytes.Buffer
			assert.Equal(t, tc.status, f.Main(tc.args, &stderr, tc.run))
			assert.Equal(t, tc.ran, ran)
			for _, s := range tc.stderr {
				assert.Contains(t, stderr.String(), s)
			}
		})
	}
}

// TestSmokeRun checks what labels a smoke run: Common.Quick follows
// -quick (Flags.QuickVar), Ours names our rows "(smoke)" then, and
// Command prints SmokeBanner first under -quick and nothing without it.
func TestSmokeRun(t *testing.T) {
	type opts struct{ Common }
	var got opts
	cli := Command(func() opts { return opts{Common{Epochs: 100}} },
		func(o *opts) *Flags {
			f := New("prog", "")
			o.Register(f, "seed")
			f.Quick("epochs", "2")
			return f
		},
		func(o opts, stdout, _ io.Writer) error {
			got = o
			_, err := io.WriteString(stdout, "table\n")
			return err
		})
	var out bytes.Buffer
	require.Equal(t, 0, cli([]string{"-quick"}, &out, io.Discard))
	assert.True(t, got.Quick)
	assert.Equal(t, 2, got.Epochs)
	assert.Equal(t, " (smoke)", got.Ours())
	assert.Equal(t, SmokeBanner+"\ntable\n", out.String())
	out.Reset()
	require.Equal(t, 0, cli(nil, &out, io.Discard))
	assert.False(t, got.Quick)
	assert.Equal(t, " (ours)", got.Ours())
	assert.Equal(t, "table\n", out.String())
}
