// Package problems provides the benchmark problems of the ENFORCE paper
// (Lastrucci & Schweidtmann) as reusable values: their constraints as
// enforce.Constraint values, data generators and data loaders.
//
// Each problem implements Problem: Name, Dims (nx, ny), Equalities
// c(x, y) = 0, Inequalities g(x, y) ≤ 0 and Constraint, the system AdaNP
// projects onto (the equalities, extended by enforce.WithInequalities with
// ε_FB = FBEpsilon when there are inequalities). The hand-written
// constraints declare every derivative in their enforce.Capabilities
// (JacobianX, HessVec, MixedHessVec), so AdaNP can compute exact Unrolled
// gradients through them.
//
//	problem                 nx    ny    eq  ineq  data
//	FittingEquality          1     2     1     0  Sample: x ~ U(−2, 2), noise-free
//	Cusp                     1     2     1     0  Sample: x ~ U(−2, 2), noise-free
//	FittingInequality        1     1     0     2  SampleNoisy (train), Sample (test), x ~ U(0, 3π)
//	NonconvexLinear        N_C   N_O   N_C     0  PaperData (DC3's x ~ U(−5, 5)), SampleX; unsupervised
//	NonconvexQuadratic     N_C   N_O   N_C     0  SampleX: x ~ U(−5, 5), unsupervised
//	Distillation             3     9     6     0  LoadDistillation (Aspen Plus data)
//	Pooling                  4     5     4     2  LoadPooling
//
// Generators are deterministic: every random draw comes from a math/rand/v2
// PCG generator seeded by the caller's seed, except NewNonconvexLinear's
// instances and their Examples, which are DC3's: NumPy's legacy generator
// (np.random.seed(seed)), reproduced in Go, with the paper's instances at
// seed PaperSeed. The distillation and pooling data come from the
// KKT-HardNet repository (MIT licence) and are embedded in this package,
// with their licence notice and provenance in data/kkt_hardnet/README.md
// and LICENSE; LoadDistillation("") and LoadPooling("") read that copy,
// and DataDir returns the folder named by ENFORCE_DATA for reading another
// one.
//
// The generators return a data.Dataset: inputs X and targets Y as gonum
// matrices, one sample per row. Your own data, and the tools to read and
// split it (LoadCSV, RandomSplit), live in package data; the names
// Dataset, Split, LoadCSV and RandomSplit here are deprecated aliases of
// data's.
package problems
