package dc3

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/ckptfile"
	"github.com/enforce-nn/enforce/problems"
)

// CheckpointFile is the name of the checkpoint file in Checkpoint.Dir.
const CheckpointFile = "dc3-checkpoint.json"

// DefaultCheckpointEvery is the interval between checkpoints when
// Checkpoint.Every is zero.
const DefaultCheckpointEvery = 5 * time.Minute

// Checkpoint configures the checkpoints a training run writes
// (Config.Checkpoint) so that Resume or ResumeNewton can continue it after
// the process ends, bit for bit as if it had not been interrupted. It
// works as package train's checkpoints do.
//
// A checkpoint is the file CheckpointFile in Dir: a versioned JSON
// document with a SHA-256 checksum holding everything training depends
// on: every learnable (the Linear layers and BatchNorm's scale and shift),
// BatchNorm's running mean and variance, the Adam solver's moments and
// step count, the state of the model's random stream (which draws the
// shuffling and the dropout masks), the position in the Fit call (epoch
// and batch, and the epoch's order of the samples when the checkpoint
// falls inside an epoch), the objective summed over the epoch's batches
// so far, the history so far, the time spent training (TrainTime), the
// part of the Config that training depends on, and SHA-256 fingerprints
// of the problem and of the training inputs. Fit writes one after the
// first batch that ends Every or more after the previous checkpoint (or
// the start of the call), so a checkpoint may fall in the middle of an
// epoch, and one at the end of the call. Each replaces the previous one
// atomically (a temporary file in Dir, flushed to stable storage, renamed
// over the file), so an interruption at any moment leaves the last
// complete checkpoint in place. A checkpoint file that is a symbolic link
// is written through it: the file it points to is replaced (the temporary
// file goes beside that one) and the link stays a link. A checkpoint that cannot be written stops
// Fit with an error; the previous one is then still in place.
type Checkpoint struct {
	// Dir is the folder of the checkpoint file, created if missing; empty
	// means no checkpoints. Give each model of a run its own folder.
	Dir string
	// Every is the least wall-clock time between two checkpoints; zero
	// means DefaultCheckpointEvery. A checkpoint of the paper's 2×200
	// network takes about as long as three training steps
	// (BenchmarkCheckpointWrite and BenchmarkStep: 0.06 s against 0.02 s
	// on a loaded 2-core machine), so one every few minutes costs well
	// under a thousandth of the run.
	Every time.Duration
}

func (c Checkpoint) validate() error {
	switch {
	case c.Every < 0:
		return fmt.Errorf("dc3: Config.Checkpoint.Every = %v is negative", c.Every)
	case c.Every > 0 && c.Dir == "":
		return errors.New("dc3: Config.Checkpoint.Every is set but Dir is empty")
	}
	return nil
}

// Checkpoint file identification.
const (
	checkpointFormat  = "enforce/dc3.Checkpoint"
	checkpointVersion = 1
)

// Kinds of completion, recorded in a checkpoint.
const (
	kindLinear = "linear"
	kindNewton = "newton"
	kindACOPF  = "acopf"
)

// envelope is the checkpoint file: the document and the SHA-256 of its
// compact JSON encoding.
type envelope struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	SHA256     string          `json:"sha256"`
	Checkpoint json.RawMessage `json:"checkpoint"`
}

// checkpointDoc is the content of a checkpoint.
type checkpointDoc struct {
	// Config is the runConfig of the model, compared with the Config
	// given to Resume.
	Config json.RawMessage `json:"config"`
	// Problem is the problem's fingerprint (problemFingerprint).
	Problem string `json:"problem"`
	// Learnables are the network's learnables in the order of
	// network.learnables; RunMean and RunVar BatchNorm's running
	// estimates per hidden layer.
	Learnables []ckptfile.Floats `json:"learnables"`
	RunMean    []ckptfile.Floats `json:"runMean"`
	RunVar     []ckptfile.Floats `json:"runVar"`
	Adam       adamState         `json:"adam"`
	Elapsed    time.Duration     `json:"elapsedNS"`
	Fit        fitState          `json:"fit"`
}

