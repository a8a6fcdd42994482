package enforce

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/dense"
)

// AdaNP is the adaptive-depth neural projection of ENFORCE. For each sample
// it repeats the neural-projection (NP) step
//
//	B = ∂c/∂y(x, y),  G = B·W⁻¹·Bᵀ + εI,  y ← y − W⁻¹·Bᵀ·G⁻¹·c(x, y)
//
// starting from the prediction ŷ, until the sample's residual measure is at
// most Settings.Tol (after at least MinDepth and at most MaxDepth steps).
// Each sample stops on its own; the batch is processed in parallel and the
// result does not depend on GOMAXPROCS. (With BatchDiagonal weights a
// sample's result depends on the other samples of its batch.)
//
// For a Linear constraint (or a Stack of them) whose G has a Cholesky
// factor, the samples of a batch take their steps together, each step's
// products over a block of samples being matrix products, and VJP
// back-propagates them likewise (except Implicit gradients, and without
// Settings.MaxStep; the forward pass also without Settings.LineSearch).
// Every sample still stops on its own criterion; the results are those of
// the per-sample steps up to rounding (about cond(G)·1e-16 relative), and
// do not depend on GOMAXPROCS either.
//
// G is factored by Cholesky; for a sample whose G is not numerically
// positive definite, that step solves with an eigendecomposition of G whose
// eigenvalues are clamped below at max(ε, 1e-12·λ_max), where ε is
// Settings.Reg, and Stats.Clamped
// counts the sample.
//
// For a constraint that declares Capabilities.Sparse, the steps can take
// the sparse path instead (Settings.Path, PathSparse): B is held as its
// nonzeros, G is factored by a sparse LDLᵀ after one symbolic analysis,
// and cost and memory follow the nonzeros rather than nc²·ny and nc·ny
// (docs/sparse.md). Its results equal the dense path's up to rounding.
//
// An AdaNP is safe for concurrent use by several goroutines.
type AdaNP struct {
	c      Constraint
	orig   Constraint   // the Func that c evaluates with its detected pattern, else nil
	k      Capabilities // c's, read once
	s      Settings
	nx     int // inputs
	ny     int // predicted outputs seen by the caller
	n      int // outputs in the projection space: ny + latent
	nc     int // constraints
	latent int

	hasJX, hasHV, hasMHV bool

	// sm holds the stages of a smoothed projection (Settings.Smoothing),
	// or nil.
	sm *smoothing
	// patience is Settings.SmoothingPatience in the plain attempt of a
	// smoothed projection (a.sm.first), else 0.
	patience int
	// eqf holds the equality stage of Settings.EqualitySteps, or nil.
	eqf *equalityFirst

	// Float32 precision: lo is set (G in single precision), eval32 and
	// hv32 are the constraint's single-precision batch methods (both nil
	// unless it has EvalBatch32), refineAt the residual measure below
	// which a sample's evaluations switch to float64.
	lo       bool
	eval32   func(rows int, x, y, c []float64, jy []float32)
	hv32     func(rows int, x, y, w, v, out []float64)
	refineAt float64
	// finiteJ: the constraint's c is not finite wherever its Jacobian is
	// not (at finite y), so accept need not scan J.
	finiteJ bool

	// constant Jacobian (Linear): B, W⁻¹ and G's factor are shared by
	// every sample and step.
	constB []float64
	constD []float64
	constG factor
	// lin is the batched path of a Linear constraint (linbatch.go), nil
	// where it does not apply; perSample turns it off (tests, benchmarks).
	lin       *linBatch
	perSample bool

	// sp is the sparse path (sparse_adanp.go), nil on the dense one.
	sp *sparsePath
	// pattern is the first projection's check of a declared sparse
	// pattern (pattern_check.go).
	pattern patternCheck

	diagInv []float64 // W⁻¹ for Diagonal weights
	rec     layout    // the trace's step records

	eigWork int
	pool    sync.Pool // *workspace
	batches sync.Pool // *batch
	vjps    sync.Pool // *vjpJob
	// The state of the last pass is also kept outside the pools, which the
	// garbage collector empties: its buffers can be hundreds of megabytes.
	lastBatch atomic.Pointer[batch]
	lastVJP   atomic.Pointer[vjpJob]
}

