package train

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/ckptfile"
	"github.com/enforce-nn/enforce/layers"
)

// File format identification written by Save.
const (
	formatName = "enforce/train.Model"
	// formatVersion is the version Save writes. Version 1 (no checksum,
	// MLP weights as a list of slices) is still read.
	formatVersion = 2
)

// Backbone kinds recorded in a file.
const (
	backboneMLP    = "mlp"
	backboneCustom = "custom"
)

// body holds the fields shared by every format version: the architecture,
// the dimensions of the constraint, the settings and the standardisation.
// encoding/json writes every float64 in the shortest form that parses back
// to the same bits, so weights and standardisation round-trip exactly.
type body struct {
	Sizes         []int             `json:"sizes"`
	Hidden        layers.Activation `json:"hidden"`
	Output        layers.Activation `json:"output"`
	Constraint    dims              `json:"constraint"`
	Mode          Mode              `json:"mode"`
	Train         settings          `json:"train"`
	Infer         settings          `json:"infer"`
	LambdaD       float64           `json:"lambdaD"`
	LambdaC       float64           `json:"lambdaC"`
	LearnRate     float64           `json:"learnRate"`
	BatchSize     int               `json:"batchSize"`
	Epochs        int               `json:"epochs"`
	Seed          uint64            `json:"seed"`
	AlwaysProject bool              `json:"alwaysProject"`
	Standardize   bool              `json:"standardize"`
	// Added after format version 2's first release; absent means the
	// zero value (SquaredNorm; the default floor, which matters only for
	// refitting, since the fitted scales are saved).
	Penalty        Penalty           `json:"penalty,omitempty"`
	OutputStdFloor float64           `json:"outputStdFloor,omitempty"`
	Precision      enforce.Precision `json:"precision,omitempty"` // 0 for float64, so float64 files are unchanged
	Warmup         int               `json:"warmup,omitempty"`    // absent before Config.Warmup existed: none
	XScale         *scale            `json:"xScale,omitempty"`
	YScale         *scale            `json:"yScale,omitempty"`
	// Fingerprint, added later, records the constraint's values at a few
	// probe points (fingerprint.go); a file without one loads with no
	// check of the constraint beyond its sizes.
	Fingerprint *fingerprint `json:"fingerprint,omitempty"`
}

// fileV1 is the document of format version 1: the body and the MLP's
// weights W0, b0, W1, b1, … at the top level.
type fileV1 struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	body
	Weights [][]float64 `json:"weights"`
}

// envelope is the document of format version 2: the model and the SHA-256
// checksum of its compact JSON encoding.
type envelope struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	SHA256  string          `json:"sha256"`
	Model   json.RawMessage `json:"model"`
}

// modelV2 is the model of format version 2: the body, the kind of backbone
// and its learnable tensors by name and shape.
type modelV2 struct {
	body
	Backbone string  `json:"backbone"`
	Params   []param `json:"params"`
}

// param is a learnable tensor: its values in row-major order.
type param struct {
	Name   string    `json:"name"`
	Shape  []int     `json:"shape"`
	Values []float64 `json:"values"`
}

// dims are the constraint's Dims and latent count.
type dims struct {
	NX     int `json:"nx"`
	NY     int `json:"ny"`
	NC     int `json:"nc"`
	Latent int `json:"latent"`
}

type scale struct {
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
}

