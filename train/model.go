package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
)

// streamShuffle is the second PCG seed of the stream that shuffles the
// training samples, so that it is independent of the weight initialisation
// (which layers draws from streams 0, 1, … of the same seed).
const streamShuffle uint64 = 0x7261_696e

// streamInit is the stream of Config.PyTorchInit.
const streamInit uint64 = 0x696e_6974

// Model is a backbone MLP combined with a constraint as its Config's Mode
// says: ENFORCE (backbone + AdaNP), MLP or Soft. It holds the weights, the
// standardisation fitted on the first training set, the Adam state and
// the shuffling stream, so that successive Fit calls continue training.
//
// A Model is not safe for concurrent use, except that Predict and Backbone
// may be called from several goroutines while no training runs.
type Model struct {
	cfg    resolved
	view   *view
	train  *enforce.AdaNP // nil unless Mode is ENFORCE
	infer  *enforce.AdaNP
	mlp    *layers.MLP     // architecture, in a graph of its own
	params []*tensor.Dense // the weights, shared by every graph of the model
	sx, sy *layers.Standardizer
	solver *gorgonia.AdamSolver
	rng    *rand.Rand
}

// New returns an untrained Model for cfg. The weights are drawn from
// cfg.Seed. It returns an error if cfg is invalid: missing sizes or
// constraint, dimensions of the constraint that do not match the network,
// invalid AdaNP settings or weights.
func New(cfg Config) (*Model, error) {
	r, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	mlp, err := layers.NewMLP(gorgonia.NewGraph(), r.Sizes, r.Hidden, r.Output,
		layers.WithSeed(int64(r.Seed)), layers.WithInit(r.Init), layers.WithName("mlp"))
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	m := &Model{
		cfg:    r,
		view:   newView(r.Constraint, r.nx),
		mlp:    mlp,
		solver: gorgonia.NewAdamSolver(gorgonia.WithLearnRate(r.LearnRate)),
		rng:    rand.New(rand.NewPCG(r.Seed, streamShuffle)),
	}
	for _, n := range mlp.Learnables() {
		t, ok := n.Value().(*tensor.Dense)
		if !ok {
			return nil, fmt.Errorf("train: weight %q holds a %T", n.Name(), n.Value())
		}
		m.params = append(m.params, t)
	}
	if r.PyTorchInit {
		m.pyTorchInit()
	}
	if m.infer, err = enforce.NewAdaNP(r.Constraint, r.Infer); err != nil {
		return nil, fmt.Errorf("train: inference settings: %w", err)
	}
	if r.Mode == ENFORCE {
		if m.train, err = enforce.NewAdaNP(r.Constraint, r.train); err != nil {
			return nil, fmt.Errorf("train: training settings: %w", err)
		}
	}
	return m, nil
}

// pyTorchInit draws every weight and bias of a layer with fan-in n from
// U(−1/√n, 1/√n), layer by layer, W (row-major) before b.
func (m *Model) pyTorchInit() {
	rng := rand.New(rand.NewPCG(m.cfg.Seed, streamInit))
	for i, l := range m.mlp.Layers() {
		in, _ := l.Dims()
		a := 1 / math.Sqrt(float64(in))
		for _, p := range m.params[2*i : 2*i+2] {
			d := p.Data().([]float64)
			for k := range d {
				d[k] = a * (2*rng.Float64() - 1)
			}
		}
	}
}

// Config returns the model's configuration with defaults filled in
// (LambdaD is negative when the model has no displacement term).
func (m *Model) Config() Config {
	c := m.cfg.Config
	c.Sizes = append([]int(nil), c.Sizes...)
	c.LambdaD, c.LambdaC = m.cfg.lambdaD, m.cfg.lambdaC
	if c.LambdaD == 0 {
		c.LambdaD = -1
	}
	s := m.cfg.train
	s.Diag = append([]float64(nil), s.Diag...)
	if m.cfg.train.Diag == nil {
		s.Diag = nil
	}
	c.Train = &s
	c.Infer = m.infer.Settings()
	return c
}

// SetProgress sets where Fit writes its progress lines; nil silences it.
func (m *Model) SetProgress(w io.Writer) {
	m.cfg.Progress, m.cfg.Quiet = w, w == nil
}

// Weights returns copies of the backbone's weights W0, b0, W1, b1, … as
// layers.MLP.Weights lays them out.
func (m *Model) Weights() [][]float64 { return m.mlp.Weights() }

// SetWeights overwrites the backbone's weights with w, laid out as Weights
// returns them. It returns an error, and changes nothing, if a length is
// wrong or a value is not finite.
func (m *Model) SetWeights(w [][]float64) error {
	for i, s := range w {
		for j, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("train: weight %d[%d] = %v is not finite", i, j, v)
			}
		}
	}
	if err := m.mlp.SetWeights(w); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// Standardizers returns copies of the input and output standardisation,
// nil where the model has none (Standardize off, not yet fitted, or no
// output standardisation after FitUnsupervised).
func (m *Model) Standardizers() (x, y *layers.Standardizer) {
	return copyStd(m.sx), copyStd(m.sy)
}

