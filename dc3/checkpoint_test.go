package dc3

import (
	"encoding/json"
	"errors"
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
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/problems"
)

// errStop is the interruption the tests' afterBatch returns.
var errStop = errors.New("interrupted")

// fakeClock returns a clock that advances one second per reading, so that
// with Every = 1 s every batch writes a checkpoint.
func fakeClock() func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// stopAfter makes m's Fit stop with errStop after k batches.
func stopAfter(m *Model, k int) {
	n := 0
	m.afterBatch = func() error {
		if n++; n == k {
			return errStop
		}
		return nil
	}
}

// snapshot is the bits of everything a model's predictions and further
// training depend on: learnables, running estimates, Adam state and the
// random stream.
type snapshot struct {
	params, runMean, runVar, adamM, adamV [][]uint64
	iter                                  int
	rng                                   []byte
}

func bitsOf(s [][]float64) [][]uint64 {
	out := make([][]uint64, len(s))
	for i, r := range s {
		out[i] = make([]uint64, len(r))
		for j, v := range r {
			out[i][j] = math.Float64bits(v)
		}
	}
	return out
}

func snap(t *testing.T, m *Model) snapshot {
	var ps [][]float64
	for _, p := range m.net.learnables() {
		ps = append(ps, values(p))
	}
	mm, vv := m.solver.Moments()
	rng, err := m.pcg.MarshalBinary()
	require.NoError(t, err)
	return snapshot{bitsOf(ps), bitsOf(m.net.runMean), bitsOf(m.net.runVar), bitsOf(mm), bitsOf(vv), m.solver.Iter(), rng}
}

// resumeFixture is a small linear instance whose Fit runs 4 epochs of 3
// batches, with Dropout on.
type resumeFixture struct {
	p   *problems.NonconvexLinear
	x   *mat.Dense
	cfg Config
}

func newResumeFixture(t *testing.T) resumeFixture {
	p, err := problems.NewNonconvexLinear(20, 8, 1)
	require.NoError(t, err)
	return resumeFixture{p: p, x: p.SampleX(330, 2), // 3 batches of 100, 30 samples dropped
		cfg: Config{Hidden: []int{16, 16}, LearnRate: 1e-3, BatchSize: 100, Epochs: 4, Seed: 3, Quiet: true}}
}

// interrupted trains f's model with checkpoints into a new temporary
// folder, which it returns, and interrupts Fit after the given number of
// batches.
func (f resumeFixture) interrupted(t *testing.T, batches int) string {
	t.Helper()
	dir := t.TempDir()
	m, err := New(f.p, f.checkpointing(dir))
	require.NoError(t, err)
	m.now = fakeClock()
	stopAfter(m, batches)
	_, err = m.Fit(f.x)
	require.ErrorIs(t, err, errStop)
	m.Close()
	return dir
}

// reference trains f's model uninterrupted, without checkpoints.
func (f resumeFixture) reference(t *testing.T) ([]Epoch, snapshot, *mat.Dense) {
	m, err := New(f.p, f.cfg)
	require.NoError(t, err)
	defer m.Close()
	hist, err := m.Fit(f.x)
	require.NoError(t, err)
	y, err := m.Predict(f.x)
	require.NoError(t, err)
	return hist, snap(t, m), y
}

// checkpointing returns f's Config checkpointing into dir after every
// batch (with fakeClock).
func (f resumeFixture) checkpointing(dir string) Config {
	cfg := f.cfg
	cfg.Checkpoint = Checkpoint{Dir: dir, Every: time.Second}
	return cfg
}

// TestResumeBitExact interrupts Fit after k batches (inside the first
// epoch, at the end of an epoch, inside a later one, after the last) and
// requires the resumed Fit to return the uninterrupted run's history and
// to leave the same weights, BatchNorm statistics, Adam state and random
// stream, bit for bit, and the same predictions.
func TestResumeBitExact(t *testing.T) {
	f := newResumeFixture(t)
	wantHist, want, wantY := f.reference(t)
	require.Len(t, wantHist, 4)
	for _, k := range []int{1, 2, 3, 5, 9, 11, 12} {
		t.Run("", func(t *testing.T) {
			dir := t.TempDir()
			m, err := New(f.p, f.checkpointing(dir))
			require.NoError(t, err)
			m.now = fakeClock()
			stopAfter(m, k)
			_, err = m.Fit(f.x)
			if k < 12 {
				require.ErrorIs(t, err, errStop)
			}
			require.NoError(t, m.Close())

			r, err := Resume(dir, f.p, f.cfg)
			require.NoError(t, err)
			defer r.Close()
			r.now = fakeClock()
			steps := 0
			r.afterBatch = func() error { steps++; return nil }
			hist, err := r.Fit(f.x)
			require.NoError(t, err)
			assert.Equal(t, 12-k, steps, "the resumed Fit runs the remaining batches")
			assert.Equal(t, wantHist, hist, "k = %d", k)
			assert.Equal(t, want, snap(t, r), "k = %d", k)
			y, err := r.Predict(f.x)
			require.NoError(t, err)
			assert.True(t, mat.Equal(wantY, y), "k = %d: predictions", k)
		})
	}
}

