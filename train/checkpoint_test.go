package train

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// errStop is what the test hook returns to interrupt Fit.
var errStop = errors.New("interrupted by the test")

// fakeClock returns a clock that moves one minute forward on every call,
// so that which batches a checkpoint follows does not depend on the
// machine's speed.
func fakeClock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Minute)
		return t
	}
}

// stopAfter makes m's Fit return errStop after its k-th batch (and the
// checkpoint that batch may write).
func stopAfter(m *Model, k int) {
	n := 0
	m.afterBatch = func() error {
		if n++; n == k {
			return errStop
		}
		return nil
	}
}

// halfSquaredNorm is the objective ½‖y‖² per sample.
func halfSquaredNorm(_, y *gorgonia.Node) (*gorgonia.Node, error) {
	sq, err := gorgonia.Square(y)
	if err != nil {
		return nil, err
	}
	s, err := gorgonia.Sum(sq, 1)
	if err != nil {
		return nil, err
	}
	return gorgonia.Mul(s, gorgonia.NewConstant(0.5))
}

// resumeCase is a training run to interrupt and resume.
type resumeCase struct {
	name string
	cfg  Config
	fit  func(*Model) (History, error)
}

func resumeCases(t *testing.T) []resumeCase {
	p := problems.FittingEquality{}
	d := p.Sample(60, 11)
	fit := func(m *Model) (History, error) { return m.Fit(d.X, d.Y) }
	// 60 samples in batches of 25: three batches of 25, 25 and 10 per
	// epoch, so two graphs share the weights and the order matters.
	base := Config{
		Sizes: []int{1, 12, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(),
		LearnRate: 1e-2, BatchSize: 25, Epochs: 5, Seed: 42, LambdaC: 0.1, Standardize: true, Quiet: true,
	}
	f32 := base
	ts := TrainSettings()
	ts.Precision = enforce.Float32
	f32.Train, f32.Infer = ts, enforce.Settings{Precision: enforce.Float32}
	py := base
	py.PyTorchInit, py.Hidden, py.Mode, py.Standardize = true, layers.ReLU, Soft, false
	hinge := py
	hinge.Penalty, hinge.Standardize, hinge.OutputStdFloor = SquaredHinge, true, 0.3
	custom := base
	custom.Sizes, custom.Hidden, custom.Backbone = nil, 0, residualBuilder(1, 6, 2, 1)
	theta := base // learns the projection weights θ (ThetaName) too
	theta.Train.Weights, theta.Infer.Weights = enforce.TrainableDiagonal, enforce.TrainableDiagonal

	c := sumIsX(t)
	x := mat.NewDense(30, 1, nil)
	for i := range 30 {
		x.Set(i, 0, -1+2*float64(i)/29)
	}
	unsup := Config{
		Sizes: []int{1, 8, 2}, Hidden: layers.Tanh, Constraint: c, LambdaC: 1,
		LearnRate: 1e-2, BatchSize: 8, Epochs: 4, Seed: 3, Standardize: true, Quiet: true,
	}
	return []resumeCase{
		{"ENFORCE float64", base, fit},
		{"ENFORCE Precision Float32", f32, fit},
		{"Soft PyTorchInit", py, fit},
		{"Soft SquaredHinge, floored", hinge, fit},
		{"custom backbone", custom, fit},
		{"ENFORCE trainable weights", theta, fit},
		{"FitUnsupervised", unsup, func(m *Model) (History, error) { return m.FitUnsupervised(x, halfSquaredNorm) }},
		{"ENFORCE float32 backbone", withFloat32(base), fit},
		{"ENFORCE Warmup", withWarmup(base, 2), fit},
		{"FitUnsupervised Warmup", withWarmup(unsup, 2), func(m *Model) (History, error) { return m.FitUnsupervised(x, halfSquaredNorm) }},
		{"Soft PyTorchInit float32 backbone", withFloat32(py), fit},
	}
}

// withFloat32 returns c with a float32 backbone (Config.Precision).
func withFloat32(c Config) Config {
	c.Precision = enforce.Float32
	return c
}

// withWarmup returns c with w warm-up epochs (Config.Warmup).
func withWarmup(c Config, w int) Config {
	c.Warmup = w
	return c
}

// trainedState is what an uninterrupted and a resumed run must share.
type trainedState struct {
	hist, next History // the Fit call and the one after it
	weights    [][]uint64
	pred       []uint64
}

// finish reads the state of a model after its first Fit call returned
// hist: weights, predictions, and the History and weights of a second
// call, which depend on the Adam state and the shuffling stream.
func finish(t *testing.T, m *Model, c resumeCase, hist History) trainedState {
	t.Helper()
	s := trainedState{hist: hist, weights: weightBits(m)}
	x := mat.NewDense(7, m.cfg.nx, nil)
	for i := range 7 {
		x.Set(i, 0, -1.2+0.4*float64(i))
	}
	pred, _, err := m.Predict(x)
	require.NoError(t, err)
	s.pred = bits(pred)
	m.cfg.Epochs = 2 // a short second call
	s.next, err = c.fit(m)
	require.NoError(t, err)
	s.weights = append(s.weights, weightBits(m)...)
	return s
}

// TestResumeBitExact interrupts training runs after a batch in the middle
// of an epoch, after the last batch of an epoch, and after the end of the
// call, resumes them from the checkpoint directory with Resume, and
// requires the same History, weights and predictions as an uninterrupted
// run (which writes no checkpoints), bit for bit, and the same second Fit
// call after them (which needs the Adam state and the shuffling stream).
// With Every = 1 minute and a clock that advances a minute per reading,
// every batch writes a checkpoint; with Every = 5 minutes the last
// checkpoint lies some batches before the interruption, which the resumed
// run repeats, as after a real crash. The cases cover Fit and
// FitUnsupervised, ENFORCE with float64 and Settings.Precision Float32,
// Soft with PyTorchInit, Soft with the SquaredHinge penalty and an output
// σ floor, a custom backbone, learned projection weights θ, warm-up epochs
// (Config.Warmup; interrupted before and after the switch), and float32
// backbones (Config.Precision Float32: float32 weights and Adam moments)
// in ENFORCE and Soft modes.
func TestResumeBitExact(t *testing.T) {
	for _, c := range resumeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			ref, err := New(c.cfg)
			require.NoError(t, err)
			h, err := c.fit(ref)
			require.NoError(t, err)
			want := finish(t, ref, c, h)
			batches := 3 * c.cfg.Epochs // both data sets give 3 or 4 batches per epoch
			if c.cfg.BatchSize == 8 {
				batches = 4 * c.cfg.Epochs
			}
			resumed := 0
			for _, every := range []time.Duration{time.Minute, 5 * time.Minute} {
				for _, k := range []int{1, 4, 6, 8, batches} {
					dir := t.TempDir()
					cfg := c.cfg
					cfg.Checkpoint = Checkpoint{Dir: dir, Every: every}
					m, err := New(cfg)
					require.NoError(t, err)
					m.now = fakeClock()
					stopAfter(m, k)
					_, err = c.fit(m)
					require.ErrorIs(t, err, errStop) // after batch k = batches too: the hook runs after the final checkpoint

					cfg.Checkpoint = Checkpoint{} // Resume keeps writing to dir
					r, err := Resume(dir, cfg)
					if every > time.Minute && errors.Is(err, fs.ErrNotExist) {
						// Interrupted before the first checkpoint: start afresh,
						// as a program's -resume flag would.
						require.ErrorIs(t, err, fs.ErrNotExist)
						cfg.Checkpoint.Dir = dir
						r, err = New(cfg)
					}
					require.NoError(t, err)
					if r.resumed != nil {
						resumed++
					}
					assert.Equal(t, dir, r.cfg.Checkpoint.Dir)
					h, err := c.fit(r)
					require.NoError(t, err)
					got := finish(t, r, c, h)
					assert.Equal(t, want.hist, got.hist, "History, every %v, stop after batch %d", every, k)
					assert.Equal(t, want.weights, got.weights, "weights, every %v, stop after batch %d", every, k)
					assert.Equal(t, want.pred, got.pred, "predictions, every %v, stop after batch %d", every, k)
					assert.Equal(t, want.next, got.next, "the next Fit call, every %v, stop after batch %d", every, k)
				}
			}
			assert.GreaterOrEqual(t, resumed, 8, "runs resumed from a checkpoint, not started afresh")
		})
	}
}

