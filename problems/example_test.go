package problems_test

import (
	"fmt"
	"math"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems"
	"gonum.org/v1/gonum/floats"
)

// Project perturbed targets of the fitting benchmark back onto its
// constraint (½y₁)² + x² + y₂ = 0 with AdaNP.
func Example() {
	p := problems.FittingEquality{}
	data := p.Sample(1000, 1)
	yhat := data.Y
	yhat.Apply(func(_, _ int, v float64) float64 { return v + 0.05 }, yhat)

	c, err := p.Constraint()
	if err != nil {
		panic(err)
	}
	adanp, err := enforce.NewAdaNP(c, enforce.Settings{})
	if err != nil {
		panic(err)
	}
	_, stats, err := adanp.Project(data.X, yhat)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d samples, max|c| %.2f before, ≤ 1e-6 after: %v\n",
		p.Name(), stats.Samples, stats.Before.Max, stats.After.Max <= 1e-6)
	// Output:
	// fitting-equality: 1000 samples, max|c| 0.10 before, ≤ 1e-6 after: true
}

// An instance of the nonconvex benchmark with quadratic equalities is
// feasible for every input: Complete exhibits a feasible point.
func ExampleNonconvexQuadratic_Complete() {
	p, err := problems.NewNonconvexQuadratic(100, 50, 1)
	if err != nil {
		panic(err)
	}
	c := p.Equalities()
	nx, ny, nc := c.Dims()
	fmt.Println(p.Name(), nx, ny, nc)

	x := p.SampleX(1, 7).RawRowView(0)
	y := make([]float64, ny)
	p.Complete(x, p.Y0, y)
	r := make([]float64, nc)
	c.Eval(x, y, r, nil)
	fmt.Println("feasible:", floats.Norm(r, math.Inf(1)) < 1e-9)
	// Output:
	// nonconvex-quadratic-100-50 50 100 50
	// feasible: true
}