// TestResumeTwice interrupts a run, resumes it, interrupts the resumed
// run and resumes again: the result is still the uninterrupted run's,
// and a Fit after that trains a new call as a model never interrupted.
func TestResumeTwice(t *testing.T) {
	f := newResumeFixture(t)
	wantHist, want, _ := f.reference(t)
	dir := t.TempDir()
	cfg := f.checkpointing(dir)
	m, err := New(f.p, cfg)
	require.NoError(t, err)
	m.now = fakeClock()
	stopAfter(m, 4)
	_, err = m.Fit(f.x)
	require.ErrorIs(t, err, errStop)
	m.Close()
	r, err := Resume(dir, f.p, Config{}) // Config{} differs: an error
	require.Error(t, err)
	assert.Nil(t, r)
	r, err = Resume(dir, f.p, cfg)
	require.NoError(t, err)
	r.now = fakeClock()
	stopAfter(r, 4)
	_, err = r.Fit(f.x)
	require.ErrorIs(t, err, errStop)
	r.Close()
	r, err = Resume(dir, f.p, f.cfg)
	require.NoError(t, err)
	defer r.Close()
	r.now = fakeClock()
	hist, err := r.Fit(f.x)
	require.NoError(t, err)
	assert.Equal(t, wantHist, hist)
	assert.Equal(t, want, snap(t, r))

	// A second call continues from there in both.
	ref, err := New(f.p, f.cfg)
	require.NoError(t, err)
	defer ref.Close()
	_, err = ref.Fit(f.x)
	require.NoError(t, err)
	h1, err := ref.Fit(f.x)
	require.NoError(t, err)
	h2, err := r.Fit(f.x)
	require.NoError(t, err)
	assert.Equal(t, h1, h2)
	assert.Equal(t, snap(t, ref), snap(t, r))
}

// TestResumeNewton interrupts and resumes a model with Newton completion
// inside an epoch.
func TestResumeNewton(t *testing.T) {
	p, err := problems.NewNonconvexQuadratic(12, 4, 1)
	require.NoError(t, err)
	x := p.SampleX(200, 2)
	cfg := Config{Hidden: []int{16}, LearnRate: 1e-3, BatchSize: 50, Epochs: 2, Seed: 5, Quiet: true}
	ref, err := NewNewton(p.SineQuadratic, p.Equalities(), cfg)
	require.NoError(t, err)
	defer ref.Close()
	wantHist, err := ref.Fit(x)
	require.NoError(t, err)

	dir := t.TempDir()
	ck := cfg
	ck.Checkpoint = Checkpoint{Dir: dir, Every: time.Second}
	m, err := NewNewton(p.SineQuadratic, p.Equalities(), ck)
	require.NoError(t, err)
	m.now = fakeClock()
	stopAfter(m, 6)
	_, err = m.Fit(x)
	require.ErrorIs(t, err, errStop)
	m.Close()
	_, err = Resume(dir, &problems.NonconvexLinear{}, cfg)
	require.Error(t, err, "a linear model does not resume a Newton run")
	r, err := ResumeNewton(dir, p.SineQuadratic, p.Equalities(), cfg)
	require.NoError(t, err)
	defer r.Close()
	hist, err := r.Fit(x)
	require.NoError(t, err)
	assert.Equal(t, wantHist, hist)
	assert.Equal(t, snap(t, ref), snap(t, r))
}

// TestCheckpointTrainingTime checks that TrainTime of a resumed model
// includes the time recorded in its checkpoint.
func TestCheckpointTrainingTime(t *testing.T) {
	f := newResumeFixture(t)
	dir := f.interrupted(t, 5)
	r, err := Resume(dir, f.p, f.cfg)
	require.NoError(t, err)
	defer r.Close()
	// The fake clock: the call's start is its first reading, and each
	// batch reads it three times (due, the checkpoint's time, the time of
	// the last write), so the fifth checkpoint's time is the 15th reading,
	// 14 s after the start.
	assert.Equal(t, 14*time.Second, r.TrainTime())
}

