package enforce_test

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

// A caller that must never use an infeasible output sets RequireTol:
// the rows that miss the tolerance come back in a *ToleranceError (and,
// without it, in Stats.Missed).
func ExampleToleranceError() {
	circle, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(hd.Square(y[0]), hd.Square(y[1])), hd.Square(x[0]))
	})
	if err != nil {
		panic(err)
	}
	x := mat.NewDense(3, 1, []float64{1, 2, 1})
	yhat := mat.NewDense(3, 2, []float64{1, 0, 5, 4, 0.6, 0.8}) // row 1 is far from its circle
	// One step only, to make a miss.
	lax, _ := enforce.NewAdaNP(circle, enforce.Settings{MaxDepth: 1})
	_, st, _ := lax.Project(x, yhat)
	fmt.Println("missed:", st.Missed)

	strict, _ := enforce.NewAdaNP(circle, enforce.Settings{MaxDepth: 1, RequireTol: true})
	_, _, err = strict.Project(x, yhat)
	var te *enforce.ToleranceError
	if errors.As(err, &te) {
		fmt.Println("refused rows:", te.Samples)
	}
	// Output:
	// missed: [1]
	// refused rows: [1]
}
