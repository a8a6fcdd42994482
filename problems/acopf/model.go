package acopf

import (
	"fmt"

	"github.com/enforce-nn/enforce"
)

// FBEpsilon is the smoothing ε_FB with which Model.Constraint extends the
// power flow by the limits (enforce.DefaultFBEps, as every problem of
// package problems).
const FBEpsilon = enforce.DefaultFBEps

// Model is the ACOPF of a Case as an enforce problem (it implements
// problems.Problem): inputs x the loads and outputs y the operating point,
// laid out as for PowerFlow; equalities the power-flow balance
// (PowerFlow); inequalities the voltage and generation limits (Limits);
// and the generation cost as the objective. Line-flow and angle-difference
// limits are not part of it (DC3's set-up); the reference solve of
// PGLib's formulation, which has them, is NLP.
type Model struct {
	// Case is the grid.
	Case *Case
	pf   *PowerFlow
	lim  *Limits
}

// NewModel returns the ACOPF of c. It returns an error when NewPowerFlow
// or NewLimits do, or when a generator's cost is not a polynomial (a
// case without gencost, or with piecewise-linear costs, has no objective
// here).
func NewModel(c *Case) (*Model, error) {
	for j, g := range c.Gens {
		if g.Cost == nil || g.Cost.Model != 2 || (g.QCost != nil && g.QCost.Model != 2) {
			return nil, fmt.Errorf("acopf: NewModel: generator %d (bus %d) of case %q has no polynomial cost (gencost model 2); piecewise-linear costs are not supported",
				j, c.Buses[g.Bus].ID, c.Name)
		}
	}
	pf, err := NewPowerFlow(c)
	if err != nil {
		return nil, err
	}
	nx, _, _ := pf.Dims()
	lim, err := NewLimits(c, nx)
	if err != nil {
		return nil, err
	}
	return &Model{Case: c, pf: pf, lim: lim}, nil
}

// Name returns the case's name.
func (m *Model) Name() string { return m.Case.Name }

// Dims returns nx = 2·nl and ny = 2·nb + 2·ng.
func (m *Model) Dims() (nx, ny int) {
	nx, ny, _ = m.pf.Dims()
	return nx, ny
}

// Equalities returns the power-flow balance, a *PowerFlow.
func (m *Model) Equalities() enforce.Constraint { return m.pf }

// PowerFlow returns the power-flow balance.
func (m *Model) PowerFlow() *PowerFlow { return m.pf }

// Inequalities returns the voltage and generation limits, a *Limits.
func (m *Model) Inequalities() enforce.Constraint { return m.lim }

// Constraint returns enforce.WithInequalities(power flow, limits,
// FBEpsilon).
func (m *Model) Constraint() (enforce.Constraint, error) {
	return enforce.WithInequalities(m.pf, m.lim, FBEpsilon)
}

// Loads returns x at the case's own loads.
func (m *Model) Loads() []float64 {
	nx, _ := m.Dims()
	x := make([]float64, nx)
	for l, i := range m.pf.loadBus {
		x[l] = m.Case.Buses[i].Pd
		x[m.pf.nl+l] = m.Case.Buses[i].Qd
	}
	return x
}

// OperatingPoint returns y at the case file's own operating point (the
// bus columns VM, VA and the generator columns PG, QG).
func (m *Model) OperatingPoint() []float64 {
	_, ny := m.Dims()
	nb, ng := len(m.Case.Buses), len(m.Case.Gens)
	y := make([]float64, ny)
	for i, b := range m.Case.Buses {
		y[i], y[nb+i] = b.Vm, b.Va
	}
	for j, g := range m.Case.Gens {
		y[2*nb+j], y[2*nb+ng+j] = g.Pg, g.Qg
	}
	return y
}

// Objective returns the generation cost Σ_j cost_j(Pg_j) (+ Σ_j
// qcost_j(Qg_j) where the case has reactive costs) in $/h at y.
func (m *Model) Objective(y []float64) float64 {
	m.checkY("Objective", y)
	nb, ng := len(m.Case.Buses), len(m.Case.Gens)
	var f float64
	for j, g := range m.Case.Gens {
		v, _, _ := g.Cost.Eval(y[2*nb+j])
		f += v
		if g.QCost != nil {
			v, _, _ := g.QCost.Eval(y[2*nb+ng+j])
			f += v
		}
	}
	return f
}

// ObjectiveGrad writes the gradient of Objective at y into grad (length
// ny): nonzero only in Pg (and Qg with reactive costs).
func (m *Model) ObjectiveGrad(y, grad []float64) {
	m.checkY("ObjectiveGrad", y)
	if len(grad) != len(y) {
		panic(fmt.Sprintf("acopf: Model.ObjectiveGrad: len(grad) = %d, want %d", len(grad), len(y)))
	}
	nb, ng := len(m.Case.Buses), len(m.Case.Gens)
	clear(grad)
	for j, g := range m.Case.Gens {
		_, grad[2*nb+j], _ = g.Cost.Eval(y[2*nb+j])
		if g.QCost != nil {
			_, grad[2*nb+ng+j], _ = g.QCost.Eval(y[2*nb+ng+j])
		}
	}
}

// checkY panics unless len(y) = ny.
func (m *Model) checkY(method string, y []float64) {
	if _, ny := m.Dims(); len(y) != ny {
		panic(fmt.Sprintf("acopf: Model.%s: len(y) = %d, want %d", method, len(y), ny))
	}
}
