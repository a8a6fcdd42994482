package train

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
)

// File format identification written by Save.
const (
	formatName    = "enforce/train.Model"
	formatVersion = 1
)

// file is the JSON document written by Save. encoding/json writes every
// float64 in the shortest form that parses back to the same bits, so
// weights and standardisation round-trip exactly.
type file struct {
	Format        string            `json:"format"`
	Version       int               `json:"version"`
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
	XScale        *scale            `json:"xScale,omitempty"`
	YScale        *scale            `json:"yScale,omitempty"`
	Weights       [][]float64       `json:"weights"`
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
// String forms are for people; the numbers are the API's constants).
type settings struct {
	Tol      float64   `json:"tol"`
	MinDepth int       `json:"minDepth"`
	MaxDepth int       `json:"maxDepth"`
	Measure  int       `json:"measure"`
	Reg      float64   `json:"reg"`
	Weights  int       `json:"weights"`
	Diag     []float64 `json:"diag,omitempty"`
	Grad     int       `json:"grad"`
}

func fromSettings(s enforce.Settings) settings {
	return settings{Tol: s.Tol, MinDepth: s.MinDepth, MaxDepth: s.MaxDepth, Measure: int(s.Measure),
		Reg: s.Reg, Weights: int(s.Weights), Diag: s.Diag, Grad: int(s.Grad)}
}

func (s settings) settings() enforce.Settings {
	return enforce.Settings{Tol: s.Tol, MinDepth: s.MinDepth, MaxDepth: s.MaxDepth, Measure: enforce.Measure(s.Measure),
		Reg: s.Reg, Weights: enforce.Weighting(s.Weights), Diag: s.Diag, Grad: enforce.GradMode(s.Grad)}
}

func constraintDims(c enforce.Constraint) dims {
	var d dims
	d.NX, d.NY, d.NC = c.Dims()
	if l, ok := c.(enforce.Latent); ok {
		d.Latent = l.Latent()
	}
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

// Save writes the model to w as a versioned JSON document: the
// architecture, the dimensions of the constraint, the settings, the
// standardisation and the weights, every float64 exactly. The constraint
// itself is code and is not written; the optimiser state and the
// shuffling stream are not written either, so training a loaded model
// continues with a fresh Adam.
func (m *Model) Save(w io.Writer) error {
	cfg := m.Config()
	f := file{
		Format:        formatName,
		Version:       formatVersion,
		Sizes:         cfg.Sizes,
		Hidden:        cfg.Hidden,
		Output:        cfg.Output,
		Constraint:    constraintDims(cfg.Constraint),
		Mode:          cfg.Mode,
		Train:         fromSettings(*cfg.Train),
		Infer:         fromSettings(cfg.Infer),
		LambdaD:       m.cfg.lambdaD,
		LambdaC:       m.cfg.lambdaC,
		LearnRate:     cfg.LearnRate,
		BatchSize:     cfg.BatchSize,
		Epochs:        cfg.Epochs,
		Seed:          cfg.Seed,
		AlwaysProject: cfg.AlwaysProject,
		Standardize:   cfg.Standardize,
		XScale:        toScale(m.sx),
		YScale:        toScale(m.sy),
		Weights:       m.Weights(),
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&f); err != nil {
		return fmt.Errorf("train: Save: %w", err)
	}
	return nil
}

// SaveFile writes the model to the named file with Save.
func (m *Model) SaveFile(path string) (err error) {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	defer func() {
		if cerr := fh.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("train: SaveFile: %w", cerr)
		}
	}()
	bw := bufio.NewWriter(fh)
	if err := m.Save(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("train: SaveFile: %w", err)
	}
	return nil
}

// Load reads a model written by Save, for the constraint c it was trained
// with (which must have the dimensions recorded in the file). Progress
// output is not saved: the loaded model logs to os.Stderr until
// SetProgress changes it. Load returns an error for a document that is not a saved
// Model, of another format version, for a constraint of other dimensions,
// or for weights or standardisation that do not fit the architecture.
func Load(r io.Reader, c enforce.Constraint) (*Model, error) {
	if c == nil {
		return nil, errors.New("train: Load: nil constraint")
	}
	f, err := decode(r)
	if err != nil {
		return nil, err
	}
	if got := constraintDims(c); got != f.Constraint {
		return nil, fmt.Errorf("train: Load: the file is for a constraint with (nx, ny, nc, latent) = %v, the given one has %v",
			f.Constraint, got)
	}
	train := f.Train.settings()
	cfg := Config{
		Sizes: f.Sizes, Hidden: f.Hidden, Output: f.Output, Constraint: c, Mode: f.Mode,
		Train: &train, Infer: f.Infer.settings(),
		LambdaD: f.LambdaD, LambdaC: f.LambdaC, LearnRate: f.LearnRate,
		BatchSize: f.BatchSize, Epochs: f.Epochs, Seed: f.Seed,
		AlwaysProject: f.AlwaysProject, Standardize: f.Standardize,
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
// architecture: layer sizes, activations, mode and constraint dimensions;
// otherwise Restore returns an error saying what differs and m is
// unchanged.
func (m *Model) Restore(r io.Reader) error {
	f, err := decode(r)
	if err != nil {
		return err
	}
	var diffs []error
	if !slices.Equal(f.Sizes, m.cfg.Sizes) {
		diffs = append(diffs, fmt.Errorf("layer sizes %v, the model has %v", f.Sizes, m.cfg.Sizes))
	}
	if f.Hidden != m.cfg.Hidden || f.Output != m.cfg.Output {
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

// restore sets the weights and standardisation of f, checking them first.
func (m *Model) restore(f *file) error {
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
	if err := m.SetWeights(f.Weights); err != nil {
		return fmt.Errorf("train: weights of the file: %w", err)
	}
	m.sx, m.sy = copyStd(sx), copyStd(sy)
	return nil
}

// decode reads and identifies a saved model.
func decode(r io.Reader) (*file, error) {
	if r == nil {
		return nil, errors.New("train: nil reader")
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("train: reading a saved model: %w", err)
	}
	switch {
	case f.Format != formatName:
		return nil, fmt.Errorf("train: not a saved model (format %q, want %q)", f.Format, formatName)
	case f.Version != formatVersion:
		return nil, fmt.Errorf("train: saved model has format version %d, this package reads version %d", f.Version, formatVersion)
	}
	return &f, nil
}