// settings is enforce.Settings with its enumerations as integers (their
// String forms are for people; the numbers are the API's constants). It
// holds every field of enforce.Settings: TestSaveLoadEverySetting fails
// for a field that is not saved.
type settings struct {
	Tol      float64   `json:"tol"`
	MinDepth int       `json:"minDepth"`
	MaxDepth int       `json:"maxDepth"`
	Measure  *int      `json:"measure,omitempty"` // absent: enforce.AutoMeasure
	Reg      float64   `json:"reg"`
	Weights  int       `json:"weights"`
	Diag     []float64 `json:"diag,omitempty"`
	Grad     int       `json:"grad"`
	// Added in format version 2; absent means the zero value.
	Recompute  bool    `json:"recompute,omitempty"`
	MaxStep    float64 `json:"maxStep,omitempty"`
	LineSearch bool    `json:"lineSearch,omitempty"`
	// Added in format version 2 after its first release; absent (files
	// written before) means Auto, which those files' models used.
	Precision int `json:"precision,omitempty"`
	// Added after that; absent means false.
	RequireTol bool `json:"requireTol,omitempty"`
	// Added with the sparse path; absent (files written before) means
	// PathAuto, whose choice those files' dense-only constraints leave
	// dense.
	Path int `json:"path,omitempty"`
	// Added with the step control of issue 54; absent (files written
	// before) means zero: the undamped steps and no fallback those
	// files' models used.
	Damping   float64 `json:"damping,omitempty"`
	Smoothing float64 `json:"smoothing,omitempty"`
	// Added with Settings.Chord; absent means zero: every step factors.
	Chord int `json:"chord,omitempty"`
	// Added with Settings.ChordCG; absent means zero.
	ChordCG int `json:"chord_cg,omitempty"`
	// Added with Settings.EqualitySteps; absent means zero: no steps on
	// the equalities first.
	EqualitySteps int `json:"equality_steps,omitempty"`
	// Added with Settings.SmoothingFirstDepth; absent means zero: the
	// plain attempt's 15 steps of the files written before.
	SmoothingFirstDepth int `json:"smoothing_first_depth,omitempty"`
	// Added with Settings.StopWhenFeasible; absent means false: samples
	// stop on the whole system's residual, as in the files written before.
	StopWhenFeasible bool `json:"stop_when_feasible,omitempty"`
	// Added with Settings.Nonmonotone; absent means zero: the monotone
	// line search of the files written before.
	Nonmonotone int `json:"nonmonotone,omitempty"`
	// Added with Settings.SmoothingLadder; absent means none: Smoothing's
	// stage alone, as in the files written before.
	SmoothingLadder []float64 `json:"smoothing_ladder,omitempty"`
	// Added with Settings.SmoothingNonmonotone; absent means zero: the
	// last stage uses Nonmonotone, as in the files written before.
	SmoothingNonmonotone int `json:"smoothing_nonmonotone,omitempty"`
	// Added with Settings.SmoothingPatience; absent means zero: the plain
	// attempt runs its whole length, as in the files written before.
	SmoothingPatience int `json:"smoothing_patience,omitempty"`
	// Added with Settings.SmoothingFromAttempt; absent means false: the
	// fallback starts from ŷ, as in the files written before.
	SmoothingFromAttempt bool `json:"smoothing_from_attempt,omitempty"`
}

// The saved measure keeps the numbering of the files written before
// enforce.AutoMeasure existed, 0 for max|c| and 1 for mean|c|, and
// AutoMeasure is written as no measure at all.
func measureCode(m enforce.Measure) *int {
	var code int
	switch m {
	case enforce.AutoMeasure:
		return nil
	case enforce.MaxAbs:
		code = 0
	case enforce.MeanAbs:
		code = 1
	default:
		code = int(m) + 100 // not a measure: rejected when loaded
	}
	return &code
}

func measureOf(code *int) enforce.Measure {
	switch {
	case code == nil:
		return enforce.AutoMeasure
	case *code == 0:
		return enforce.MaxAbs
	case *code == 1:
		return enforce.MeanAbs
	}
	return enforce.Measure(*code + 100) // not a measure: NewAdaNP rejects it
}

func fromSettings(s enforce.Settings) settings {
	return settings{Tol: s.Tol, MinDepth: s.MinDepth, MaxDepth: s.MaxDepth, Measure: measureCode(s.Measure),
		Reg: s.Reg, Weights: int(s.Weights), Diag: s.Diag, Grad: int(s.Grad),
		Recompute: s.Recompute, MaxStep: s.MaxStep, LineSearch: s.LineSearch, Precision: int(s.Precision),
		RequireTol: s.RequireTol, Path: int(s.Path), Damping: s.Damping, Smoothing: s.Smoothing, Chord: s.Chord, ChordCG: s.ChordCG, EqualitySteps: s.EqualitySteps, SmoothingFirstDepth: s.SmoothingFirstDepth, StopWhenFeasible: s.StopWhenFeasible, Nonmonotone: s.Nonmonotone, SmoothingLadder: s.SmoothingLadder, SmoothingNonmonotone: s.SmoothingNonmonotone, SmoothingPatience: s.SmoothingPatience, SmoothingFromAttempt: s.SmoothingFromAttempt}
}

