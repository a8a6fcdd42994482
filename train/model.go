package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/adam"
	"github.com/enforce-nn/enforce/internal/isfinite"
	"github.com/enforce-nn/enforce/layers"
)

// streamShuffle is the second PCG seed of the stream that shuffles the
// training samples, so that it is independent of the weight initialisation
// (which layers draws from streams 0, 1, … of the same seed).
const streamShuffle uint64 = 0x7261_696e

// streamInit is the stream of Config.PyTorchInit.
const streamInit uint64 = 0x696e_6974

// Model is a backbone (the Config's MLP or its Backbone) combined with a
// constraint as its Config's Mode says: ENFORCE (backbone + AdaNP), MLP
// or Soft. It holds the weights, the
// standardisation fitted on the first training set, the Adam state and
// the shuffling stream, so that successive Fit calls continue training.
//
// A Model is not safe for concurrent use, except that Predict and Backbone
// may be called from several goroutines while no training runs (a custom
// Backbone's Predict, if it has one, must allow that too). The methods of
// a nil *Model return an error (or nothing) rather than panic.
type Model struct {
	cfg    resolved
	view   *view
	train  *enforce.AdaNP // nil unless Mode is ENFORCE
	infer  *enforce.AdaNP
	build  BackboneFunc
	net    Backbone        // the backbone, in a graph of its own
	mlp    *layers.MLP     // net when it is the Config's MLP, else nil
	params []*tensor.Dense // the weights, shared by every graph of the model
	names  []string        // the learnables' names
	backup []any           // the weights before a solver step, []float64 or []float32 as the model's
	sx, sy *layers.Standardizer
	// stdBufs holds *[]float64 buffers for the standardised inputs of
	// forwardTo when the backbone is the Config's MLP, which keeps no
	// reference to its input: Backbone and Predict then allocate nothing
	// for the standardisation (concurrent calls take buffers of their own).
	stdBufs sync.Pool
	solver  *adam.Solver
	pcg     *rand.PCG // the shuffling stream's state, saved by checkpoints
	rng     *rand.Rand

	// Checkpointing (checkpoint.go).
	trained time.Duration // time spent in Fit and FitUnsupervised
	resumed *fitState     // the interrupted Fit call a Resume restored
	now     func() time.Time
	// afterBatch, when set, runs after every batch of Fit (and after the
	// checkpoint that batch may write); an error stops Fit. Tests
	// interrupt training with it.
	afterBatch func() error
	// fitted: the weights are no longer New's random ones (see
	// ErrNotFitted).
	fitted bool
	// valX, valY are the validation set of Fit (SetValidation), or nil.
	valX, valY *mat.Dense
}

// ErrNotFitted is the error of Predict, Backbone, BackboneTo, Save and
// SaveFile on a model whose weights are still the random ones New drew:
// one that has not been trained (Fit, FitUnsupervised, or a custom loop on
// NewGraph or NewObjectiveGraph), loaded (Load, Restore, Resume) or given
// weights (SetWeights). To predict with the initial weights on purpose,
// say so: m.SetWeights(m.Weights()).
var ErrNotFitted = errors.New("train: the model has not been fitted: its weights are New's random initialisation (train it with Fit, load it, or call SetWeights; SetWeights(m.Weights()) predicts with the initial weights on purpose)")

// New returns an untrained Model for cfg. The weights are drawn from
// cfg.Seed. It returns an error if cfg is invalid: missing sizes or
// constraint, dimensions of the constraint that do not match the network,
// invalid AdaNP settings or weights.
func New(cfg Config) (*Model, error) {
	r, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	m := &Model{
		cfg:    r,
		view:   newView(r.Constraint, r.nx),
		build:  r.Backbone,
		solver: &adam.Solver{Eta: r.LearnRate},
		pcg:    rand.NewPCG(r.Seed, streamShuffle),
		now:    time.Now,
	}
	m.rng = rand.New(m.pcg)
	if m.build == nil {
		m.build = mlpBuilder(r)
	}
	g := gorgonia.NewGraph()
	if m.net, m.params, m.names, err = buildBackbone(m.build, g, r.dtype); err != nil {
		return nil, err
	}
	m.mlp, _ = m.net.(*layers.MLP)
	if r.Backbone != nil {
		// Check the backbone's shapes once, on a graph of its own.
		x := gorgonia.NewMatrix(g, r.dtype, gorgonia.WithShape(1, r.nx), gorgonia.WithName("train.x"))
		if _, err := forwardNode(m.net, x, r.ny); err != nil {
			return nil, err
		}
	}
	for i, p := range m.params {
		if !finiteValues(p.Data()) {
			return nil, fmt.Errorf("train: the initial value of learnable %q is not finite", m.names[i])
		}
	}
	if r.PyTorchInit {
		m.pyTorchInit()
	}
	if err := r.checkTheta(); err != nil {
		return nil, err
	}
	if r.learnsTheta() {
		if err := m.addTheta(); err != nil {
			return nil, err
		}
	}
	if m.infer, err = enforce.NewAdaNP(r.Constraint, r.Infer); err != nil {
		return nil, fmt.Errorf("train: inference settings: %w", err)
	}
	m.cfg.Infer = m.infer.Settings()
	if r.Mode == ENFORCE {
		if m.train, err = enforce.NewAdaNP(r.Constraint, r.train); err != nil {
			return nil, fmt.Errorf("train: training settings: %w", err)
		}
	}
	return m, nil
}

