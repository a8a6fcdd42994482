package enforce

import (
	"errors"
	"fmt"
	"math"
)

// Measure reduces a vector of constraint residuals to one number.
type Measure int

const (
	// AutoMeasure, the zero value, is the projection's default measure,
	// which depends on where it is used: MaxAbs for an AdaNP, MeanAbs for
	// the training projection of package train (train.TrainSettings).
	AutoMeasure Measure = iota
	// MaxAbs is max_i |c_i|, the inference criterion of the paper.
	MaxAbs
	// MeanAbs is mean_i |c_i|, the training criterion of the paper.
	MeanAbs
)

// DefaultMeasure is AutoMeasure's former name. Unlike DefaultTol and the
// other Default constants it is not a value that is used, but a request
// for the default of the context.
//
// Deprecated: use AutoMeasure, the same value.
const DefaultMeasure = AutoMeasure

// String returns the measure's name.
func (m Measure) String() string {
	switch m {
	case MaxAbs:
		return "max|c|"
	case MeanAbs:
		return "mean|c|"
	case AutoMeasure:
		return "default measure"
	}
	return fmt.Sprintf("Measure(%d)", int(m))
}

// reduce applies the measure to c.
func (m Measure) reduce(c []float64) float64 {
	var r float64
	if m == MeanAbs {
		for _, v := range c {
			r += math.Abs(v)
		}
		if len(c) > 0 {
			r /= float64(len(c))
		}
		return r
	}
	for _, v := range c {
		if v = math.Abs(v); v > r || v != v {
			r = v
		}
	}
	return r
}

// Weighting selects the metric W of the projection
// argmin ½(y−ŷ)ᵀW(y−ŷ) s.t. c(x, y) = 0.
type Weighting int

const (
	// Identity is W = I: the orthogonal projection.
	Identity Weighting = iota
	// Diagonal is W = diag(Settings.Diag), fixed for all samples.
	Diagonal
	// AutoDiagonal is the reference implementation's per-sample diagonal
	// (its weighting option 5), recomputed at every step from the Jacobian
	// B: with d_k = max(mean_i |B_ik|, 1), W = diag(max_j d_j / d_k), so
	// W⁻¹ = diag(d_k / max_j d_j). Outputs with large Jacobian columns move
	// more; those whose column mean is at most 1 move least. Unrolled gradients differentiate
	// through W (through B, with the curvature of c), as the reference's
	// autograd does.
	AutoDiagonal
	// BatchDiagonal is the reference implementation's batch-averaged
	// diagonal (its weighting option 3): AutoDiagonal's rule applied to
	// the column means of |B| over the batch. At step k, with S_k the
	// samples of the batch that take step k and B_s their Jacobians at
	// their k-th iterates,
	//
	//	m_j = Σ_{s∈S_k} Σ_i |B_s,ij| / (|S_k|·nc),  d_j = max(m_j, 1),
	//	W_k⁻¹ = diag(d_j / max_l d_l),
	//
	// one W_k shared by the samples of S_k. The reference projects every
	// sample of the batch until the batch criterion holds, so its mean
	// runs over the whole batch at every step; here each sample stops on
	// its own criterion and a sample that has stopped no longer moves and
	// no longer counts in the mean (it would otherwise steer the others
	// with the Jacobian of a point that no longer changes). The two agree
	// while every sample is still being projected: at the first step, and
	// at every step when MinDepth == MaxDepth.
	//
	// The weights couple the samples of a batch: a sample's result
	// depends on the other samples of its batch (and so on how data are
	// split into batches), and its gradient reaches them too. Unrolled
	// gradients are exact, couplings included: ∂ℓ/∂ŷ of one sample holds
	// the terms of the other samples' steps through W_k (the curvature of
	// c through B, as for AutoDiagonal). Projector gradients hold W_k
	// fixed. BatchDiagonal supports only these two modes, and neither
	// Settings.LineSearch nor Precision Float32 (whose extra evaluations
	// would desynchronise the samples' steps); NewAdaNP rejects the
	// others, and Precision Auto means Float64 also in a float32 graph.
	// For a constant Jacobian (Linear) it equals AutoDiagonal.
	BatchDiagonal
	// TrainableDiagonal is the reference implementation's trainable
	// diagonal (its weighting option 7): W = diag(exp(θ)) for a parameter
	// θ ∈ ℝ^ny given with every projection (ProjectTheta,
	// ProjectTraceTheta, or a θ node in a graph: WithTrainableWeights),
	// and learned with the network through the gradient ∂ℓ/∂θ of
	// VJPTheta. Latent variables (WithInequalities) keep weight 1 (the
	// reference also learns theirs). θ = 0 gives W = I. Every gradient
	// mode gives ∂ℓ/∂θ as it gives ∂ℓ/∂ŷ: Unrolled the exact derivative of
	// the computed map (AdaNP.ExactGradient); Implicit that of the
	// W-nearest point, ∂ℓ/∂θ_j = u_j·(Bᵀλ)_j with u and λ of its KKT
	// system (exact where Trace.GradStats counts the sample exact); and
	// Projector and FinalProjector their Gauss–Newton approximations,
	// which hold B fixed.
	TrainableDiagonal
)

