package enforce_test

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

// chain is a hand-written sparse constraint: the flows y_0 … y_{n−1} in the
// n pipes of a chain, with the balance y_i − y_{i+1} = x_i (the off-take
// x_i) at each of the n−1 inner nodes: nc = n−1 equations with two
// nonzeros each. Its pattern is row i: columns i and i+1, with the values
// 1 and −1.
type chain struct {
	n           int
	rowPtr, col []int
}

func newChain(n int) *chain {
	ch := &chain{n: n, rowPtr: []int{0}}
	for i := range n - 1 {
		ch.col = append(ch.col, i, i+1)
		ch.rowPtr = append(ch.rowPtr, len(ch.col))
	}
	return ch
}

func (ch *chain) Dims() (nx, ny, nc int) { return ch.n - 1, ch.n, ch.n - 1 }

// Eval is the dense form every Constraint has (used by the dense path).
func (ch *chain) Eval(x, y, c, jy []float64) {
	ch.eval(x, y, c, nil)
	if jy != nil {
		clear(jy)
		for i := range ch.n - 1 {
			jy[i*ch.n+i], jy[i*ch.n+i+1] = 1, -1
		}
	}
}

// eval writes c and, when vals is not nil, ∂c/∂y's values in the pattern.
func (ch *chain) eval(x, y, c, vals []float64) {
	for i := range c {
		c[i] = y[i] - y[i+1] - x[i]
		if vals != nil {
			vals[2*i], vals[2*i+1] = 1, -1
		}
	}
}

func (ch *chain) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{
		HessVec: func(x, y, w, v, out []float64) { clear(out) }, // affine in y
		Sparse:  &enforce.SparseJacobian{RowPtr: ch.rowPtr, Col: ch.col, Eval: ch.eval},
	}
}

// A hand-written sparse constraint: AdaNP takes the sparse path (forced
// here; PathAuto takes it from a few dozen equations), whose cost and
// memory follow the 2·(n−1) nonzeros of the Jacobian.
func ExampleSparseJacobian() {
	const n = 1000
	a, err := enforce.NewAdaNP(newChain(n), enforce.Settings{Path: enforce.PathSparse})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := mat.NewDense(1, n-1, nil)
	for i := range n - 1 {
		x.Set(0, i, 0.01) // each node takes 0.01 off the flow
	}
	yhat := mat.NewDense(1, n, nil)
	for j := range n {
		yhat.Set(0, j, 10) // a prediction that ignores the off-takes
	}
	y, st, err := a.Project(x, yhat)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d balances met in %d step: max|c| ≤ 1e-12: %v\n", n-1, st.Depth, st.After.Max <= 1e-12)
	fmt.Printf("flow in %.3f, out %.3f\n", y.At(0, 0), y.At(0, n-1))
	// Output:
	// 999 balances met in 1 step: max|c| ≤ 1e-12: true
	// flow in 14.995, out 5.005
}

// A SparseFunc constraint: the equations are Go code over hyperdual
// numbers and the pattern is declared per equation; the Jacobian costs
// ⌈K/2⌉ evaluations for K colours of its columns (here 3, whatever n),
// not n/2.
func ExampleSparseFunc() {
	const n = 500
	// A chain of n nodes with the nonlinear balance
	// u_i³ + 2u_i − 0.5·(u_{i−1} + u_{i+1}) = x at the n−2 inner nodes.
	pattern := make([][]int, n-2)
	for k := range pattern {
		pattern[k] = []int{k, k + 1, k + 2}
	}
	c, err := enforce.SparseFunc(1, n, n-2, pattern, func(x, y, c []hd.Number) {
		for k := range c {
			l, u, r := y[k], y[k+1], y[k+2]
			c[k] = hd.Sub(hd.Add(hd.Mul(u, u, u), hd.Scale(2, u)), hd.Add(hd.Scale(0.5, hd.Add(l, r)), x[0]))
		}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("colours:", c.(interface{ Colours() int }).Colours())
	a, err := enforce.NewAdaNP(c, enforce.Settings{Tol: 1e-10})
	if err != nil {
		fmt.Println(err)
		return
	}
	x := mat.NewDense(2, 1, []float64{0.5, 2})
	y, st, err := a.Project(x, mat.NewDense(2, n, nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("converged: %v, max|c| ≤ 1e-10: %v\n", st.Converged(), st.After.Max <= 1e-10)
	// Far from the ends, u solves u³ + u = x.
	fmt.Printf("u = %.4f and %.4f\n", y.At(0, n/2), y.At(1, n/2))
	// Output:
	// colours: 3
	// converged: true, max|c| ≤ 1e-10: true
	// u = 0.4239 and 1.0000
}

// ExampleCheckSparse finds a dependence that a SparseFunc's pattern
// omits: equation 1 reads y[3], which its row does not declare. The
// colouring gave y[3] the colour of y[1], so the missing derivative 0.5
// was added to the declared ∂c_1/∂y_1 (3.5 instead of 3): both entries
// are reported.
func ExampleCheckSparse() {
	pattern := [][]int{{0, 1}, {1, 2}, {2, 3}} // row 1 should be {1, 2, 3}
	c, err := enforce.SparseFunc(0, 4, 3, pattern, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Mul(y[0], y[1]), hd.Const(1))
		c[1] = hd.Add(hd.Mul(y[1], y[2]), hd.Scale(0.5, y[3]))
		c[2] = hd.Sub(y[2], y[3])
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = enforce.CheckSparse(c, nil, []float64{1, 2, 3, 4}, 0)
	var pe *enforce.PatternError
	if errors.As(err, &pe) {
		for _, e := range pe.Entries {
			fmt.Printf("row %d, column %d: declared %v, value %g, ∂c/∂y = %g\n", e.Row, e.Col, e.Declared, e.Got, e.Want)
		}
	}
	// Output:
	// row 1, column 1: declared true, value 3.5, ∂c/∂y = 3
	// row 1, column 3: declared false, value 0, ∂c/∂y = 0.5
}