// NewAdaNP returns an AdaNP projecting onto c with the given settings.
// It returns an error if the settings are invalid or c has more equations
// than unknowns (nc > ny, latent variables counted on both sides).
//
// A square system (nc = ny) is allowed, as in the reference
// implementation. The nearest-point interpretation then degenerates: where
// ∂c/∂y is invertible the step is y ← y − (∂c/∂y)⁻¹·c(x, y), Newton's
// method on c(x, ·) = 0 whatever the weights W, and the projection is the
// solution of c(x, y) = 0 that Newton's method reaches from ŷ (locally
// independent of ŷ). Every gradient mode then gives ∂ỹ/∂ŷ = 0 at a
// converged sample and ∂ỹ/∂x = −(∂c/∂y)⁻¹·∂c/∂x, the implicit-function
// derivative of that solution (TestSquareSystem checks each against finite
// differences).
func NewAdaNP(c Constraint, s Settings) (*AdaNP, error) { return newAdaNP(c, s, nil) }

// newAdaNP is NewAdaNP; share, where not nil, is the sparse path of an
// AdaNP whose stage this one is (Settings.Smoothing), whose analysis of G
// is reused where the patterns are the same instead of repeated.
func newAdaNP(c Constraint, s Settings, share *sparsePath) (*AdaNP, error) {
	if c == nil {
		return nil, errors.New("enforce: nil constraint")
	}
	if err := CheckCapable(c); err != nil {
		return nil, err
	}
	nx, n, nc := c.Dims()
	k := CapabilitiesOf(c)
	latent := k.Latent
	switch {
	case nx < 0 || n <= 0 || nc <= 0:
		return nil, fmt.Errorf("enforce: constraint has invalid dimensions nx=%d ny=%d nc=%d", nx, n, nc)
	case latent < 0 || latent >= n:
		return nil, fmt.Errorf("enforce: constraint has %d latent variables out of ny=%d", latent, n)
	case nc > n:
		return nil, fmt.Errorf("enforce: %d constraints on %d outputs: more equations than unknowns (need nc ≤ ny)", nc-latent, n-latent)
	}
	s, err := s.withDefaults(n - latent)
	if err != nil {
		return nil, err
	}
	if err := k.check(nx, n, nc); err != nil {
		return nil, fmt.Errorf("enforce: %w", err)
	}
	a := &AdaNP{
		c: c, k: k, s: s, nx: nx, ny: n - latent, n: n, nc: nc, latent: latent,
		hasJX:   k.JacobianX != nil,
		hasHV:   k.HessVec != nil,
		hasMHV:  k.MixedHessVec != nil,
		finiteJ: k.finiteJ,
	}
	if s.Precision == Float32 {
		a.lo = true
		if k.EvalBatch32 != nil && k.EvalBatch != nil {
			a.eval32, a.hv32 = k.EvalBatch32, k.HessVecBatch32
			if a.hv32 == nil {
				a.hv32 = k.HessVecBatch
			}
		}
		a.refineAt = s.Tol
		if s.Tol < 1 {
			a.refineAt = math.Sqrt(s.Tol)
		}
	}
	if s.Weights == Diagonal {
		a.diagInv = make([]float64, n)
		for k := range a.diagInv {
			a.diagInv[k] = 1 // latent variables
		}
		for k, v := range s.Diag {
			a.diagInv[k] = 1 / v
		}
	}
	if err := a.choosePath(share); err != nil {
		return nil, err
	}
	if err := a.checkDamping(k); err != nil {
		return nil, err
	}
	if err := a.checkChord(); err != nil {
		return nil, err
	}
	if s.StopWhenFeasible && k.feasibility == nil {
		return nil, errors.New("enforce: Settings.StopWhenFeasible stops on the residual of a constraint made by WithInequalities (its equalities and max(g, 0)); this constraint has no such residual")
	}
	if err := a.newSmoothingStage(); err != nil {
		return nil, err
	}
	if err := a.newEqualityStage(); err != nil {
		return nil, err
	}
	if a.sp == nil {
		a.eigWork = dense.EigWorkLen(nc) // its query allocates nc² numbers
	}
	a.pool.New = func() any { return a.newWorkspace() }
	a.batches.New = func() any { return new(batch) }
	a.vjps.New = func() any { return new(vjpJob) }
	if b := k.ConstantJacobian; b != nil && s.Weights != TrainableDiagonal && a.sp == nil {
		// (TrainableDiagonal's G changes with θ: B is evaluated as for
		// any constraint.)
		if !allFinite(b) {
			return nil, errors.New("enforce: constant Jacobian is not finite")
		}
		a.constB = append([]float64(nil), b...)
		ws := a.newWorkspace()
		if d := weights(a, ws, a.constB); d != nil {
			a.constD = append([]float64(nil), d...)
		}
		a.constG = newFactor(nc)
		if !a.factorize(&a.constG, a.constB, a.constD, ws, false, s.Reg) {
			return nil, errors.New("enforce: cannot factor G for the constant Jacobian")
		}
		if a.linBatchable(k) {
			a.lin = &linBatch{l: k.linear}
		}
	}
	a.rec = a.newLayout()
	return a, nil
}

