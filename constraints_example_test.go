package enforce_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

func ExampleFunc() {
	// The circle y₁² + y₂² = r² whose radius r is the input x₁.
	circle, err := enforce.Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		sq := func(v hyperdual.Number) hyperdual.Number { return hyperdual.Mul(v, v) }
		c[0] = hyperdual.Sub(hyperdual.Add(sq(y[0]), sq(y[1])), sq(x[0]))
	})
	if err != nil {
		log.Fatal(err)
	}
	x, y := []float64{5}, []float64{3, 4}
	c, jy, jx := make([]float64, 1), make([]float64, 2), make([]float64, 1)
	circle.Eval(x, y, c, jy)
	enforce.CapabilitiesOf(circle).JacobianX(x, y, jx)
	hv := make([]float64, 2)
	enforce.CapabilitiesOf(circle).HessVec(x, y, []float64{1}, []float64{1, 0}, hv)
	fmt.Println("c =", c)
	fmt.Println("∂c/∂y =", jy)
	fmt.Println("∂c/∂x =", jx)
	fmt.Println("∇²c·(1, 0) =", hv)
	// Output:
	// c = [0]
	// ∂c/∂y = [6 8]
	// ∂c/∂x = [-10]
	// ∇²c·(1, 0) = [2 0]
}

func ExampleLinear() {
	// y₁ + y₂ = x₁ and y₁ − y₂ = x₂.
	C := mat.NewDense(2, 2, []float64{
		1, 1,
		1, -1,
	})
	identity := func(x, r, jx []float64) {
		copy(r, x)
		if jx != nil {
			clear(jx)
			jx[0], jx[3] = 1, 1
		}
	}
	lin, err := enforce.Linear(2, C, identity)
	if err != nil {
		log.Fatal(err)
	}
	x, y := []float64{4, 2}, []float64{3, 2}
	c := make([]float64, 2)
	lin.Eval(x, y, c, nil)
	fmt.Println("c =", c)
	fmt.Println("constant Jacobian:", enforce.CapabilitiesOf(lin).ConstantJacobian != nil)
	// Output:
	// c = [1 -1]
	// constant Jacobian: true
}

func ExampleWithInequalities() {
	// y₁ ≤ 1, with one Fischer–Burmeister multiplier λ appended to y.
	g, err := enforce.Linear(0, mat.NewDense(1, 1, []float64{1}), func(_, r, _ []float64) { r[0] = 1 })
	if err != nil {
		log.Fatal(err)
	}
	fb, err := enforce.WithInequalities(nil, g, 0)
	if err != nil {
		log.Fatal(err)
	}
	nx, ny, nc := fb.Dims()
	fmt.Println("dims:", nx, ny, nc, "latent:", enforce.CapabilitiesOf(fb).Latent)
	c := make([]float64, 1)
	for _, yl := range [][]float64{{3, 0}, {1, 0.5}, {0.5, 0}} {
		fb.Eval(nil, yl, c, nil)
		fmt.Printf("y = %.1f, λ = %.1f: φ = %.4f\n", yl[0], yl[1], c[0])
	}
	// Output:
	// dims: 0 2 1 latent: 1
	// y = 3.0, λ = 0.0: φ = 4.0000
	// y = 1.0, λ = 0.5: φ = 0.0000
	// y = 0.5, λ = 0.0: φ = 0.0000
}

func ExampleStack() {
	sum, err := enforce.Linear(0, mat.NewDense(1, 2, []float64{1, 1}), func(_, r, _ []float64) { r[0] = 1 })
	if err != nil {
		log.Fatal(err)
	}
	product, err := enforce.Func(0, 2, 1, func(_, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Mul(y[0], y[1]), hyperdual.Number{Real: 0.25})
	})
	if err != nil {
		log.Fatal(err)
	}
	both, err := enforce.Stack(sum, product)
	if err != nil {
		log.Fatal(err)
	}
	c, jy := make([]float64, 2), make([]float64, 4)
	both.Eval(nil, []float64{0.5, 0.5}, c, jy)
	fmt.Println("c =", c)
	fmt.Println("∂c/∂y =", jy)
	fmt.Println("HessVec:", enforce.CapabilitiesOf(both).HessVec != nil,
		"constant Jacobian:", enforce.CapabilitiesOf(both).ConstantJacobian != nil)
	// Output:
	// c = [0 0]
	// ∂c/∂y = [1 1 0.5 0.5]
	// HessVec: true constant Jacobian: false
}

// handCircle is a hand-written constraint, y₁² + y₂² = x₁², that declares
// its derivative in x and its curvature.
type handCircle struct{}

func (handCircle) Dims() (nx, ny, nc int) { return 1, 2, 1 }

func (handCircle) Eval(x, y, c, jy []float64) {
	c[0] = y[0]*y[0] + y[1]*y[1] - x[0]*x[0]
	if jy != nil {
		jy[0], jy[1] = 2*y[0], 2*y[1]
	}
}

func (handCircle) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{
		JacobianX: func(x, y, jx []float64) { jx[0] = -2 * x[0] },
		HessVec:   func(x, y, w, v, out []float64) { out[0], out[1] = 2*w[0]*v[0], 2*w[0]*v[1] },
	}
}

func ExampleCapabilities() {
	// A hand-written constraint declares what it can do beyond Eval in its
	// Capabilities; AdaNP reads them once.
	p, err := enforce.NewAdaNP(handCircle{}, enforce.Settings{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exact gradient:", p.ExactGradient())
	y, _, err := p.Project(mat.NewDense(1, 1, []float64{5}), mat.NewDense(1, 2, []float64{6, 8}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ỹ = [%.4f %.4f]\n", y.At(0, 0), y.At(0, 1))

	// A wrapper carries its parts' capabilities: Stack of the circle and a
	// Quadratic keeps the derivatives both have and the Quadratic's
	// batched, single-precision evaluation.
	q, err := enforce.Quadratic(1, []*mat.SymDense{mat.NewSymDense(2, []float64{1, 0, 0, 0})}, nil, []float64{-1}, nil)
	if err != nil {
		log.Fatal(err)
	}
	s, err := enforce.Stack(handCircle{}, q)
	if err != nil {
		log.Fatal(err)
	}
	k := enforce.CapabilitiesOf(s)
	fmt.Println("JacobianX:", k.JacobianX != nil, "MixedHessVec:", k.MixedHessVec != nil, "EvalBatch32:", k.EvalBatch32 != nil)
	// Output:
	// exact gradient: false
	// ỹ = [3.0000 4.0000]
	// JacobianX: true MixedHessVec: false EvalBatch32: true
}

func ExampleFunc_hd() {
	// The circle y₁² + y₂² = x₁², written with package hd.
	circle, err := enforce.Func(1, 2, 1, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(hd.Square(y[0]), hd.Square(y[1])), hd.Square(x[0]))
	})
	if err != nil {
		log.Fatal(err)
	}
	p, err := enforce.NewAdaNP(circle, enforce.Settings{})
	if err != nil {
		log.Fatal(err)
	}
	y, stats, err := p.Project(mat.NewDense(1, 1, []float64{5}), mat.NewDense(1, 2, []float64{6, 8}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ỹ = [%.4f %.4f], exact gradient: %t, steps: %d\n", y.At(0, 0), y.At(0, 1), p.ExactGradient(), stats.Depth)
	// Output:
	// ỹ = [3.0000 4.0000], exact gradient: true, steps: 5
}