// String returns the weighting's name.
func (w Weighting) String() string {
	switch w {
	case Identity:
		return "identity"
	case Diagonal:
		return "diagonal"
	case AutoDiagonal:
		return "auto-diagonal"
	case BatchDiagonal:
		return "batch-diagonal"
	case TrainableDiagonal:
		return "trainable-diagonal"
	}
	return fmt.Sprintf("Weighting(%d)", int(w))
}

// GradMode selects how gradients are propagated through AdaNP. The table
// "Gradients" in docs/numerics.md lists, per mode and weighting, what is
// exact and the test that checks it against finite differences.
type GradMode int

const (
	// Unrolled is the exact derivative of the forward map actually
	// computed: every step, including the curvature of the constraints
	// (second derivatives through the Jacobian B), the dependence of
	// AutoDiagonal and BatchDiagonal weights on B (for BatchDiagonal, on
	// the Jacobians of every sample of the batch), the dependence of
	// TrainableDiagonal weights on θ (VJPTheta), and the step lengths of the globalised
	// steps (LineSearch, MaxStep), as the reference implementation's
	// autograd does. It uses HessVec (and MixedHessVec for x-gradients);
	// for a constraint that implements neither it drops the curvature
	// terms (then AdaNP.ExactGradient reports false). Steps that took the
	// eigenvalue-clamped solve are differentiated as if G were inverted
	// exactly; Trace.GradStats counts such samples as inexact.
	Unrolled GradMode = iota
	// Projector back-propagates through every step with the Jacobian B
	// and the weights held fixed: per step, only the projector
	// P = I − W⁻¹Bᵀ(BW⁻¹Bᵀ)⁻¹B (Gauss–Newton, no curvature). Exact for
	// constraints affine in y with fixed weights.
	Projector
	// Implicit is the implicit-function-theorem derivative of the final
	// point y* seen as the W-nearest point to ŷ on c(x, ·) = 0: it solves
	// the KKT system with the Hessian of the Lagrangian W + Σ_i λ_i ∇²c_i
	// (HessVec, by conjugate gradients), with memory independent of the
	// depth. It equals the derivative of the computed map when AdaNP
	// converges to the nearest point (affine constraints; W = I with a
	// radial path such as spheres; in general not exactly, since
	// Gauss–Newton steps need not end at the nearest point):
	// Trace.GradStats counts as inexact the samples whose y* is not a KKT
	// point of the nearest-point problem, and those where y* is not a
	// strict local minimiser (the gradient then falls back to
	// FinalProjector's).
	Implicit
	// FinalProjector back-propagates only through the projector at the
	// final point, as the reference's ift_backward option: no curvature,
	// memory independent of the depth. Exact only for affine constraints.
	FinalProjector
)

// String returns the mode's name.
func (g GradMode) String() string {
	switch g {
	case Unrolled:
		return "unrolled"
	case Projector:
		return "projector"
	case Implicit:
		return "implicit"
	case FinalProjector:
		return "final-projector"
	}
	return fmt.Sprintf("GradMode(%d)", int(g))
}

// Precision selects the arithmetic of the heavy linear algebra of a
// projection step.
type Precision int

