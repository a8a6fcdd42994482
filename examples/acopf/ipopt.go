//go:build ipopt

package main

import (
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
	"github.com/enforce-nn/enforce/solvers/ipopt"
)

// With -tags ipopt the reference optimum and, in the -project mode, the
// nearest point of the first sample come from IPOPT.
func init() {
	referenceName = "IPOPT"
	reference = func(p *solvers.SparseNLP, init []float64, tol float64) (*solvers.Result, error) {
		return ipopt.Solver{Tol: tol, ConstrViolTol: 1e-6, Options: acopf.ReferenceOptions}.SolveSparse(p, init)
	}
	nearest = func(p *solvers.SparseNLP, init []float64) (*solvers.Result, error) {
		return ipopt.Solver{Tol: 1e-8, ConstrViolTol: 1e-6, Options: acopf.ReferenceOptions}.SolveSparse(p, init)
	}
}
