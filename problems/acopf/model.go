package acopf

import (
	"fmt"
	"math"

	"github.com/enforce-nn/enforce"
)

// FBEpsilon is the smoothing ε_FB with which Model.Constraint extends the
// power flow by the limits (enforce.DefaultFBEps, as every problem of
// package problems).
const FBEpsilon = enforce.DefaultFBEps

// ProjectionFBEpsilon is a smoothing ε_FB for Model.ConstraintWith that
// makes AdaNP's projections of perturbed operating points onto the power
// flow and the limits converge in a few steps on the large grids
// (docs/acopf.md): at a zero of a smoothed row, λ·(−g) = ε/2, so a bound
// whose multiplier is λ is met with a margin ε/(2λ) (5e-5 p.u. at
// λ = 1e-2), √(ε/2) ≈ 7e-4 p.u. at the corner λ = −g, and more where
// λ is smaller still (a bound that is not active). Its rows bend over a
// width √ε = 1e-3 p.u. about the corner λ = g = 0, against 1e-4 for
// FBEpsilon, which is what lets a multiplier that an early step made
// large release its bound in a few steps.
const ProjectionFBEpsilon = 1e-6

// Model is the ACOPF of a Case as an enforce problem (it implements
// problems.Problem): inputs x the loads and outputs y the operating point,
// laid out as for PowerFlow; equalities the power-flow balance
// (PowerFlow); inequalities the voltage and generation limits (Limits);
// and the generation cost as the objective. Line-flow and angle-difference
// limits (BranchLimits) are not part of its Inequalities (DC3's set-up);
// ConstraintWith adds them on request, Violations measures them, and the
// reference solve of PGLib's formulation, which has them, is NLP. Where the case has pinned
// variables, Constraint takes them as equalities (see ConstraintWith)
// rather than as the pair of inequalities that Inequalities holds.
type Model struct {
	// Case is the grid.
	Case *Case
	pf   *PowerFlow
	lim  *Limits
	// free are the limits of the variables that are not pinned, pinned
	// those pinned (nil when none is).
	free   *Limits
	pinned *Pinned
}

// NewModel returns the ACOPF of c. It returns an error when NewPowerFlow
// or NewLimits do, or when Case.PolynomialCosts does (a case without
// gencost, or with piecewise-linear costs, has no objective here).
func NewModel(c *Case) (*Model, error) {
	if err := c.PolynomialCosts(); err != nil {
		return nil, fmt.Errorf("acopf: NewModel: %w", err)
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
	m := &Model{Case: c, pf: pf, lim: lim, free: lim}
	if m.pinned, err = NewPinned(c, nx); err != nil {
		return nil, err
	}
	if m.pinned != nil {
		r, err := newBoxRows(c, nx, freeBounds)
		if err != nil {
			return nil, err
		}
		m.free = &Limits{rows: r}
	}
	return m, nil
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

// Inequalities returns the voltage and generation limits, a *Limits
// (every finite bound, those of the pinned variables included).
func (m *Model) Inequalities() enforce.Constraint { return m.lim }

// Pinned returns the variables whose lower and upper bounds are equal, or
// nil when the case has none.
func (m *Model) Pinned() *Pinned { return m.pinned }

// Constraint returns ConstraintWith(ConstraintOptions{}): the power flow
// and the limits with the smoothing FBEpsilon.
func (m *Model) Constraint() (enforce.Constraint, error) {
	return m.ConstraintWith(ConstraintOptions{})
}

// ConstraintOptions configures Model.ConstraintWith.
type ConstraintOptions struct {
	// FBEps is the smoothing ε_FB of the limits' Fischer–Burmeister rows
	// (enforce.WithInequalities); zero means FBEpsilon. A larger ε_FB
	// converges in fewer steps and moves the projection inward by
	// ε_FB/(2λ) at each active bound: ProjectionFBEpsilon suits points
	// within about 1e-3 (relative) of the constraint set;
	// predictions farther off, such as those of a network in training,
	// need a larger one (docs/acopf-dc3.md: 1e-4 on case57).
	FBEps float64
	// BranchLimits adds the branch thermal and angle-difference limits
	// (BranchLimits) to the inequalities, which makes the zero set
	// PGLib-OPF's constraint set (MODEL.tex). The default, false, is DC3's
	// set-up, the power flow and the voltage and generation bounds only
	// (the DC3 case57 rows use it: that case has no line limits); a
	// projection meant to be feasible for PGLib's formulation needs true.
	BranchLimits bool
	// BranchRows, with BranchLimits, keeps only the branch limits' rows
	// for which it returns true, numbered as BranchLimits numbers them (a
	// rated branch's two thermal rows are kept together:
	// BranchLimits.Select); nil keeps every row, and a constraint that
	// keeps none has the limits without line rows. Every row costs each
	// projection step time, binding or not; leaving out those far from
	// binding saves it, and the projected points may differ a little (the
	// smoothed stages of enforce.Settings.Smoothing feel every row). A
	// projection onto such a constraint is not one onto PGLib's set: check
	// each point against the whole set (Violations) and project the points
	// that violate it onto the whole set, as Screened does
	// (BranchLimits.Near marks the rows near binding at given points).
	BranchRows func(row int) bool
}

// ConstraintWith returns the system AdaNP projects onto: the power flow
// and the voltage and generation limits,
//
//	enforce.WithInequalities(power flow, limits, o.FBEps),
//
// where the case has no pinned variable (Pinned), and otherwise
//
//	enforce.WithInequalities(enforce.Stack(power flow, pinned), free limits, o.FBEps),
//
// the pinned variables' rows y_k = b_k as equalities and the limits of
// the other variables as inequalities (see Pinned for why). With
// o.BranchLimits the inequalities are enforce.Stack(limits, branch limits)
// (BranchLimits; the limits alone where the case has no line limit).
// Either way its zero set, without the multipliers, is the power flow
// within the limits, and it keeps the sparse Jacobian pattern: one row
// with one nonzero per pinned variable, one with two (the bound's column
// and its multiplier's) per other finite bound, and one with five (the
// branch's four voltages and the multiplier) per thermal row and three
// per angle row. It returns an error if o.FBEps is negative, NaN or
// infinite, or, with o.BranchLimits, if NewBranchLimits does.
func (m *Model) ConstraintWith(o ConstraintOptions) (enforce.Constraint, error) {
	if !(o.FBEps >= 0) || math.IsInf(o.FBEps, 1) {
		return nil, fmt.Errorf("acopf: Model.ConstraintWith: FBEps = %v, want non-negative and finite", o.FBEps)
	}
	eps := o.FBEps
	if eps == 0 {
		eps = FBEpsilon
	}
	var eq enforce.Constraint = m.pf
	if m.pinned != nil {
		var err error
		if eq, err = enforce.Stack(m.pf, m.pinned); err != nil {
			return nil, err
		}
	}
	var ineq []enforce.Constraint
	if _, _, n := m.free.Dims(); n > 0 {
		ineq = append(ineq, m.free)
	}
	if o.BranchLimits {
		nx, _ := m.Dims()
		bl, err := NewBranchLimits(m.Case, nx)
		if err != nil {
			return nil, err
		}
		if bl != nil && o.BranchRows != nil {
			bl = bl.Select(o.BranchRows)
		}
		if bl != nil {
			ineq = append(ineq, bl)
		}
	}
	switch len(ineq) {
	case 0:
		return eq, nil
	case 1:
		return enforce.WithInequalities(eq, ineq[0], eps)
	}
	g, err := enforce.Stack(ineq...)
	if err != nil {
		return nil, err
	}
	return enforce.WithInequalities(eq, g, eps)
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
