package train_test

import (
	"bytes"
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// Example trains ENFORCE on the paper's equality-constrained fitting
// problem and predicts on fresh inputs: every prediction satisfies the
// constraint to the inference tolerance.
func Example() {
	p := problems.FittingEquality{} // y₁ = 2 sin 5x, y₂ = −sin² 5x − x², c = (y₁/2)² + x² + y₂
	trainSet, testSet := p.Sample(200, 1), p.Sample(1000, 2)

	model, err := train.New(train.Config{
		Sizes:      []int{1, 32, 2},
		Hidden:     layers.Tanh,
		Constraint: p.Equalities(),
		LearnRate:  1e-2,
		Epochs:     300,
		Seed:       1,
		// The paper's defaults: λ_D = 0.5, ε_T = 1e-4 on mean|c|,
		// ε_I = 1e-6 on max|c|, activation rule on.
		Standardize: true,
		Quiet:       true,
	})
	if err != nil {
		log.Fatal(err)
	}
	history, err := model.Fit(trainSet.X, trainSet.Y)
	if err != nil {
		log.Fatal(err)
	}
	pred, stats, err := model.Predict(testSet.X)
	if err != nil {
		log.Fatal(err)
	}
	rows, cols := pred.Dims()
	fmt.Println("epochs:", len(history))
	fmt.Println("task loss fell:", history.Last().Task < history[0].Task)
	fmt.Printf("predictions: %d×%d\n", rows, cols)
	fmt.Println("max|c| ≤ 1e-6:", stats.After.Max <= 1e-6)

	// Save and load: the loaded model predicts the same bits.
	var buf bytes.Buffer
	if err := model.Save(&buf); err != nil {
		log.Fatal(err)
	}
	loaded, err := train.Load(&buf, p.Equalities())
	if err != nil {
		log.Fatal(err)
	}
	again, _, err := loaded.Predict(testSet.X)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same after loading:", mat.Equal(again, pred))
	// Output:
	// epochs: 300
	// task loss fell: true
	// predictions: 1000×2
	// max|c| ≤ 1e-6: true
	// same after loading: true
}

// ExampleModel_NewGraph writes the training loop by hand with the
// model's graph: any gorgonia solver, schedule or extra bookkeeping fits
// in.
func ExampleModel_NewGraph() {
	p := problems.FittingEquality{}
	data := p.Sample(64, 3)
	model, err := train.New(train.Config{
		Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Seed: 1, Standardize: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := model.FitStandardizers(data.X, data.Y); err != nil {
		log.Fatal(err)
	}
	g, err := model.NewGraph(64) // full batch
	if err != nil {
		log.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g.G, gorgonia.BindDualValues(g.Learnables...))
	defer vm.Close()
	solver := gorgonia.NewRMSPropSolver(gorgonia.WithLearnRate(1e-2))
	if err := g.SetBatch(data.X, data.Y); err != nil {
		log.Fatal(err)
	}
	var first, last float64
	for step := range 100 {
		if err := vm.RunAll(); err != nil {
			log.Fatal(err)
		}
		last = g.Task.Value().Data().(float64)
		if step == 0 {
			first = last
		}
		// The machine accumulates gradients; the solver's step applies
		// and clears them.
		if err := solver.Step(gorgonia.NodesToValueGrads(g.Learnables)); err != nil {
			log.Fatal(err)
		}
		vm.Reset()
	}
	_, stats, err := model.Predict(data.X) // Predict sees the trained weights
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("task loss fell:", last < first)
	fmt.Println("projected last step:", g.Op.Projected())
	fmt.Println("feasible predictions:", stats.Converged())
	// Output:
	// task loss fell: true
	// projected last step: true
	// feasible predictions: true
}