const (
	// Auto is Float64, except in a float32 gorgonia graph, where the Op
	// uses Float32.
	Auto Precision = iota
	// Float64 computes everything in float64.
	Float64
	// Float32 computes the work of a step that grows fastest with the
	// sizes in single precision: the Gram matrix G = B·W⁻¹·Bᵀ (O(nc²·ny)
	// per sample) at every step, and, while a sample is far from the
	// constraint set, the constraint evaluation and its curvature products
	// (O(nc·ny²) for Quadratic) when the constraint's Capabilities have
	// EvalBatch32, whose Jacobian then stays in float32 for the Gram
	// matrix and the step (it is converted only where a trace stores it;
	// the batched forward pass holds a float32 Jacobian buffer beside the
	// float64 one, 4·rows·nc·ny bytes, 100 MB at (833, 200, 150)).
	// The iterate, the residual and the step stay float64, and so does
	// G's Cholesky factor as stored: a G of 24 rows or more is factored in
	// single precision where the CPU has the package's assembly kernels
	// (AVX2 or AVX-512, a blocked factorisation with the same bits on
	// both) or by spotrf under the openblas build tag, and the factor
	// converted; elsewhere (and for smaller G) it is factored in float64.
	//
	// The tolerance guarantee is float64's: a residual computed in single
	// precision is evaluated again in float64 before the sample may stop
	// on it or take a float64 step from it, so every reported residual and
	// Stats field except Stats.Before comes from float64 arithmetic. When
	// the single-precision evaluations go on depends on the size T of the
	// terms of c at the sample's first iterate, estimated as the larger of
	// its residual measure and max_i Σ_j|∂c_i/∂y_j·y_j| over up to 16
	// evenly spaced rows i (a start close to the set has a small residual
	// but not small terms):
	//   - if T·2⁻¹⁸ ≤ Tol (64 float32 ulps of T: single precision can
	//     reach the tolerance, as with Tol = 1e-3 up to T = 262), the
	//     sample takes single-precision steps until its single-precision
	//     measure meets Tol or stops halving; the float64 evaluation then
	//     confirms Tol or, if the float64 measure misses it, the sample goes
	//     on in float64 from there (TestFloat32AimsAtTol);
	//   - otherwise it switches to float64 evaluations for its last steps
	//     once its single-precision measure, or the measure Newton's rate
	//     predicts after the next step, is at most √Tol (or Tol, when
	//     Tol ≥ 1), or the measure stops halving, or the sample would stop.
	//
	// G's rounding (relative 1e-7 of its entries) only makes each step an
	// inexact Newton step, whose error is about cond(G)·1e-7 of the
	// residual. A G that is
	// not well enough conditioned for single precision (a squared Cholesky
	// pivot below 1e-5 of its diagonal entry) is formed and factored again
	// in float64, from a float64 Jacobian: a sample whose Jacobian was
	// evaluated in single precision is evaluated again in float64 first
	// and goes on in float64. A G too small for single precision to pay
	// (nc²·ny < 4096) is formed in float64. The number of steps is about that
	// of Float64 (TestFloat32Projection allows half a step more on average
	// and measured the same), except that a start close to the set whose
	// terms are large for the tolerance can take one step more: its first
	// step is a single-precision one (TestFloat32AimsAtTol: 2 steps against
	// Float64's 1.00 at Tol 1e-7).
	//
	// The gain is per step and depends on the CPU: at (833, 200, 150) a
	// single-precision step took about half the time of a float64 one in
	// pure Go on an AVX2 CPU (230 against 428 ms, 2026-11-27, after the
	// float64 Gram matrices moved to the package's float64 kernel) and
	// about a third with OpenBLAS (docs/performance.md; `go run
	// ./examples/bench` prints both). At a tolerance within single
	// precision's reach every step is a single-precision one and the
	// float64 work is one evaluation per sample; at a tighter one, a
	// sample that needs only two or three Newton steps from ŷ takes about
	// one of them with single-precision evaluations, so a whole projection
	// from near-feasible predictions gains less (on that AVX2 CPU, to
	// 1e-6 from the bench's ŷ, 0.91 against 1.25 s); one that starts far
	// from the set gains more.
	//
	// A constraint with a constant Jacobian (Linear) is projected in
	// float64 throughout, as with Float64: its G is formed and factored
	// once, in float64.
	//
	// Gradients are those of the steps actually taken, differentiated in
	// float64; their G⁻¹ carries single-precision rounding (relative error
	// of about cond(G)·1e-7), so they match Float64's to that accuracy.
	//
	// On the sparse path (PathSparse) all of the above is replaced by one
	// rule: G's factor is computed and stored in single precision where
	// the symbolic analysis chose the supernodal method, and everything
	// else is float64 (see PathSparse).
	Float32
)

