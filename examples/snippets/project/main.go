package main

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

func main() {
	// The unit circle y₁² + y₂² = 1.
	c, err := enforce.Func(0, 2, 1, func(_, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(hd.Square(y[0]), hd.Square(y[1])), hd.Const(1))
	})
	if err != nil {
		log.Fatal(err)
	}
	a, err := enforce.NewAdaNP(c, enforce.Settings{})
	if err != nil {
		log.Fatal(err)
	}
	y, st, err := a.Project(nil, mat.NewDense(1, 2, []float64{1, 1}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("projected (%.6f, %.6f), converged %t\n", y.At(0, 0), y.At(0, 1), st.Converged())
}
