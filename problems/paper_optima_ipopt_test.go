//go:build ipopt

package problems_test

import (
	"testing"

	"github.com/enforce-nn/enforce/solvers/ipopt"
)

// TestPaperOptimaIPOPT is TestPaperOptima with IPOPT, the paper's
// reference solver:
//
//	ENFORCE_PAPER_OPTIMA=1 go test -tags ipopt -run PaperOptimaIPOPT -v ./problems/
func TestPaperOptimaIPOPT(t *testing.T) {
	paperOptima(t, ipopt.Solver{})
}
