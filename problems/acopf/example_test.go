package acopf_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// Example loads a shipped PGLib-OPF case, builds its power-flow balance as
// an enforce constraint and projects the flat start onto it with AdaNP.
func Example() {
	c, err := acopf.Load("case57_ieee")
	if err != nil {
		log.Fatal(err)
	}
	m, err := acopf.NewModel(c)
	if err != nil {
		log.Fatal(err)
	}
	pf := m.PowerFlow()
	nx, ny, nc := pf.Dims()
	rowPtr, _ := pf.Pattern()
	fmt.Printf("%s: %d buses, %d generators, %d branches\n", c.Name, len(c.Buses), len(c.Gens), len(c.Branches))
	fmt.Printf("nx = %d, ny = %d, nc = %d, ∂c/∂y has %d nonzeros\n", nx, ny, nc, rowPtr[nc])

	a, err := enforce.NewAdaNP(pf, enforce.Settings{Tol: 1e-9})
	if err != nil {
		log.Fatal(err)
	}
	_, st, err := a.Project(mat.NewDense(1, nx, m.Loads()), mat.NewDense(1, ny, m.FlatStart()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("max|c| before %.2f p.u., after ≤ 1e-9: %v\n", st.Before.Max, st.After.Max <= 1e-9)
	// Output:
	// pglib_opf_case57_ieee: 57 buses, 7 generators, 80 branches
	// nx = 84, ny = 128, nc = 115, ∂c/∂y has 867 nonzeros
	// max|c| before 4.29 p.u., after ≤ 1e-9: true
}
