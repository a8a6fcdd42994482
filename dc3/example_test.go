package dc3_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"math"
	"os"

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

// ExampleResume checkpoints a run and resumes it: a run whose checkpoint
// was written at its end is not trained again, and the resumed model
// predicts as the original.
func ExampleResume() {
	p, err := problems.NewNonconvexLinear(20, 8, 1)
	if err != nil {
		log.Fatal(err)
	}
	x := p.SampleX(400, 2)
	dir, err := os.MkdirTemp("", "dc3")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := dc3.Config{Hidden: []int{32, 32}, LearnRate: 1e-3, BatchSize: 100, Epochs: 5, Seed: 1, Quiet: true,
		Checkpoint: dc3.Checkpoint{Dir: dir}}
	start := func() (*dc3.Model, error) {
		m, err := dc3.Resume(dir, p, cfg)
		if errors.Is(err, fs.ErrNotExist) {
			return dc3.New(p, cfg) // no checkpoint yet: start afresh
		}
		return m, err
	}
	var preds []*mat.Dense
	for run := 1; run <= 2; run++ {
		m, err := start()
		if err != nil {
			log.Fatal(err)
		}
		hist, err := m.Fit(x)
		if err != nil {
			log.Fatal(err)
		}
		y, err := m.Predict(x)
		if err != nil {
			log.Fatal(err)
		}
		preds = append(preds, y)
		fmt.Printf("run %d: %d epochs\n", run, len(hist))
		m.Close()
	}
	fmt.Println("same predictions:", mat.Equal(preds[0], preds[1]))
	// Output:
	// run 1: 5 epochs
	// run 2: 5 epochs
	// same predictions: true
}
