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
//     G, a fill-reducing permutation P, the elimination tree, the pattern
//     of the factor of P·G·Pᵀ (and its supernodes), and the scatter map of
//     the products B_ik·w_k·B_jk into G's stored entries. The result is
//     read-only and is shared by all goroutines.
//   - Each goroutine owns a Factor (Gram.NewFactor): Factor.Factor assembles
//     and factors G for new values of B, w and ε; Factor.Solve overwrites a
//     right-hand side with G⁻¹x, as often as wanted per factorisation.
//     Neither allocates.
//   - CountGram gives nnz(L) and the flops of a factorisation without
//     building anything of size nnz(L), and Options.MaxNNZL stops an
//     analysis whose factor would be too large, so a caller can choose
//     between a dense and a sparse path before paying for either.
//
// A pivot d_k ≤ δ·max_i G_ii (δ = Options.PivotTol, DefaultPivotTol; d_k is
// the k-th diagonal entry of D in LDLᵀ, the square of L's in LLᵀ) stops the
// factorisation with a *NotPositiveError; for a Gram matrix this means B
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
// absorption, dense rows (more than max(16, 10·√n) entries) ordered last,
// then a postorder of the elimination tree. The degrees are upper bounds on
// the true external degrees, so the ordering is approximate; on the
// benchmark matrices its nnz(L) equals CHOLMOD's AMD's. Its cost is, in
// practice, O(nnz(G)) times a small factor (BenchmarkGram/…/amd times it
// alone). Natural and caller-given orderings are available for
// tests and comparisons.
//
// Elimination tree and the pattern of L: Liu's algorithm for the tree and
// the row-subtree method (Davis §4.1–4.2) for the pattern: row k of L is
// the set of nodes met walking the tree up from the entries of column k of
// the permuted upper triangle, O(nnz(L)) in all; column counts alone need
// O(n) memory (CountGram).
//
// Numeric factorisation, two methods (Options.Method):
//
//   - Simplicial: up-looking LDLᵀ (Davis §4.7, the design of Davis's LDL and
//     QDLDL, and of CHOLMOD's simplicial factor): row k of L solves a sparse
//     triangular system over the precomputed pattern of row k, so the
//     numeric phase walks no tree and writes only values.
//   - Supernodal: left-looking supernodal LLᵀ (Ng and Peyton 1993; Davis
//     §9): fundamental supernodes (Liu, Ng and Peyton 1993) merged by
//     relaxed amalgamation with CHOLMOD's default limits, each updated by
//     dense products of earlier supernodes scattered by relative indices,
//     then factored by a dense panel Cholesky, left-looking by blocks of 16
//     columns. The large dense products (an update of at least 4096
//     multiply–adds of rank ≥ 4, and the update of each panel block by the
//     columns to its left) run on internal/sgemm's packed float64 kernel
//     where its Go assembly runs (AVX2 and FMA, without the purego tag);
//     small blocks, and all blocks elsewhere, keep plain-Go loops (four
//     columns at a time). No BLAS. On the mesh family at nc = 10⁵ this made the
//     numeric factorisation about 1.8× faster than the plain-Go loops alone
//     (BenchmarkGram, CPU time, shared machine).
//   - Auto (the default) takes Supernodal when Flops/NNZL ≥ AutoSupernodal,
//     where the measurements put the crossover.
//
// Gram.NewFactorSingle gives a supernodal factor computed and stored in
// float32 (the same algorithm, generic in the element type, on
// internal/sgemm's float32 kernel): G is assembled in float64 and rounded
// once, the solves read L in float64 arithmetic, and a pivot below
// SingleTol times its diagonal entry returns ErrPrecision, for the caller
// to factor in float64. On the mesh at nc = 10⁵ it factors about 1.45×
// faster in half the memory (BenchmarkSPMesh).
//
// Pair rows (Options.EliminatePairs): a row of B with two entries, one of
// them in a column no other row has, is what a bound on one variable
// becomes under a Fischer–Burmeister reformulation (the variable's column
// and its multiplier's). Such rows are eliminated first in closed form,
// grouped by their shared column into blocks of at most MaxPairBlock rows
// whose part of G is d_k·a·aᵀ + diag(ρ); what remains is the Schur
// complement B_P·D′·B_Pᵀ + εI, the Gram matrix of the other rows with the
// weights of the bounded columns lowered (Sherman–Morrison), so the pair
// rows add no node, fill or supernode to the sparse factorisation. The
// solve is the block elimination with the whole G, exact up to rounding.
// On case10000_goc's power flow and limits (28 040 pair rows of 48 053)
// a factorisation and solve take 21 instead of 34 ms (BenchmarkGramPairs
// in problems/acopf).
//
// The flop count of either is about Gram.Flops(); the triangular solves
// cost about 4·nnz(L) flops. The supernodal solves take a supernode as a
// block: its update of the rows below is accumulated contiguously and
// scattered (forward) or gathered (backward) by row index once.
//
// # Memory
//
// Gram: O(nnz(B) + nnz(G) + nnz(L) + Σ_k m_k²) for m_k the entries of
// column k of B (the scatter map); each Factor: O(nnz(G) + nnz(L) + n)
// float64 values (L's in float32 for NewFactorSingle) (for Supernodal, the supernodal blocks hold nnz(L) plus
// the unused upper triangles of the diagonal blocks and the zeros of the
// relaxed amalgamation). Nothing is O(nc²) or O(nc·ny) unless the fill
// makes nnz(L) so.
//
// # Comparison with CHOLMOD
//
// The subpackage cholmodbench (build tag cholmod, cgo, libsuitesparse-dev;
// GPL-2+ once linked, because of CHOLMOD's Supernodal module) wraps CHOLMOD
// for BenchmarkVsCholmod, which factors the same matrices with both in one
// run: go test -tags cholmod -run XX -bench VsCholmod ./internal/sparse.
package sparse
