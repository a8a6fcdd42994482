//go:build ipopt

package main

import (
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
	"github.com/enforce-nn/enforce/solvers/ipopt"
)

// With -tags ipopt the reference optima come from IPOPT, with
// acopf.ReferenceOptions and at most -maxiter iterations (default 500;
// MATPOWER's MIPS, which DC3 used, stops at 150): a draw that IPOPT does
// not solve within them from either start is dropped as infeasible.
func init() {
	referenceName = "IPOPT"
	reference = func(p *solvers.SparseNLP, init []float64, tol float64, maxIter int) (*solvers.Result, error) {
		return ipopt.Solver{Tol: tol, MaxIterations: maxIter, ConstrViolTol: 1e-6, Options: acopf.ReferenceOptions}.SolveSparse(p, init)
	}
}
