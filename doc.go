// Package enforce makes neural-network predictions satisfy nonlinear
// equality and inequality constraints by construction, following ENFORCE
// (Lastrucci & Schweidtmann): a backbone predicts ŷ and an adaptive-depth
// neural projection (AdaNP) repeatedly linearises c(x, y) = 0 and projects
// onto it in closed form,
//
//	B = ∂c/∂y(x, y),  G = B·W⁻¹·Bᵀ + εI,  y ← y − W⁻¹·Bᵀ·G⁻¹·c(x, y),
//
// until each sample's residual is below a tolerance.
//
// New here? The README has three complete programs: a projection in plain Go,
// a model trained with package train (New, Fit, SaveFile, LoadFile, Predict),
// and an AdaNP node in a gorgonia graph. Beyond this documentation:
//
//	docs/guide.md        writing constraints; training on your own data
//	docs/numerics.md     Settings; which gradients are exact (the table
//	                     Gradients, with the test of each claim); numerical
//	                     behaviour
//	docs/sparse.md       large sparse constraints: declaring a pattern,
//	                     SparseFunc, CheckSparse, the sparse path, memory
//	docs/acopf.md        AC optimal power flow on grids of up to 10 000 buses
//	docs/performance.md  measured speed, against the reference implementation
//	examples/README.md   runnable programs and the paper's experiments
//	ARCHITECTURE.md      for maintainers: where each part of the code lives
//
// # Constraints
//
// Most constraints are written with Func and package hd, as ordinary Go
// code whose exact first and second derivatives come from hyperdual
// numbers:
//
//	// y₁² + y₂² = x₁²
//	circle, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
//		c[0] = hd.Sub(hd.Add(hd.Square(y[0]), hd.Square(y[1])), hd.Square(x[0]))
//	})
//
// Linear and Quadratic are the affine and quadratic families with analytic
// derivatives (Quadratic's evaluated a batch at a time); Stack concatenates systems; and
// WithInequalities adds g(x, y) ≤ 0 through the Fischer–Burmeister
// reformulation, with multipliers that AdaNP appends as zeros and drops,
// so callers only ever see y. Refine projects again the rows a projection
// missed, with further AdaNPs in turn: onto the same inequalities smoothed
// less, a continuation that finishes rows whose feasible set is thinner
// than the first smoothing allows. Where bounds on y must change which
// are active and the Fischer–Burmeister rows stall, Interior projects onto
// the equalities with affine-scaled Newton steps that keep y strictly
// inside a Box: an inference-time projection (no gradient) that finds a
// feasible point near the start, not the nearest one.
//
// A hand-written Constraint is two methods, Dims and Eval. Everything else
// a constraint can do (derivatives in x, curvature, a constant Jacobian,
// latent variables, batched and single-precision evaluation) it declares
// in one place, the Capabilities struct it returns if it is Capable: a
// struct of optional functions, as gonum/optimize's Problem, rather than
// one optional interface per capability. Stack and WithInequalities build
// their Capabilities from their parts' when they are built, so wrapping a
// constraint never loses what it can do. AdaNP, like the losses and train
// packages, reads a constraint's Capabilities once, when it is built.
//
// # Projection
//
// NewAdaNP validates Settings (whose zero value is the paper's inference
// setting: max|c| ≤ 1e-6, 1 to 100 steps, W = I). AdaNP.Project projects a
// batch held in gonum matrices; AdaNP.ProjectTrace and AdaNP.VJP give
// gradients for hand-written training loops. Every sample stops on its own
// criterion; batches run in parallel with results that do not depend on
// GOMAXPROCS; invalid input, and a panic in constraint or gate code, is an
// error naming the sample, and neither output nor gradient is ever NaN.
// Settings.LineSearch and Settings.MaxStep (off by default) globalise the
// steps for predictions far from the constraint set, where full
// Gauss–Newton steps can land far from the nearest feasible point.
//
// A sample that ends above the tolerance (its Settings.MaxDepth steps
// spent, stalled, or stopped before a non-finite step) keeps its last
// iterate and is reported, not hidden: Stats.NotConverged counts such
// samples and Stats.Missed lists their rows, so that Refine or Interior
// can finish them. With Settings.RequireTol, Project returns a
// *ToleranceError naming them instead.
//
// # Sparse constraints
//
// A constraint whose Jacobian B = ∂c/∂y has a few nonzeros per row declares
// their pattern (Capabilities.Sparse, a SparseJacobian) or is written with
// SparseFunc, Go code over hyperdual numbers with the outputs each equation
// reads listed per equation; CheckSparse compares the declared Jacobian
// with the full one at a point and returns a *PatternError naming each
// entry the pattern omits or gets wrong. AdaNP then takes the sparse path
// (Settings.Path; PathAuto chooses by a measured crossover): B is held as
// its nonzeros and G is factored by a sparse LDLᵀ or supernodal Cholesky
// after one symbolic analysis, so cost and memory follow the nonzeros
// instead of nc·ny and nc² (docs/sparse.md). For a Func of at least 16
// equations NewAdaNP detects the pattern itself (see Func), and the first
// projection checks any pattern, declared or detected, at one sample.
//
// # Gradients
//
// Settings.Grad selects the gradient: Unrolled (default) is the exact
// derivative of the computed map, weights and step lengths included;
// Implicit is the implicit-function derivative of the nearest feasible
// point, with curvature and memory independent of depth; Projector and
// FinalProjector are curvature-free approximations. AdaNP.ExactGradient
// reports what a mode guarantees, and Trace.GradStats what a pass
// achieved (clamped steps, gradient amplification).
//
// # Gorgonia
//
// AdaNP.Apply adds an AdaNP node to a gorgonia expression graph. The node's
// gradient is a hand-written operation built from the closed-form
// projection (Settings.Grad selects the mode), so it
// works with gorgonia.Grad, the TapeMachine, the LispMachine and gorgonia's
// solvers, for float64 and float32 graphs. Float32 values are projected in
// float64 arithmetic (in a float32 graph with Settings.Precision Auto, in
// Float32 precision) and rounded back, so a float32 output carries a
// residual of about 1e-7·|∂c/∂y|·|y| from that rounding alone.
//
// A minimal use, in plain Go, with the circle above:
//
//	p, err := enforce.NewAdaNP(circle, enforce.Settings{})
//	y, stats, err := p.Project(x, yhat) // x: batch×1, yhat: batch×2
//
// and in a graph: ytilde, err := p.Apply(xNode, yhatNode). See the examples
// of AdaNP.Project and AdaNP.Apply, and the runnable programs under
// examples/.
//
// # Performance
//
// The step loop does not allocate. Constraints with a constant Jacobian
// (Linear) factor G once, and Linear constraints (and Stacks of them) are
// projected and differentiated a block of samples at a time, each step's
// products over the block being matrix products on the package's float64
// kernels (BenchmarkLinearBatched, at (200, 100, 50) on two cores: 3.4
// times faster than one sample at a time, 4.5 times with the VJP); Quadratic evaluates a whole batch with one matrix
// product per step, in float64 as in float32 on the package's own
// Go-assembly kernels. Settings.Precision Float32 forms Gram matrices and, for
// constraints with EvalBatch32 (Quadratic, and a Stack or WithInequalities
// that contains one), evaluates in single precision
// while a sample is far from the set, or all the way to a tolerance within
// single precision's reach (Go-assembly AVX-512 or AVX2/FMA kernels in the
// default build, chosen at run time), then finishes or checks in float64,
// so the tolerance is met in float64 arithmetic. Building with the openblas tag (and libopenblas-dev)
// routes gonum's and gorgonia's BLAS to OpenBLAS; the default build is pure
// Go (Go assembly included; -tags purego uses plain Go loops instead).
package enforce