// TestResumeTwice interrupts one run twice, resuming each time, and
// requires the uninterrupted result.
func TestResumeTwice(t *testing.T) {
	c := resumeCases(t)[0]
	ref, err := New(c.cfg)
	require.NoError(t, err)
	want, err := c.fit(ref)
	require.NoError(t, err)

	dir := t.TempDir()
	cfg := c.cfg
	cfg.Checkpoint = Checkpoint{Dir: dir, Every: time.Minute}
	m, err := New(cfg)
	require.NoError(t, err)
	m.now = fakeClock()
	stopAfter(m, 2)
	_, err = c.fit(m)
	require.ErrorIs(t, err, errStop)
	m, err = Resume(dir, cfg)
	require.NoError(t, err)
	m.now = fakeClock()
	stopAfter(m, 5)
	_, err = c.fit(m)
	require.ErrorIs(t, err, errStop)
	m, err = Resume(dir, cfg)
	require.NoError(t, err)
	got, err := c.fit(m)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, weightBits(ref), weightBits(m))
}

// TestCheckpointTrainingTime checks the training time a checkpoint
// carries over: with a clock that advances a minute per reading, a run
// interrupted and resumed reports the time of the first process plus that
// of the second.
func TestCheckpointTrainingTime(t *testing.T) {
	c := resumeCases(t)[0]
	dir := t.TempDir()
	cfg := c.cfg
	cfg.Checkpoint = Checkpoint{Dir: dir, Every: time.Hour}
	m, err := New(cfg)
	require.NoError(t, err)
	m.now = fakeClock()
	_, err = c.fit(m)
	require.NoError(t, err)
	first := m.TrainingTime()
	require.Positive(t, first)
	r, err := Resume(dir, cfg)
	require.NoError(t, err)
	// The final checkpoint reads the clock a little before the call ends.
	saved := r.TrainingTime()
	assert.Positive(t, saved)
	assert.LessOrEqual(t, saved, first)
	r.now = fakeClock()
	_, err = c.fit(r) // completes the finished call: no training, no time
	require.NoError(t, err)
	assert.Equal(t, saved, r.TrainingTime())
	r.cfg.Epochs = 1
	_, err = c.fit(r) // a new call of one epoch
	require.NoError(t, err)
	assert.Greater(t, r.TrainingTime(), saved)
	assert.Zero(t, (*Model)(nil).TrainingTime())
}