// Constraint returns the constraint AdaNP projects onto.
func (a *AdaNP) Constraint() Constraint {
	if a.orig != nil {
		return a.orig
	}
	return a.c
}

// Settings returns the settings in use, with defaults filled in.
func (a *AdaNP) Settings() Settings {
	s := a.s
	s.Diag = append([]float64(nil), s.Diag...) // nil stays nil
	s.SmoothingLadder = append([]float64(nil), s.SmoothingLadder...)
	return s
}

// Dims returns the sizes of x and of the predictions ŷ and ỹ.
func (a *AdaNP) Dims() (nx, ny int) { return a.nx, a.ny }

// ExactGradient reports whether the gradient mode, with this constraint's
// capabilities, computes the exact derivative of what it differentiates:
// true for Unrolled (the derivative of the computed map, all steps and
// weights included) and Implicit (the derivative of the W-nearest point)
// when the constraint implements HessVec, and, for gradients with respect
// to x through a Jacobian that varies, MixedHessVec; for every weighting,
// including BatchDiagonal (whose Unrolled gradient holds the coupling
// between the samples of a batch) and TrainableDiagonal (whose
// θ-gradient, VJPTheta, is then exact too). Projector and FinalProjector
// are Gauss–Newton approximations and report false. A pass
// can still be inexact where this reports true (a step took the clamped
// eigen-solve, or an Implicit point is not a nearest point):
// Trace.GradStats reports that per pass.
func (a *AdaNP) ExactGradient() bool { return a.exactGradient(a.hasJX) }

// exactGradient reports whether the mode and the constraint's capabilities
// give the exact derivative, clamped steps aside, with the x-gradient too
// when wantX is set.
func (a *AdaNP) exactGradient(wantX bool) bool {
	switch a.s.Grad {
	case Unrolled, Implicit:
		return a.hasHV && (!wantX || a.hasMHV || a.constB != nil)
	}
	return false
}

// Residual summarises |c| over a batch: its maximum and its mean over all
// samples and constraints.
type Residual struct {
	Max, Mean float64
}

// Stats describes one projection of a batch.
type Stats struct {
	Samples   int
	Depth     int     // largest number of NP steps taken by a sample
	MeanDepth float64 // mean number of NP steps per sample
	Before    Residual
	After     Residual
	// NotConverged counts samples whose residual measure is above Tol
	// after projection (their output is still finite).
	NotConverged int
	// Clamped counts samples for which at least one step fell back to the
	// eigenvalue-clamped solve because G was not numerically positive
	// definite (for example a rank-deficient Jacobian).
	Clamped int
	// Stopped counts samples whose iteration stopped early because a step
	// would have produced non-finite values; they keep their last finite
	// iterate and are counted in NotConverged if above Tol.
	Stopped int
	// Stalled counts samples that stopped because they made no progress:
	// with LineSearch or Damping, no step length along the direction decreased ‖c‖²;
	// without, ten steps in a row did not improve the residual measure by
	// 1%. They keep their last iterate and are counted in NotConverged.
	Stalled int
	// Displacement summarises ‖ỹ − ŷ‖ (Euclidean, over the predicted
	// outputs) over the samples: its maximum and mean.
	Displacement Residual
	// Missed lists, in increasing order, the rows of the batch whose
	// residual measure is above Tol after projection (for Check, at the
	// given y): the samples NotConverged counts, len(Missed) ==
	// NotConverged. It is nil when every sample met the tolerance.
	Missed []int
}

