package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
)

// Mode selects how a Model treats the constraint.
type Mode int

const (
	// ENFORCE trains and predicts through AdaNP: the loss is
	// ℓ_T(ỹ) + λ_D·(1/N)Σ‖ŷ−ỹ‖² + λ_C·(1/N)Σ‖c(x, ỹ)‖ and predictions are
	// projected by the inference AdaNP.
	ENFORCE Mode = iota
	// MLP ignores the constraint: the loss is ℓ_T(ŷ) and predictions are
	// the backbone's. The unconstrained baseline.
	MLP
	// Soft adds a penalty on c(x, ŷ), by default λ·(1/N)Σ‖c(x, ŷ)‖²
	// (losses.SoftPenalty; see Config.Penalty for the others), to the loss
	// and never projects. The soft-constrained baseline.
	Soft
)

var modeNames = [...]string{ENFORCE: "ENFORCE", MLP: "MLP", Soft: "Soft"}

func (m Mode) valid() bool { return m >= 0 && int(m) < len(modeNames) }

// String returns "ENFORCE", "MLP" or "Soft".
func (m Mode) String() string {
	if m.valid() {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// MarshalText implements encoding.TextMarshaler with the mode's name.
func (m Mode) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("train: cannot marshal invalid %v", m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; case is ignored.
func (m *Mode) UnmarshalText(text []byte) error {
	for i, name := range modeNames {
		if strings.EqualFold(string(text), name) {
			*m = Mode(i)
			return nil
		}
	}
	return fmt.Errorf("train: unknown mode %q (want ENFORCE, MLP or Soft)", text)
}

// Defaults used for zero fields of Config.
const (
	// DefaultLambdaD is λ_D of the paper's function-fitting experiments.
	DefaultLambdaD = 0.5
	// DefaultSoftLambda is the penalty weight of the paper's Soft baseline.
	DefaultSoftLambda = 1
	// DefaultLearnRate is Adam's step size in every experiment of the paper.
	DefaultLearnRate = 1e-3
	// DefaultEpochs is the number of passes over the data.
	DefaultEpochs = 1000
	// DefaultTrainTol is ε_T, the paper's training tolerance on mean|c|.
	DefaultTrainTol = 1e-4
	// DefaultDivergenceFactor is Config.DivergenceFactor's default: an
	// epoch whose loss is above 10⁴ times the first batch's has diverged.
	// Adam at a learning rate of 1e6 on the fitting problem reaches 1e11
	// from about 1 (TestFitDetectsDivergence); a training that works stays
	// far below.
	DefaultDivergenceFactor = 1e4
	// DefaultObjectiveLambdaC is λ_C of FitUnsupervised when
	// Config.LambdaC is zero. The paper calls the residual term essential
	// for parametric optimisation (§4.4: with λ_C = 0 the activation rule
	// compares objectives only, and a projection, which restores
	// feasibility at the price of a worse objective, is always rejected)
	// but does not state the value its ENFORCE runs use; 1 is the weight
	// of its Soft baseline in the same experiments (§5.3).
	DefaultObjectiveLambdaC = 1
)

// TrainSettings returns the paper's AdaNP settings for training: stop on
// mean|c| ≤ ε_T = 1e-4 after 1 to 100 steps, orthogonal projection, exact
// (unrolled) gradients. They are what the zero fields of Config.Train
// mean.
func TrainSettings() enforce.Settings {
	return enforce.Settings{Tol: DefaultTrainTol, Measure: enforce.MeanAbs, MaxDepth: enforce.DefaultMaxDepth}
}

// Config describes a Model: the backbone, the constraint, how they are
// combined, and how the model is trained. Zero fields mean the defaults
// stated on each field.
type Config struct {
	// Sizes are the layer sizes of the backbone MLP, [nx, h1, …, ny]: nx
	// inputs, hidden widths, ny outputs. Required unless Backbone is set.
	// The constraint must have ny predicted outputs and either nx inputs
	// or none.
	Sizes []int
	// Hidden is the activation of the hidden layers and Output that of the
	// last layer (zero value: layers.Identity). Hidden has no default: New
	// returns an error for an MLP with hidden layers and Hidden unset
	// (Identity), which would be a linear network in disguise; set it (the
	// paper's backbones use layers.ReLU), or use Sizes [nx, ny] for a
	// linear model.
	Hidden, Output layers.Activation
	// Init is the weight initialisation (default: He for ReLU, Glorot
	// otherwise), with zero biases.
	Init layers.Init
	// PyTorchInit replaces Init by PyTorch's default for nn.Linear, which
	// the paper's reference implementation uses: every weight and bias of
	// a layer with fan-in n drawn from U(−1/√n, 1/√n), from Seed. The
	// random biases spread the kinks of a ReLU network over the input
	// range; with zero biases every first-layer kink of a network on a
	// scalar input sits at x = 0, and on the fitting problem such a
	// network stalls far from the fit the paper reports.
	PyTorchInit bool

	// Precision is the arithmetic of the backbone: enforce.Float64 (and
	// the zero value, enforce.Auto) trains and predicts in float64;
	// enforce.Float32 builds the MLP with float32 weights and runs the
	// whole training graph in float32 (inputs, labels, the backbone, the
	// losses and the AdaNP node, which with Settings.Precision Auto then
	// projects in enforce.Float32), with Adam's moments and arithmetic in
	// float32 too, and Predict's backbone in float32 on the package's
	// single-precision matrix product (layers.MLP.Predict). Data, weights
	// (Weights, SetWeights, Save) and predictions stay float64 at the
	// API: a float32 weight converts to float64 exactly, so a float32
	// model saves, loads and resumes bit for bit. A custom Backbone must
	// build learnables of the chosen precision, and an Objective given to
	// FitUnsupervised must accept float32 nodes as well as the float64
	// ones of the activation rule. See the package documentation,
	// "Precision", for what it gains (BenchmarkMLPEpoch,
	// BenchmarkMLPForward833); it reaches the same test metrics as
	// float64 to the tolerances TestFloat32Accuracy states.
	Precision enforce.Precision

	// Backbone, when set, builds the network in place of the MLP that
	// Sizes, Hidden, Output, Init and PyTorchInit describe; those must then
	// be zero, except that Sizes may be [nx, ny] (needed when the
	// constraint has no inputs; nil takes nx and ny from the constraint).
	// See BackboneFunc for what it must do.
	Backbone BackboneFunc

	// Constraint is c(x, y) = 0. Required in every mode: MLP and Soft
	// models use it to report residuals.
	Constraint enforce.Constraint
	// Mode selects ENFORCE (the default), MLP or Soft.
	Mode Mode
	// Train are the settings of the AdaNP on the training graph and Infer
	// those of the AdaNP applied by Predict. In both, a zero field means
	// that AdaNP's default, so the zero Config gets the paper's settings
	// and setting one field changes only that field:
	//
	//   - Train's defaults are TrainSettings()'s: stop on mean|c| ≤
	//     ε_T = DefaultTrainTol = 1e-4 after 1 to 100 steps (Measure's zero
	//     value, enforce.AutoMeasure, is MeanAbs here; set MaxAbs to
	//     train on max|c|).
	//   - Infer's defaults are enforce's (see enforce.Settings): stop on
	//     max|c| ≤ ε_I = enforce.DefaultTol = 1e-6 after 1 to 100 steps.
	//
	// Every other zero field means enforce's default in both (orthogonal
	// projection, no regularisation, unrolled gradients, float64). Model's
	// Config reports both with their defaults filled in. Train.Grad picks
	// the gradient through AdaNP: on DC3's ACOPF benchmark (inequalities
	// in Fischer–Burmeister form) the default Unrolled diverged where
	// Projector, Implicit and FinalProjector trained stably
	// (docs/numerics.md, "Which to train with"). With Standardize,
	// Identity weights in either mean the metric of standardised units
	// (see Standardize). Train.Weights enforce.TrainableDiagonal makes
	// the model learn its projection weights θ with the backbone (see
	// ThetaName); Infer may then use them too. With enforce.BatchDiagonal
	// weights a sample's projection depends on the rest of its batch: in
	// training on the batch it was drawn with, in Predict on the rows
	// passed together.
	Train enforce.Settings
	Infer enforce.Settings

	// LambdaD is λ_D, the weight of the displacement (1/N)Σ‖ŷ−ỹ‖² in
	// ENFORCE mode. Zero means DefaultLambdaD; a negative value means no
	// displacement term.
	LambdaD float64
	// LambdaC is λ_C. In ENFORCE mode it weighs the residual
	// (1/N)Σ‖c(x, ỹ)‖₂ in the loss and, for FitUnsupervised, in the
	// activation rule. Zero means the default of each kind of training: 0
	// for Fit (as in the paper's fitting experiments) and
	// DefaultObjectiveLambdaC for FitUnsupervised; a negative value means
	// no residual term in both. In Soft mode it weighs the penalty that
	// Penalty selects; zero there means DefaultSoftLambda and a negative
	// value is an error.
	LambdaC float64
	// Penalty selects the form of the Soft mode's penalty (default
	// SquaredNorm). It must be zero in the other modes.
	Penalty Penalty
	// PenaltyConstraint, when set, is the constraint the Soft penalty acts
	// on instead of Constraint, which still reports the residuals of
	// predictions: for SquaredHinge on a problem whose Constraint is the
	// Fischer–Burmeister system of enforce.WithInequalities, the raw
	// inequalities g. It must have no latent variables, the network's ny
	// outputs, and no inputs or the network's nx. Only Soft mode accepts
	// it. Like Constraint it is code: Save does not write it and Load
	// cannot restore it, so a loaded Soft model that needs it cannot train
	// further (Resume, given the Config, can).
	PenaltyConstraint enforce.Constraint

	// LearnRate is Adam's step size (default DefaultLearnRate), finite and
	// at least MinLearnRate. Every loss term is a batch mean, so the
	// solver's batch size is left at 1.
	LearnRate float64
	// BatchSize is the number of samples per optimisation step; zero
	// means the whole training set (full batch, as in the paper's fitting
	// experiments). The last batch of an epoch is smaller when BatchSize
	// does not divide the number of samples.
	BatchSize int
	// Epochs is the number of passes over the data per Fit call (default
	// DefaultEpochs).
	Epochs int
	// Seed seeds the weight initialisation and the shuffling of the
	// training samples: a Config trains to the same weights every time.
	Seed uint64

	// AlwaysProject disables the activation rule of the paper's
	// Algorithm 2. By default (false), each training batch first takes one
	// NP step; if that makes the task measure worse, the batch is not
	// projected (its gradient then flows through ŷ unchanged).
	AlwaysProject bool
	// Warmup, in ENFORCE mode, is the number of epochs at the start of each
	// Fit or FitUnsupervised call that train the backbone without the
	// projection, as an MLP model trains: the task loss on ŷ alone (no
	// displacement, residual term or activation rule, no AdaNP). The
	// remaining Epochs − Warmup epochs train through AdaNP as usual, with
	// Adam's moments carried over. It is the reference implementation's
	// epoch_start_hard_constrained. For FitUnsupervised the warm-up moves
	// ŷ towards the unconstrained minimisers of the objective, so that the
	// first projections land near good points of the feasible set: on the
	// paper's nonconvex quadratic benchmark at (N_O, N_C) = (200, 150),
	// where training through the projection from the initial network ends
	// in a poor branch of the feasible set for some seeds (+131 % above the
	// optimum, against +11 % for the others), 10 warm-up epochs of 50 put
	// every seed tried in the good one (docs/numerics.md, "Warm-up"). Zero
	// means none; it must be less than Epochs (the call must project at
	// least one epoch), and zero in the MLP and Soft modes. Epoch.Projected
	// is 0 for the warm-up epochs; Schedule and Patience count them as any
	// other epoch (a validation loss is always that of Predict, which
	// projects), and DivergenceFactor's ℓ₀ is taken afresh from the first
	// projected batch.
	Warmup int
	// Standardize makes the network read standardised inputs and, for Fit,
	// predict standardised outputs (training mean and population standard
	// deviation). ŷ is mapped back to original units before AdaNP, so
	// constraints are evaluated and projected in original units; the task
	// loss and displacement are measured in standardised units.
	//
	// Once the outputs are standardised, an AdaNP whose settings (Train or
	// Infer) use the default Identity weights projects in the metric of
	// standardised units instead: W = diag(σ_max²/σ_j²), with σ_j the
	// labels' standard deviations (σ_max the largest; a weight is capped
	// at 1e300; latent variables keep enforce's own weighting). The
	// projection is then the smallest correction as the task loss, the
	// displacement and the activation rule measure it. With W = I and
	// exact scaling, an output of tiny spread (distillation's x_D,IL has
	// σ ≈ 2e-21) takes a share of every correction that is enormous in
	// its own units: the rule rejected every batch and a forced
	// projection made the loss diverge. Set Weights to Diagonal or
	// AutoDiagonal to project in original units.
	//
	// The outputs' standard deviations are floored as the reference
	// implementation floors them (see OutputStdFloor), so by default
	// x_D,IL is only mean-centred, not divided by its σ; the inputs are
	// never floored.
	Standardize bool
	// OutputStdFloor is the floor on the outputs' standard deviations
	// when Standardize fits them: an output column with σ <
	// OutputStdFloor gets σ = 1 and is only mean-centred
	// (layers.FitStandardizerFloor). Zero means layers.DefaultStdFloor =
	// 1e-5, the reference implementation's; a negative value means no
	// floor (only σ = 0 becomes 1), i.e. exact scaling. Inputs are never
	// floored.
	OutputStdFloor float64

	// Progress receives one line per logged epoch; nil means os.Stderr.
	// Quiet suppresses it. LogEvery is the logging interval in epochs;
	// zero means ⌈Epochs/50⌉. The last epoch is always logged.
	Progress io.Writer
	Quiet    bool
	LogEvery int

	// Schedule, when set, scales LearnRate per epoch (see StepDecay,
	// CosineDecay and ReduceOnPlateau); nil keeps it constant. Like Backbone it is code: Save
	// does not write it, and Resume needs the same one in its Config (it
	// cannot check that).
	Schedule Schedule
	// Patience, when positive and the model has a validation set
	// (SetValidation), stops Fit early once the validation loss has not
	// improved for Patience epochs in a row, and leaves the weights of the
	// epoch with the lowest validation loss (also when Fit runs all its
	// epochs): Fit returns the History of the epochs run, without an
	// error. Adam's moments are not rolled back. Zero means no early
	// stopping; a negative value is an error. Checkpoints (Checkpoint)
	// record the best weights and the count, so a Fit call that Resume
	// continues (given the same validation set) stops at the same epoch
	// with the same weights as if it had not been interrupted; the
	// checkpoint written when Patience stops the call holds the best
	// epoch's weights, and Fit on a model resumed from it returns the
	// call's History without training. A checkpoint written before
	// checkpoints recorded them resumes with the count started afresh.
	Patience int

	// DivergenceFactor is how far the loss may rise before Fit and
	// FitUnsupervised call training diverged and stop with an error naming
	// the epoch: once an epoch's mean loss exceeds ℓ₀ + F·max(|ℓ₀|, 1e-8),
	// with ℓ₀ the loss of the call's first batch (before any step; for a
	// call that Resume continues, its first epoch's loss) and F the
	// factor. Zero means DefaultDivergenceFactor; a negative value turns
	// the check off. A non-finite loss, gradient or weight is an error in
	// any case.
	DivergenceFactor float64

	// ClipNorm, when positive, clips each batch's gradient by its norm
	// before Adam's step, as PyTorch's clip_grad_norm_: the gradients of
	// all the weights together (θ included) are scaled by
	// min(1, ClipNorm/‖g‖₂), the norm taken over every entry. It bounds
	// what one batch adds to Adam's moment estimates (a batch whose
	// projection does not converge can give a gradient orders of magnitude
	// above the others), not the length of Adam's step, which Adam
	// normalises per weight. It is no cure for divergence in general: on
	// the case57 ACOPF (docs/acopf-dc3.md) ClipNorm 1 made training
	// diverge sooner. Zero means no clipping; a negative or non-finite value is an error.
	// A checkpoint records it (Resume needs the same); Save does not.
	ClipNorm float64

	// Checkpoint makes Fit and FitUnsupervised write checkpoints from
	// which Resume continues an interrupted run bit for bit; the zero
	// value writes none. See Checkpoint.
	Checkpoint Checkpoint
}

// resolved is a validated Config with defaults applied.
type resolved struct {
	Config
	train      enforce.Settings
	lambdaD    float64
	lambdaC    float64 // λ_C of Fit (and of the Soft penalty)
	lambdaCObj float64 // λ_C of FitUnsupervised
	stdFloor   float64 // the outputs' σ floor, 0 for none
	nx, ny     int     // network inputs and outputs
	constrainX bool
	dtype      tensor.Dtype // the backbone's: Float64 or Float32 (Precision)
}

// resolve validates cfg and applies defaults.
func resolve(cfg Config) (resolved, error) {
	r := resolved{Config: cfg}
	r.Sizes = append([]int(nil), cfg.Sizes...)
	if !cfg.Mode.valid() {
		return r, fmt.Errorf("train: invalid %v", cfg.Mode)
	}
	if cfg.Constraint == nil {
		return r, errors.New("train: Config.Constraint is nil")
	}
	for _, c := range []enforce.Constraint{cfg.Constraint, cfg.PenaltyConstraint} {
		if err := enforce.CheckCapable(c); err != nil {
			return r, fmt.Errorf("train: %w", err)
		}
	}
	cnx, cn, nc := cfg.Constraint.Dims()
	latent := enforce.CapabilitiesOf(cfg.Constraint).Latent
	if cfg.Backbone != nil {
		switch {
		case cfg.Hidden != 0 || cfg.Output != 0 || cfg.Init != 0 || cfg.PyTorchInit:
			return r, errors.New("train: Config.Hidden, Output, Init and PyTorchInit describe the MLP; leave them zero with a Backbone")
		case r.Sizes == nil && cnx == 0:
			return r, errors.New("train: the constraint has no inputs: set Config.Sizes to [nx, ny] with a Backbone")
		case r.Sizes == nil:
			r.Sizes = []int{cnx, cn - latent}
		case len(r.Sizes) != 2:
			return r, fmt.Errorf("train: with a Backbone, Config.Sizes must be nil or [nx, ny], got %v", cfg.Sizes)
		}
	}
	if len(r.Sizes) < 2 {
		return r, fmt.Errorf("train: Config.Sizes must list at least [nx, ny], got %v", cfg.Sizes)
	}
	for _, s := range r.Sizes {
		if s <= 0 {
			return r, fmt.Errorf("train: Config.Sizes must be positive, got %v", cfg.Sizes)
		}
	}
	if cfg.Backbone == nil && len(r.Sizes) > 2 && cfg.Hidden == layers.Identity {
		return r, fmt.Errorf("train: Config.Hidden is unset (Identity): the MLP %v would be linear; set Hidden (e.g. layers.ReLU) or use Sizes [nx, ny] for a linear model", cfg.Sizes)
	}
	r.nx, r.ny = r.Sizes[0], r.Sizes[len(r.Sizes)-1]
	switch {
	case cn-latent != r.ny:
		return r, fmt.Errorf("train: the constraint has %d predicted outputs (ny=%d, %d latent), the network %d (Sizes %v)", cn-latent, cn, latent, r.ny, r.Sizes)
	case cnx != 0 && cnx != r.nx:
		return r, fmt.Errorf("train: the constraint has nx=%d inputs, the network %d (Sizes %v)", cnx, r.nx, r.Sizes)
	case nc <= 0:
		return r, fmt.Errorf("train: the constraint has nc=%d", nc)
	}
	r.constrainX = cnx != 0
	switch cfg.Precision {
	case enforce.Auto, enforce.Float64:
		r.dtype = tensor.Float64
	case enforce.Float32:
		r.dtype = tensor.Float32
	default:
		return r, fmt.Errorf("train: Config.Precision = %v: want enforce.Float64 (or Auto) or enforce.Float32", cfg.Precision)
	}
	switch {
	case math.IsNaN(cfg.LambdaD) || math.IsInf(cfg.LambdaD, 0):
		return r, fmt.Errorf("train: Config.LambdaD = %v is not finite", cfg.LambdaD)
	case cfg.LambdaD == 0:
		r.lambdaD = DefaultLambdaD
	case cfg.LambdaD > 0:
		r.lambdaD = cfg.LambdaD
	}
	switch {
	case math.IsNaN(cfg.LambdaC) || math.IsInf(cfg.LambdaC, 0):
		return r, fmt.Errorf("train: Config.LambdaC = %v is not finite", cfg.LambdaC)
	case cfg.Mode == Soft && cfg.LambdaC < 0:
		return r, fmt.Errorf("train: Config.LambdaC = %v: the Soft penalty weight must not be negative", cfg.LambdaC)
	case cfg.Mode == Soft && cfg.LambdaC == 0:
		r.lambdaC = DefaultSoftLambda
	case cfg.LambdaC > 0:
		r.lambdaC, r.lambdaCObj = cfg.LambdaC, cfg.LambdaC
	case cfg.LambdaC == 0:
		r.lambdaCObj = DefaultObjectiveLambdaC
	}
	if cfg.Mode == Soft {
		r.lambdaCObj = r.lambdaC
	}
	if cfg.Mode != ENFORCE {
		r.lambdaD = 0
	}
	switch {
	case !cfg.Penalty.valid():
		return r, fmt.Errorf("train: invalid %v", cfg.Penalty)
	case cfg.Penalty != SquaredNorm && cfg.Mode != Soft:
		return r, fmt.Errorf("train: Config.Penalty = %v selects the Soft penalty; leave it zero in %v mode", cfg.Penalty, cfg.Mode)
	}
	if pc := cfg.PenaltyConstraint; pc != nil {
		pnx, pny, pnc := pc.Dims()
		switch {
		case cfg.Mode != Soft:
			return r, fmt.Errorf("train: Config.PenaltyConstraint is for Soft mode; leave it nil in %v mode", cfg.Mode)
		case enforce.CapabilitiesOf(pc).Latent > 0:
			return r, fmt.Errorf("train: Config.PenaltyConstraint has %d latent variables; give the raw constraint", enforce.CapabilitiesOf(pc).Latent)
		case pny != r.ny || (pnx != 0 && pnx != r.nx) || pnc <= 0:
			return r, fmt.Errorf("train: Config.PenaltyConstraint has (nx, ny, nc) = (%d, %d, %d), want nx 0 or %d, ny %d and nc > 0", pnx, pny, pnc, r.nx, r.ny)
		}
	}
	switch {
	case math.IsNaN(cfg.OutputStdFloor) || math.IsInf(cfg.OutputStdFloor, 0):
		return r, fmt.Errorf("train: Config.OutputStdFloor = %v is not finite", cfg.OutputStdFloor)
	case cfg.OutputStdFloor == 0:
		r.stdFloor = layers.DefaultStdFloor
	case cfg.OutputStdFloor > 0:
		r.stdFloor = cfg.OutputStdFloor
	}
	if cfg.LearnRate == 0 {
		r.LearnRate = DefaultLearnRate
	}
	if !(r.LearnRate >= MinLearnRate) || math.IsInf(r.LearnRate, 1) {
		return r, fmt.Errorf("train: Config.LearnRate = %v must be finite and at least MinLearnRate = %v", cfg.LearnRate, MinLearnRate)
	}
	if cfg.Epochs == 0 {
		r.Epochs = DefaultEpochs
	}
	switch {
	case r.Epochs < 0:
		return r, fmt.Errorf("train: Config.Epochs = %d is negative", cfg.Epochs)
	case cfg.BatchSize < 0:
		return r, fmt.Errorf("train: Config.BatchSize = %d is negative", cfg.BatchSize)
	case cfg.LogEvery < 0:
		return r, fmt.Errorf("train: Config.LogEvery = %d is negative", cfg.LogEvery)
	case cfg.Patience < 0:
		return r, fmt.Errorf("train: Config.Patience = %d is negative", cfg.Patience)
	case cfg.Warmup < 0:
		return r, fmt.Errorf("train: Config.Warmup = %d is negative", cfg.Warmup)
	case cfg.Warmup > 0 && cfg.Mode != ENFORCE:
		return r, fmt.Errorf("train: Config.Warmup = %d: warm-up epochs train without the projection before ENFORCE trains with it; leave it zero in %v mode", cfg.Warmup, cfg.Mode)
	case cfg.Warmup >= r.Epochs && cfg.Warmup > 0:
		return r, fmt.Errorf("train: Config.Warmup = %d must be less than Epochs = %d: every epoch would train without the projection", cfg.Warmup, r.Epochs)
	case math.IsNaN(cfg.DivergenceFactor) || math.IsInf(cfg.DivergenceFactor, 0):
		return r, fmt.Errorf("train: Config.DivergenceFactor = %v is not finite", cfg.DivergenceFactor)
	case !(cfg.ClipNorm >= 0) || math.IsInf(cfg.ClipNorm, 1):
		return r, fmt.Errorf("train: Config.ClipNorm = %v must be non-negative and finite", cfg.ClipNorm)
	}
	if err := cfg.Checkpoint.validate(); err != nil {
		return r, err
	}
	if cfg.DivergenceFactor == 0 {
		r.DivergenceFactor = DefaultDivergenceFactor
	}
	if cfg.LogEvery == 0 {
		r.LogEvery = (r.Epochs + 49) / 50
	}
	r.train = trainDefaults(cfg.Train)
	return r, nil
}

// precision returns enforce.Float32 for a float32 backbone and Auto (the
// zero value) for a float64 one.
func (r *resolved) precision() enforce.Precision {
	if r.dtype == tensor.Float32 {
		return enforce.Float32
	}
	return enforce.Auto
}

// trainDefaults returns s, with a copy of its Diag, with the zero fields
// that TrainSettings sets replaced by TrainSettings()'s values.
func trainDefaults(s enforce.Settings) enforce.Settings {
	d := TrainSettings()
	if s.Tol == 0 {
		s.Tol = d.Tol
	}
	if s.MaxDepth == 0 {
		s.MaxDepth = d.MaxDepth
	}
	if s.Measure == enforce.AutoMeasure {
		s.Measure = d.Measure
	}
	if s.Diag != nil {
		s.Diag = append([]float64(nil), s.Diag...)
	}
	return s
}