// checkpointed trains the first case for two batches with checkpoints
// after each and returns its Config and directory.
func checkpointed(t *testing.T) (Config, string, *mat.Dense, *mat.Dense) {
	t.Helper()
	p := problems.FittingEquality{}
	d := p.Sample(60, 11)
	cfg := resumeCases(t)[0].cfg
	cfg.Checkpoint = Checkpoint{Dir: t.TempDir(), Every: time.Minute}
	m, err := New(cfg)
	require.NoError(t, err)
	m.now = fakeClock()
	stopAfter(m, 2)
	_, err = m.Fit(d.X, d.Y)
	require.ErrorIs(t, err, errStop)
	return cfg, cfg.Checkpoint.Dir, d.X, d.Y
}

// TestResumeConfigMismatch requires a clear error, naming the field, when
// the Config given to Resume differs from the checkpoint's in anything
// training depends on, and no error when only logging or checkpointing
// settings differ.
func TestResumeConfigMismatch(t *testing.T) {
	cfg, dir, _, _ := checkpointed(t)
	f32 := TrainSettings()
	f32.Precision = enforce.Float32
	for _, tc := range []struct {
		name, field string
		change      func(*Config)
	}{
		{"seed", "seed", func(c *Config) { c.Seed++ }},
		{"sizes", "sizes", func(c *Config) { c.Sizes = []int{1, 13, 2} }},
		{"hidden", "hidden", func(c *Config) { c.Hidden = layers.ReLU }},
		{"mode", "mode", func(c *Config) { c.Mode = MLP }},
		{"precision", "train.Precision", func(c *Config) { c.Train = f32 }},
		{"infer", "infer.Tol", func(c *Config) { c.Infer.Tol = 1e-5 }},
		{"infer depth", "infer.MaxDepth", func(c *Config) { c.Infer.MaxDepth = 77 }},
		{"learn rate", "learnRate", func(c *Config) { c.LearnRate = 2e-2 }},
		{"batch size", "batchSize", func(c *Config) { c.BatchSize = 20 }},
		{"epochs", "epochs", func(c *Config) { c.Epochs = 6 }},
		{"lambdaC", "lambdaC", func(c *Config) { c.LambdaC = 0.2 }},
		{"lambdaD", "lambdaD", func(c *Config) { c.LambdaD = 0.3 }},
		{"standardize", "standardize", func(c *Config) { c.Standardize = false }},
		{"penalty", "penalty", func(c *Config) { c.Mode, c.Penalty = Soft, Norm }},
		{"output floor", "outputStdFloor", func(c *Config) { c.OutputStdFloor = -1 }},
		{"penalty constraint", "penaltyConstraint", func(c *Config) {
			c.Mode, c.PenaltyConstraint = Soft, c.Constraint
		}},
		{"always project", "alwaysProject", func(c *Config) { c.AlwaysProject = true }},
		{"warm-up", "warmup", func(c *Config) { c.Warmup = 2 }},
		{"init", "pyTorchInit", func(c *Config) { c.PyTorchInit = true }},
		{"backbone", "backbone", func(c *Config) { c.Sizes, c.Hidden, c.Backbone = nil, 0, residualBuilder(1, 12, 2, 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			tc.change(&c)
			_, err := Resume(dir, c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "another Config")
			assert.Contains(t, err.Error(), tc.field+": checkpoint ")
			assert.Less(t, len(err.Error()), 400, "names the setting, not the whole settings")
		})
	}
	c := cfg
	c.Quiet, c.LogEvery, c.Progress = false, 3, io.Discard
	c.Checkpoint = Checkpoint{Dir: t.TempDir(), Every: time.Hour}
	_, err := Resume(dir, c)
	assert.NoError(t, err, "logging and checkpoint settings may differ")
	_, err = Resume(dir, Config{Constraint: cfg.Constraint})
	assert.Error(t, err, "an invalid Config")
}

// TestResumeDataMismatch requires an error, and no training, when the
// resumed Fit gets other data or is the other kind of Fit call; the
// resumed state survives the error.
func TestResumeDataMismatch(t *testing.T) {
	cfg, dir, x, y := checkpointed(t)
	m, err := Resume(dir, cfg)
	require.NoError(t, err)
	w := weightBits(m)
	other := mat.DenseCopyOf(y)
	other.Set(3, 1, other.At(3, 1)+1e-9)
	_, err = m.Fit(x, other)
	assert.ErrorContains(t, err, "other training data")
	fewer := x.Slice(0, 50, 0, 1).(*mat.Dense)
	_, err = m.Fit(fewer, y.Slice(0, 50, 0, 2).(*mat.Dense))
	assert.ErrorContains(t, err, "60 training samples, got 50")
	_, err = m.FitUnsupervised(x, halfSquaredNorm)
	assert.ErrorContains(t, err, "written by Fit")
	assert.Equal(t, w, weightBits(m), "no training")
	_, err = m.Fit(x, y)
	assert.NoError(t, err, "the right data still resume")
}

// TestResumeBadFile requires a clear error for a missing, truncated,
// damaged or foreign checkpoint file, and that a temporary file left by a
// write interrupted before its rename does not matter.
func TestResumeBadFile(t *testing.T) {
	cfg, dir, _, _ := checkpointed(t)
	path := filepath.Join(dir, CheckpointFile)
	good, err := os.ReadFile(path)
	require.NoError(t, err)

	_, err = Resume(t.TempDir(), cfg)
	assert.ErrorIs(t, err, fs.ErrNotExist, "no checkpoint: start afresh")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "."+CheckpointFile+".tmp123"), good[:len(good)/2], 0o644))
	_, err = Resume(dir, cfg)
	assert.NoError(t, err, "a leftover temporary file is ignored")

	damage := func(s string) string {
		i := strings.Index(s, `"learnRate":`)
		require.Positive(t, i)
		return s[:i] + `"learnRate":0.02` + s[i+len(`"learnRate":0.01`):]
	}
	for _, tc := range []struct {
		name, content, want string
	}{
		{"empty", "", "damaged"},
		{"truncated", string(good[:len(good)/2]), "damaged"},
		{"truncated by a byte", string(good[:len(good)-2]), "damaged"},
		{"flipped value", damage(string(good)), "SHA-256"},
		{"trailing data", string(good) + "{}", "after the document"},
		{"not JSON", "hello", "damaged"},
		{"a saved model", `{"format":"enforce/train.Model","version":2,"sha256":"","checkpoint":{}}`, "not a checkpoint"},
		{"future version", strings.Replace(string(good), `"version":1`, `"version":2`, 1), "version 2"},
		{"unknown field", strings.Replace(string(good), `"version":1`, `"version":1,"extra":0`, 1), "damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			_, err := Resume(dir, cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), path)
		})
	}
}