// TestResumeMismatch requires Resume to refuse a checkpoint of another
// Config or problem, naming the differences, and the resumed Fit to
// refuse other training inputs.
func TestResumeMismatch(t *testing.T) {
	f := newResumeFixture(t)
	dir := f.interrupted(t, 2)

	for _, tc := range []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"learning rate", func(c *Config) { c.LearnRate = 2e-3 }, []string{"learnRate: checkpoint 0.001, Config 0.002"}},
		{"seed and epochs", func(c *Config) { c.Seed, c.Epochs = 4, 5 }, []string{"seed:", "epochs:"}},
		{"widths", func(c *Config) { c.Hidden = []int{16, 17} }, []string{"hidden: checkpoint [16,16], Config [16,17]"}},
		{"dropout", func(c *Config) { c.NoDropout = true }, []string{"dropout: checkpoint 0.2, Config 0"}},
		{"batch size", func(c *Config) { c.BatchSize = 110 }, []string{"batchSize:"}},
		{"partial variables", func(c *Config) { c.Partial = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11} }, []string{"partial: checkpoint absent, Config [0,1,"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := f.cfg
			tc.edit(&cfg)
			_, err := Resume(dir, f.p, cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "another Config")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	t.Run("problem", func(t *testing.T) {
		other, err := problems.NewNonconvexLinear(20, 8, 2)
		require.NoError(t, err)
		_, err = Resume(dir, other, f.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "another problem")
	})
	t.Run("inputs", func(t *testing.T) {
		r, err := Resume(dir, f.p, f.cfg)
		require.NoError(t, err)
		defer r.Close()
		x := mat.DenseCopyOf(f.x)
		x.Set(7, 1, x.At(7, 1)+1e-12)
		_, err = r.Fit(x)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "other training inputs")
		_, err = r.Fit(f.p.SampleX(300, 2))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "330 training samples, got 300")
		_, err = r.Fit(f.x)
		assert.NoError(t, err, "the right inputs still resume")
	})
}

// TestResumeBadFile requires Resume to report a missing checkpoint as
// fs.ErrNotExist and to refuse a damaged, truncated, foreign or future
// file with an error naming it.
func TestResumeBadFile(t *testing.T) {
	f := newResumeFixture(t)
	dir := f.interrupted(t, 2)

	_, err := Resume(t.TempDir(), f.p, f.cfg)
	require.ErrorIs(t, err, fs.ErrNotExist)

	path := filepath.Join(dir, CheckpointFile)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	// A changed digit of the recorded epoch count inside the document.
	i := strings.Index(string(good), `"epochs":0`)
	require.Positive(t, i)
	flipped := string(good[:i]) + `"epochs":1` + string(good[i+len(`"epochs":0`):])
	for _, tc := range []struct{ name, content, want string }{
		{"flipped digit", flipped, "damaged"},
		{"truncated", string(good[:len(good)/2]), "damaged"},
		{"empty", "", "damaged"},
		{"trailing data", string(good) + "{}", "damaged"},
		{"other format", strings.Replace(string(good), "enforce/dc3.Checkpoint", "enforce/train.Checkpoint", 1), "not a DC3 checkpoint"},
		{"future version", strings.Replace(string(good), `"version":1`, `"version":2`, 1), "version 2"},
		{"unknown field", strings.Replace(string(good), `"version":1`, `"version":1,"extra":0`, 1), "damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			_, err := Resume(dir, f.p, f.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), path)
		})
	}
}

