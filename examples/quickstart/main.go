// Command quickstart trains a small network whose predictions satisfy a
// nonlinear constraint by construction, and prints what it achieved.
//
// The task is the paper's fitting problem (§5.1): learn
//
//	y1 = 2 sin(5x),  y2 = −sin²(5x) − x²   on x ∈ [−2, 2]
//
// knowing that every output satisfies c(x, y) = (0.5·y1)² + x² + y2 = 0.
// A 1×32 tanh MLP predicts ŷ; an AdaNP node projects it onto c = 0; the loss
// is the MSE of the projection ỹ plus the displacement λ_D·mean‖ŷ − ỹ‖².
//
//	go run ./examples/quickstart
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
)

func main() {
	epochs := flag.Int("epochs", 3000, "full-batch Adam steps")
	n := flag.Int("n", 200, "training points")
	flag.Parse()
	if err := run(*epochs, *n); err != nil {
		log.Fatal(err)
	}
}

// data samples the fitting problem on a grid with a little jitter.
func data(n int, seed uint64) (x, y *mat.Dense) {
	rnd := rand.New(rand.NewPCG(seed, seed))
	x, y = mat.NewDense(n, 1, nil), mat.NewDense(n, 2, nil)
	for i := 0; i < n; i++ {
		v := -2 + 4*rnd.Float64()
		s := math.Sin(5 * v)
		x.Set(i, 0, v)
		y.Set(i, 0, 2*s)
		y.Set(i, 1, -s*s-v*v)
	}
	return x, y
}

func run(epochs, n int) error {
	if epochs < 1 || n < 1 {
		return fmt.Errorf("-epochs %d, -n %d: want at least 1", epochs, n)
	}
	// 1. The constraint, written as ordinary Go over hyperdual numbers:
	// the package derives exact Jacobians and curvature from it.
	c, err := enforce.Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		half := hyperdual.Scale(0.5, y[0])
		c[0] = hyperdual.Add(hyperdual.Add(hyperdual.Mul(half, half), hyperdual.Mul(x[0], x[0])), y[1])
	})
	if err != nil {
		return err
	}
	// 2. Training projects to mean|c| ≤ 1e-4; inference to max|c| ≤ 1e-6.
	trainNP, err := enforce.NewAdaNP(c, enforce.Settings{Tol: 1e-4, Measure: enforce.MeanAbs})
	if err != nil {
		return err
	}
	infer, err := enforce.NewAdaNP(c, enforce.Settings{Tol: 1e-6})
	if err != nil {
		return err
	}

	// 3. The graph: x → MLP → ŷ → AdaNP → ỹ → loss.
	xTrain, yTrain := data(n, 1)
	g := G.NewGraph()
	xn := G.NewMatrix(g, tensor.Float64, G.WithShape(n, 1), G.WithName("x"), G.WithValue(tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(xTrain.RawMatrix().Data))))
	yn := G.NewMatrix(g, tensor.Float64, G.WithShape(n, 2), G.WithName("y"), G.WithValue(tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(yTrain.RawMatrix().Data))))
	mlp, err := layers.NewMLP(g, []int{1, 32, 2}, layers.Tanh, layers.Identity, layers.WithSeed(1))
	if err != nil {
		return err
	}
	yhat, err := mlp.Forward(xn)
	if err != nil {
		return err
	}
	ytilde, err := trainNP.Apply(xn, yhat)
	if err != nil {
		return err
	}
	mse := G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(ytilde, yn))))))
	disp := G.Must(G.Mul(G.NewConstant(0.5), G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(yhat, ytilde))))))))
	loss := G.Must(G.Add(mse, disp))
	if _, err := G.Grad(loss, mlp.Learnables()...); err != nil {
		return err
	}
	m := G.NewTapeMachine(g, G.BindDualValues(mlp.Learnables()...))
	defer m.Close()
	solver := G.NewAdamSolver(G.WithLearnRate(3e-3))
	op, _ := enforce.OpOf(ytilde)

	// 4. Train.
	start := time.Now()
	for e := 1; e <= epochs; e++ {
		if err := m.RunAll(); err != nil {
			return err
		}
		if err := solver.Step(G.NodesToValueGrads(mlp.Learnables())); err != nil {
			return err
		}
		if e%max(1, epochs/5) == 0 {
			st := op.Stats()
			fmt.Printf("epoch %5d  loss %.3e  AdaNP depth %d  mean|c| after %.1e\n", e, loss.Value().Data().(float64), st.Depth, st.After.Mean)
		}
		m.Reset()
	}
	fmt.Printf("trained in %v\n\n", time.Since(start).Round(time.Millisecond))

	// 5. Predict on fresh points in plain Go, without a graph: the
	// network's raw output ŷ (layers.MLP.Predict, from the trained
	// weights) and its projection ỹ.
	xTest, yTest := data(1000, 2)
	raw, err := mlp.Predict(xTest)
	if err != nil {
		return err
	}
	proj, st, err := infer.Project(xTest, raw)
	if err != nil {
		return err
	}
	rawSt, err := infer.Check(xTest, raw)
	if err != nil {
		return err
	}
	fmt.Printf("%-22s %12s %12s\n", "1000 test points", "MSE", "max|c|")
	fmt.Printf("%-22s %12.3e %12.1e\n", "network output ŷ", mseOf(raw, yTest), rawSt.After.Max)
	fmt.Printf("%-22s %12.3e %12.1e   (AdaNP depth %d)\n", "ENFORCE ỹ = AdaNP(ŷ)", mseOf(proj, yTest), st.After.Max, st.Depth)
	return nil
}

func mseOf(a, b *mat.Dense) float64 {
	var d mat.Dense
	d.Sub(a, b)
	r, c := d.Dims()
	return math.Pow(mat.Norm(&d, 2), 2) / float64(r*c)
}
