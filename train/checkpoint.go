package train

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/ckptfile"
	"github.com/enforce-nn/enforce/layers"
)

// CheckpointFile is the name of the checkpoint file in Checkpoint.Dir.
const CheckpointFile = "checkpoint.json"

// DefaultCheckpointEvery is the interval between checkpoints when
// Checkpoint.Every is zero.
const DefaultCheckpointEvery = 5 * time.Minute

// Checkpoint configures the checkpoints a training run writes
// (Config.Checkpoint) so that Resume can continue it after the process
// ends, bit for bit as if it had not been interrupted.
//
// A checkpoint is the file CheckpointFile in Dir: a versioned JSON
// document with a SHA-256 checksum holding everything training depends
// on: the model as Save writes it (every learnable tensor and the
// standardisation), the Adam solver's moments and step count, the state of
// the shuffling stream, the position in the Fit call (epoch and batch),
// the statistics of the epoch in progress, the History so far, the state
// of early stopping (Config.Patience: the best epoch's weights and the
// count of epochs since), the reference loss ℓ₀ of the divergence rule
// (Config.DivergenceFactor), the time spent training (Model.TrainingTime),
// the Config it was trained with and
// a SHA-256 fingerprint of the training data. (A custom Backbone's own
// state beyond its learnables, a random stream of its own say, is not
// saved; train's backbones have none.) Fit writes one after the
// first batch that ends Every or more after the previous checkpoint (or
// the start of the call), so a checkpoint may fall in the middle of an
// epoch, and one at the end of the call, also when Config.Patience stops
// it early (with the best epoch's weights, which Fit leaves in the
// model). Each replaces the previous one
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
	// means DefaultCheckpointEvery. A checkpoint takes about three times
	// as long to write as SaveFile of the model (BenchmarkCheckpointWrite:
	// about 0.1 s for the paper's 41k-weight backbones): a checkpoint
	// every few minutes costs well under a thousandth of the run.
	Every time.Duration
}

func (c Checkpoint) validate() error {
	switch {
	case c.Every < 0:
		return fmt.Errorf("train: Config.Checkpoint.Every = %v is negative", c.Every)
	case c.Every > 0 && c.Dir == "":
		return errors.New("train: Config.Checkpoint.Every is set but Dir is empty")
	}
	return nil
}

// Checkpoint file identification.
const (
	checkpointFormat  = "enforce/train.Checkpoint"
	checkpointVersion = 1
)

// Kinds of Fit call recorded in a checkpoint.
const (
	kindFit          = "Fit"
	kindUnsupervised = "FitUnsupervised"
)

// checkpointEnvelope is the checkpoint file: the document and the SHA-256
// of its compact JSON encoding.
type checkpointEnvelope struct {
	Format     string          `json:"format"`
	Version    int             `json:"version"`
	SHA256     string          `json:"sha256"`
	Checkpoint json.RawMessage `json:"checkpoint"`
}

// checkpointDoc is the content of a checkpoint. readCheckpoint decodes
// it field by field: a new field must be added there too.
type checkpointDoc struct {
	// Config is the runConfig of the model, compared with the Config
	// given to Resume.
	Config json.RawMessage `json:"config"`
	// Model is the model as Save writes it (compact).
	Model   json.RawMessage `json:"model"`
	Adam    adamState       `json:"adam"`
	Elapsed time.Duration   `json:"elapsedNS"`
	Fit     fitState        `json:"fit"`
}

// adamState is the state of adam. Moments are written as the bits of
// their float64 values: a second moment may overflow to +Inf while the
// weights stay finite, and JSON numbers cannot hold infinities.
type adamState struct {
	Iter int               `json:"iter"`
	M    []ckptfile.Floats `json:"m"`
	V    []ckptfile.Floats `json:"v"`
}