// TestResumeInconsistentState requires restore to refuse a document whose
// checksum is right but whose state does not fit the model.
func TestResumeInconsistentState(t *testing.T) {
	f := newResumeFixture(t)
	dir := f.interrupted(t, 2)
	doc, err := readCheckpoint(filepath.Join(dir, CheckpointFile))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		edit func(d *checkpointDoc)
	}{
		{"learnables", func(d *checkpointDoc) { d.Learnables = d.Learnables[1:] }},
		{"learnable size", func(d *checkpointDoc) { d.Learnables[0] = d.Learnables[0][1:] }},
		{"running estimates", func(d *checkpointDoc) { d.RunVar = d.RunVar[:1] }},
		{"moments", func(d *checkpointDoc) { d.Adam.M[2] = d.Adam.M[2][1:] }},
		{"solver steps", func(d *checkpointDoc) { d.Adam.Iter = 0 }},
		{"position", func(d *checkpointDoc) { d.Fit.Batch = 3 }},
		{"history", func(d *checkpointDoc) { d.Fit.History = []Epoch{{Epoch: 1}} }},
		{"order", func(d *checkpointDoc) { d.Fit.Order[0] = d.Fit.Order[1] }},
		{"rng", func(d *checkpointDoc) { d.Fit.RNG = d.Fit.RNG[:3] }},
		{"time", func(d *checkpointDoc) { d.Elapsed = -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := readCheckpoint(filepath.Join(dir, CheckpointFile))
			require.NoError(t, err)
			tc.edit(d)
			r, err := New(f.p, f.cfg)
			require.NoError(t, err)
			defer r.Close()
			assert.Error(t, r.restore(d))
		})
	}
	r, err := New(f.p, f.cfg)
	require.NoError(t, err)
	defer r.Close()
	assert.NoError(t, r.restore(doc), "the unedited document fits")
}

// TestResumeRefusesNaNState requires Resume to refuse a checkpoint whose
// checksum is right but which holds a NaN or infinite weight or running
// estimate or a NaN moment, with an error naming the file and the value,
// as train.Resume does; an infinite second moment still resumes.
func TestResumeRefusesNaNState(t *testing.T) {
	f := newResumeFixture(t)
	dir := f.interrupted(t, 2)
	path := filepath.Join(dir, CheckpointFile)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		edit func(d *checkpointDoc)
		want string // "" when Resume must succeed
	}{
		{"NaN weight", func(d *checkpointDoc) { d.Learnables[0][3] = nan }, "holds NaN at index 3"},
		{"infinite weight", func(d *checkpointDoc) { d.Learnables[1][0] = -inf }, "holds -Inf at index 0"},
		{"NaN first moment", func(d *checkpointDoc) { d.Adam.M[0][1] = nan }, "first moments"},
		{"NaN second moment", func(d *checkpointDoc) { d.Adam.V[2][0] = nan }, "second moments"},
		{"NaN running mean", func(d *checkpointDoc) { d.RunMean[0][0] = nan }, "running mean"},
		{"negative running variance", func(d *checkpointDoc) { d.RunVar[0][0] = -1 }, "running variance"},
		{"infinite second moment", func(d *checkpointDoc) { d.Adam.V[0][0] = inf }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(path, good, 0o644))
			d, err := readCheckpoint(path)
			require.NoError(t, err)
			tc.edit(d)
			raw, err := json.Marshal(d)
			require.NoError(t, err)
			sum, err := checksum(raw)
			require.NoError(t, err)
			out, err := json.Marshal(&envelope{Format: checkpointFormat, Version: checkpointVersion, SHA256: sum, Checkpoint: raw})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, out, 0o644))
			_, err = readCheckpoint(path)
			require.NoError(t, err, "the checksum is right")
			r, err := Resume(dir, f.p, f.cfg)
			if tc.want == "" {
				require.NoError(t, err)
				r.Close()
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), path)
		})
	}
}

// TestCheckpointConfigErrors checks the validation of Config.Checkpoint
// and that Fit stops with an error naming the checkpoint when it cannot
// write one, here because Dir is a file.
func TestCheckpointConfigErrors(t *testing.T) {
	f := newResumeFixture(t)
	cfg := f.cfg
	cfg.Checkpoint = Checkpoint{Dir: t.TempDir(), Every: -time.Second}
	_, err := New(f.p, cfg)
	assert.ErrorContains(t, err, "negative")
	cfg.Checkpoint = Checkpoint{Every: time.Second}
	_, err = New(f.p, cfg)
	assert.ErrorContains(t, err, "Dir is empty")

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	cfg.Checkpoint = Checkpoint{Dir: file}
	m, err := New(f.p, cfg)
	require.NoError(t, err)
	defer m.Close()
	_, err = m.Fit(f.x)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "writing the checkpoint")
}

