package layers_test

import (
	"fmt"
	"log"

	"github.com/enforce-nn/enforce/layers"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ExampleMLP trains a small network on y = x² in standardised units with
// gorgonia's Adam solver, the usual Grad + TapeMachine + Step + Reset loop.
func ExampleMLP() {
	const n = 16
	xs := make([]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		xs[i] = -2 + 4*float64(i)/(n-1)
		ys[i] = xs[i] * xs[i]
	}
	sy, err := layers.FitStandardizer(mat.NewDense(n, 1, ys))
	if err != nil {
		log.Fatal(err)
	}

	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, 1), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(xs))))
	y := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, 1), gorgonia.WithName("y"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(ys))))
	mlp, err := layers.NewMLP(g, []int{1, 16, 1}, layers.Tanh, layers.Identity, layers.WithSeed(1))
	if err != nil {
		log.Fatal(err)
	}
	z, err := mlp.Forward(x)
	if err != nil {
		log.Fatal(err)
	}
	pred, err := sy.InverseNode(g, z) // back to original units
	if err != nil {
		log.Fatal(err)
	}
	loss := gorgonia.Must(gorgonia.Mean(gorgonia.Must(gorgonia.Square(gorgonia.Must(gorgonia.Sub(pred, y))))))
	if _, err := gorgonia.Grad(loss, mlp.Learnables()...); err != nil {
		log.Fatal(err)
	}

	m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(mlp.Learnables()...))
	defer m.Close()
	solver := gorgonia.NewAdamSolver(gorgonia.WithLearnRate(0.02))
	var first, last float64
	for step := range 500 {
		if err := m.RunAll(); err != nil {
			log.Fatal(err)
		}
		last = loss.Value().Data().(float64)
		if step == 0 {
			first = last
		}
		if err := solver.Step(gorgonia.NodesToValueGrads(mlp.Learnables())); err != nil {
			log.Fatal(err)
		}
		m.Reset()
	}
	fmt.Println("parameters:", mlp.NumParams())
	fmt.Println("loss fell 100-fold:", last < first/100)
	// Output:
	// parameters: 49
	// loss fell 100-fold: true
}

// ExampleStandardizer standardises a data matrix and maps it back.
func ExampleStandardizer() {
	data := mat.NewDense(3, 2, []float64{
		1, 100,
		2, 200,
		3, 300,
	})
	s, err := layers.FitStandardizer(data)
	if err != nil {
		log.Fatal(err)
	}
	z := mat.NewDense(3, 2, nil)
	s.Transform(z, data)
	fmt.Printf("mean %.0f, std %.4f\n", s.Mean, s.Std)
	fmt.Printf("z =\n%.4f\n", mat.Formatted(z))
	s.Inverse(z, z)
	fmt.Println("round trip:", mat.EqualApprox(z, data, 1e-12))
	// Output:
	// mean [2 200], std [0.8165 81.6497]
	// z =
	// ⎡-1.2247  -1.2247⎤
	// ⎢ 0.0000   0.0000⎥
	// ⎣ 1.2247   1.2247⎦
	// round trip: true
}

// ExampleMLP_Predict evaluates a network in plain Go, without a graph.
func ExampleMLP_Predict() {
	mlp, err := layers.NewMLP(gorgonia.NewGraph(), []int{2, 3, 1}, layers.ReLU, layers.Identity)
	if err != nil {
		log.Fatal(err)
	}
	// W0 = [[1 0 −1] [0 1 1]], b0 = 0, W1 = [1 1 1]ᵀ, b1 = 0.5.
	if err := mlp.SetWeights([][]float64{{1, 0, -1, 0, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0.5}}); err != nil {
		log.Fatal(err)
	}
	y, err := mlp.Predict(mat.NewDense(2, 2, []float64{1, 2, -1, 0}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(mat.Formatted(y))
	// Output:
	// ⎡4.5⎤
	// ⎣1.5⎦
}
