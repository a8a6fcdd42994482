package dc3

import (
	"errors"
	"fmt"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// ACOPFCompletion is DC3's equality completion for AC optimal power flow
// (locuslab/DC3, utils.py, ACOPFProblem.complete_partial and PFFunction):
// the network predicts the partial variables
//
//	y_p = (Pg of every generator but the reference bus's, Vm of every generator bus),
//
// and the other variables, Vm of the load buses, Va of every bus, Pg of the
// reference bus's generator and Qg of every generator, are found by solving
// the power flow (acopf.PowerFlow, with the reference angle row Va_ref = 0)
// by Newton's method: 2·nb + 1 equations in as many unknowns. Its
// vector-Jacobian product follows from the implicit function theorem, as
// NewtonCompletion's, which does the work.
//
// y is laid out as acopf.PowerFlow's y = (Vm, Va, Pg, Qg).
type ACOPFCompletion struct {
	// Newton is the completion on the power flow with its inputs padded
	// to as many as its equalities (NewtonCompletion's contract).
	Newton NewtonCompletion
	nx     int
}

// NewACOPFCompletion returns DC3's completion for the ACOPF of m. It
// returns an error when a bus has more than one generator (DC3's
// formulation has one per generator bus) or the reference bus has none.
func NewACOPFCompletion(m *acopf.Model) (*ACOPFCompletion, error) {
	c := m.Case
	nb, ng := len(c.Buses), len(c.Gens)
	pf := m.PowerFlow()
	nx, ny, nc := pf.Dims()
	genAt := make([]int, nb)
	for i := range genAt {
		genAt[i] = -1
	}
	refGen := -1
	for j, g := range c.Gens {
		if genAt[g.Bus] >= 0 {
			return nil, fmt.Errorf("dc3: ACOPF completion: bus %d has more than one generator", c.Buses[g.Bus].ID)
		}
		genAt[g.Bus] = j
		if g.Bus == c.Ref {
			refGen = j
		}
	}
	if refGen < 0 {
		return nil, errors.New("dc3: ACOPF completion: the reference bus has no generator")
	}
	partial := make([]int, 0, 2*ng-1)
	for j := range ng {
		if j != refGen {
			partial = append(partial, 2*nb+j)
		}
	}
	for i := range nb {
		if genAt[i] >= 0 {
			partial = append(partial, i)
		}
	}
	isPartial := make([]bool, ny)
	for _, k := range partial {
		isPartial[k] = true
	}
	other := make([]int, 0, ny-len(partial))
	for k := range ny {
		if !isPartial[k] {
			other = append(other, k)
		}
	}
	if len(other) != nc || nx > nc {
		return nil, fmt.Errorf("dc3: ACOPF completion: %d completed variables for %d equations and %d inputs", len(other), nc, nx)
	}
	a := &ACOPFCompletion{Newton: NewtonCompletion{C: padded{pf, nx, nc}, Partial: partial, Other: other}, nx: nx}
	if err := a.Newton.Validate(); err != nil {
		return nil, err
	}
	return a, nil
}

// Partial returns the indices in y of the partial variables, in the
// order of y_p: Pg of the non-reference generators, then Vm of the
// generator buses.
func (a *ACOPFCompletion) Partial() []int { return append([]int(nil), a.Newton.Partial...) }

// Complete writes into y the completion of y_p for the loads x
// (acopf.PowerFlow's x), starting Newton's method from y's values at the
// other variables, and returns max|c| at the end and whether it is at most
// the tolerance (NewtonCompletion.Complete).
func (a *ACOPFCompletion) Complete(x, yp, y []float64) (float64, bool, error) {
	if len(x) != a.nx {
		return 0, false, fmt.Errorf("dc3: ACOPF completion: len(x) = %d, want %d", len(x), a.nx)
	}
	return a.Newton.Complete(a.pad(x), yp, y)
}

// VJP writes into gp the gradient with respect to y_p of a loss whose
// gradient with respect to the completed y is g (NewtonCompletion.VJP).
func (a *ACOPFCompletion) VJP(x, y, g, gp []float64) error {
	if len(x) != a.nx {
		return fmt.Errorf("dc3: ACOPF completion: len(x) = %d, want %d", len(x), a.nx)
	}
	return a.Newton.VJP(a.pad(x), y, g, gp)
}

func (a *ACOPFCompletion) pad(x []float64) []float64 {
	_, _, nc := a.Newton.C.Dims()
	xp := make([]float64, nc)
	copy(xp, x)
	return xp
}

// padded is a constraint whose input is padded with zeros to nc entries.
type padded struct {
	c      enforce.Constraint
	nx, nc int
}

func (p padded) Dims() (nx, ny, nc int) {
	_, ny, _ = p.c.Dims()
	return p.nc, ny, p.nc
}

func (p padded) Eval(x, y, c, jy []float64) { p.c.Eval(x[:p.nx], y, c, jy) }
