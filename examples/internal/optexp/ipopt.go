//go:build ipopt

package optexp

import "github.com/enforce-nn/enforce/solvers/ipopt"

// With -tags ipopt the reference optima come from IPOPT, as in the paper.
func init() {
	reference.name = "IPOPT"
	reference.method = ipopt.Solver{}
}
