package solvers_test

import (
	"fmt"
	"log"

	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/solvers"
)

// Example solves one instance of the nonconvex benchmark with linear
// equalities from the least-norm feasible point.
func Example() {
	p, err := problems.NewNonconvexLinear(20, 8, 1)
	if err != nil {
		log.Fatal(err)
	}
	x := p.SampleX(1, 2).RawRowView(0)
	nlp := solvers.Linear(p, x)
	y0, err := solvers.LeastNormStart(nlp)
	if err != nil {
		log.Fatal(err)
	}
	res, err := solvers.Solve(nlp, y0, nil) // nil: default Settings
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status)
	fmt.Println("feasible:", res.MaxViolation <= solvers.DefaultFeasTol)
	fmt.Println("improves on the start:", res.Objective < nlp.Objective(y0))
	// Output:
	// Success
	// feasible: true
	// improves on the start: true
}