// maxMetricWeight caps the weights of the standardised metric: an output
// whose spread is more than 1e150 times smaller than the widest one's is
// not moved by the projection in any case.
const maxMetricWeight = 1e300

// setStandardization sets the standardisation and, when it includes the
// outputs, rebuilds the AdaNPs whose settings use Identity weights with the
// metric of standardised units, W = diag(σ_max²/σ_j²): a projection
// orthogonal in the units of the task loss and of the activation rule. m
// is unchanged on error.
func (m *Model) setStandardization(sx, sy *layers.Standardizer) error {
	infer, train := m.infer, m.train
	var err error
	if infer, err = enforce.NewAdaNP(m.cfg.Constraint, m.metric(m.cfg.Infer, sy)); err != nil {
		return fmt.Errorf("train: inference settings: %w", err)
	}
	if m.cfg.Mode == ENFORCE {
		if train, err = enforce.NewAdaNP(m.cfg.Constraint, m.metric(m.cfg.train, sy)); err != nil {
			return fmt.Errorf("train: training settings: %w", err)
		}
	}
	m.sx, m.sy, m.infer, m.train = copyStd(sx), copyStd(sy), infer, train
	return nil
}

// metric returns s with the standardised metric of sy when s uses
// Identity weights and sy is not nil, and s itself otherwise.
func (m *Model) metric(s enforce.Settings, sy *layers.Standardizer) enforce.Settings {
	if sy == nil || s.Weights != enforce.Identity {
		return s
	}
	widest := 0.0
	for _, sd := range sy.Std {
		widest = max(widest, sd)
	}
	s.Weights, s.Diag = enforce.Diagonal, make([]float64, len(sy.Std))
	for j, sd := range sy.Std {
		r := widest / sd
		s.Diag[j] = min(r*r, maxMetricWeight)
	}
	return s
}

// pyTorchInit draws every weight and bias of a layer with fan-in n from
// U(−1/√n, 1/√n), layer by layer, W (row-major) before b.
func (m *Model) pyTorchInit() {
	rng := rand.New(rand.NewPCG(m.cfg.Seed, streamInit))
	for i, l := range m.mlp.Layers() {
		in, _ := l.Dims()
		a := 1 / math.Sqrt(float64(in))
		for _, p := range m.params[2*i : 2*i+2] {
			d := make([]float64, p.Shape().TotalSize())
			for k := range d {
				d[k] = a * (2*rng.Float64() - 1)
			}
			setFloat64s(p.Data(), d)
		}
	}
}

// Config returns the model's configuration with defaults filled in
// (Precision is enforce.Float64 or enforce.Float32; LambdaD is negative
// when the model has no displacement term, OutputStdFloor when it has no
// floor). LambdaC
// is returned as given, since its zero value means a different default
// for Fit and FitUnsupervised, except in Soft mode.
func (m *Model) Config() Config {
	if m == nil {
		return Config{}
	}
	c := m.cfg.Config
	c.Sizes = append([]int(nil), c.Sizes...)
	c.LambdaD = m.cfg.lambdaD
	if m.cfg.Mode == Soft {
		c.LambdaC = m.cfg.lambdaC
	}
	if c.LambdaD == 0 {
		c.LambdaD = -1
	}
	if c.OutputStdFloor = m.cfg.stdFloor; c.OutputStdFloor == 0 {
		c.OutputStdFloor = -1
	}
	c.Train = trainDefaults(m.cfg.train)
	c.Precision = enforce.Float64
	if m.cfg.dtype == tensor.Float32 {
		c.Precision = enforce.Float32
	}
	return c
}

