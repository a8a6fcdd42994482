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
// # Constraints
//
// A Constraint evaluates c(x, y) and ∂c/∂y one sample at a time. Func builds
// one from an ordinary Go function over hyperdual numbers, with exact first
// and second derivatives; Linear and Quadratic are the affine and quadratic
// families with analytic derivatives; Stack concatenates systems; and
// WithInequalities adds g(x, y) ≤ 0 through the Fischer–Burmeister
// reformulation, with multipliers that AdaNP appends as zeros and drops,
// so callers only ever see y. Optional interfaces (JacobianXer, HessVecer,
// MixedHessVecer, BatchEvaluator, BatchHessVecer, Float32Batcher) add
// gradients with respect to x, exact curvature-aware gradients and batched
// (and single-precision) evaluation.
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
// A minimal use, in plain Go:
//
//	c, _ := enforce.Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
//		// y1² + y2² = x²
//		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Mul(x[0], x[0]))
//	})
//	p, _ := enforce.NewAdaNP(c, enforce.Settings{})
//	y, stats, err := p.Project(x, yhat) // x: batch×1, yhat: batch×2
//
// and in a graph: ytilde, err := p.Apply(xNode, yhatNode). See the examples
// of AdaNP.Project and AdaNP.Apply, and the runnable programs under
// examples/.
//
// # Performance
//
// The step loop does not allocate. Constraints with a constant Jacobian
// (Linear) factor G once; Quadratic evaluates a whole batch with one matrix
// product per step. Settings.Precision Float32 forms Gram matrices and, for
// Float32Batcher constraints (Quadratic), evaluates in single precision
// while a sample is far from the set (Go-assembly AVX-512 or AVX2/FMA
// kernels in the default build, chosen at run time), then finishes in
// float64, so the tolerance is met in float64 arithmetic. Building with the openblas tag (and libopenblas-dev)
// routes gonum's and gorgonia's BLAS to OpenBLAS; the default build is pure
// Go (Go assembly included; -tags purego uses plain Go loops instead).
package enforce