// TestCheckpointWriteFails requires Fit to stop with an error naming the
// checkpoint when it cannot write one, here because Dir is a file.
func TestCheckpointWriteFails(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(20, 1)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	m, err := New(Config{
		Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 2, Quiet: true,
		Checkpoint: Checkpoint{Dir: file},
	})
	require.NoError(t, err)
	_, err = m.Fit(d.X, d.Y)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "writing the checkpoint "+filepath.Join(file, CheckpointFile))
}

// TestCheckpointConfigErrors checks the validation of Config.Checkpoint.
func TestCheckpointConfigErrors(t *testing.T) {
	p := problems.FittingEquality{}
	cfg := Config{Sizes: []int{1, 2}, Constraint: p.Equalities()}
	cfg.Checkpoint = Checkpoint{Dir: "x", Every: -time.Second}
	_, err := New(cfg)
	assert.ErrorContains(t, err, "negative")
	cfg.Checkpoint = Checkpoint{Every: time.Second}
	_, err = New(cfg)
	assert.ErrorContains(t, err, "Dir is empty")
}

// BenchmarkCheckpointWrite measures one checkpoint of a model the size of
// the paper's optimisation backbones (two hidden layers of 200, about 41k
// weights), Adam state included, against one Save of the same model.
func BenchmarkCheckpointWrite(b *testing.B) {
	p := problems.FittingEquality{}
	d := p.Sample(64, 1)
	m, err := New(Config{
		Sizes: []int{1, 200, 200, 2}, Hidden: layers.ReLU, Constraint: p.Equalities(), Epochs: 1, Quiet: true,
		Checkpoint: Checkpoint{Dir: b.TempDir()},
	})
	require.NoError(b, err)
	_, err = m.Fit(d.X, d.Y)
	require.NoError(b, err)
	ck := m.newCheckpointer(&fitState{Kind: kindFit, Rows: 64}, m.now())
	hist := History{{Epoch: 1}}
	b.Run("checkpoint", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := ck.write(1, 0, []byte{}, &accumulator{}, hist, nil, false, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SaveFile", func(b *testing.B) {
		b.ReportAllocs()
		path := filepath.Join(b.TempDir(), "model.json")
		for b.Loop() {
			if err := m.SaveFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestResumeInconsistentState rewrites a checkpoint's state (with a
// correct checksum, as a bug or a hand edit would) and requires Resume or
// the resumed Fit to reject what does not fit the model.
func TestResumeInconsistentState(t *testing.T) {
	cfg, dir, x, y := checkpointed(t)
	path := filepath.Join(dir, CheckpointFile)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	rewrite := func(edit func(doc *checkpointDoc)) { rewriteCheckpoint(t, path, good, edit) }
	for _, tc := range []struct {
		name, want string
		edit       func(doc *checkpointDoc)
	}{
		{"negative steps", "steps", func(d *checkpointDoc) { d.Adam.Iter = -1 }},
		{"steps without moments", "inconsistent", func(d *checkpointDoc) { d.Adam.M, d.Adam.V = nil, nil }},
		{"moments of another size", "moments of", func(d *checkpointDoc) { d.Adam.M[0] = d.Adam.M[0][1:] }},
		{"NaN moment", "NaN", func(d *checkpointDoc) { d.Adam.V[1][0] = math.NaN() }},
		{"unknown kind", "unknown kind", func(d *checkpointDoc) { d.Fit.Kind = "Train" }},
		{"epoch beyond the end", "impossible", func(d *checkpointDoc) { d.Fit.Epochs = 9 }},
		{"history too short", "History", func(d *checkpointDoc) { d.Fit.Epochs = 1 }},
		{"negative time", "negative", func(d *checkpointDoc) { d.Elapsed = -1 }},
		{"bad stream", "shuffling stream", func(d *checkpointDoc) { d.Fit.RNG = []byte("x") }},
		{"stopped inside an epoch", "stopped early", func(d *checkpointDoc) { d.Fit.Stopped, d.Fit.Batch = true, 1 }},
		{"best weights of another model", "early-stopping state is inconsistent", func(d *checkpointDoc) {
			d.Fit.Early = &earlyState{BestVal: 1, Best: [][]float64{{1}}}
		}},
		{"best weights of other sizes", "not all finite or not", func(d *checkpointDoc) {
			d.Fit.Early = &earlyState{BestVal: 1, Best: make([][]float64, len(d.Adam.M))}
		}},
		{"weights of another model", "learnables", func(d *checkpointDoc) {
			m, err := New(Config{Sizes: []int{1, 3, 2}, Hidden: layers.Tanh, Constraint: cfg.Constraint, Standardize: true})
			require.NoError(t, err)
			require.NoError(t, m.SetWeights(m.Weights()))
			var buf strings.Builder
			require.NoError(t, m.Save(&buf))
			d.Model = json.RawMessage(buf.String())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rewrite(tc.edit)
			_, err := Resume(dir, cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	rewrite(func(d *checkpointDoc) { d.Fit.Batch = 3 })
	m, err := Resume(dir, cfg)
	require.NoError(t, err, "the number of batches is known to Fit only")
	_, err = m.Fit(x, y)
	assert.ErrorContains(t, err, "batch 3 of an epoch of 3")
}

// TestCheckpointThroughSymlink: a checkpoint file that is a symbolic link
// to a file elsewhere is written through the link (the target holds the
// newer state, the link stays a link), not replaced by a regular file that
// leaves the target stale.
func TestCheckpointThroughSymlink(t *testing.T) {
	cfg, dir, x, y := checkpointed(t)
	store := filepath.Join(t.TempDir(), "ck.json")
	path := filepath.Join(dir, CheckpointFile)
	require.NoError(t, os.Rename(path, store))
	require.NoError(t, os.Symlink(store, path))
	before, err := readCheckpoint("Resume", store)
	require.NoError(t, err)

	m, err := Resume(dir, cfg)
	require.NoError(t, err)
	m.now = fakeClock()
	stopAfter(m, 1)
	_, err = m.Fit(x, y)
	require.ErrorIs(t, err, errStop)

	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is still a link")
	after, err := readCheckpoint("Resume", store)
	require.NoError(t, err)
	assert.NotEqual(t, [2]int{before.Fit.Epochs, before.Fit.Batch}, [2]int{after.Fit.Epochs, after.Fit.Batch}, "the target holds the later state")
}

// TestResumeCheckpointWithoutPath resumes a checkpoint whose AdaNP
// settings lack Settings.Path, as every checkpoint written before the
// field existed: it reads as PathAuto (the dense path those runs took) and
// finishes with the bits of an uninterrupted run; a Config that asks for
// another Path is still refused.
func TestResumeCheckpointWithoutPath(t *testing.T) {
	cfg, dir, x, y := checkpointed(t)
	path := filepath.Join(dir, CheckpointFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rewriteCheckpoint(t, path, data, func(doc *checkpointDoc) {
		var rc map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(doc.Config, &rc))
		for _, k := range settingsKeys {
			var s map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(rc[k], &s))
			require.Contains(t, s, "Path")
			delete(s, "Path")
			var err error
			rc[k], err = json.Marshal(s)
			require.NoError(t, err)
		}
		var err error
		doc.Config, err = json.Marshal(rc)
		require.NoError(t, err)
	})

	dense := cfg
	dense.Infer.Path = enforce.PathDense
	_, err = Resume(dir, dense)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "infer.Path: checkpoint ")

	m, err := Resume(dir, cfg)
	require.NoError(t, err)
	m.now = fakeClock()
	hist, err := m.Fit(x, y)
	require.NoError(t, err)

	ref := cfg
	ref.Checkpoint = Checkpoint{}
	u, err := New(ref)
	require.NoError(t, err)
	want, err := u.Fit(x, y)
	require.NoError(t, err)
	assert.Equal(t, want, hist)
	assert.Equal(t, u.Weights(), m.Weights())
}

// rewriteCheckpoint writes to path the checkpoint file data with its
// document changed by edit and its checksum recomputed.
func rewriteCheckpoint(t *testing.T, path string, data []byte, edit func(doc *checkpointDoc)) {
	t.Helper()
	var env checkpointEnvelope
	require.NoError(t, json.Unmarshal(data, &env))
	var doc checkpointDoc
	require.NoError(t, json.Unmarshal(env.Checkpoint, &doc))
	edit(&doc)
	raw, err := json.Marshal(&doc)
	require.NoError(t, err)
	env.Checkpoint = raw
	env.SHA256, err = checksum(raw)
	require.NoError(t, err)
	out, err := json.Marshal(&env)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// TestLoadCheckpoint reads the model of a run stopped in the middle of an
// epoch: the stopped model's weights and predictions, bit for bit, without
// the run's Config; its errors for a missing or damaged file and another
// constraint.
func TestLoadCheckpoint(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(60, 11)
	dir := t.TempDir()
	cfg := Config{Sizes: []int{1, 12, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), LearnRate: 1e-2,
		BatchSize: 25, Epochs: 5, Seed: 42, LambdaC: 0.1, Standardize: true, Quiet: true,
		Checkpoint: Checkpoint{Dir: dir, Every: time.Minute}}
	m, err := New(cfg)
	require.NoError(t, err)
	m.now = fakeClock()
	stopAfter(m, 4) // epoch 2, batch 1 of 3
	_, err = m.Fit(d.X, d.Y)
	require.ErrorIs(t, err, errStop)

	l, st, err := LoadCheckpoint(dir, p.Equalities())
	require.NoError(t, err)
	assert.Equal(t, weightBits(m), weightBits(l))
	assert.Equal(t, 1, st.Epochs)
	assert.Equal(t, 1, st.Batch)
	require.Len(t, st.History, 1)
	assert.Equal(t, 1, st.History[0].Epoch)
	assert.Positive(t, st.Training)
	assert.LessOrEqual(t, st.Training, m.TrainingTime(), "the time up to the checkpoint")
	assert.Equal(t, st.Training, l.TrainingTime())
	want, _, err := m.Predict(d.X)
	require.NoError(t, err)
	got, _, err := l.Predict(d.X)
	require.NoError(t, err)
	assert.True(t, mat.Equal(want, got))

	// A custom backbone: Load's error.
	cdir := t.TempDir()
	ccfg := cfg
	ccfg.Sizes, ccfg.Hidden, ccfg.Backbone, ccfg.Checkpoint.Dir = nil, 0, residualBuilder(1, 6, 2, 1), cdir
	cm, err := New(ccfg)
	require.NoError(t, err)
	cm.now = fakeClock()
	stopAfter(cm, 1)
	_, err = cm.Fit(d.X, d.Y)
	require.ErrorIs(t, err, errStop)
	_, _, err = LoadCheckpoint(cdir, p.Equalities())
	assert.ErrorContains(t, err, "custom backbone")

	_, _, err = LoadCheckpoint(t.TempDir(), p.Equalities())
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "train: LoadCheckpoint")
	_, _, err = LoadCheckpoint(dir, fittingLike(t, 1.001))
	assert.ErrorIs(t, err, ErrConstraintMismatch)
	path := filepath.Join(dir, CheckpointFile)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	raw[len(raw)/2] ^= 1
	require.NoError(t, os.WriteFile(path, raw, 0o644))
	_, _, err = LoadCheckpoint(dir, p.Equalities())
	assert.ErrorContains(t, err, "damaged")
}
