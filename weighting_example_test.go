package enforce_test

import (
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// ExampleAdaNP_ProjectTheta projects ŷ = (0, 0) onto y1 + y2 = 1 with the
// trainable weights W = diag(exp(θ)): the weighted nearest point moves
// each output in inverse proportion to its weight, y_j ∝ exp(−θ_j). With
// θ = (0, log 3), y = (3/4, 1/4), and the θ-gradient of ℓ = y1 is
// ±w1·w2/(w1 + w2)² = ±3/16.
func ExampleAdaNP_ProjectTheta() {
	c, err := enforce.Linear(0, mat.NewDense(1, 2, []float64{1, 1}), func(_, r, _ []float64) { r[0] = 1 })
	if err != nil {
		log.Fatal(err)
	}
	a, err := enforce.NewAdaNP(c, enforce.Settings{Weights: enforce.TrainableDiagonal})
	if err != nil {
		log.Fatal(err)
	}
	theta := []float64{0, math.Log(3)}
	yhat := mat.NewDense(1, 2, []float64{0, 0})
	var tr enforce.Trace
	y := mat.NewDense(1, 2, nil)
	if _, err := a.ProjectTraceTheta(y, nil, yhat, theta, &tr); err != nil {
		log.Fatal(err)
	}
	gtheta := make([]float64, 2)
	if err := a.VJPTheta(&tr, mat.NewDense(1, 2, []float64{1, 0}), nil, nil, gtheta); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ỹ = (%.4f, %.4f)\n", y.At(0, 0), y.At(0, 1))
	fmt.Printf("∂y1/∂θ = (%.4f, %.4f)\n", gtheta[0], gtheta[1])
	// Output:
	// ỹ = (0.7500, 0.2500)
	// ∂y1/∂θ = (-0.1875, 0.1875)
}
