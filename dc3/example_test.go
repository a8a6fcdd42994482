package dc3_test

import (
	"fmt"
	"log"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/dc3"
	"github.com/enforce-nn/enforce/problems"
)

// Example trains DC3 briefly on a small instance: its completed
// predictions satisfy Cy = x to rounding whatever the network has learnt.
func Example() {
	p, err := problems.NewNonconvexLinear(20, 8, 1)
	if err != nil {
		log.Fatal(err)
	}
	x := p.SampleX(400, 2)
	m, err := dc3.New(p, dc3.Config{Hidden: []int{32, 32}, LearnRate: 1e-3, BatchSize: 100, Epochs: 30, Seed: 1, Quiet: true})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	hist, err := m.Fit(x)
	if err != nil {
		log.Fatal(err)
	}
	y, err := m.Predict(x)
	if err != nil {
		log.Fatal(err)
	}
	var r mat.Dense
	r.Mul(y, p.C.T())
	r.Sub(&r, x)
	maxAbs := 0.0
	for _, v := range r.RawMatrix().Data {
		maxAbs = math.Max(maxAbs, math.Abs(v))
	}
	fmt.Println("predicted variables:", len(m.Partial()))
	fmt.Println("objective fell:", hist[len(hist)-1].Objective < hist[0].Objective)
	fmt.Println("max|Cy − x| < 1e-9:", maxAbs < 1e-9)
	// Output:
	// predicted variables: 12
	// objective fell: true
	// max|Cy − x| < 1e-9: true
}