// fitState is the position of a Fit call: what a resumed call needs
// besides the model and solver.
type fitState struct {
	// Kind is the method (kindFit or kindUnsupervised), Rows the number of
	// training samples and Data the hex SHA-256 of the training data
	// (dataFingerprint).
	Kind string `json:"kind"`
	Rows int    `json:"rows"`
	Data string `json:"data"`
	// Epochs is the number of completed epochs and Batch that of the
	// completed batches of the next one.
	Epochs int `json:"epochs"`
	Batch  int `json:"batch"`
	// RNG is the shuffling stream (math/rand/v2.PCG's binary form) at the
	// start of the next epoch, before it draws the epoch's order.
	RNG []byte `json:"rng"`
	// Acc are the statistics of the Batch batches of the next epoch.
	Acc accState `json:"acc"`
	// History are the completed epochs.
	History History `json:"history"`
	// Added with early stopping in checkpoints; absent in older files,
	// whose resumed calls start the count of Config.Patience afresh.
	// Early is the state of early stopping after the completed epochs
	// (absent without Patience, a validation set or a validated epoch),
	// and Stopped marks the final checkpoint of a call that Patience
	// stopped after Epochs epochs: a resumed Fit returns at once.
	Early   *earlyState `json:"early,omitempty"`
	Stopped bool        `json:"stopped,omitempty"`
	// Added with Config.Warmup; absent in older files and before the call
	// has taken it. Ref is ℓ₀ of the divergence rule
	// (Config.DivergenceFactor) in force at the checkpoint.
	Ref *float64 `json:"ref,omitempty"`
}

// earlyState is the state of early stopping (Config.Patience): the lowest
// validation loss so far, the weights of its epoch and the number of
// epochs since.
type earlyState struct {
	BestVal float64     `json:"bestVal"`
	Best    [][]float64 `json:"best"`
	Since   int         `json:"since"`
}

// accState is an accumulator with exported fields.
type accState struct {
	Rows      float64 `json:"rows"`
	Loss      float64 `json:"loss"`
	Task      float64 `json:"task"`
	Disp      float64 `json:"disp"`
	Res       float64 `json:"res"`
	Depth     float64 `json:"depth"`
	DepthRows float64 `json:"depthRows"`
	Batches   int     `json:"batches"`
	Projected int     `json:"projected"`
	// Added with Epoch.MaxResidual and Missed; absent (zero) in older
	// checkpoints.
	MaxRes float64 `json:"maxRes,omitempty"`
	Missed int     `json:"missed,omitempty"`
}

func (a *accumulator) state() accState {
	return accState{a.rows, a.loss, a.task, a.disp, a.res, a.depth, a.depthRows, a.batches, a.projected, a.maxRes, a.missed}
}

func (s accState) accumulator() accumulator {
	return accumulator{s.Rows, s.Loss, s.Task, s.Disp, s.Res, s.Depth, s.DepthRows, s.Batches, s.Projected, s.MaxRes, s.Missed}
}

// runConfig is the part of a model's configuration that training depends
// on, with defaults applied: a checkpoint records it and Resume requires
// the same. Progress, Quiet, LogEvery and Checkpoint may differ.
type runConfig struct {
	Backbone    string            `json:"backbone"`
	Sizes       []int             `json:"sizes"`
	Hidden      layers.Activation `json:"hidden"`
	Output      layers.Activation `json:"output"`
	Init        layers.Init       `json:"init"`
	PyTorchInit bool              `json:"pyTorchInit"`
	Constraint  dims              `json:"constraint"`
	Mode        Mode              `json:"mode"`
	Train       enforce.Settings  `json:"train"`
	Infer       enforce.Settings  `json:"infer"`
	LambdaD     float64           `json:"lambdaD"`
	LambdaC     float64           `json:"lambdaC"`
	LambdaCObj  float64           `json:"lambdaCObjective"`
	LearnRate   float64           `json:"learnRate"`
	BatchSize   int               `json:"batchSize"`
	Epochs      int               `json:"epochs"`
	Seed        any               `json:"seed"`
	AlwaysProj  bool              `json:"alwaysProject"`
	Standardize bool              `json:"standardize"`
	// Added later; omitted at their defaults, so that older checkpoints
	// (written before the fields existed, with those defaults' behaviour
	// or with the fitted scales they restore) still match.
	Penalty           Penalty           `json:"penalty,omitempty"`
	StdFloor          float64           `json:"outputStdFloor,omitempty"`
	PenaltyConstraint *dims             `json:"penaltyConstraint,omitempty"`
	Precision         enforce.Precision `json:"precision,omitempty"`
	ClipNorm          float64           `json:"clipNorm,omitempty"`
	Warmup            int               `json:"warmup,omitempty"`
}

