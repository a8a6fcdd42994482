//go:build ipopt

package main

import (
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
	"github.com/enforce-nn/enforce/solvers/ipopt"
)

// With -tags ipopt the reference optimum comes from IPOPT.
func init() {
	referenceName = "IPOPT"
	reference = func(p *solvers.SparseNLP, init []float64, tol float64) (*solvers.Result, error) {
		return ipopt.Solver{Tol: tol, ConstrViolTol: 1e-6, Options: acopf.ReferenceOptions}.SolveSparse(p, init)
	}
}
