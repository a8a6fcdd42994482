package enforce_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
)

// circle is y1² + y2² = x², as a Func.
func circle() enforce.Constraint {
	c, err := enforce.Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Mul(x[0], x[0]))
	})
	if err != nil {
		panic(err)
	}
	return c
}

// Project a batch of predictions onto circles of radius x, in plain Go.
func ExampleAdaNP_Project() {
	p, err := enforce.NewAdaNP(circle(), enforce.Settings{Tol: 1e-10})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := mat.NewDense(3, 1, []float64{1, 2, 0.5})
	yhat := mat.NewDense(3, 2, []float64{
		0.9, 0.1,
		1.0, 1.5,
		0.3, -0.3,
	})
	y, st, err := p.Project(x, yhat)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ỹ =\n%.6f\n", mat.Formatted(y))
	fmt.Printf("max|c| before %.2f, after < 1e-10: %v, deepest sample: %d steps, all converged: %v\n",
		st.Before.Max, st.After.Max < 1e-10, st.Depth, st.Converged())
	// Output:
	// ỹ =
	// ⎡ 0.993884   0.110432⎤
	// ⎢ 1.109400   1.664101⎥
	// ⎣ 0.353553  -0.353553⎦
	// max|c| before 0.75, after < 1e-10: true, deepest sample: 4 steps, all converged: true
}

// Add an AdaNP node to a gorgonia graph and run it.
func ExampleAdaNP_Apply() {
	p, err := enforce.NewAdaNP(circle(), enforce.Settings{})
	if err != nil {
		fmt.Println(err)
		return
	}
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 1), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float64{1, 2}))))
	yhat := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("yhat"),
		G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{0.6, 0.6, 0, 3}))))
	ytilde, err := p.Apply(x, yhat)
	if err != nil {
		fmt.Println(err)
		return
	}
	loss := G.Must(G.Sum(ytilde))
	if _, err := G.Grad(loss, yhat); err != nil {
		fmt.Println(err)
		return
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	op, _ := enforce.OpOf(ytilde)
	fmt.Println(ytilde.Op())
	fmt.Printf("ỹ = %.4f\n", ytilde.Value().Data())
	fmt.Printf("converged: %v\n", op.Stats().Converged())
	// Output:
	// AdaNP(max|c|≤1e-06, depth 1..100, identity W, unrolled grad)
	// ỹ = [0.7071 0.7071 0.0000 2.0000]
	// converged: true
}
