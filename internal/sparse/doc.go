// Package sparse factors sparse symmetric positive definite matrices, in
// particular the Gram matrix G = B·diag(w)·Bᵀ + εI of a sparse constraint
// Jacobian B (nc×ny), in pure Go.
//
// # Use
//
// The work is split as in every sparse direct solver:
//
//   - AnalyseGram (or AnalyseSym for a matrix given by its lower triangle)
//     is the symbolic analysis of a fixed pattern, done once: the pattern of
//     G, a fill-reducing permutation P, the elimination tree and the pattern
//     of L in P·G·Pᵀ = L·D·Lᵀ, and the scatter map of the products
//     B_ik·w_k·B_jk into G's stored entries. The result is read-only and is
//     shared by all goroutines.
//   - Each goroutine owns a Factor (Gram.NewFactor): Factor.Factor assembles
//     and factors G for new values of B, w and ε; Factor.Solve overwrites a
//     right-hand side with G⁻¹x, as often as wanted per factorisation.
//     Neither allocates.
//
// A pivot d_k ≤ δ·max_i G_ii (δ = Options.PivotTol, DefaultPivotTol) stops
// the factorisation with a *NotPositiveError; for a Gram matrix this means B
// is (numerically) rank-deficient at ε = 0, and the caller retries with a
// larger ε such as 1e-12·MaxDiag() (the dense path clamps G's eigenvalues at
// max(ε, 1e-12·λ_max)). Without pivoting, a singular G is not always caught:
// rounding can leave a pivot just above the tolerance; the test is the
// cheap analogue of the dense Cholesky's failure, not a rank revealer.
//
// # Algorithms
//
// Ordering: approximate minimum degree (AMD) from Amestoy, Davis and Duff,
// "An approximate minimum degree ordering algorithm", SIAM J. Matrix Anal.
// Appl. 17(4), 1996, and Davis, Direct Methods for Sparse Linear Systems
// (SIAM 2006), §7.1: quotient graph with element absorption, approximate
// external degrees, supervariables by hashing, mass elimination, aggressive
// absorption and dense rows (more than max(16, 10·√n) entries) ordered
// last. Its cost is, in practice, O(nnz(G)) times a small factor; the
// degrees are upper bounds on the true external degrees, so the ordering
// is approximate, like SuiteSparse AMD's (no tie-breaking or postordering
// identical to it, so nnz(L) differs slightly). Natural and caller-given
// orderings are available for tests and comparisons.
//
// Elimination tree and the pattern of L: the row-subtree method (Davis
// §4.1–4.2): row k of L is the set of nodes met walking the elimination
// tree up from the entries of column k of the permuted upper triangle,
// O(nnz(L)) in all. Both a column-wise and a row-wise copy of L's pattern
// are stored (int32 indices), shared by all factors.
//
// Numeric factorisation: up-looking LDLᵀ (Davis §4.7, the design of Davis's
// LDL and of QDLDL): row k of L solves a triangular system over the
// precomputed pattern of row k, so the numeric phase walks no tree and
// writes only values. Its flop count is Gram.Flops(). The triangular solves
// with L, D and Lᵀ cost 4·nnz(L) + O(n) flops.
//
// # Memory
//
// Gram: O(nnz(B) + nnz(G) + nnz(L) + Σ_k m_k²) for m_k the entries of
// column k of B (the scatter map); each Factor: O(nnz(G) + nnz(L) + n)
// float64 values. Nothing is O(nc²) or O(nc·ny) unless the fill makes
// nnz(L) so.
package sparse
