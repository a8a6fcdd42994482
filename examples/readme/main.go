// Command readme is a complete gorgonia training program (docs/guide.md,
// "A complete training program in a gorgonia graph"): it fits
// y = (2 sin 5x, −sin² 5x − x²) with a network whose outputs are projected
// onto c(x, y) = (0.5·y₁)² + x² + y₂ = 0, and reports the error and the
// constraint residual on points it was not trained on.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"

	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/layers"
)

const n, epochs = 100, 3000

// data returns n points on [−2, 2] (shifted by offset grid steps) and the
// targets there, as row-major backing slices.
func data(offset float64) (xs, ys []float64) {
	xs, ys = make([]float64, n), make([]float64, 2*n)
	for i := range n {
		v := -2 + 4*(float64(i)+offset)/n
		s := math.Sin(5 * v)
		xs[i], ys[2*i], ys[2*i+1] = v, 2*s, -s*s-v*v
	}
	return xs, ys
}

func main() {
	flag.Parse() // no flags: -h prints the usage and exits
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run trains the network and writes its report to w.
func run(w io.Writer) error {
	// c(x, y) = (0.5·y₁)² + x² + y₂ = 0, written as ordinary Go over hyperdual
	// numbers: exact Jacobians and curvature are derived from it.
	c, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
		c[0] = hd.Add(hd.Square(hd.Scale(0.5, y[0])), hd.Square(x[0]), y[1])
	})
	if err != nil {
		return err
	}
	trainNP, err := enforce.NewAdaNP(c, enforce.Settings{Tol: 1e-4, Measure: enforce.MeanAbs}) // projects while training: mean|c| ≤ 1e-4
	if err != nil {
		return err
	}

	// The graph: x → MLP → ŷ → AdaNP → ỹ; loss mean (ỹ − y)² + mean (ŷ − ỹ)².
	xs, ys := data(0)
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, 1), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(xs))))
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(n, 2), G.WithName("y"),
		G.WithValue(tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(ys))))
	mlp, err := layers.NewMLP(g, []int{1, 64, 2}, layers.Tanh, layers.Identity, layers.WithSeed(1))
	if err != nil {
		return err
	}
	yhat, err := mlp.Forward(x)
	if err != nil {
		return err
	}
	ytilde, err := trainNP.Apply(x, yhat) // the AdaNP node: a custom Op with a hand-written gradient
	if err != nil {
		return err
	}
	fit, err := meanSquare(ytilde, y)
	if err != nil {
		return err
	}
	disp, err := meanSquare(yhat, ytilde) // the displacement ‖ŷ − ỹ‖² keeps ŷ near the constraint
	if err != nil {
		return err
	}
	loss, err := G.Add(fit, disp)
	if err != nil {
		return err
	}
	if _, err := G.Grad(loss, mlp.Learnables()...); err != nil {
		return err
	}

	// Full-batch Adam.
	m := G.NewTapeMachine(g, G.BindDualValues(mlp.Learnables()...))
	defer m.Close()
	solver := G.NewAdamSolver(G.WithLearnRate(1e-2))
	for epoch := 0; epoch < epochs; epoch++ {
		if err := m.RunAll(); err != nil {
			return err
		}
		if err := solver.Step(G.NodesToValueGrads(mlp.Learnables())); err != nil {
			return err
		}
		m.Reset()
	}
	op, _ := enforce.OpOf(ytilde) // op.Stats(): depth, residual before/after, convergence
	fmt.Fprintf(w, "last epoch: loss %.2e, AdaNP depth %d, mean|c| %.1e\n",
		loss.Value().Data().(float64), op.Stats().Depth, op.Stats().After.Mean)

	// Predict between the training points: bind new x, run the graph, and
	// project the network's ŷ to the inference tolerance max|c| ≤ 1e-6.
	xt, yt := data(0.5)
	if err := G.Let(x, tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(xt))); err != nil {
		return err
	}
	if err := m.RunAll(); err != nil {
		return err
	}
	raw := mat.NewDense(n, 2, append([]float64(nil), yhat.Value().Data().([]float64)...))
	infer, err := enforce.NewAdaNP(c, enforce.Settings{Tol: 1e-6})
	if err != nil {
		return err
	}
	xm, want := mat.NewDense(n, 1, xt), mat.NewDense(n, 2, yt)
	before, err := infer.Check(xm, raw)
	if err != nil {
		return err
	}
	proj, st, err := infer.Project(xm, raw)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "network ŷ:    MSE %.2e  max|c| %.1e\n", mse(raw, want), before.After.Max)
	fmt.Fprintf(w, "projected ỹ:  MSE %.2e  max|c| %.1e  (AdaNP depth %d)\n", mse(proj, want), st.After.Max, st.Depth)
	return nil
}

// meanSquare returns the node mean((a − b)²).
func meanSquare(a, b *G.Node) (*G.Node, error) {
	d, err := G.Sub(a, b)
	if err != nil {
		return nil, err
	}
	sq, err := G.Square(d)
	if err != nil {
		return nil, err
	}
	return G.Mean(sq)
}

// mse returns the mean squared difference of a and b.
func mse(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	r, c := d.Dims()
	return math.Pow(mat.Norm(&d, 2), 2) / float64(r*c)
}