// adamState is the state of the Adam solver, its moments as the bits of
// their float64 values (a second moment may overflow to +Inf).
type adamState struct {
	Iter int               `json:"iter"`
	M    []ckptfile.Floats `json:"m"`
	V    []ckptfile.Floats `json:"v"`
}

// fitState is the position of a Fit call: what a resumed call needs
// besides the model and solver.
type fitState struct {
	// Rows is the number of training samples and Data the hex SHA-256 of
	// the training inputs (dataFingerprint).
	Rows int    `json:"rows"`
	Data string `json:"data"`
	// Epochs is the number of completed epochs and Batch that of the
	// completed batches of the next one.
	Epochs int `json:"epochs"`
	Batch  int `json:"batch"`
	// RNG is the model's random stream (math/rand/v2.PCG's binary form)
	// after the last completed batch.
	RNG []byte `json:"rng"`
	// Order is the order of the samples in the next epoch when Batch > 0.
	Order []int `json:"order,omitempty"`
	// Sum and Steps are the sum of the Batch batches' mean objectives and
	// their number.
	Sum   ckptfile.Floats `json:"sum"`
	Steps int             `json:"steps"`
	// History are the completed epochs.
	History []Epoch `json:"history"`
}

// runConfig is the part of a model's Config that training depends on,
// with defaults applied: a checkpoint records it and Resume requires the
// same. Progress, Quiet, LogEvery and Checkpoint may differ.
type runConfig struct {
	Completion string  `json:"completion"`
	Hidden     []int   `json:"hidden"`
	Dropout    float64 `json:"dropout"`
	LearnRate  float64 `json:"learnRate"`
	BatchSize  int     `json:"batchSize"`
	Epochs     int     `json:"epochs"`
	Seed       uint64  `json:"seed"`
	Partial    []int   `json:"partial,omitempty"`
}

// runConfig returns the JSON of m's runConfig.
func (m *Model) runConfig() (json.RawMessage, error) {
	c := m.cfg
	return json.Marshal(&runConfig{Completion: m.kind, Hidden: c.Hidden, Dropout: c.Dropout, LearnRate: c.LearnRate,
		BatchSize: c.BatchSize, Epochs: c.Epochs, Seed: c.Seed, Partial: c.Partial})
}

// configDiffs lists the fields in which two runConfig documents differ.
func configDiffs(checkpoint, model json.RawMessage) ([]string, error) {
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal(checkpoint, &a); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(model, &b); err != nil {
		return nil, err
	}
	return ckptfile.ConfigDiffs(a, b), nil
}

// hasher writes shapes and float64 bits into a SHA-256.
type hasher struct {
	h   hash.Hash
	buf [8]byte
}

func newHasher() *hasher { return &hasher{h: sha256.New()} }

func (h *hasher) int(v int) {
	binary.LittleEndian.PutUint64(h.buf[:], uint64(v))
	h.h.Write(h.buf[:])
}

func (h *hasher) floats(v []float64) {
	h.int(len(v))
	for _, x := range v {
		binary.LittleEndian.PutUint64(h.buf[:], math.Float64bits(x))
		h.h.Write(h.buf[:])
	}
}

func (h *hasher) dense(a *mat.Dense) {
	r, c := a.Dims()
	h.int(r)
	h.int(c)
	for i := range r {
		h.floats(a.RawRowView(i))
	}
}

func (h *hasher) sum() string { return hex.EncodeToString(h.h.Sum(nil)) }

