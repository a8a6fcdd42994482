package losses_test

import (
	"fmt"
	"log"

	"github.com/enforce-nn/enforce/losses"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// unitCircle is c(x, y) = y0² + y1² − x0²: y lies on the circle of radius x0.
type unitCircle struct{}

func (unitCircle) Dims() (nx, ny, nc int) { return 1, 2, 1 }

func (unitCircle) Eval(x, y, c, jy []float64) {
	c[0] = y[0]*y[0] + y[1]*y[1] - x[0]*x[0]
	if jy != nil {
		jy[0], jy[1] = 2*y[0], 2*y[1]
	}
}

// ExampleResidual builds the ENFORCE loss MSE + λ_C·residual for two
// samples and differentiates it with respect to the prediction.
func ExampleResidual() {
	g := gorgonia.NewGraph()
	matrix := func(name string, r, c int, v ...float64) *gorgonia.Node {
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(r, c), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(v))))
	}
	x := matrix("x", 2, 1, 1, 2)
	y := matrix("y", 2, 2, 0, 1, 1, 1) // on the circle; off it by c = −2
	target := matrix("target", 2, 2, 0, 1, 2, 0)

	task, err := losses.MSE(y, target)
	if err != nil {
		log.Fatal(err)
	}
	res, err := losses.Residual(unitCircle{}, x, y, 0.5)
	if err != nil {
		log.Fatal(err)
	}
	loss, err := gorgonia.Add(task, res)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := gorgonia.Grad(loss, y); err != nil {
		log.Fatal(err)
	}
	// Intermediate values may be overwritten by in-place ops: Read copies them.
	var resVal gorgonia.Value
	gorgonia.Read(res, &resVal)

	m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(y))
	defer m.Close()
	if err := m.RunAll(); err != nil {
		log.Fatal(err)
	}
	gy, err := y.Grad()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("residual term %.4f, loss %.4f\n", resVal.Data(), loss.Value().Data())
	fmt.Printf("∂loss/∂y = %.4f\n", gy.Data())
	// Output:
	// residual term 0.5000, loss 1.0000
	// ∂loss/∂y = [0.0000 0.0000 -1.0000 0.0000]
}
