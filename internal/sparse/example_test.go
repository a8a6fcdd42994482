package sparse_test

import (
	"errors"
	"fmt"

	"github.com/enforce-nn/enforce/internal/sparse"
)

// Example factors G = B·W⁻¹·Bᵀ for a 3×4 B whose rows couple neighbouring
// variables, G = [2 1 0; 1 2 1; 0 1 2], and solves G·μ = (3, 4, 3).
func Example() {
	// B by rows: row i has entries in columns i and i+1, all ones.
	rowPtr := []int{0, 2, 4, 6}
	col := []int{0, 1, 1, 2, 2, 3}
	bvals := []float64{1, 1, 1, 1, 1, 1}
	winv := []float64{1, 1, 1, 1}

	g, err := sparse.AnalyseGram(3, 4, rowPtr, col, sparse.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	f := g.NewFactor() // one per goroutine; g is shared
	if err := f.Factor(bvals, winv, 0); err != nil {
		fmt.Println(err)
		return
	}
	mu := []float64{3, 4, 3}
	f.Solve(mu)
	fmt.Printf("μ = %.6f, nnz(L) = %d\n", mu, g.NNZL())
	// Output:
	// μ = [1.000000 1.000000 1.000000], nnz(L) = 2
}

// Example_regularise shows the retry with ε when B is rank-deficient: two
// equal rows make G singular.
func Example_regularise() {
	rowPtr := []int{0, 2, 4}
	col := []int{0, 1, 0, 1}
	bvals := []float64{1, 2, 1, 2}
	winv := []float64{1, 1}
	g, _ := sparse.AnalyseGram(2, 2, rowPtr, col, sparse.Options{})
	f := g.NewFactor()
	err := f.Factor(bvals, winv, 0)
	fmt.Println(errors.Is(err, sparse.ErrNotPositive))
	eps := 1e-12 * f.MaxDiag()
	if err := f.Factor(bvals, winv, eps); err != nil {
		fmt.Println(err)
		return
	}
	x := []float64{5, 5}
	f.Solve(x) // the minimum-norm-like regularised solution: (½, ½)
	fmt.Printf("%.6f\n", x)
	// Output:
	// true
	// [0.500000 0.500000]
}