// problemFingerprint returns the hex SHA-256 of the completion's kind, the
// number of equalities, the objective's Q and p and, for a linear
// completion, C. (A Newton completion's constraint is code: only its
// dimensions enter.)
func problemFingerprint(kind string, obj problems.SineQuadratic, nC int, c *mat.Dense) string {
	h := newHasher()
	h.h.Write([]byte(kind))
	h.int(nC)
	h.floats(obj.Q)
	h.floats(obj.P)
	if c != nil {
		h.dense(c)
	}
	return h.sum()
}

// dataFingerprint returns the hex SHA-256 of the shape and float64 bits
// of x.
func dataFingerprint(x *mat.Dense) string {
	h := newHasher()
	h.dense(x)
	return h.sum()
}

// Resume returns a model with linear completion for p (as New) that
// continues the training run whose checkpoint is in dir (see Checkpoint).
// p must be the problem the run was started with (its Q, p and C are
// compared) and cfg its Config: every field that training depends on
// (Hidden, Dropout, LearnRate, BatchSize, Epochs, Seed, Partial) must equal the
// checkpoint's, otherwise Resume returns an error listing the
// differences. Progress, Quiet, LogEvery and Checkpoint may differ; an
// empty cfg.Checkpoint.Dir means dir, so the resumed run goes on
// checkpointing there.
//
// The model holds the checkpoint's weights, BatchNorm statistics, Adam
// state and random stream. Its next Fit call, which must be given the
// same training inputs, completes the interrupted call: it runs the
// remaining batches and epochs and returns the whole history of the call,
// the epochs before the interruption included, so that weights, history
// and predictions are the same bits as those of an uninterrupted run. If
// the checkpoint was written at the end of the call, that Fit returns its
// history without training. Later calls train on as usual.
//
// Resume returns an error wrapping fs.ErrNotExist when dir holds no
// checkpoint (a caller may then start afresh with New), and an error for
// a file that is not a checkpoint, of another format version, damaged or
// truncated (its checksum does not match), written for another problem
// or Config, whose state does not fit the model, or that holds a NaN or
// infinite weight or running estimate or a NaN Adam moment (a run that
// had gone wrong before the checkpoint was written; the checksum only
// proves that the file is what was written).
func Resume(dir string, p *problems.NonconvexLinear, cfg Config) (*Model, error) {
	return resume(dir, cfg, func(cfg Config) (*Model, error) { return New(p, cfg) })
}

// ResumeNewton is Resume for a model with Newton completion (NewNewton):
// it continues the run of NewNewton(obj, c, cfg) whose checkpoint is in
// dir. The objective and the dimensions of c are compared with the
// checkpoint's; c itself is code, and must be the constraint the run was
// started with.
func ResumeNewton(dir string, obj problems.SineQuadratic, c enforce.Constraint, cfg Config) (*Model, error) {
	return resume(dir, cfg, func(cfg Config) (*Model, error) { return NewNewton(obj, c, cfg) })
}

func resume(dir string, cfg Config, build func(Config) (*Model, error)) (*Model, error) {
	path := filepath.Join(dir, CheckpointFile)
	doc, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	if cfg.Checkpoint.Dir == "" {
		cfg.Checkpoint.Dir = dir
	}
	m, err := build(cfg)
	if err != nil {
		return nil, fmt.Errorf("dc3: Resume: %w", err)
	}
	fail := func(err error) (*Model, error) {
		m.Close()
		return nil, fmt.Errorf("dc3: Resume: %s: %w", path, err)
	}
	mine, err := m.runConfig()
	if err != nil {
		return fail(err)
	}
	diffs, err := configDiffs(doc.Config, mine)
	if err != nil {
		return fail(fmt.Errorf("the recorded Config: %w", err))
	}
	if len(diffs) > 0 {
		return fail(fmt.Errorf("written for another Config: %s", strings.Join(diffs, "; ")))
	}
	if doc.Problem != m.problem {
		return fail(fmt.Errorf("written for another problem (SHA-256 %s, this one %s)", doc.Problem, m.problem))
	}
	if err := m.restore(doc); err != nil {
		return fail(err)
	}
	return m, nil
}

