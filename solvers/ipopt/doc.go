// Package ipopt solves solvers.NLP problems (Solver.Solve, dense) and
// solvers.SparseNLP problems (Solver.SolveSparse: sparse derivatives,
// bounds and inequalities) with IPOPT (Wächter & Biegler
// 2006), the interior-point solver that gives the reference optima of the
// ENFORCE paper, through its C interface (IpStdCInterface.h, IPOPT 3.11 or
// later) and cgo.
//
// The binding is compiled only with the build tag ipopt, so the default
// build of the module stays pure Go:
//
//	apt-get install coinor-libipopt-dev   # Debian/Ubuntu; pkg-config name "ipopt"
//	go test -tags ipopt ./solvers/...
//
// Without the tag the package contains only this documentation. The
// pure-Go solvers.Solve needs no tag and reaches the same optima on the
// paper's problems (the tagged tests compare them).
package ipopt