// String returns the precision's name.
func (p Precision) String() string {
	switch p {
	case Auto:
		return "auto"
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// Defaults used for zero fields of Settings.
const (
	DefaultTol      = 1e-6
	DefaultMinDepth = 1
	DefaultMaxDepth = 100
)

// DefaultDamping is a starting θ for Settings.Damping: the value the
// measurements of docs/numerics.md ("Step control") used; no other value
// was compared there.
const DefaultDamping = 1e-3

// Settings configures AdaNP. The zero value gives the paper's inference
// settings: orthogonal projection, max|c| ≤ 1e-6, between 1 and 100 steps.
type Settings struct {
	// Tol is the residual tolerance: a sample stops being projected once
	// its Measure of c is at most Tol. Zero means DefaultTol.
	Tol float64
	// MinDepth and MaxDepth bound the number of projection steps.
	// Zero means DefaultMinDepth and DefaultMaxDepth. With
	// MinDepth == MaxDepth every sample takes exactly that many steps.
	MinDepth, MaxDepth int
	// Measure is the per-sample residual measure compared with Tol.
	Measure Measure
	// Reg is the Tikhonov ε in G = BW⁻¹Bᵀ + εI, also the floor of the
	// eigenvalue clamp. Zero (the default) means no regularisation: an
	// affine constraint is then met exactly in one step, and a sample whose
	// G is singular falls back to the clamped eigendecomposition. (The
	// reference implementation uses ε = 1e-8 whenever W ≠ I, and 1e-3 for
	// the pooling problem.) Negative values are rejected.
	Reg float64
	// Weights selects W; Diag holds W's diagonal (length ny, all > 0)
	// when Weights is Diagonal.
	Weights Weighting
	Diag    []float64
	// Grad selects the gradient propagated by the graph Op and VJP.
	Grad GradMode
	// Recompute makes ProjectTrace store only each step's iterate and
	// multipliers; VJP evaluates the Jacobian and factors G again (one more
	// constraint evaluation and factorisation per step in the backward
	// pass), so that trace memory is O(n + nc) per sample and step instead
	// of O(nc·n + nc²). Gradients are the same (with Float32, to its
	// rounding: the backward pass forms G in float64).
	Recompute bool
	// Precision selects float64 or mixed single-precision arithmetic (see
	// Float32). The zero value Auto means Float64 here.
	Precision Precision
	// Path selects dense or sparse linear algebra for the steps (see
	// Path). The zero value PathAuto takes the sparse path where the
	// constraint declares Capabilities.Sparse and the sizes make it pay.
	Path Path

	// Globalisation (beyond the paper; off by default, which gives the
	// paper's full Gauss–Newton steps).

	// MaxStep, when positive, bounds the length ‖Δy‖ of every step
	// (Euclidean, over y and any latent variables): a longer step is
	// scaled down to MaxStep along its direction.
	MaxStep float64
	// LineSearch backtracks each step, halving its length until the merit
	// ‖c‖² decreases enough (Armijo, σ = 1e-4). A sample for which no
	// length in 30 halvings does stops and is counted in Stats.Stalled.
	LineSearch bool
	// Damping, when positive, makes every step a Levenberg–Marquardt step
	// on ½‖c‖², for starts far from the constraint set: the direction is
	//
	//	δ = D·Bᵀ(B·D·Bᵀ + (ε + ν)I)⁻¹c,   ν = θ·‖c‖₂,
	//
	// (the minimum-norm form of (BᵀB + νW)⁻¹Bᵀc for W = I), which turns
	// from the Gauss–Newton step (ν → 0 near the set, where ‖c‖ → 0
	// makes the step Newton's again) toward steepest descent of ‖c‖² (ν
	// large). G is positive definite whenever ν > 0, but near the set ν is
	// small and a rank-deficient B can still need the sparse path's raised ε
	// or the dense path's eigenvalue clamp (counted in Stats.Clamped, as
	// without damping). Each step is then
	// backtracked as with LineSearch (which Damping implies), and θ, a
	// per-sample number starting at Damping, adapts to the ratio ρ of the
	// actual decrease of ½‖c‖² to the decrease its linearisation predicts:
	// θ is multiplied by 4 after a step with ρ < ¼ (ρ of the step length
	// the line search accepted), divided by 4 (down to 1e-12) after one
	// with ρ > ¾; before 2026-12-07 a step that needed backtracking raised
	// θ too, which made projections crawl near the set (docs/numerics.md,
	// "The damping's rule", measures both rules). θ changes only through
	// these decisions, so it is piecewise constant in ŷ and x, and
	// Unrolled gradients are exact through the damped steps: they include
	// the dependence of ν on y (and x) through ‖c‖. Projector gradients
	// hold ν fixed with B; Implicit and FinalProjector, which depend only on
	// the final point, mean what they mean without damping. DefaultDamping
	// is the value docs/numerics.md used. Zero (the default) takes the
	// paper's undamped steps. Damping needs a constraint whose Jacobian
	// is not constant (one full step solves a Linear constraint; NewAdaNP
	// rejects the combination), and supports neither BatchDiagonal weights
	// nor Precision Float32 on the dense path.
	Damping float64 `json:",omitempty"`
	// Smoothing, when positive, is a fallback for the samples that the
	// plain projection does not bring to Tol, for a constraint made by
	// WithInequalities: each sample is first projected as without it, for
	// at most SmoothingFirstDepth steps (MaxDepth if smaller); a sample still above Tol is
	// projected again from ŷ, in two stages: onto the same system with its
	// Fischer–Burmeister rows smoothed with ε_FB = Smoothing (larger than
	// the constraint's own; SmoothingLadder lists smaller values tried
	// first), to the tolerance max(Tol, Smoothing/10), and
	// then, from that point, onto the constraint itself to Tol, each stage
	// with these Settings otherwise and its multipliers starting at zero.
	// A large ε_FB converges in few steps from far off, where the active
	// set of the inequalities must change a lot and the plain rows stall;
	// but its margin ε_FB/(2λ) at the active inequalities moves the point
	// inward, and the last stage starts from there, so a sample that took
	// the fallback lands farther from ŷ than a plain projection that
	// converges would (docs/numerics.md, "Step control", measures both).
	// Samples that converge in the first attempt are its results, bit for
	// bit. Stats describe the whole projection (a sample's depth counts
	// the steps of every stage it took; Before and Displacement are
	// measured from ŷ on the constraint itself), and gradients are those
	// of the branch each sample took: through the first attempt, or
	// through the last stage and then the smoothed one, in every gradient
	// mode, so Unrolled stays exact. On the sparse path the stages share
	// the AdaNP's symbolic analysis of G (one analysis, not one per stage:
	// TestSmoothingStagesShareAnalysis; on case10000_goc with acopf-learn's
	// row settings, measured once, 62 MB of heap after NewAdaNP instead of
	// 255 MB). NewAdaNP rejects Smoothing for a
	// constraint not made by WithInequalities, one at or below the
	// constraint's ε_FB, and BatchDiagonal or TrainableDiagonal weights.
	Smoothing float64 `json:",omitempty"`
	// SmoothingFirstDepth is the number of steps of Smoothing's plain
	// attempt, after which a sample still above Tol takes the fallback;
	// zero means DefaultSmoothingFirstDepth (15). A sample that converges
	// in the plain attempt ends nearer ŷ than one that takes the fallback
	// (whose smoothed stage keeps the active bounds inside), so where the
	// plain projection needs more steps, as from a network's predictions
	// on the largest grids, a longer attempt lands nearer at the cost of
	// the steps a far sample wastes in it (docs/numerics.md, "The plain
	// attempt's length", measures 15, 30 and 60). NewAdaNP rejects it
	// without Smoothing.
	SmoothingFirstDepth int `json:",omitempty"`
	// SmoothingPatience, when positive, ends Smoothing's plain attempt for
	// a sample as soon as SmoothingPatience consecutive steps have not
	// lowered its residual measure below 99 % of the lowest it reached
	// (after at least MinDepth steps, in float64 evaluations), instead of
	// after SmoothingFirstDepth steps: the sample takes the fallback, which
	// starts from ŷ, at once, and lands where the fallback puts it. With
	// StopWhenFeasible, a sample that meets the constraint at that step
	// stops there instead, as it would have. A sample whose steps keep
	// making progress is not affected; the ones handed over are those
	// whose steps bounce without progress, as the nonmonotone search's do
	// between active sets of the limits, which would have run out of steps
	// or converged late. On examples/acopf-learn's case10000_goc test set
	// (with Nonmonotone 5), 3 took 11–14 % of the steps and about 10 % of
	// the wall time off every row, for 0.02–0.03 points of gap; on
	// case2869_pegase 7–13 % of the steps and no wall time
	// (docs/numerics.md, "The plain attempt's patience"). A sample's
	// gradient is that of the branch it took, as without it, so every
	// mode keeps its exactness. NewAdaNP rejects it negative or without
	// Smoothing. Zero (the default): the plain attempt runs
	// SmoothingFirstDepth steps, as before.
	SmoothingPatience int `json:",omitempty"`
	// SmoothingFromAttempt starts the fallback of Smoothing (the ladder's
	// stages, then Smoothing's) for a sample that missed the plain attempt
	// from the attempt's last iterate instead of from ŷ. The attempt has
	// usually brought the sample much nearer the set (on
	// examples/acopf-learn's case10000_goc predictions that miss it,
	// max|c| 5–12 at ŷ, and 0.3–1.6 after the attempt on three traced),
	// so the smoothed stages need fewer
	// steps; where they land, and so the cost, changes both ways: on
	// case2869_pegase 25 % fewer steps and a gap 0.1 point lower, on
	// case10000_goc 5–7 % fewer steps and a gap up to 0.1 point higher;
	// from far starts far fewer steps, but a sample the fallback from ŷ
	// brings to Tol can miss it (case1354_pegase from optima perturbed by
	// σ = 1e-2: 1 of 20) (docs/numerics.md, "The fallback from the
	// attempt's point"). Displacement is still measured from ŷ, and the
	// result still meets the constraint: only which point it is changes. The
	// gradient of such a sample chains the fallback's with the plain
	// attempt's, through its trace: exact in Unrolled mode; in Implicit and
	// FinalProjector modes the attempt's part is taken at its last point,
	// which did not converge, and GradStats counts the sample inexact.
	// NewAdaNP rejects it without Smoothing. False (the default): the
	// fallback starts from ŷ, as before.
	SmoothingFromAttempt bool `json:",omitempty"`
	// SmoothingLadder lists smaller smoothing parameters that Smoothing's
	// fallback tries first, in increasing order, each larger than the
	// constraint's ε_FB and smaller than Smoothing: a sample that misses
	// the plain attempt is projected from ŷ onto the system smoothed with
	// the first value, to max(Tol, ε/10) in at most SmoothingFirstDepth
	// steps (MaxDepth if smaller); if it misses that, from ŷ again with
	// the next value, and so on; only a sample that misses every one takes
	// Smoothing's own smoothed stage. The point of the stage it met is
	// then projected onto the constraint itself, as without the ladder.
	// The smoothed stage's margin at the active inequalities grows with
	// its ε, and the last stage starts from its point, so a sample that
	// converges on a lower rung tends to land nearer ŷ (measured, not
	// guaranteed), while Smoothing stays the rung that converges from far:
	// on the case10000_goc predictions of examples/acopf-learn, the 1e-2
	// stage put the samples that took it 7.3–7.5 from ŷ in the metric
	// (the nearest feasible points are 1.8–2.1 away) at a cost 5.4–5.5 %
	// above the optimum (the nearest points' 0.6–0.75 %), and a stage at
	// 1e-4 1.9–2.2 at 0.9–1.0 % (docs/numerics.md, "A ladder of
	// smoothings", measures it). Stats count every stage a sample took; gradients go
	// through the last stage and the rung whose point it started from
	// (a rung that a sample missed does not affect its result), in every
	// gradient mode. NewAdaNP rejects a ladder without Smoothing, one not
	// increasing, or a value outside (ε_FB, Smoothing); at most
	// MaxSmoothingLadder values. Empty (the default): Smoothing's stage
	// alone, as before.
	SmoothingLadder []float64 `json:",omitempty"`
	// EqualitySteps, when positive, for a constraint made by
	// WithInequalities with equalities, first takes up to EqualitySteps
	// Gauss–Newton steps on the equalities alone, from ŷ (the inequality
	// rows and the multipliers left out, these Settings otherwise; a
	// sample whose equalities are within Tol stops early), and then
	// projects the whole system from that point as without it (Smoothing's
	// fallback included, which then restarts from that point, not from ŷ;
	// ProjectLatent's multipliers start the second stage). Far off the
	// equalities, an inequality that ŷ violates has at λ = 0 a linearised
	// Fischer–Burmeister row that acts as an equality and can fight the
	// equalities' step where its own linearisation is poor; from perturbed
	// optima of the PGLib grids with their branch limits, one or two
	// steps on the power flow first turn projections that stalled into
	// ones that converge in about 7 steps (docs/numerics.md, "Equalities
	// first", measures it). Stats describe the whole projection: a
	// sample's depth counts the steps of both stages (so it can reach
	// MaxDepth + EqualitySteps), and Before and Displacement are measured
	// from ŷ on the whole system. Gradients chain the second stage's, in
	// Settings.Grad, with the equality stage's, which is always Unrolled
	// (exact through its steps): Unrolled stays exact, and Implicit and
	// FinalProjector give the final point's gradient with respect to the
	// second stage's start, carried exactly through the equality steps.
	// NewAdaNP rejects EqualitySteps for a constraint not made by
	// WithInequalities or one without equalities, and with BatchDiagonal
	// or TrainableDiagonal weights. Zero (the default) leaves it out.
	EqualitySteps int `json:",omitempty"`
	// Chord, when positive, lets up to Chord steps after each
	// factorisation of G reuse it (chord steps): from iterate y the step is
	//
	//	δ = D_j·B_jᵀ·G_j⁻¹·c(y),
	//
	// with B_j, D_j and G_j (its ε and damping ν included) those of the
	// last step that factored, so that it costs a solve with the stored
	// factor instead of a factorisation. A chord step is kept only if it
	// reduces ‖c‖₂ to at most half (no backtracking, no change to
	// Damping's θ); otherwise it is discarded, the residual and Jacobian
	// at y are evaluated again and a fresh step is taken from y, which
	// allows the next Chord chord steps. Chord steps count in the depth
	// like any other. It acts on the sparse path, with Implicit or
	// FinalProjector gradients (which depend only on the final point, so
	// they mean what they mean without it; chord steps are not recorded for
	// Unrolled or Projector gradients, and NewAdaNP rejects those, and
	// BatchDiagonal or TrainableDiagonal weights).
	// docs/numerics.md ("Step control") measures what it saves. Zero (the
	// default) factors at every step.
	Chord int `json:",omitempty"`
	// ChordCG, when positive (with Chord), makes each chord step an
	// inexact Newton step instead: G(y)·μ = c(y), with G(y) = B·D·Bᵀ + εI
	// at the current iterate (B, D, the damping ν of this step), is solved
	// by conjugate gradients preconditioned by the stored factor, to
	// ‖G(y)μ − c(y)‖₂ ≤ η‖c(y)‖₂ with the forcing term
	// η = min(0.1, √‖c(y)‖₂), in at most ChordCG iterations, and the step
	// is δ = D·Bᵀ·μ with the current B. A solve that does not reach η
	// within ChordCG iterations (or meets a non-positive curvature) is
	// dropped for a fresh step, which factors; the step is kept as a
	// chord step is (‖c‖₂ at least halved). Each iteration costs a product
	// with B and Bᵀ and a solve with the stored factor. The rules of Chord
	// apply (sparse path, Implicit or FinalProjector gradients). Zero (the
	// default): chord steps use the stored B, D and G. NewAdaNP rejects
	// ChordCG without Chord.
	ChordCG int `json:",omitempty"`
	// Nonmonotone, when above 1 (at most 16), makes the line search of
	// LineSearch and Damping nonmonotone (Grippo, Lampariello and Lucidi):
	// a trial is accepted when its merit ½‖c‖² is below the largest merit
	// of the current iterate and the Nonmonotone−1 before it, less the
	// Armijo term, instead of below the current one's. Newton steps that
	// raise ‖c‖ for a step on the way to fast convergence are then taken
	// whole, where the monotone rule cuts them to a crawl. With Damping, a
	// step accepted although it raised the merit leaves θ unchanged
	// (raising it, as for ρ < ¼, brought the crawl back in measurements:
	// docs/numerics.md, "A nonmonotone line search"). Acceptance stays a
	// decision, as the monotone rule's, so Unrolled gradients stay exact.
	// It needs LineSearch or Damping (NewAdaNP rejects it otherwise) and
	// is not used by chord steps. Zero or one: monotone, as before.
	Nonmonotone int `json:",omitempty"`
	// SmoothingNonmonotone, when positive (at most 16), is the Nonmonotone
	// of Smoothing's last stage alone (the projection onto the constraint
	// itself from the smoothed stage's point; 1 makes that stage
	// monotone); the plain attempt and the smoothed stages keep
	// Nonmonotone. The last stage starts near the set, from a point whose
	// multipliers are zero, where a monotone search can cut every Newton
	// step to a crawl; a sample that the plain attempt converges on does
	// not reach it, so its result is unchanged. On examples/acopf-learn's
	// case1354_pegase test set, one trained model's slowest prediction
	// took 292 steps, 238 of them in that stage, and 119 with 5, and the
	// batch 15–17 ms per instance against 26 with the binary before it,
	// alternated on one machine (docs/numerics.md, "In Smoothing's last
	// stage only"). It needs Smoothing, and above 1 LineSearch or Damping
	// (NewAdaNP rejects it otherwise); gradients are as Nonmonotone's
	// (Unrolled stays exact). Zero (the default): the last stage uses
	// Nonmonotone, as before.
	SmoothingNonmonotone int `json:",omitempty"`
	// StopWhenFeasible, for a constraint made by WithInequalities, stops a
	// sample as soon as the residual a user checks, its equalities and
	// the inequalities' excess max(g, 0) (what Check and CheckResidual
	// measure), is within Tol in Measure, after at least MinDepth steps,
	// even where the Fischer–Burmeister rows, which also ask the
	// multipliers to be complementary to the inequalities, are not yet.
	// The output then meets the constraints to Tol, as a converged
	// projection's does, but it is the iterate before the last steps
	// that settle the multipliers: not the solution of the smoothed
	// nearest-point system, though near it (measured on the PGLib grids
	// from learned predictions, docs/numerics.md, "Stopping when
	// feasible": 9 to 33 % fewer steps, every output within 0.02 of the
	// converged projection's, which lie 1 to 20 from ŷ, and the mean cost
	// within 2e-7 relative; a measurement, not a bound). Stats' residuals
	// after projection are then, for every sample it stopped, that
	// residual (Check's), and the sample counts as converged. Gradients
	// are those of the map computed, which stops there: Unrolled stays
	// exact, Projector and FinalProjector are what they are at that point,
	// and Implicit, which assumes the final point solves the system,
	// counts in Trace.GradStats the samples where it does not as it does
	// for any projection. With Smoothing it applies to the plain attempt
	// and the last stage, not to the smoothed stage (whose point only
	// starts the last one). NewAdaNP rejects it for a constraint without
	// such a residual (one not made by WithInequalities). False (the
	// default) stops on the whole system's residual, as before.
	StopWhenFeasible bool `json:",omitempty"`

	// RequireTol makes a sample that misses the tolerance an error: a
	// projection (Project, ProjectTo, ProjectTrace, the graph Op) in which
	// some sample's residual measure is above Tol after projection returns
	// a *ToleranceError listing them, for callers who must never use an
	// output that is not feasible to Tol. Without it (the default) such
	// samples are only reported, in Stats.NotConverged and Stats.Missed.
	// Check, and an Op whose Gate passed ŷ through, report without
	// failing. (Its JSON form is omitted when false, so that documents
	// that hold Settings, such as train's checkpoints, written before it
	// existed read the same.)
	RequireTol bool `json:",omitempty"`
}

// withDefaults returns s with zero fields replaced by defaults, after
// validating it for a constraint with ny predicted outputs.
func (s Settings) withDefaults(ny int) (Settings, error) {
	if s.Tol == 0 {
		s.Tol = DefaultTol
	}
	if s.MinDepth == 0 {
		s.MinDepth = DefaultMinDepth
	}
	if s.MaxDepth == 0 {
		s.MaxDepth = DefaultMaxDepth
	}
	if s.Measure == AutoMeasure {
		s.Measure = MaxAbs
	}
	switch {
	case !(s.Tol > 0) || math.IsInf(s.Tol, 1):
		return s, fmt.Errorf("enforce: Settings.Tol must be positive and finite, got %v", s.Tol)
	case s.MinDepth < 0 || s.MaxDepth < 0:
		return s, fmt.Errorf("enforce: negative depth bound (MinDepth %d, MaxDepth %d)", s.MinDepth, s.MaxDepth)
	case s.MinDepth > s.MaxDepth:
		return s, fmt.Errorf("enforce: Settings.MinDepth %d > MaxDepth %d", s.MinDepth, s.MaxDepth)
	case s.Reg < 0 || math.IsNaN(s.Reg) || math.IsInf(s.Reg, 1):
		return s, fmt.Errorf("enforce: Settings.Reg must be non-negative and finite, got %v", s.Reg)
	case s.Measure != MaxAbs && s.Measure != MeanAbs:
		return s, fmt.Errorf("enforce: unknown %v", s.Measure)
	case s.Grad != Unrolled && s.Grad != Projector && s.Grad != Implicit && s.Grad != FinalProjector:
		return s, fmt.Errorf("enforce: unknown %v", s.Grad)
	case s.Precision != Auto && s.Precision != Float64 && s.Precision != Float32:
		return s, fmt.Errorf("enforce: unknown %v", s.Precision)
	case s.MaxStep < 0 || math.IsNaN(s.MaxStep) || math.IsInf(s.MaxStep, 1):
		return s, fmt.Errorf("enforce: Settings.MaxStep must be non-negative and finite, got %v", s.MaxStep)
	case s.Damping < 0 || math.IsNaN(s.Damping) || math.IsInf(s.Damping, 1):
		return s, fmt.Errorf("enforce: Settings.Damping must be non-negative and finite, got %v", s.Damping)
	case s.Smoothing < 0 || math.IsNaN(s.Smoothing) || math.IsInf(s.Smoothing, 1):
		return s, fmt.Errorf("enforce: Settings.Smoothing must be non-negative and finite, got %v", s.Smoothing)
	case s.SmoothingFirstDepth < 0:
		return s, fmt.Errorf("enforce: Settings.SmoothingFirstDepth must be non-negative, got %d", s.SmoothingFirstDepth)
	case s.SmoothingFirstDepth > 0 && s.Smoothing == 0:
		return s, errors.New("enforce: Settings.SmoothingFirstDepth is the length of Settings.Smoothing's plain attempt: it needs Smoothing > 0")
	case s.SmoothingPatience < 0:
		return s, fmt.Errorf("enforce: Settings.SmoothingPatience must be non-negative, got %d", s.SmoothingPatience)
	case s.SmoothingFromAttempt && s.Smoothing == 0:
		return s, errors.New("enforce: Settings.SmoothingFromAttempt starts Settings.Smoothing's fallback from its plain attempt: it needs Smoothing > 0")
	case s.SmoothingPatience > 0 && s.Smoothing == 0:
		return s, errors.New("enforce: Settings.SmoothingPatience ends Settings.Smoothing's plain attempt early: it needs Smoothing > 0")
	case len(s.SmoothingLadder) > 0 && s.Smoothing == 0:
		return s, errors.New("enforce: Settings.SmoothingLadder lists the rungs Settings.Smoothing's fallback tries first: it needs Smoothing > 0")
	case len(s.SmoothingLadder) > MaxSmoothingLadder:
		return s, fmt.Errorf("enforce: Settings.SmoothingLadder has %d values, at most %d", len(s.SmoothingLadder), MaxSmoothingLadder)
	case s.EqualitySteps < 0:
		return s, fmt.Errorf("enforce: Settings.EqualitySteps must be non-negative, got %d", s.EqualitySteps)
	case s.Chord < 0:
		return s, fmt.Errorf("enforce: Settings.Chord must be non-negative, got %d", s.Chord)
	case s.Nonmonotone < 0 || s.Nonmonotone > maxNonmonotone:
		return s, fmt.Errorf("enforce: Settings.Nonmonotone must be between 0 and %d, got %d", maxNonmonotone, s.Nonmonotone)
	case s.Nonmonotone > 1 && !s.LineSearch && s.Damping == 0:
		return s, errors.New("enforce: Settings.Nonmonotone relaxes the line search of LineSearch or Damping; neither is set")
	case s.SmoothingNonmonotone < 0 || s.SmoothingNonmonotone > maxNonmonotone:
		return s, fmt.Errorf("enforce: Settings.SmoothingNonmonotone must be between 0 and %d, got %d", maxNonmonotone, s.SmoothingNonmonotone)
	case s.SmoothingNonmonotone > 0 && s.Smoothing == 0:
		return s, errors.New("enforce: Settings.SmoothingNonmonotone is the Nonmonotone of Settings.Smoothing's last stage: it needs Smoothing > 0")
	case s.SmoothingNonmonotone > 1 && !s.LineSearch && s.Damping == 0:
		return s, errors.New("enforce: Settings.SmoothingNonmonotone relaxes the line search of LineSearch or Damping; neither is set")
	case s.ChordCG < 0:
		return s, fmt.Errorf("enforce: Settings.ChordCG must be non-negative, got %d", s.ChordCG)
	case s.ChordCG > 0 && s.Chord == 0:
		return s, errors.New("enforce: Settings.ChordCG solves chord steps' systems inexactly: it needs Settings.Chord > 0")
	}
	if s.Weights == BatchDiagonal && s.Damping > 0 {
		return s, errors.New("enforce: batch-diagonal weights do not support Settings.Damping")
	}
	if s.Weights == BatchDiagonal && s.Grad != Unrolled && s.Grad != Projector {
		return s, fmt.Errorf("enforce: batch-diagonal weights support Unrolled and Projector gradients, not %v", s.Grad)
	}
	if s.Weights == BatchDiagonal && (s.LineSearch || s.Precision == Float32) {
		return s, errors.New("enforce: batch-diagonal weights support neither Settings.LineSearch nor Precision Float32")
	}
	switch s.Weights {
	case Identity, AutoDiagonal, BatchDiagonal, TrainableDiagonal:
		if s.Diag != nil {
			return s, errors.New("enforce: Settings.Diag is only used with Weights == Diagonal")
		}
	case Diagonal:
		if len(s.Diag) != ny {
			return s, fmt.Errorf("enforce: Settings.Diag has length %d, want ny = %d", len(s.Diag), ny)
		}
		for i, d := range s.Diag {
			if !(d > 0) || math.IsInf(d, 1) {
				return s, fmt.Errorf("enforce: Settings.Diag[%d] = %v, want positive and finite", i, d)
			}
		}
		s.Diag = append([]float64(nil), s.Diag...)
	default:
		return s, fmt.Errorf("enforce: unknown %v", s.Weights)
	}
	if s.SmoothingLadder != nil {
		s.SmoothingLadder = append([]float64(nil), s.SmoothingLadder...)
	}
	return s, nil
}
