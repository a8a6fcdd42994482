//go:build ipopt

package dataset

/*
#cgo pkg-config: ipopt
#include <IpoptConfig.h>
*/
import "C"

import (
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
	"github.com/enforce-nn/enforce/solvers/ipopt"
)

// With the build tag ipopt, Reference solves with IPOPT (MUMPS), as
// acopf's reference optima were: acopf.ReferenceOptions and
// constr_viol_tol 1e-6. The solver's name carries the version of the
// IPOPT headers built against, so that shards labelled by different IPOPT
// versions do not merge.
func init() {
	solverName = "IPOPT " + C.IPOPT_VERSION + " (solvers/ipopt, acopf.ReferenceOptions, constr_viol_tol 1e-6)"
	solveNLP = func(p *solvers.SparseNLP, init []float64, tol float64, maxIter int) (*solvers.Result, error) {
		return ipopt.Solver{Tol: tol, MaxIterations: maxIter, ConstrViolTol: 1e-6, Options: acopf.ReferenceOptions}.SolveSparse(p, init)
	}
}