// SetProgress sets where Fit writes its progress lines; nil silences it.
func (m *Model) SetProgress(w io.Writer) {
	if m == nil {
		return
	}
	m.cfg.Progress, m.cfg.Quiet = w, w == nil
}

// Weights returns copies of the backbone's learnable tensors, in the order
// of Params, each flattened in row-major order. For an MLP that is W0, b0,
// W1, b1, … as layers.MLP.Weights lays them out, followed by θ when the
// model learns its projection weights (see ThetaName). A float32 model's
// weights are converted to float64, exactly.
func (m *Model) Weights() [][]float64 {
	if m == nil {
		return nil
	}
	w := make([][]float64, len(m.params))
	for i, p := range m.params {
		w[i] = make([]float64, p.Shape().TotalSize())
		copyFloat64s(w[i], p.Data())
	}
	return w
}

// SetWeights overwrites the backbone's weights with w, laid out as Weights
// returns them (rounded to float32 for a float32 model). It returns an
// error, and changes nothing, if a length is wrong or a value is not
// finite, or does not fit in a float32 model's precision. The model then
// counts as fitted (see ErrNotFitted).
func (m *Model) SetWeights(w [][]float64) error {
	if m == nil {
		return errNilModel
	}
	if len(w) != len(m.params) {
		return fmt.Errorf("train: SetWeights: got %d slices, the backbone has %d learnables", len(w), len(m.params))
	}
	for i, s := range w {
		if n := m.params[i].Shape().TotalSize(); len(s) != n {
			return fmt.Errorf("train: SetWeights: learnable %q takes %d values, got %d", m.names[i], n, len(s))
		}
		for j, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("train: weight %d[%d] = %v is not finite", i, j, v)
			}
			if m.cfg.dtype == tensor.Float32 && math.IsInf(float64(float32(v)), 0) {
				return fmt.Errorf("train: weight %d[%d] = %v overflows float32", i, j, v)
			}
		}
	}
	for i, s := range w {
		setFloat64s(m.params[i].Data(), s)
	}
	m.fitted = true
	return nil
}

// errNilModel is returned by the methods of a nil *Model.
var errNilModel = errors.New("train: nil *Model")

// Standardizers returns copies of the input and output standardisation,
// nil where the model has none (Standardize off, not yet fitted, or no
// output standardisation after FitUnsupervised).
func (m *Model) Standardizers() (x, y *layers.Standardizer) {
	if m == nil {
		return nil, nil
	}
	return copyStd(m.sx), copyStd(m.sy)
}

// SetStandardizers sets the standardisation the network applies: x of
// Dim nx and y of Dim ny, y may be nil (no output standardisation). It
// returns an error if Config.Standardize is off or a Standardizer is
// invalid. Fit calls it with the training statistics on its first call;
// a custom training loop calls it (or FitStandardizers) before NewGraph.
func (m *Model) SetStandardizers(x, y *layers.Standardizer) error {
	if m == nil {
		return errNilModel
	}
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
	return m.setStandardization(x, y)
}