// Converged reports whether every sample met the tolerance: false for
// a Stats with Samples == 0, such as the zero Stats that Project and the
// other methods return with an error, which describes no projection.
func (s Stats) Converged() bool { return s.Samples > 0 && s.NotConverged == 0 }

// ToleranceError is the error of a projection with Settings.RequireTol
// set when samples missed the tolerance: their residual measure is above
// Tol after projection. Samples lists their rows in increasing order (as
// Stats.Missed). Retrieve it with errors.As.
type ToleranceError struct {
	// Samples are the rows that missed the tolerance, in increasing order.
	Samples []int
	// Rows is the number of rows of the batch.
	Rows int
	// Tol and Measure are the tolerance and the residual measure.
	Tol     float64
	Measure Measure
}

// maxListed bounds the samples a ToleranceError's message names.
const maxListed = 10

// Error returns a message naming the tolerance and the first samples
// that missed it.
func (e *ToleranceError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "enforce: %d of %d samples missed the tolerance %v ≤ %g (Settings.RequireTol): rows ", len(e.Samples), e.Rows, e.Measure, e.Tol)
	for i, s := range e.Samples {
		if i == maxListed {
			fmt.Fprintf(&b, ", … (%d more)", len(e.Samples)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, s)
	}
	return b.String()
}

// Project returns the projection ỹ of the predictions ŷ (rows are samples)
// for inputs x. x may be nil when the constraint has no input (nx = 0).
// It returns an error for mismatched shapes, non-finite inputs, or a
// constraint that is not finite at (x, ŷ). Non-convergence is reported in
// Stats (NotConverged counts the samples and Missed lists them) and is
// not an error, unless Settings.RequireTol is set: then Project returns
// nil ỹ, the Stats and a *ToleranceError listing the samples.
func (a *AdaNP) Project(x, yhat *mat.Dense) (*mat.Dense, Stats, error) {
	if yhat == nil || yhat.IsEmpty() {
		return nil, Stats{}, errors.New("enforce: nil or empty ŷ (a batch needs at least one row)")
	}
	r, _ := yhat.Dims()
	dst := mat.NewDense(r, a.ny, nil)
	st, err := a.ProjectTo(dst, x, yhat)
	if err != nil {
		return nil, st, err
	}
	return dst, st, nil
}

// ProjectTo is Project writing ỹ into dst, which must have the shape of ŷ.
// dst may be ŷ itself. With Settings.RequireTol, dst holds the projection
// also when the error is a *ToleranceError.
//
// For a constraint that declares Capabilities.Sparse (SparseFunc, a
// hand-written SparseJacobian, a Stack or WithInequalities of them, or a
// Func whose pattern NewAdaNP detected), the first projection, by
// Project, ProjectTo or ProjectTrace, first checks the declared pattern
// at the batch's first sample (its last if the first is not finite): the
// products ∂c/∂y·u with random
// u, computed without the pattern (by hyperdual arithmetic for SparseFunc
// and Func, else by finite differences of c), must agree row by row with
// the declared Jacobian's. If a dependence is missing from the pattern
// (and not zero at that sample) or a declared value is wrong, that and
// every later projection return a *PatternError naming the rows and
// leave dst unchanged; CheckSparse locates the entries. The check costs
// O(nnz + nc + ny), one evaluation of the declared Jacobian and one
// hyperdual evaluation (two to ten evaluations of c for finite
// differences), and runs again at later projections until a sample gives
// it a verdict (samples that are not finite give none).
func (a *AdaNP) ProjectTo(dst, x, yhat *mat.Dense) (Stats, error) {
	if err := a.checkPattern(x, yhat); err != nil {
		return Stats{}, err
	}
	return a.forward(dst, x, yhat, nil, false, nil)
}

