package enforce_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	hd "gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce"
)

// ExampleRefine projects onto y₁ + y₂² = x with |y₁| ≤ 1e-5, a feasible
// set thinner than the margin that the Fischer–Burmeister smoothing
// ε = 1e-2 imposes at its bounds: that projection misses the tolerance,
// and Refine finishes the rows it missed onto the same inequalities
// smoothed with ε = 1e-6.
func ExampleRefine() {
	eq, _ := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(y[0], hd.Mul(y[1], y[1])), x[0])
	})
	g, _ := enforce.Func(1, 2, 2, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(y[0], hd.Number{Real: 1e-5})  // y₁ ≤ 1e-5
		c[1] = hd.Sub(hd.Number{Real: -1e-5}, y[0]) // −y₁ ≤ 1e-5
	})
	stage := func(eps float64) *enforce.AdaNP {
		c, err := enforce.WithInequalities(eq, g, eps)
		if err != nil {
			panic(err)
		}
		a, err := enforce.NewAdaNP(c, enforce.Settings{})
		if err != nil {
			panic(err)
		}
		return a
	}
	x := mat.NewDense(3, 1, []float64{1, 2, 0.5})
	yhat := mat.NewDense(3, 2, []float64{3, 0.1, -2, 1, 0.4, 0.2})

	y, st, err := stage(1e-2).Project(x, yhat)
	if err != nil {
		panic(err)
	}
	fmt.Println("ε = 1e-2 missed rows", st.Missed)
	rs, err := enforce.Refine(x, y, st.Missed, stage(1e-6))
	if err != nil {
		panic(err)
	}
	fmt.Println("refined with ε = 1e-6, missed rows", rs.Missed)
	check, _ := stage(1e-6).Check(x, y) // the equality and max(g, 0)
	fmt.Printf("max residual ≤ 1e-6: %v\n", check.After.Max <= 1e-6)
	// Output:
	// ε = 1e-2 missed rows [0 1 2]
	// refined with ε = 1e-6, missed rows []
	// max residual ≤ 1e-6: true
}