// FitStandardizers fits the standardisation on training inputs x and
// labels y (nil for unsupervised training) and sets it, with the outputs'
// standard deviations floored at Config.OutputStdFloor. It returns an
// error if Config.Standardize is off or the data are invalid.
func (m *Model) FitStandardizers(x, y *mat.Dense) error {
	if m == nil {
		return errNilModel
	}
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
		if sy, err = layers.FitStandardizerFloor(y, m.cfg.stdFloor); err != nil {
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
// ENFORCE) and InferAdaNP the one Predict applies. Setting the output
// standardisation replaces both when they use the standardised metric
// (see Config.Standardize), so call them after Fit or SetStandardizers.
func (m *Model) TrainAdaNP() *enforce.AdaNP {
	if m == nil {
		return nil
	}
	return m.train
}

// InferAdaNP returns the AdaNP that Predict applies (in MLP and Soft
// modes, only to report residuals).
func (m *Model) InferAdaNP() *enforce.AdaNP {
	if m == nil {
		return nil
	}
	return m.infer
}

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
// not been fitted, for a model whose weights are still New's random ones
// (ErrNotFitted), and when AdaNP fails (non-finite constraint values).
//
// Stats.Missed lists the rows whose prediction misses the inference
// tolerance (Config.Infer.Tol). With Config.Infer.RequireTol set, Predict
// returns nil predictions and an error wrapping an *enforce.ToleranceError
// that lists them (errors.As retrieves it), in every Mode.
func (m *Model) Predict(x *mat.Dense) (*mat.Dense, enforce.Stats, error) {
	if m == nil {
		return nil, enforce.Stats{}, errNilModel
	}
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
		if s := m.infer.Settings(); s.RequireTol && st.NotConverged > 0 {
			te := &enforce.ToleranceError{Samples: append([]int(nil), st.Missed...), Rows: st.Samples, Tol: s.Tol, Measure: s.Measure}
			return nil, st, fmt.Errorf("train: %v mode: %w", m.cfg.Mode, te)
		}
		return yhat, st, nil
	}
	var yt *mat.Dense
	var st enforce.Stats
	if m.cfg.Infer.Weights == enforce.TrainableDiagonal {
		yt, st, err = m.infer.ProjectTheta(xc, yhat, m.theta())
	} else {
		yt, st, err = m.infer.Project(xc, yhat)
	}
	if err != nil {
		return nil, st, fmt.Errorf("train: %w", err)
	}
	return yt, st, nil
}

// Backbone returns the backbone's prediction ŷ for inputs x, before any
// projection, in original units, from the current weights. An MLP (or any
// backbone that is a DensePredictor) is evaluated in plain Go
// (layers.MLP.Predict: gonum's matrix product and the math package's
// activations in float64, enforce's float32 kernels in float32); any other backbone runs on a gorgonia graph built for the
// call. Either way its results equal those of the training graph up to
// rounding and are the same bits on every call. It returns an error under
// the same conditions as Predict.
func (m *Model) Backbone(x *mat.Dense) (*mat.Dense, error) {
	if m == nil {
		return nil, errNilModel
	}
	if err := m.readyFor(x); err != nil {
		return nil, err
	}
	yhat, err := m.forwardTo(nil, x)
	if err != nil {
		return nil, err
	}
	if !finite(yhat) {
		return nil, errNotFinite
	}
	return yhat, nil
}

// errNotFinite is the error of Backbone and BackboneTo for an output that
// is not finite.
var errNotFinite = errors.New("train: the backbone output is not finite")

// readyFor checks x for a prediction: its shape and values (checkData),
// and that a model which standardises its inputs has its Standardizers.
func (m *Model) readyFor(x *mat.Dense) error {
	if err := m.checkData(x, nil, false); err != nil {
		return err
	}
	if !m.fitted {
		return ErrNotFitted
	}
	if m.cfg.Standardize && m.sx == nil {
		return errors.New("train: the model standardises its inputs but has not been fitted (call Fit or SetStandardizers)")
	}
	return nil
}

// BackboneTo is Backbone writing ŷ into dst, which must be a
// (rows of x)×(outputs) matrix: the same values, bit for bit. With the
// Config's float32 MLP nothing that grows with the batch is allocated
// (standardised inputs go to buffers the model reuses), which is what a
// loop of predictions wants: for the float32 50-200-200-100 MLP on
// 833 inputs, 442 µs and 0.9 kB per call against Backbone's 517–525 µs and
// 681 kB (go test -run '^$' -bench 'MLP(Forward|BackboneTo)833/float32'
// ./train/, on this project's 2-core development machine). On an error dst
// may hold partial results.
func (m *Model) BackboneTo(dst, x *mat.Dense) error {
	if m == nil {
		return errNilModel
	}
	if err := m.readyFor(x); err != nil {
		return err
	}
	if dst == nil {
		return errors.New("train: BackboneTo: nil destination")
	}
	if r, c := dst.Dims(); r != x.RawMatrix().Rows || c != m.cfg.ny {
		return fmt.Errorf("train: BackboneTo: destination is %d×%d, want %d×%d", r, c, x.RawMatrix().Rows, m.cfg.ny)
	}
	if _, err := m.forwardTo(dst, x); err != nil {
		return err
	}
	if !finite(dst) {
		return errNotFinite
	}
	return nil
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
	if err := nonFinite(x, "x"); err != nil {
		return err
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
	}
	return nonFinite(y, "y")
}

// nonFinite returns an error naming the first entry of a (row by row)
// that is not finite, by its row and column counted from 0, or nil.
func nonFinite(a *mat.Dense, name string) error {
	r, _ := a.Dims()
	for i := range r {
		row := a.RawRowView(i)
		if allFinite(row) {
			continue
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("train: %s holds a NaN or an infinity: %s[%d, %d] = %v (row %d, column %d, from 0)", name, name, i, j, v, i, j)
			}
		}
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
func allFinite(v []float64) bool { return isfinite.Float64s(v) }
