// Package solvers computes reference optima for the ENFORCE paper's
// optimisation benchmarks (§5.3): smooth equality-constrained nonlinear
// programmes min f(y) s.t. c(y) = 0, solved one instance (one input x)
// at a time.
//
// An NLP gives the objective, its gradient, the constraints with their
// Jacobian and the Hessian of the Lagrangian as callbacks; Linear and
// Quadratic build it for an instance of problems.NonconvexLinear and
// problems.NonconvexQuadratic, and LeastNormStart gives the feasible
// starting point DC3's optimiser baseline uses. Solve is a pure-Go SQP
// method (null-space Newton steps with the exact Hessian, ℓ₁ merit line
// search) in the style of gonum/optimize: a Settings struct whose zero
// value means the defaults, and a Result with a Status and statistics.
// SolveAll solves many instances concurrently with any Method; package
// solvers/ipopt (build tag ipopt) provides IPOPT as a Method.
//
// Both are local methods: on the nonconvex benchmarks they return a local
// minimum near the starting point, as IPOPT does in the paper.
//
// A SparseNLP is the larger kind of problem, with variable bounds, two-sided
// constraints (inequalities) and sparse derivatives in triplet form, such
// as the ACOPF of package problems/acopf. SolveSparse solves it in pure Go
// by a primal-dual interior-point method with a dense KKT matrix (a few
// hundred variables and constraints); solvers/ipopt's Solver.SolveSparse
// solves it with IPOPT and sparse linear algebra, for any size.
package solvers