// runConfig returns the JSON of m's runConfig.
func (m *Model) runConfig() (json.RawMessage, error) {
	r := m.cfg
	rc := runConfig{
		Backbone: backboneMLP, Sizes: r.Sizes, Hidden: r.Hidden, Output: r.Output, Init: r.Init, PyTorchInit: r.PyTorchInit,
		Constraint: constraintDims(r.Constraint), Mode: r.Mode, Train: r.train, Infer: r.Infer,
		LambdaD: r.lambdaD, LambdaC: r.lambdaC, LambdaCObj: r.lambdaCObj, LearnRate: r.LearnRate,
		BatchSize: r.BatchSize, Epochs: r.Epochs, Seed: r.Seed, AlwaysProj: r.AlwaysProject, Standardize: r.Standardize,
		Penalty: r.Penalty, Precision: r.precision(), ClipNorm: r.ClipNorm, Warmup: r.Warmup,
	}
	if r.PenaltyConstraint != nil {
		d := constraintDims(r.PenaltyConstraint)
		rc.PenaltyConstraint = &d
	}
	if r.stdFloor != layers.DefaultStdFloor {
		rc.StdFloor = r.stdFloor
		if rc.StdFloor == 0 {
			rc.StdFloor = -1 // no floor
		}
	}
	if r.Backbone != nil {
		rc.Backbone = backboneCustom
	}
	return json.Marshal(&rc)
}

// settingsAdded lists the enforce.Settings fields added after checkpoints
// were first written, each with the value that a checkpoint without it
// ran with: Path (2026-11-27) reads as PathAuto, which is the dense path
// for every constraint such a checkpoint can have been trained with
// (Capabilities.Sparse, which PathAuto would take, came with Path), the
// only path before. A field added later must be listed here with the value
// that reproduces the checkpoints written before it, or those checkpoints
// no longer resume.
var settingsAdded = map[string]json.RawMessage{"Path": json.RawMessage("0")}

// settingsKeys are the runConfig fields that hold enforce.Settings.
var settingsKeys = []string{"train", "infer"}

// normaliseSettings rewrites the Settings objects of a runConfig document
// with sorted keys, so that they compare field by field, and, with
// upgrade, fills in the fields of settingsAdded that it lacks.
func normaliseSettings(doc map[string]json.RawMessage, upgrade bool) error {
	for _, k := range settingsKeys {
		raw, ok := doc[k]
		if !ok {
			continue
		}
		var s map[string]json.RawMessage
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if s == nil {
			continue
		}
		if upgrade {
			for f, v := range settingsAdded {
				if _, ok := s[f]; !ok {
					s[f] = v
				}
			}
		}
		out, err := json.Marshal(s) // map keys sorted
		if err != nil {
			return err
		}
		doc[k] = out
	}
	return nil
}

// configDiffs lists the fields in which two runConfig documents differ,
// the checkpoint's read with the fields of settingsAdded that it lacks.
func configDiffs(checkpoint, model json.RawMessage) ([]string, error) {
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal(checkpoint, &a); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(model, &b); err != nil {
		return nil, err
	}
	if err := normaliseSettings(a, true); err != nil {
		return nil, err
	}
	if err := normaliseSettings(b, false); err != nil {
		return nil, err
	}
	return ckptfile.ConfigDiffs(a, b), nil
}