func (s settings) settings() enforce.Settings {
	return enforce.Settings{Tol: s.Tol, MinDepth: s.MinDepth, MaxDepth: s.MaxDepth, Measure: measureOf(s.Measure),
		Reg: s.Reg, Weights: enforce.Weighting(s.Weights), Diag: s.Diag, Grad: enforce.GradMode(s.Grad),
		Recompute: s.Recompute, MaxStep: s.MaxStep, LineSearch: s.LineSearch, Precision: enforce.Precision(s.Precision),
		RequireTol: s.RequireTol, Path: enforce.Path(s.Path), Damping: s.Damping, Smoothing: s.Smoothing, Chord: s.Chord, ChordCG: s.ChordCG, EqualitySteps: s.EqualitySteps, SmoothingFirstDepth: s.SmoothingFirstDepth, StopWhenFeasible: s.StopWhenFeasible, Nonmonotone: s.Nonmonotone, SmoothingLadder: s.SmoothingLadder, SmoothingNonmonotone: s.SmoothingNonmonotone, SmoothingPatience: s.SmoothingPatience, SmoothingFromAttempt: s.SmoothingFromAttempt}
}

// v1Grad maps a version-1 gradient mode to today's: version 1's Implicit
// (2) was the projector at the final point, now FinalProjector; Implicit
// now names the curvature-aware implicit gradient.
func (s settings) v1Grad() settings {
	if enforce.GradMode(s.Grad) == enforce.Implicit {
		s.Grad = int(enforce.FinalProjector)
	}
	return s
}

func constraintDims(c enforce.Constraint) dims {
	var d dims
	d.NX, d.NY, d.NC = c.Dims()
	d.Latent = enforce.CapabilitiesOf(c).Latent
	return d
}

func toScale(s *layers.Standardizer) *scale {
	if s == nil {
		return nil
	}
	return &scale{Mean: s.Mean, Std: s.Std}
}

func (s *scale) standardizer() *layers.Standardizer {
	if s == nil {
		return nil
	}
	return &layers.Standardizer{Mean: s.Mean, Std: s.Std}
}

// originalUnits returns s with Identity weights replaced by the
// equivalent Diagonal weights of ones, which a standardising Model leaves
// as they are.
func originalUnits(s settings, d dims) settings {
	if enforce.Weighting(s.Weights) != enforce.Identity || d.NY-d.Latent <= 0 {
		return s
	}
	s.Weights, s.Diag = int(enforce.Diagonal), make([]float64, d.NY-d.Latent)
	for j := range s.Diag {
		s.Diag[j] = 1
	}
	return s
}

// checksum returns the hex SHA-256 of the compact form of a JSON value.
func checksum(raw []byte) (string, error) {
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	return digest(buf.Bytes()), nil
}

// digest returns the hex SHA-256 of a compact JSON value (json.Marshal's
// output is compact): checksum without the copy that compacts it.
func digest(compact []byte) string {
	sum := sha256.Sum256(compact)
	return hex.EncodeToString(sum[:])
}

