package problems_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/solvers"
)

// TestPaperOptima is §5.3.1's acceptance check: the mean reference
// optimum (solvers.Solve from DC3's least-norm start) over the 833 test
// inputs of the paper's instances is within 6 % of the paper's IPOPT
// optimum at each of its three sizes, every final point is feasible and
// at most 1 % of the solves end short of Success. Measured: −11.30,
// −4.87 and −10.64 (IPOPT, TestPaperOptimaIPOPT: −11.27, −4.87, −10.64)
// against the paper's −11.11, −4.84 and −10.64. It takes about a minute on two
// cores and runs only with ENFORCE_PAPER_OPTIMA=1:
//
//	ENFORCE_PAPER_OPTIMA=1 go test -run PaperOptima -v ./problems/
func TestPaperOptima(t *testing.T) {
	paperOptima(t, solvers.SQP{})
}

// paperOptima is TestPaperOptima with the given method.
func paperOptima(t *testing.T, method solvers.Method) {
	if os.Getenv("ENFORCE_PAPER_OPTIMA") == "" {
		t.Skip("set ENFORCE_PAPER_OPTIMA=1 to solve the paper's 3×833 instances")
	}
	for _, tc := range []struct {
		nO, nC int
		paper  float64
	}{{100, 50, -11.11}, {100, 70, -4.84}, {200, 150, -10.64}} {
		p, err := problems.NewNonconvexLinear(tc.nO, tc.nC, problems.PaperSeed)
		require.NoError(t, err)
		_, _, test := p.PaperData()
		n := test.Len()
		res, err := solvers.SolveAll(method, n, 0, func(i int) (solvers.NLP, []float64, error) {
			nlp := solvers.Linear(p, test.X.RawRowView(i))
			y0, err := solvers.LeastNormStart(nlp)
			return nlp, y0, err
		})
		require.NoError(t, err)
		mean, failed, maxViol := 0.0, 0, 0.0
		for i, r := range res {
			mean += r.Objective / float64(n)
			maxViol = max(maxViol, r.MaxViolation)
			if r.Status != solvers.Success {
				failed++
				t.Logf("(%d, %d) test input %d: %v after %d iterations, objective %.4f, max|c| %.1e, stationarity %.1e",
					tc.nO, tc.nC, i, r.Status, r.Iterations, r.Objective, r.MaxViolation, r.Stationarity)
			}
		}
		t.Logf("(N_O, N_C) = (%d, %d): mean optimum %.4f over %d test inputs (paper %.2f, %+.1f %%), %d not Success",
			tc.nO, tc.nC, mean, n, tc.paper, 100*(mean-tc.paper)/-tc.paper, failed)
		assert.LessOrEqual(t, failed, n/100, "at most 1 % of the solves end short of Success")
		assert.Less(t, maxViol, 1e-8, "every point is feasible")
		assert.InEpsilon(t, tc.paper, mean, 0.06, "(%d, %d)", tc.nO, tc.nC)
	}
}
