package hd_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

// flash returns the equations of a flash drum with relative volatility α:
// inputs x = (F, z) (feed flow and its light-component fraction), outputs
// y = (V, L, xl, yv) (vapour and liquid flows and their fractions).
func flash(alpha float64) func(x, y, c []hd.Number) {
	return func(x, y, c []hd.Number) {
		F, z := x[0], x[1]
		V, L, xl, yv := y[0], y[1], y[2], y[3]
		c[0] = hd.Sub(F, hd.Add(V, L))                                                             // F = V + L
		c[1] = hd.Sub(hd.Mul(F, z), hd.Add(hd.Mul(V, yv), hd.Mul(L, xl)))                          // F·z = V·yv + L·xl
		c[2] = hd.Sub(yv, hd.Div(hd.Scale(alpha, xl), hd.Add(hd.Const(1), hd.Scale(alpha-1, xl)))) // yv = αxl/(1+(α−1)xl)
	}
}

// A flash drum's mass balances and equilibrium, written with the helpers,
// as an enforce.Func constraint; AdaNP then corrects a prediction that
// breaks them.
func Example() {
	c, err := enforce.Func(2, 4, 3, flash(2.5))
	if err != nil {
		log.Fatal(err)
	}
	a, err := enforce.NewAdaNP(c, enforce.Settings{Tol: 1e-10})
	if err != nil {
		log.Fatal(err)
	}
	x := mat.NewDense(1, 2, []float64{1, 0.4})                  // F = 1, z = 0.4
	yhat := mat.NewDense(1, 4, []float64{0.5, 0.45, 0.3, 0.55}) // V + L ≠ F, …
	before, err := a.Check(x, yhat)
	if err != nil {
		log.Fatal(err)
	}
	y, st, err := a.Project(x, yhat)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("max|c| before %.3f, after < 1e-10: %t\n", before.After.Max, st.After.Max < 1e-10)
	fmt.Printf("V %.4f  L %.4f  xl %.4f  yv %.4f\n", y.At(0, 0), y.At(0, 1), y.At(0, 2), y.At(0, 3))
	// Output:
	// max|c| before 0.050, after < 1e-10: true
	// V 0.5170  L 0.4830  xl 0.2888  yv 0.5038
}