// ProjectLatent is ProjectTo with the start of the latent variables given,
// for a constraint that declares them (Capabilities.Latent; the
// multipliers of WithInequalities): latent is rows×Latent, holds the start
// of each sample on entry, where ProjectTo starts from zero, and on return
// holds the latent variables of the projected point (the multipliers that
// go with ỹ, ready to start the next projection of a nearby ŷ). A row of
// latent that is not finite is an error, as a row of ŷ is. With latent
// nil, or zero, ProjectLatent is ProjectTo. With Settings.Smoothing the
// first attempt starts from latent; the samples that take the smoothed
// fallback project from zero multipliers, as ProjectTo does, and latent
// receives their last stage's.
//
// A good start saves the steps that move the multipliers from zero, where
// ŷ is near the point whose multipliers they are; on the power grids of
// docs/numerics.md about one step of six from an optimum, and from
// predictions whose active set differs a warm start costs steps and
// convergence: measure before using it. The start selects among the
// solutions AdaNP can reach, so ỹ depends on it; it is an input without
// a gradient (ProjectLatent records no trace).
// ProjectLatent returns an error if the constraint has no latent
// variables or latent's shape does not match.
func (a *AdaNP) ProjectLatent(dst, x, yhat, latent *mat.Dense) (Stats, error) {
	if latent == nil {
		return a.ProjectTo(dst, x, yhat)
	}
	if a.latent == 0 {
		return Stats{}, errors.New("enforce: ProjectLatent: the constraint has no latent variables")
	}
	if yhat == nil || yhat.IsEmpty() {
		return Stats{}, errors.New("enforce: nil or empty ŷ (a batch needs at least one row)")
	}
	rows, _ := yhat.Dims()
	if r, c := latent.Dims(); r != rows || c != a.latent {
		return Stats{}, fmt.Errorf("enforce: ProjectLatent: latent is %d×%d, want %d×%d", r, c, rows, a.latent)
	}
	if err := a.checkPattern(x, yhat); err != nil {
		return Stats{}, err
	}
	if a.eqf != nil {
		return a.forwardEqualityFirst(dst, x, yhat, nil, nil, latent)
	}
	if a.sm != nil {
		return a.forwardSmoothed(dst, x, yhat, nil, nil, latent, nil)
	}
	return a.forwardPass(dst, x, yhat, nil, false, nil, &passIO{latent: latent})
}

// Check reports the residual of y for inputs x without projecting: Stats
// with Depth 0 and Before equal to After. Samples above the tolerance are
// counted in NotConverged and listed in Missed; Settings.RequireTol does
// not make them an error here. For a system built by WithInequalities the
// residual is the equality residual followed by the inequality violations
// max(g_j, 0), not the Fischer–Burmeister residual (which depends on
// multipliers that y does not carry). A constraint with
// Capabilities.EvalBatch (Quadratic) is evaluated by one EvalBatch call
// for the batch, without Jacobians, and otherwise by Eval sample by sample;
// the two agree to rounding (BenchmarkQuadraticCheck compares their
// speed).
func (a *AdaNP) Check(x, y *mat.Dense) (Stats, error) {
	if y == nil || y.IsEmpty() {
		return Stats{}, errors.New("enforce: nil or empty y (a batch needs at least one row)")
	}
	r, _ := y.Dims()
	return a.forward(mat.NewDense(r, a.ny, nil), x, y, nil, true, nil)
}

// ProjectTrace is ProjectTo that also records in tr what VJP needs to
// back-propagate through this projection. tr may be reused across calls;
// it is overwritten.
func (a *AdaNP) ProjectTrace(dst, x, yhat *mat.Dense, tr *Trace) (Stats, error) {
	if tr == nil {
		return Stats{}, errors.New("enforce: nil trace")
	}
	if err := a.checkPattern(x, yhat); err != nil {
		return Stats{}, err
	}
	return a.forward(dst, x, yhat, tr, false, nil)
}