// Save writes the model to w as a JSON document (format version 2): the
// architecture, the dimensions of the constraint, the settings, the
// standardisation and every learnable tensor of the backbone by name and
// shape, every float64 exactly, with a SHA-256 checksum of the model that
// Load verifies, so that a damaged file (a flipped digit) is rejected
// rather than loaded as a different model. The constraint and a custom
// Backbone are code and are not written (see LoadBackbone); the optimiser
// state and the shuffling stream are not written either, so training a
// loaded model continues with a fresh Adam (a checkpoint writes them: see
// Config.Checkpoint and Resume). What it writes of the constraint is its
// sizes and a fingerprint: c(x, y) and two products with ∂c/∂y at three
// deterministic probe points (inside the span of the standardisation when
// the model has one), which Load evaluates again to refuse a constraint
// that differs (ErrConstraintMismatch). For a constraint that declares
// its Jacobian's sparsity pattern (enforce.Capabilities.Sparse) the
// products are computed in that pattern, never from a dense nc×ny
// Jacobian, so Save, Load and Resume take memory and time in proportion
// to the file (O(nc + ny) numbers and the weights) and the nonzeros:
// TestSaveLoadSparseMemory bounds the heap Save and Load add together by
// 400 MB at 2·10⁴ equations with 4·10⁴ outputs (about 230 MB measured;
// BenchmarkSaveLoadSparse times them). It returns an error for a nil
// model or writer, for a model that has not been fitted (ErrNotFitted),
// for weights that are not finite, and when w fails.
func (m *Model) Save(w io.Writer) error {
	if m == nil {
		return fmt.Errorf("train: Save: %w", errNilModel)
	}
	if w == nil {
		return errors.New("train: Save: nil writer")
	}
	if !m.fitted {
		return fmt.Errorf("train: Save: %w", ErrNotFitted)
	}
	raw, err := m.marshal()
	if err != nil {
		return fmt.Errorf("train: Save: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return fmt.Errorf("train: Save: %w", err)
	}
	out.WriteByte('\n')
	if _, err := w.Write(out.Bytes()); err != nil {
		return fmt.Errorf("train: Save: %w", err)
	}
	return nil
}

// marshal returns the document Save writes, compact (json.Marshal's
// form; Save indents it as a json.Encoder with SetIndent("", "  ") would,
// to the same bytes, with json.Indent sizing its output once rather than
// an encoder's buffers growing by appending). Checkpoints hold it as it
// is.
func (m *Model) marshal() ([]byte, error) {
	cfg := m.Config()
	doc := modelV2{
		body: body{
			Sizes:          cfg.Sizes,
			Hidden:         cfg.Hidden,
			Output:         cfg.Output,
			Constraint:     constraintDims(cfg.Constraint),
			Mode:           cfg.Mode,
			Train:          fromSettings(cfg.Train),
			Infer:          fromSettings(cfg.Infer),
			LambdaD:        m.cfg.lambdaD,
			LambdaC:        m.cfg.LambdaC,
			LearnRate:      cfg.LearnRate,
			BatchSize:      cfg.BatchSize,
			Epochs:         cfg.Epochs,
			Seed:           cfg.Seed,
			AlwaysProject:  cfg.AlwaysProject,
			Standardize:    cfg.Standardize,
			Penalty:        cfg.Penalty,
			OutputStdFloor: cfg.OutputStdFloor,
			Precision:      m.cfg.precision(),
			Warmup:         cfg.Warmup,
			XScale:         toScale(m.sx),
			YScale:         toScale(m.sy),
			Fingerprint:    newFingerprint(m.cfg.Constraint, m.sparseJacobian(), m.sx, m.sy),
		},
		Backbone: backboneMLP,
	}
	if m.cfg.Backbone != nil {
		doc.Backbone = backboneCustom
	}
	for i, ps := range m.Params() {
		v, _ := float64s(m.params[i].Data())
		if !allFinite(v) {
			return nil, fmt.Errorf("learnable %q is not finite", ps.Name)
		}
		doc.Params = append(doc.Params, param{Name: ps.Name, Shape: ps.Shape, Values: v})
	}
	raw, err := json.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(&envelope{Format: formatName, Version: formatVersion, SHA256: digest(raw), Model: raw})
}

// SaveFile writes the model to the named file with Save, atomically: it
// writes a temporary file in the same folder, flushes it to stable storage
// and renames it over path, so that a failed save leaves an existing file
// untouched and no reader ever sees a partial file. A new file gets
// permissions 0644; an existing one keeps its permissions.
//
// A symbolic link is followed (through any chain of links): the file it
// points to is replaced, atomically in that file's folder, and the link
// stays a link. SaveFile returns an error, and changes nothing, when path
// is a folder or a link to one, a dangling link, or anything else that is
// not a regular file.
func (m *Model) SaveFile(path string) (err error) {
	if m == nil {
		return fmt.Errorf("train: SaveFile: %w", errNilModel)
	}
	if !m.fitted {
		return fmt.Errorf("train: SaveFile: %w", ErrNotFitted)
	}
	target, mode, err := ckptfile.Target(path)
	if err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err := m.Save(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	// Make the rename durable where the platform allows syncing a folder.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// saved is a decoded document of any version.
type saved struct {
	body
	backbone string
	params   []param     // version 2
	weights  [][]float64 // version 1
}

// Load reads a model written by Save, for the constraint c it was trained
// with (which must have the dimensions recorded in the file), with its MLP
// backbone; a model with a custom Backbone is read with LoadBackbone.
// Progress output is not saved: the loaded model logs to os.Stderr until
// SetProgress changes it. Load reads format versions 1 and 2; it returns
// an error for a document that is not a saved Model, of another format
// version, followed by anything but white space, whose checksum does not
// match (version 2), for a constraint of other dimensions, or for weights
// or standardisation that do not fit the architecture.
//
// A file records a fingerprint of the constraint (see Save): a constraint
// of the right sizes whose values or Jacobian differ from the saved ones at
// the probe points, by more than a relative 1e-9 of the largest magnitude
// compared, is refused with an error wrapping ErrConstraintMismatch
// (errors.Is), by Load, LoadFile, LoadBackbone, Restore and Resume alike.
// Files written before fingerprints existed (and files of a constraint
// not finite at any probe point) have none and load with no such check.
func Load(r io.Reader, c enforce.Constraint) (*Model, error) {
	return load(r, c, nil)
}

// LoadBackbone is Load for a model whose backbone build makes: the file's
// learnable tensors are matched to build's by name and shape. It also
// reads an MLP model into a backbone with the same learnables.
func LoadBackbone(r io.Reader, c enforce.Constraint, build BackboneFunc) (*Model, error) {
	if build == nil {
		return nil, errors.New("train: LoadBackbone: nil BackboneFunc")
	}
	return load(r, c, build)
}

func load(r io.Reader, c enforce.Constraint, build BackboneFunc) (*Model, error) {
	if c == nil {
		return nil, errors.New("train: Load: nil constraint")
	}
	f, err := decode(r)
	if err != nil {
		return nil, err
	}
	if build == nil && f.backbone == backboneCustom {
		return nil, errors.New("train: Load: the file holds a custom backbone; read it with LoadBackbone")
	}
	if got := constraintDims(c); got != f.Constraint {
		return nil, fmt.Errorf("train: Load: the file is for a constraint with (nx, ny, nc, latent) = %v, the given one has %v",
			f.Constraint, got)
	}
	cfg := Config{
		Sizes: f.Sizes, Hidden: f.Hidden, Output: f.Output, Constraint: c, Mode: f.Mode,
		Train: f.Train.settings(), Infer: f.Infer.settings(),
		LambdaD: f.LambdaD, LambdaC: f.LambdaC, LearnRate: f.LearnRate,
		BatchSize: f.BatchSize, Epochs: f.Epochs, Seed: f.Seed,
		AlwaysProject: f.AlwaysProject, Standardize: f.Standardize,
		Penalty: f.Penalty, OutputStdFloor: f.OutputStdFloor, Precision: f.Precision, Warmup: f.Warmup,
	}
	if build != nil {
		cfg.Backbone, cfg.Hidden, cfg.Output = build, 0, 0
		if n := len(f.Sizes); n >= 2 {
			cfg.Sizes = []int{f.Sizes[0], f.Sizes[n-1]}
		}
	}
	if cfg.LambdaD == 0 {
		cfg.LambdaD = -1
	}
	m, err := New(cfg)
	if err != nil {
		return nil, fmt.Errorf("train: Load: %w", err)
	}
	if err := m.restore(f); err != nil {
		return nil, err
	}
	return m, nil
}

// LoadFile reads a model from the named file with Load.
func LoadFile(path string, c enforce.Constraint) (*Model, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("train: LoadFile: %w", err)
	}
	defer fh.Close()
	return Load(bufio.NewReader(fh), c)
}

// Restore reads the weights and standardisation of a model written by
// Save into m, keeping m's settings. The file must describe the same
// architecture: the same kind of backbone (an MLP of the same layer sizes
// and activations, or learnables of the same names and shapes), mode,
// constraint dimensions and Standardize; otherwise Restore returns an
// error saying what differs and m is unchanged.
func (m *Model) Restore(r io.Reader) error {
	if m == nil {
		return fmt.Errorf("train: Restore: %w", errNilModel)
	}
	f, err := decode(r)
	if err != nil {
		return err
	}
	var diffs []error
	mine := backboneMLP
	if m.cfg.Backbone != nil {
		mine = backboneCustom
	}
	switch {
	case f.backbone != mine:
		diffs = append(diffs, fmt.Errorf("a backbone of kind %s, the model's is %s", f.backbone, mine))
	case mine == backboneMLP && !slices.Equal(f.Sizes, m.cfg.Sizes):
		diffs = append(diffs, fmt.Errorf("layer sizes %v, the model has %v", f.Sizes, m.cfg.Sizes))
	}
	if mine == backboneMLP && (f.Hidden != m.cfg.Hidden || f.Output != m.cfg.Output) {
		diffs = append(diffs, fmt.Errorf("activations %v/%v, the model has %v/%v", f.Hidden, f.Output, m.cfg.Hidden, m.cfg.Output))
	}
	if f.Mode != m.cfg.Mode {
		diffs = append(diffs, fmt.Errorf("mode %v, the model has %v", f.Mode, m.cfg.Mode))
	}
	if got := constraintDims(m.cfg.Constraint); got != f.Constraint {
		diffs = append(diffs, fmt.Errorf("a constraint with (nx, ny, nc, latent) = %v, the model's has %v", f.Constraint, got))
	}
	if f.Standardize != m.cfg.Standardize {
		diffs = append(diffs, fmt.Errorf("Standardize %v, the model has %v", f.Standardize, m.cfg.Standardize))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("train: Restore: the file is for another architecture: %w", errors.Join(diffs...))
	}
	return m.restore(f)
}

// restore sets the weights and standardisation of f, checking them first;
// m is unchanged on error.
func (m *Model) restore(f *saved) error {
	if err := f.Fingerprint.check(m.cfg.Constraint, m.sparseJacobian()); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	sx, sy := f.XScale.standardizer(), f.YScale.standardizer()
	switch {
	case !f.Standardize && (sx != nil || sy != nil):
		return errors.New("train: the file has standardisation but Standardize is off")
	case f.Standardize && sx == nil && sy != nil:
		return errors.New("train: the file has an output but no input standardisation")
	}
	if sx != nil {
		if err := sx.Validate(); err != nil || sx.Dim() != m.cfg.nx {
			return fmt.Errorf("train: input standardisation of the file: want Dim %d and valid values: %v", m.cfg.nx, err)
		}
	}
	if sy != nil {
		if err := sy.Validate(); err != nil || sy.Dim() != m.cfg.ny {
			return fmt.Errorf("train: output standardisation of the file: want Dim %d and valid values: %v", m.cfg.ny, err)
		}
	}
	w := f.weights
	if f.params != nil {
		var err error
		if w, err = m.matchParams(f.params); err != nil {
			return fmt.Errorf("train: learnables of the file: %w", err)
		}
	}
	backup := m.Weights()
	if err := m.SetWeights(w); err != nil {
		return fmt.Errorf("train: weights of the file: %w", err)
	}
	if err := m.setStandardization(sx, sy); err != nil {
		_ = m.SetWeights(backup)
		return err
	}
	return nil
}

// matchParams returns the values of ps in the order of m's learnables,
// matched by name and checked against their shapes.
func (m *Model) matchParams(ps []param) ([][]float64, error) {
	byName := make(map[string]param, len(ps))
	for _, p := range ps {
		if _, dup := byName[p.Name]; dup {
			return nil, fmt.Errorf("%q appears twice", p.Name)
		}
		byName[p.Name] = p
	}
	w := make([][]float64, len(m.params))
	for i, want := range m.Params() {
		p, ok := byName[want.Name]
		switch {
		case !ok:
			return nil, fmt.Errorf("the model's %q is missing", want.Name)
		case !slices.Equal(p.Shape, want.Shape):
			return nil, fmt.Errorf("%q has shape %v, the model's %v", want.Name, p.Shape, want.Shape)
		}
		w[i] = p.Values
		delete(byName, want.Name)
	}
	for name := range byName {
		return nil, fmt.Errorf("%q is not a learnable of the model", name)
	}
	return w, nil
}

// decode reads and identifies a saved model of any version, rejecting
// trailing data and, for version 2, a checksum mismatch.
func decode(r io.Reader) (*saved, error) {
	if r == nil {
		return nil, errors.New("train: nil reader")
	}
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("train: reading a saved model: %w", err)
	}
	raw, err := document(data)
	if err != nil {
		return nil, fmt.Errorf("train: reading a saved model: %w", err)
	}
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("train: reading a saved model: %w", err)
	}
	if head.Format != formatName {
		return nil, fmt.Errorf("train: not a saved model (format %q, want %q)", head.Format, formatName)
	}
	switch head.Version {
	case 1:
		var f fileV1
		if err := strict(raw, &f); err != nil {
			return nil, err
		}
		// Version 1 models that standardise were trained and predicted
		// with W = I in original units; Identity now means the
		// standardised metric, so keep their projections as they were.
		if f.Standardize {
			f.Train = originalUnits(f.Train, f.Constraint)
			f.Infer = originalUnits(f.Infer, f.Constraint)
		}
		f.Train, f.Infer = f.Train.v1Grad(), f.Infer.v1Grad()
		return &saved{body: f.body, backbone: backboneMLP, weights: f.Weights}, nil
	case formatVersion:
		var env envelope
		if err := unmarshalKnown(raw, &env); err != nil {
			return nil, fmt.Errorf("train: reading a saved model: %w", err)
		}
		sum, err := checksum(env.Model)
		if err != nil {
			return nil, fmt.Errorf("train: reading a saved model: %w", err)
		}
		if sum != env.SHA256 {
			return nil, fmt.Errorf("train: the saved model is damaged: its SHA-256 is %s, the file records %s", sum, env.SHA256)
		}
		var mv modelV2
		if err := strict(env.Model, &mv); err != nil {
			return nil, err
		}
		if mv.Backbone != backboneMLP && mv.Backbone != backboneCustom {
			return nil, fmt.Errorf("train: reading a saved model: unknown backbone kind %q", mv.Backbone)
		}
		if mv.Params == nil {
			mv.Params = []param{}
		}
		return &saved{body: mv.body, backbone: mv.Backbone, params: mv.Params}, nil
	}
	return nil, fmt.Errorf("train: saved model has format version %d, this package reads versions 1 and %d", head.Version, formatVersion)
}

