package enforce_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce"
)

// Project onto the unit circle y₀² + y₁² = 1 while keeping y₀ strictly
// inside [0.8, 2] (y₁ has no bounds), from a prediction whose y₀ lies
// below its bound.
func ExampleInterior() {
	circle, err := enforce.Func(0, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Number{Real: 1})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	box := enforce.Box{
		Lo: []float64{0.8, math.Inf(-1)},
		Hi: []float64{2, math.Inf(1)},
	}
	p, err := enforce.NewInterior(circle, box, 0, enforce.Settings{Tol: 1e-10})
	if err != nil {
		fmt.Println(err)
		return
	}
	yhat := mat.NewDense(1, 2, []float64{0.5, 0.2}) // y₀ = 0.5 < 0.8
	y, st, err := p.Project(nil, yhat)              // no inputs: x is nil
	if err != nil {
		fmt.Println(err)
		return
	}
	y0, y1 := y.At(0, 0), y.At(0, 1)
	fmt.Printf("ỹ = (%.4f, %.4f)\n", y0, y1)
	fmt.Println("feasible:", math.Abs(y0*y0+y1*y1-1) <= 1e-10, "converged:", st.Converged())
	fmt.Println("inside:", 0.8 < y0 && y0 < 2)
	// Output:
	// ỹ = (0.8001, 0.5998)
	// feasible: true converged: true
	// inside: true
}
