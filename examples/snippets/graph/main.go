package main

import (
	"fmt"
	"log"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/layers"
)

func main() {
	c, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) { // (y₁/2)² + x² + y₂ = 0
		c[0] = hd.Add(hd.Square(hd.Scale(0.5, y[0])), hd.Square(x[0]), y[1])
	})
	if err != nil {
		log.Fatal(err)
	}
	np, err := enforce.NewAdaNP(c, enforce.Settings{Tol: 1e-4, Measure: enforce.MeanAbs})
	if err != nil {
		log.Fatal(err)
	}
	const n = 100
	xs, ys := make([]float64, n), make([]float64, 2*n)
	for i := range n {
		v := -2 + 4*float64(i)/(n-1)
		s := math.Sin(5 * v)
		xs[i], ys[2*i], ys[2*i+1] = v, 2*s, -s*s-v*v
	}

	g := G.NewGraph()
	x := G.NodeFromAny(g, tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(xs)), G.WithName("x"))
	y := G.NodeFromAny(g, tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(ys)), G.WithName("y"))
	mlp, err := layers.NewMLP(g, []int{1, 32, 2}, layers.Tanh, layers.Identity, layers.WithSeed(1))
	if err != nil {
		log.Fatal(err)
	}
	yhat := G.Must(mlp.Forward(x))
	ytilde := G.Must(np.Apply(x, yhat)) // the AdaNP node, with a hand-written gradient
	fit := G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(ytilde, y))))))
	disp := G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(yhat, ytilde))))))
	loss := G.Must(G.Add(fit, disp)) // mean (ỹ − y)² + mean (ŷ − ỹ)²
	if _, err := G.Grad(loss, mlp.Learnables()...); err != nil {
		log.Fatal(err)
	}
	m := G.NewTapeMachine(g, G.BindDualValues(mlp.Learnables()...))
	defer m.Close()
	solver := G.NewAdamSolver(G.WithLearnRate(1e-2))
	for range 2000 {
		if err := m.RunAll(); err != nil {
			log.Fatal(err)
		}
		if err := solver.Step(G.NodesToValueGrads(mlp.Learnables())); err != nil {
			log.Fatal(err)
		}
		m.Reset()
	}
	op, _ := enforce.OpOf(ytilde)
	fmt.Printf("loss %.2e\n", loss.Value().Data())
	fmt.Println(op.Stats()) // the last projection: depth, mean|c| before → after, …
}