// workspace holds one worker's scratch memory; nothing in the step loop
// allocates.
type workspace struct {
	st       sampleState
	y, yNew  []float64 // n
	c, cNew  []float64 // nc
	b        []float64 // nc·n
	dir      []float64 // n, the direction of the current step
	d        []float64 // n (W⁻¹ diagonal)
	mu       []float64 // nc
	delta    []float64 // n
	g, rf    factor
	eigWork  []float64
	tmp      []float64 // max(n, nc)
	tmpN     []float64 // max(n, nc)
	cEval    []float64 // nc
	bEval    []float64 // nc·n
	yhatExt  []float64 // n
	w        []float64 // nc
	zeroMu   []float64 // nc, zeros
	unit     []float64 // nc
	jx       []float64 // nc·nx
	gx, gxHV []float64 // nx
	gxAcc    []float64 // nx
	// backward pass, length n unless noted
	gy, gp, p, dp, hv, acc, bmu, dt []float64
	hMu, hW                         []float64
	bbar                            []float64 // nc·n
	u, r, z, pk, hpk                []float64 // implicit gradient
	g32                             dense.Gram32Scratch
	g64                             dense.GramScratch
	sp                              *sparseWork // the sparse path's factor
	chordB, chordD                  []float64   // Settings.Chord: B's values and D of the stored factor
	cgR, cgZ, cgP, cgQ, cgT         []float64   // Settings.ChordCG: the conjugate gradients' vectors (nc, and n for cgT)
	feas                            []float64   // Settings.StopWhenFeasible: the feasibility residual (nc), grown on first use
}

func (a *AdaNP) newWorkspace() *workspace {
	if a.sp != nil {
		return a.newSparseWorkspace()
	}
	n, nc, nx := a.n, a.nc, a.nx
	vn := func() []float64 { return make([]float64, n) }
	ws := &workspace{
		y: vn(), yNew: vn(),
		c: make([]float64, nc), cNew: make([]float64, nc),
		b: make([]float64, nc*n), dir: vn(),
		d: vn(), mu: make([]float64, nc), delta: vn(),
		g:       newFactor(nc),
		eigWork: make([]float64, a.eigWork),
		tmp:     make([]float64, max(n, nc)),
		tmpN:    make([]float64, max(n, nc)),
		cEval:   make([]float64, nc), bEval: make([]float64, nc*n),
		yhatExt: vn(),
		w:       make([]float64, nc), zeroMu: make([]float64, nc), unit: make([]float64, nc),
		jx: make([]float64, nc*nx),
		gx: make([]float64, nx), gxHV: make([]float64, nx), gxAcc: make([]float64, nx),
		gy: vn(), gp: vn(), p: vn(), dp: vn(), hv: vn(), acc: vn(), bmu: vn(), dt: vn(),
		hMu: vn(), hW: vn(), bbar: make([]float64, nc*n),
		u: vn(), r: vn(), z: vn(), pk: vn(), hpk: vn(),
	}
	if a.lo {
		ws.g32.Resize(nc, n)
	}
	if a.constB == nil && !a.lo {
		// dense.Gram's scratch, for G formed at every step in float64.
		// A constant Jacobian's G is formed once (the first workspace,
		// made before constB is set, serves), and Float32 forms G in
		// single precision unless it falls back to float64, when Gram
		// grows the scratch itself.
		ws.g64.Resize(nc, n)
	}
	ws.st = sampleState{y: ws.y, c: ws.c, yT: ws.yNew, cT: ws.cNew, J: ws.b, delta: ws.dir, swap: true}
	return ws
}

// factor is a factorisation of G: the Cholesky factor in the lower
// triangle of m, or (when eig is set) eigenvectors in m and clamped
// eigenvalues in lam.
type factor struct {
	m, lam []float64
	eig    bool
}

func newFactor(nc int) factor {
	return factor{m: make([]float64, nc*nc), lam: make([]float64, nc)}
}