// readAll reads r to its end, in one allocation when r tells its length
// (a bytes.Reader or bytes.Buffer holding a saved model, say), since a
// model with a large constraint is tens of megabytes.
func readAll(r io.Reader) ([]byte, error) {
	if l, ok := r.(interface{ Len() int }); ok {
		buf := bytes.NewBuffer(make([]byte, 0, l.Len()+bytes.MinRead))
		_, err := buf.ReadFrom(r)
		return buf.Bytes(), err
	}
	return io.ReadAll(r)
}

// document returns the JSON value that data holds, with nothing but white
// space around it, without copying it; it returns an error for data that
// hold no JSON value or hold data after it.
func document(data []byte) ([]byte, error) {
	if json.Valid(data) {
		return data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("data after the document at byte %d", dec.InputOffset())
}

// unmarshalKnown decodes the JSON object raw into the struct v points to,
// rejecting a key that names none of its fields (matched as encoding/json
// matches them, ignoring case), as a json.Decoder with
// DisallowUnknownFields does at the top level, without the decoder's
// buffered copies of the document (its buffer grows to twice the
// document's size): for envelopes holding a model of tens of megabytes,
// whose own fields are then decoded by strict. The struct's fields must
// have json tags naming them; fields of its fields are not checked.
func unmarshalKnown(raw []byte, v any) error {
	var keys map[string]skipped
	if err := json.Unmarshal(raw, &keys); err != nil {
		return err
	}
	t := reflect.TypeOf(v).Elem()
	for k := range keys {
		known := false
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if strings.EqualFold(k, name) {
				known = true
				break
			}
		}
		if !known {
			return fmt.Errorf("json: unknown field %q", k)
		}
	}
	return json.Unmarshal(raw, v)
}

// skipped is a JSON value decoded without being read.
type skipped struct{}

// UnmarshalJSON does nothing.
func (*skipped) UnmarshalJSON([]byte) error { return nil }

// strict decodes raw into v, rejecting unknown fields.
func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("train: reading a saved model: %w", err)
	}
	return nil
}