// TestAdamMatchesGorgoniaSolver trains two copies of a model for 20
// steps, one with the package's Adam, one with gorgonia's AdamSolver
// (which the package used before it checkpointed), and requires the same
// weights bit for bit.
func TestAdamMatchesGorgoniaSolver(t *testing.T) {
	f := newResumeFixture(t)
	a, err := New(f.p, f.cfg)
	require.NoError(t, err)
	defer a.Close()
	b, err := New(f.p, f.cfg)
	require.NoError(t, err)
	defer b.Close()
	solver := gorgonia.NewAdamSolver(gorgonia.WithLearnRate(f.cfg.LearnRate))
	xb := tensor.New(tensor.WithShape(100, 8), tensor.WithBacking(mat.DenseCopyOf(f.x.Slice(0, 100, 0, 8)).RawMatrix().Data))
	for range 20 {
		_, err := a.step(xb)
		require.NoError(t, err)
		func() {
			defer b.vm.Reset()
			require.NoError(t, gorgonia.Let(b.x, xb))
			b.net.drawMasks(b.rnd)
			require.NoError(t, b.vm.RunAll())
			require.NoError(t, solver.Step(gorgonia.NodesToValueGrads(b.net.learnables())))
			b.net.updateRunning()
		}()
	}
	sa, sb := snap(t, a), snap(t, b)
	assert.Equal(t, sa.params, sb.params)
	assert.Equal(t, sa.runMean, sb.runMean)
	assert.Equal(t, sa.runVar, sb.runVar)
}

// BenchmarkCheckpointWrite times one checkpoint of the paper's DC3
// network at (N_O, N_C) = (100, 50), mid-epoch with an order of 8334
// samples.
func BenchmarkCheckpointWrite(b *testing.B) {
	p, err := problems.NewNonconvexLinear(100, 50, problems.PaperSeed)
	require.NoError(b, err)
	m, err := New(p, Config{Quiet: true, Checkpoint: Checkpoint{Dir: b.TempDir()}})
	require.NoError(b, err)
	defer m.Close()
	xb := tensor.New(tensor.WithShape(200, 50), tensor.WithBacking(mat.DenseCopyOf(p.Examples(200)).RawMatrix().Data))
	_, err = m.step(xb)
	require.NoError(b, err)
	ck := m.newCheckpointer(&fitState{Rows: 8334}, m.now())
	order := m.rnd.Perm(8334)
	hist := make([]Epoch, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if err := ck.write(0, 1, order, 1, 1, hist); err != nil {
			b.Fatal(err)
		}
	}
}

// TestResumePartial interrupts and resumes a model with Config.Partial
// set: the resumed run equals the uninterrupted one, and Resume refuses
// another choice.
func TestResumePartial(t *testing.T) {
	f := newResumeFixture(t)
	f.cfg.Partial = []int{19, 3, 5, 7, 0, 11, 13, 2, 17, 1, 9, 15}
	wantHist, wantSnap, wantY := f.reference(t)

	dir := f.interrupted(t, 5)

	other := f.cfg
	other.Partial = []int{3, 19, 5, 7, 0, 11, 13, 2, 17, 1, 9, 15}
	_, err := Resume(dir, f.p, other)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "partial: checkpoint [19,3,")

	r, err := Resume(dir, f.p, f.cfg)
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, f.cfg.Partial, r.Partial())
	hist, err := r.Fit(f.x)
	require.NoError(t, err)
	assert.Equal(t, wantHist, hist)
	assert.Equal(t, wantSnap, snap(t, r))
	y, err := r.Predict(f.x)
	require.NoError(t, err)
	assert.True(t, mat.Equal(wantY, y))
}

// TestCheckpointThroughSymlink: a checkpoint file that is a symbolic link
// to a file elsewhere is written through the link (the target holds the
// newer state, and the link stays a link), not replaced by a regular file
// that leaves the target stale.
func TestCheckpointThroughSymlink(t *testing.T) {
	f := newResumeFixture(t)
	dir := f.interrupted(t, 2)
	store := filepath.Join(t.TempDir(), "ck.json")
	path := filepath.Join(dir, CheckpointFile)
	require.NoError(t, os.Rename(path, store))
	require.NoError(t, os.Symlink(store, path))
	before, err := readCheckpoint(store)
	require.NoError(t, err)

	r, err := Resume(dir, f.p, f.checkpointing(dir))
	require.NoError(t, err)
	r.now = fakeClock()
	stopAfter(r, 3)
	_, err = r.Fit(f.x)
	require.ErrorIs(t, err, errStop)
	r.Close()

	fi, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is still a link")
	after, err := readCheckpoint(store)
	require.NoError(t, err)
	assert.Equal(t, before.Fit.Epochs*3+before.Fit.Batch+3, after.Fit.Epochs*3+after.Fit.Batch, "the target holds the state three batches later")
}