// dataFingerprint returns the hex SHA-256 of the shapes and float64 bits
// of x and, when not nil, y.
func dataFingerprint(x, y *mat.Dense) string {
	h := sha256.New()
	var buf [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(buf[:], v)
		h.Write(buf[:])
	}
	for _, a := range []*mat.Dense{x, y} {
		if a == nil {
			put(0)
			continue
		}
		r, c := a.Dims()
		put(uint64(r))
		put(uint64(c))
		for i := range r {
			for _, v := range a.RawRowView(i) {
				put(math.Float64bits(v))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TrainingTime returns the wall-clock time the model has spent in Fit
// and FitUnsupervised, including the time recorded in the checkpoint it
// was resumed from: for a resumed run, the training time of the whole
// run, not of this process alone.
func (m *Model) TrainingTime() time.Duration {
	if m == nil {
		return 0
	}
	return m.trained
}

// Resume returns a model that continues the training run whose checkpoint
// is in dir (see Checkpoint). cfg must be the Config the run was started
// with, its constraint and any Backbone included: every field that
// training depends on (the architecture, the constraint's dimensions,
// Mode, the AdaNP settings, λ_D, λ_C, Penalty and the dimensions of
// PenaltyConstraint, LearnRate, BatchSize, Epochs, Seed,
// AlwaysProject, Standardize, OutputStdFloor) must equal the checkpoint's, otherwise
// Resume returns an error listing the differences. Progress, Quiet,
// LogEvery and Checkpoint may differ; an empty cfg.Checkpoint.Dir means
// dir, so the resumed run goes on checkpointing there. A checkpoint
// written before enforce.Settings had a Path field (2026-11-27) reads as
// PathAuto, the dense path it ran.
//
// The model holds the checkpoint's weights, standardisation, Adam state
// and shuffling stream. Its next Fit (or FitUnsupervised, whichever wrote
// the checkpoint) call, which must be given the same training data,
// completes the interrupted call: it runs the remaining batches and
// epochs and returns the whole History of the call, the epochs before the
// interruption included, so that weights, History and predictions are
// the same bits as those of an uninterrupted run. If the checkpoint was
// written at the end of the call (after its last epoch, or when
// Config.Patience stopped it), that Fit returns its History without
// training. Later calls train on as usual. Early stopping needs the
// validation set again (SetValidation on the resumed model, before Fit).
//
// Resume returns an error wrapping fs.ErrNotExist when dir holds no
// checkpoint (a caller may then start afresh with New), and an error for
// a file that is not a checkpoint, of another format version, damaged or
// truncated (its checksum does not match), or whose state does not fit
// the model.
func Resume(dir string, cfg Config) (*Model, error) {
	path := filepath.Join(dir, CheckpointFile)
	doc, err := readCheckpoint("Resume", path)
	if err != nil {
		return nil, err
	}
	if cfg.Checkpoint.Dir == "" {
		cfg.Checkpoint.Dir = dir
	}
	m, err := New(cfg)
	if err != nil {
		return nil, fmt.Errorf("train: Resume: %w", err)
	}
	mine, err := m.runConfig()
	if err != nil {
		return nil, fmt.Errorf("train: Resume: %w", err)
	}
	diffs, err := configDiffs(doc.Config, mine)
	if err != nil {
		return nil, fmt.Errorf("train: Resume: %s: the recorded Config: %w", path, err)
	}
	if len(diffs) > 0 {
		return nil, fmt.Errorf("train: Resume: %s was written for another Config: %s", path, joinDiffs(diffs))
	}
	f, err := decode(bytes.NewReader(doc.Model))
	if err != nil {
		return nil, fmt.Errorf("train: Resume: %s: %w", path, err)
	}
	if err := m.restore(f); err != nil {
		return nil, fmt.Errorf("train: Resume: %s: %w", path, err)
	}
	if err := m.restoreState(doc); err != nil {
		return nil, fmt.Errorf("train: Resume: %s: %w", path, err)
	}
	return m, nil
}

// CheckpointState is how far the run of a checkpoint had got when it was
// written (LoadCheckpoint).
type CheckpointState struct {
	// Epochs is the number of completed epochs of the Fit call and Batch
	// that of the completed batches of the next one.
	Epochs, Batch int
	// History are the completed epochs (Fit's History so far).
	History History
	// Training is the time spent training, over every process of the run
	// (Model.TrainingTime).
	Training time.Duration
}

// LoadCheckpoint returns the model in the checkpoint in dir as it was when
// the checkpoint was written, for prediction: what Load returns for a file
// Save wrote at that moment (the same weights, standardisation, settings
// and constraint check), and how far the run had got. It reads a run in
// progress without disturbing it or knowing its Config; the model it
// returns does not continue the run (Resume does). Its errors are
// Resume's for the file, and Load's for the model: a model with a custom
// Config.Backbone is refused, as Load refuses it (Resume reads it).
func LoadCheckpoint(dir string, c enforce.Constraint) (*Model, CheckpointState, error) {
	path := filepath.Join(dir, CheckpointFile)
	doc, err := readCheckpoint("LoadCheckpoint", path)
	if err != nil {
		return nil, CheckpointState{}, err
	}
	m, err := Load(bytes.NewReader(doc.Model), c)
	if err != nil {
		return nil, CheckpointState{}, fmt.Errorf("train: LoadCheckpoint: %s: %w", path, err)
	}
	m.trained = doc.Elapsed
	return m, CheckpointState{Epochs: doc.Fit.Epochs, Batch: doc.Fit.Batch, History: doc.Fit.History, Training: doc.Elapsed}, nil
}

func joinDiffs(d []string) string {
	var b bytes.Buffer
	for i, s := range d {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// restoreState sets the solver, the shuffling stream, the training time
// and the interrupted call of a checkpoint, checking that they fit m.
func (m *Model) restoreState(doc *checkpointDoc) error {
	a, s := doc.Adam, doc.Fit
	switch {
	case a.Iter < 0:
		return fmt.Errorf("the solver has taken %d steps", a.Iter)
	case (a.Iter == 0) != (a.M == nil) || len(a.M) != len(a.V):
		return fmt.Errorf("the solver state is inconsistent: %d steps, %d first and %d second moments", a.Iter, len(a.M), len(a.V))
	case a.M != nil && len(a.M) != len(m.params):
		return fmt.Errorf("the solver holds moments of %d learnables, the model has %d", len(a.M), len(m.params))
	case doc.Elapsed < 0:
		return fmt.Errorf("negative training time %v", doc.Elapsed)
	case s.Kind != kindFit && s.Kind != kindUnsupervised:
		return fmt.Errorf("unknown kind of Fit call %q", s.Kind)
	case s.Rows <= 0 || s.Epochs < 0 || s.Epochs > m.cfg.Epochs || s.Batch < 0 || (s.Epochs == m.cfg.Epochs && s.Batch != 0):
		return fmt.Errorf("position %d samples, epoch %d of %d, batch %d is impossible", s.Rows, s.Epochs, m.cfg.Epochs, s.Batch)
	case len(s.History) != s.Epochs:
		return fmt.Errorf("%d epochs completed but a History of %d", s.Epochs, len(s.History))
	case s.Stopped && (s.Batch != 0 || s.Epochs == 0):
		return fmt.Errorf("a call stopped early at epoch %d, batch %d", s.Epochs, s.Batch)
	}
	if e := s.Early; e != nil {
		if math.IsNaN(e.BestVal) || e.Since < 0 || len(e.Best) != len(m.params) {
			return fmt.Errorf("the early-stopping state is inconsistent: best validation loss %v, %d epochs since, weights of %d learnables for %d",
				e.BestVal, e.Since, len(e.Best), len(m.params))
		}
		for i, w := range e.Best {
			if len(w) != m.params[i].Shape().TotalSize() || !allFinite(w) {
				return fmt.Errorf("the best epoch's weights of %q have %d values, not all finite or not %d", m.names[i], len(w), m.params[i].Shape().TotalSize())
			}
		}
	}
	for i, e := range s.History {
		if e.Epoch != i+1 {
			return fmt.Errorf("History entry %d is epoch %d", i, e.Epoch)
		}
	}
	var mm, vv [][]float64
	for i := range a.M {
		n := m.params[i].Shape().TotalSize()
		if len(a.M[i]) != n || len(a.V[i]) != n {
			return fmt.Errorf("the solver's moments of %q have %d and %d values, the learnable %d", m.names[i], len(a.M[i]), len(a.V[i]), n)
		}
		for j := range n {
			if math.IsNaN(a.M[i][j]) || math.IsNaN(a.V[i][j]) {
				return fmt.Errorf("the solver's moments of %q hold a NaN", m.names[i])
			}
		}
		mm, vv = append(mm, a.M[i]), append(vv, a.V[i])
	}
	if err := m.pcg.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("the shuffling stream: %w", err)
	}
	m.solver.SetMoments(a.Iter, mm, vv, m.cfg.dtype == tensor.Float32)
	m.trained = doc.Elapsed
	m.resumed = &s
	return nil
}

// readCheckpoint reads and checks the checkpoint file at path.
func readCheckpoint(who, path string) (*checkpointDoc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("train: %s: %w", who, err)
	}
	damaged := func(err error) error {
		return fmt.Errorf("train: %s: %s is damaged or not a checkpoint: %w", who, path, err)
	}
	raw, err := document(data)
	if err != nil {
		return nil, damaged(err)
	}
	var env checkpointEnvelope
	if err := unmarshalKnown(raw, &env); err != nil {
		return nil, damaged(err)
	}
	if env.Format != checkpointFormat {
		return nil, fmt.Errorf("train: %s: %s is not a checkpoint (format %q, want %q)", who, path, env.Format, checkpointFormat)
	}
	if env.Version != checkpointVersion {
		return nil, fmt.Errorf("train: %s: %s has checkpoint format version %d, this package reads version %d", who, path, env.Version, checkpointVersion)
	}
	sum, err := checksum(env.Checkpoint)
	if err != nil {
		return nil, damaged(err)
	}
	if sum != env.SHA256 {
		return nil, damaged(fmt.Errorf("its SHA-256 is %s, the file records %s", sum, env.SHA256))
	}
	// The model, most of the document, is decoded without a json.Decoder
	// (unmarshalKnown), the solver and the position strictly.
	var top struct {
		Config  json.RawMessage `json:"config"`
		Model   json.RawMessage `json:"model"`
		Adam    json.RawMessage `json:"adam"`
		Elapsed time.Duration   `json:"elapsedNS"`
		Fit     json.RawMessage `json:"fit"`
	}
	if err := unmarshalKnown(env.Checkpoint, &top); err != nil {
		return nil, damaged(err)
	}
	doc := checkpointDoc{Config: top.Config, Model: top.Model, Elapsed: top.Elapsed}
	for _, part := range []struct {
		raw json.RawMessage
		v   any
	}{{top.Adam, &doc.Adam}, {top.Fit, &doc.Fit}} {
		if part.raw == nil {
			continue
		}
		if err := strict(part.raw, part.v); err != nil {
			return nil, damaged(err)
		}
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
	base  fitState  // kind, rows and data of the call
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
		base: fitState{Kind: s.Kind, Rows: s.Rows, Data: s.Data}}
}

// due reports whether Every has passed since the last checkpoint.
func (c *checkpointer) due() bool {
	return c != nil && c.m.now().Sub(c.last) >= c.every
}

// write writes a checkpoint after epochs complete epochs and batch
// batches of the next, whose shuffling stream started at rng and whose
// statistics are acc, with the state of early stopping (nil without it),
// whether it stopped the call, and ℓ₀ of the divergence rule (nil when not
// yet taken).
func (c *checkpointer) write(epochs, batch int, rng []byte, acc *accumulator, hist History, early *earlyState, stopped bool, ref *float64) error {
	m := c.m
	now := m.now()
	s := c.base
	s.Epochs, s.Batch, s.RNG, s.Acc, s.History = epochs, batch, rng, acc.state(), hist
	s.Early, s.Stopped, s.Ref = early, stopped, ref
	doc := checkpointDoc{Elapsed: m.trained + now.Sub(c.start), Fit: s}
	var err error
	if doc.Config, err = m.runConfig(); err != nil {
		return c.fail(err)
	}
	if doc.Model, err = m.marshal(); err != nil {
		return c.fail(err)
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
	out, err := json.Marshal(&checkpointEnvelope{Format: checkpointFormat, Version: checkpointVersion, SHA256: digest(raw), Checkpoint: raw})
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
	return fmt.Errorf("writing the checkpoint %s: %w", c.path, err)
}

// startRun returns the state a Fit call of kind on x and y, in epochs of
// batches batches, starts from: the interrupted call a Resume restored,
// after checking that it is of the same kind and data, or a fresh one.
// It consumes m.resumed unless it returns an error.
func (m *Model) startRun(kind string, x, y *mat.Dense, batches int) (*fitState, error) {
	s := m.resumed
	if s == nil && m.cfg.Checkpoint.Dir == "" {
		return &fitState{Kind: kind}, nil
	}
	rows, _ := x.Dims()
	data := dataFingerprint(x, y)
	if s == nil {
		return &fitState{Kind: kind, Rows: rows, Data: data}, nil
	}
	switch {
	case s.Kind != kind:
		return nil, fmt.Errorf("train: %s: the resumed checkpoint was written by %s", kind, s.Kind)
	case s.Rows != rows:
		return nil, fmt.Errorf("train: %s: the resumed checkpoint was written for %d training samples, got %d", kind, s.Rows, rows)
	case s.Data != data:
		return nil, fmt.Errorf("train: %s: the resumed checkpoint was written for other training data (SHA-256 %s, got %s)", kind, s.Data, data)
	case s.Batch >= batches:
		return nil, fmt.Errorf("train: %s: the resumed checkpoint is at batch %d of an epoch of %d", kind, s.Batch, batches)
	}
	m.resumed = nil
	s.History = slices.Clip(s.History)
	return s, nil
}