// restore sets the state of a checkpoint, checking that it fits m.
func (m *Model) restore(doc *checkpointDoc) error {
	ps := m.net.learnables()
	a, s := doc.Adam, doc.Fit
	n := m.net.runMean
	switch {
	case len(doc.Learnables) != len(ps):
		return fmt.Errorf("%d learnables, the model has %d", len(doc.Learnables), len(ps))
	case len(doc.RunMean) != len(n) || len(doc.RunVar) != len(n):
		return fmt.Errorf("running estimates of %d and %d layers, the model has %d", len(doc.RunMean), len(doc.RunVar), len(n))
	case a.Iter < 0:
		return fmt.Errorf("the solver has taken %d steps", a.Iter)
	case (a.Iter == 0) != (a.M == nil) || len(a.M) != len(a.V):
		return fmt.Errorf("the solver state is inconsistent: %d steps, %d first and %d second moments", a.Iter, len(a.M), len(a.V))
	case a.M != nil && len(a.M) != len(ps):
		return fmt.Errorf("the solver holds moments of %d learnables, the model has %d", len(a.M), len(ps))
	case doc.Elapsed < 0:
		return fmt.Errorf("negative training time %v", doc.Elapsed)
	case s.Rows < m.cfg.BatchSize || s.Epochs < 0 || s.Epochs > m.cfg.Epochs || s.Batch < 0 || s.Batch >= s.Rows/m.cfg.BatchSize ||
		(s.Epochs == m.cfg.Epochs && s.Batch != 0):
		return fmt.Errorf("position %d samples, epoch %d of %d, batch %d is impossible", s.Rows, s.Epochs, m.cfg.Epochs, s.Batch)
	case len(s.History) != s.Epochs:
		return fmt.Errorf("%d epochs completed but a history of %d", s.Epochs, len(s.History))
	case s.Batch != s.Steps || len(s.Sum) != 1:
		return fmt.Errorf("%d batches of the epoch completed but %d steps and %d sums", s.Batch, s.Steps, len(s.Sum))
	}
	if s.Batch > 0 {
		seen := make([]bool, s.Rows)
		for _, r := range s.Order {
			if r < 0 || r >= s.Rows || seen[r] {
				return fmt.Errorf("the epoch's order is not a permutation of the %d samples", s.Rows)
			}
			seen[r] = true
		}
		if len(s.Order) != s.Rows {
			return fmt.Errorf("the epoch's order has %d samples, want %d", len(s.Order), s.Rows)
		}
	} else if s.Order != nil {
		return errors.New("an order of the samples at the start of an epoch")
	}
	for i, e := range s.History {
		if e.Epoch != i+1 {
			return fmt.Errorf("history entry %d is epoch %d", i, e.Epoch)
		}
	}
	for i, p := range ps {
		if len(doc.Learnables[i]) != len(values(p)) {
			return fmt.Errorf("learnable %q has %d values, the model's %d", p.Name(), len(doc.Learnables[i]), len(values(p)))
		}
		if a.M != nil && (len(a.M[i]) != len(values(p)) || len(a.V[i]) != len(values(p))) {
			return fmt.Errorf("the solver's moments of %q have %d and %d values, the learnable %d", p.Name(), len(a.M[i]), len(a.V[i]), len(values(p)))
		}
	}
	for l := range n {
		if len(doc.RunMean[l]) != len(n[l]) || len(doc.RunVar[l]) != len(n[l]) {
			return fmt.Errorf("running estimates of layer %d have %d and %d values, the layer %d", l, len(doc.RunMean[l]), len(doc.RunVar[l]), len(n[l]))
		}
	}
	// A checksum proves the file is what was written, not that training
	// was sound when it was written: refuse a state that would train on
	// NaN (as train.Resume does). The moments may hold +Inf (a second
	// moment that overflowed while the weights stayed finite).
	for i, p := range ps {
		if j := notFinite(doc.Learnables[i]); j >= 0 {
			return fmt.Errorf("learnable %q holds %v at index %d", p.Name(), doc.Learnables[i][j], j)
		}
		if a.M != nil {
			if j := nanAt(a.M[i]); j >= 0 {
				return fmt.Errorf("the solver's first moments of %q hold a NaN at index %d", p.Name(), j)
			}
			if j := nanAt(a.V[i]); j >= 0 {
				return fmt.Errorf("the solver's second moments of %q hold a NaN at index %d", p.Name(), j)
			}
		}
	}
	for l := range n {
		if j := notFinite(doc.RunMean[l]); j >= 0 {
			return fmt.Errorf("the running mean of layer %d holds %v at index %d", l, doc.RunMean[l][j], j)
		}
		for j, v := range doc.RunVar[l] {
			if !(v >= 0) || math.IsInf(v, 1) {
				return fmt.Errorf("the running variance of layer %d holds %v at index %d", l, v, j)
			}
		}
	}
	if err := m.pcg.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("the random stream: %w", err)
	}
	for i, p := range ps {
		copy(values(p), doc.Learnables[i])
	}
	for l := range n {
		copy(m.net.runMean[l], doc.RunMean[l])
		copy(m.net.runVar[l], doc.RunVar[l])
	}
	var mm, vv [][]float64
	for i := range a.M {
		mm, vv = append(mm, a.M[i]), append(vv, a.V[i])
	}
	m.solver.SetMoments(a.Iter, mm, vv, false)
	m.trainDur = doc.Elapsed
	m.resumed = &s
	return nil
}