// SetStandardizers sets the standardisation the network applies: x of
// Dim nx and y of Dim ny, y may be nil (no output standardisation). It
// returns an error if Config.Standardize is off or a Standardizer is
// invalid. Fit calls it with the training statistics on its first call;
// a custom training loop calls it (or FitStandardizers) before NewGraph.
func (m *Model) SetStandardizers(x, y *layers.Standardizer) error {
	if !m.cfg.Standardize {
		return errors.New("train: Config.Standardize is off")
	}
	if err := x.Validate(); err != nil || x.Dim() != m.cfg.nx {
		return fmt.Errorf("train: input Standardizer must be valid with Dim %d: %v", m.cfg.nx, err)
	}
	if y != nil {
		if err := y.Validate(); err != nil || y.Dim() != m.cfg.ny {
			return fmt.Errorf("train: output Standardizer must be valid with Dim %d: %v", m.cfg.ny, err)
		}
	}
	m.sx, m.sy = copyStd(x), copyStd(y)
	return nil
}

// FitStandardizers fits the standardisation on training inputs x and
// labels y (nil for unsupervised training) and sets it. It returns an
// error if Config.Standardize is off or the data are invalid.
func (m *Model) FitStandardizers(x, y *mat.Dense) error {
	if !m.cfg.Standardize {
		return errors.New("train: Config.Standardize is off")
	}
	if err := m.checkData(x, y, y != nil); err != nil {
		return err
	}
	sx, err := layers.FitStandardizer(x)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	var sy *layers.Standardizer
	if y != nil {
		if sy, err = layers.FitStandardizer(y); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	return m.SetStandardizers(sx, sy)
}

func copyStd(s *layers.Standardizer) *layers.Standardizer {
	if s == nil {
		return nil
	}
	return &layers.Standardizer{Mean: append([]float64(nil), s.Mean...), Std: append([]float64(nil), s.Std...)}
}

// TrainAdaNP returns the AdaNP of the training graph (nil unless Mode is
// ENFORCE) and InferAdaNP the one Predict applies.
func (m *Model) TrainAdaNP() *enforce.AdaNP { return m.train }

// InferAdaNP returns the AdaNP that Predict applies (in MLP and Soft
// modes, only to report residuals).
func (m *Model) InferAdaNP() *enforce.AdaNP { return m.infer }

// Predict returns the model's predictions for inputs x (rows are samples,
// Sizes[0] columns, original units) in original units, with the
// statistics of the inference AdaNP: in ENFORCE mode the backbone output
// projected by AdaNP.Project; in MLP and Soft modes the backbone output
// itself, with the residual reported by AdaNP.Check (Depth 0).
//
// The backbone runs in plain Go from the current weights (see Backbone), so
// Predict works for any number of rows and returns the same bits every
// time for the same weights and x. It returns an error for a nil, empty,
// wrongly shaped or non-finite x, for a model that standardises but has
// not been fitted, and when AdaNP fails (non-finite constraint values).
func (m *Model) Predict(x *mat.Dense) (*mat.Dense, enforce.Stats, error) {
	yhat, err := m.Backbone(x)
	if err != nil {
		return nil, enforce.Stats{}, err
	}
	xc := m.constraintInput(x)
	if m.cfg.Mode != ENFORCE {
		st, err := m.infer.Check(xc, yhat)
		if err != nil {
			return nil, st, fmt.Errorf("train: %w", err)
		}
		return yhat, st, nil
	}
	yt, st, err := m.infer.Project(xc, yhat)
	if err != nil {
		return nil, st, fmt.Errorf("train: %w", err)
	}
	return yt, st, nil
}

// Backbone returns the backbone's prediction ŷ for inputs x, before any
// projection, in original units. It evaluates the MLP in plain Go
// (gonum's matrix product and the math package's activations) from the
// current weights, so its results equal those of the training graph up to
// rounding and are the same bits on every call. It returns an error under
// the same conditions as Predict.
func (m *Model) Backbone(x *mat.Dense) (*mat.Dense, error) {
	if err := m.checkData(x, nil, false); err != nil {
		return nil, err
	}
	if m.cfg.Standardize && m.sx == nil {
		return nil, errors.New("train: the model standardises its inputs but has not been fitted (call Fit or SetStandardizers)")
	}
	yhat := m.forward(x)
	if !finite(yhat) {
		return nil, errors.New("train: the backbone output is not finite")
	}
	return yhat, nil
}

// constraintInput returns x, or nil for a constraint without inputs.
func (m *Model) constraintInput(x *mat.Dense) *mat.Dense {
	if m.cfg.constrainX {
		return x
	}
	return nil
}

// checkData validates inputs x and, when withY, labels y.
func (m *Model) checkData(x, y *mat.Dense, withY bool) error {
	if x == nil || x.IsEmpty() {
		return errors.New("train: no inputs (nil or empty x)")
	}
	r, c := x.Dims()
	if c != m.cfg.nx {
		return fmt.Errorf("train: x has %d columns, the network takes %d", c, m.cfg.nx)
	}
	if !finite(x) {
		return errors.New("train: x holds a NaN or an infinity")
	}
	if !withY {
		return nil
	}
	if y == nil || y.IsEmpty() {
		return errors.New("train: no labels (nil or empty y)")
	}
	yr, yc := y.Dims()
	switch {
	case yr != r:
		return fmt.Errorf("train: x has %d rows and y %d", r, yr)
	case yc != m.cfg.ny:
		return fmt.Errorf("train: y has %d columns, the network predicts %d", yc, m.cfg.ny)
	case !finite(y):
		return errors.New("train: y holds a NaN or an infinity")
	}
	return nil
}

// finite reports whether every entry of a is finite.
func finite(a *mat.Dense) bool {
	r, _ := a.Dims()
	for i := range r {
		if !allFinite(a.RawRowView(i)) {
			return false
		}
	}
	return true
}

// allFinite reports whether every value of v is finite.
func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