// notFinite returns the index of the first NaN or infinity in v, or −1.
func notFinite(v []float64) int {
	for j, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return j
		}
	}
	return -1
}

// nanAt returns the index of the first NaN in v, or −1.
func nanAt(v []float64) int {
	for j, x := range v {
		if math.IsNaN(x) {
			return j
		}
	}
	return -1
}

// checksum returns the hex SHA-256 of the compact form of the JSON raw.
func checksum(raw []byte) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// readCheckpoint reads and checks the checkpoint file at path.
func readCheckpoint(path string) (*checkpointDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dc3: Resume: %w", err)
	}
	damaged := func(err error) error {
		return fmt.Errorf("dc3: Resume: %s is damaged or not a checkpoint: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var env envelope
	if err := dec.Decode(&env); err != nil {
		return nil, damaged(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, damaged(fmt.Errorf("data after the document at byte %d", dec.InputOffset()))
	}
	if env.Format != checkpointFormat {
		return nil, fmt.Errorf("dc3: Resume: %s is not a DC3 checkpoint (format %q, want %q)", path, env.Format, checkpointFormat)
	}
	if env.Version != checkpointVersion {
		return nil, fmt.Errorf("dc3: Resume: %s has checkpoint format version %d, this package reads version %d", path, env.Version, checkpointVersion)
	}
	sum, err := checksum(env.Checkpoint)
	if err != nil {
		return nil, damaged(err)
	}
	if sum != env.SHA256 {
		return nil, damaged(fmt.Errorf("its SHA-256 is %s, the file records %s", sum, env.SHA256))
	}
	var doc checkpointDoc
	d := json.NewDecoder(bytes.NewReader(env.Checkpoint))
	d.DisallowUnknownFields()
	if err := d.Decode(&doc); err != nil {
		return nil, damaged(err)
	}
	return &doc, nil
}

// checkpointer writes the checkpoints of a Fit call.
type checkpointer struct {
	m     *Model
	path  string
	every time.Duration
	start time.Time // of the Fit call
	last  time.Time // of the last checkpoint, or the start
	base  fitState  // rows and data of the call
}

// newCheckpointer returns the checkpointer of a Fit call starting at
// start, or nil when the model writes no checkpoints.
func (m *Model) newCheckpointer(s *fitState, start time.Time) *checkpointer {
	c := m.cfg.Checkpoint
	if c.Dir == "" {
		return nil
	}
	every := c.Every
	if every == 0 {
		every = DefaultCheckpointEvery
	}
	return &checkpointer{m: m, path: filepath.Join(c.Dir, CheckpointFile), every: every, start: start, last: start,
		base: fitState{Rows: s.Rows, Data: s.Data}}
}

// due reports whether Every has passed since the last checkpoint.
func (c *checkpointer) due() bool {
	return c != nil && c.m.now().Sub(c.last) >= c.every
}

// write writes a checkpoint after epochs complete epochs and batch
// batches of the next, in the order order (nil when batch is 0), whose
// mean objectives sum to sum over steps steps.
func (c *checkpointer) write(epochs, batch int, order []int, sum float64, steps int, hist []Epoch) error {
	m := c.m
	s := c.base
	s.Epochs, s.Batch, s.Order, s.Sum, s.Steps, s.History = epochs, batch, order, ckptfile.Floats{sum}, steps, hist
	var err error
	if s.RNG, err = m.pcg.MarshalBinary(); err != nil {
		return c.fail(err)
	}
	doc := checkpointDoc{Problem: m.problem, Elapsed: m.trainDur + m.now().Sub(c.start), Fit: s}
	if doc.Config, err = m.runConfig(); err != nil {
		return c.fail(err)
	}
	for _, p := range m.net.learnables() {
		doc.Learnables = append(doc.Learnables, values(p))
	}
	for l := range m.net.runMean {
		doc.RunMean = append(doc.RunMean, m.net.runMean[l])
		doc.RunVar = append(doc.RunVar, m.net.runVar[l])
	}
	doc.Adam.Iter = m.solver.Iter()
	mm, vv := m.solver.Moments()
	for i := range mm {
		doc.Adam.M = append(doc.Adam.M, mm[i])
		doc.Adam.V = append(doc.Adam.V, vv[i])
	}
	raw, err := json.Marshal(&doc)
	if err != nil {
		return c.fail(err)
	}
	sumHex, err := checksum(raw)
	if err != nil {
		return c.fail(err)
	}
	out, err := json.Marshal(&envelope{Format: checkpointFormat, Version: checkpointVersion, SHA256: sumHex, Checkpoint: raw})
	if err != nil {
		return c.fail(err)
	}
	if err := ckptfile.WriteAtomic(c.path, func(w io.Writer) error { _, err := w.Write(out); return err }); err != nil {
		return c.fail(err)
	}
	c.last = m.now()
	return nil
}

func (c *checkpointer) fail(err error) error {
	return fmt.Errorf("dc3: writing the checkpoint %s: %w", c.path, err)
}

// startRun returns the state a Fit call on x, in epochs of batches
// batches, starts from: the interrupted call a Resume restored, after
// checking that it is of the same data, or a fresh one. It consumes
// m.resumed unless it returns an error.
func (m *Model) startRun(x *mat.Dense, batches int) (*fitState, error) {
	s := m.resumed
	if s == nil && m.cfg.Checkpoint.Dir == "" {
		return &fitState{}, nil
	}
	rows, _ := x.Dims()
	data := dataFingerprint(x)
	if s == nil {
		return &fitState{Rows: rows, Data: data}, nil
	}
	switch {
	case s.Rows != rows:
		return nil, fmt.Errorf("dc3: Fit: the resumed checkpoint was written for %d training samples, got %d", s.Rows, rows)
	case s.Data != data:
		return nil, fmt.Errorf("dc3: Fit: the resumed checkpoint was written for other training inputs (SHA-256 %s, got %s)", s.Data, data)
	case s.Batch >= batches:
		return nil, fmt.Errorf("dc3: Fit: the resumed checkpoint is at batch %d of an epoch of %d", s.Batch, batches)
	}
	m.resumed = nil
	s.History = slices.Clip(s.History)
	return s, nil
}
