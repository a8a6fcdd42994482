package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"

	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
)

// Formulations are the ACOPF formulations a data set's labels may solve,
// by the names the header gives them: "pglib" is PGLib-OPF's (the zero
// acopf.Formulation, with thermal and angle-difference limits), and
// "no-line-limits" is DC3's (neither).
var Formulations = map[string]acopf.Formulation{
	"pglib":           {},
	"no-flow-limits":  {NoFlowLimits: true},
	"no-angle-limits": {NoAngleLimits: true},
	"no-line-limits":  {NoFlowLimits: true, NoAngleLimits: true},
}

// FormulationName returns f's name in Formulations, or, for a
// formulation without one, its fields as fmt's %+v prints them.
func FormulationName(f acopf.Formulation) string {
	for name, g := range Formulations {
		if g == f {
			return name
		}
	}
	return fmt.Sprintf("%+v", f)
}

// ReferenceOptions configures Reference.
type ReferenceOptions struct {
	// Formulation is the ACOPF solved.
	Formulation acopf.Formulation
	// Tol is the solver's tolerance (zero: solvers.DefaultTol, 1e-8).
	Tol float64
	// MaxIterations bounds each solve's iterations (zero: 500).
	MaxIterations int
}

// solveNLP solves p from init to tol within maxIter iterations; it is
// IPOPT under the build tag ipopt (solve_ipopt.go) and the pure-Go
// interior-point method otherwise. solverName describes it.
var (
	solveNLP   = pureGo
	solverName = "pure-Go interior point (solvers.SolveSparse, feasibility tol 1e-9)"
)

func pureGo(p *solvers.SparseNLP, init []float64, tol float64, maxIter int) (*solvers.Result, error) {
	return solvers.SolveSparse(p, init, &solvers.Settings{Tol: tol, FeasTol: 1e-9, MaxIterations: maxIter})
}

// Reference returns the Solver of real runs and its description for
// Spec.Solver: the ACOPF of m at the sample's loads (m.NLP with
// o.Formulation) solved by IPOPT (built with the tag ipopt: solvers/ipopt
// with acopf.ReferenceOptions and constr_viol_tol 1e-6, as acopf's cached
// reference optima) or else by the pure-Go interior-point method
// (solvers.SolveSparse, dense: practical to a few hundred buses), first
// from the case's cached reference optimum (acopf.ReferenceOptimum, where
// the case has one) and then from acopf's FlatStart. The objective is
// m.Objective at the solution. A sample that no start solves
// (solvers.Success) is an error wrapping ErrNoSolution that names the
// statuses. The Solver builds one NLP per call, so calls may run
// concurrently (IPOPT's are serialised inside solvers/ipopt).
func Reference(m *acopf.Model, o ReferenceOptions) (Solver, string, error) {
	if o.Tol == 0 {
		o.Tol = solvers.DefaultTol
	}
	if o.MaxIterations == 0 {
		o.MaxIterations = 500
	}
	if !(o.Tol > 0) || math.IsInf(o.Tol, 1) || o.MaxIterations < 0 {
		return nil, "", fmt.Errorf("dataset: Reference: tol %v, max iterations %d: want positive", o.Tol, o.MaxIterations)
	}
	starts := [][]float64{m.FlatStart()}
	startNames := "flat start"
	opt, err := acopf.ReferenceOptimum(m.Case.Name)
	switch {
	case err == nil:
		if _, ny := m.Dims(); len(opt.Y) != ny {
			return nil, "", fmt.Errorf("dataset: Reference: the cached optimum of %s has %d entries, want %d", m.Case.Name, len(opt.Y), ny)
		}
		starts = [][]float64{opt.Y, m.FlatStart()}
		startNames = "the cached reference optimum, then the flat start"
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", err
	}
	name := fmt.Sprintf("%s, max %d iterations; starts: %s", solverName, o.MaxIterations, startNames)
	solve := func(x []float64) ([]float64, float64, error) {
		p, err := m.NLP(x, o.Formulation)
		if err != nil {
			return nil, 0, err
		}
		var statuses []string
		for _, s := range starts {
			res, err := solveNLP(p, s, o.Tol, o.MaxIterations)
			if err != nil {
				return nil, 0, err
			}
			if res.Status == solvers.Success {
				return res.Y, m.Objective(res.Y), nil
			}
			statuses = append(statuses, res.Status.String()+" after "+strconv.Itoa(res.Iterations)+" iterations")
		}
		return nil, 0, fmt.Errorf("%w: %v", ErrNoSolution, statuses)
	}
	return solve, name, nil
}

// NewReference returns the Generator of real runs: count samples of the
// case name (as for acopf.Load) with loads from load and seed, labelled
// by Reference with o, its Spec filled in (CaseSHA256 from CaseSHA256).
func NewReference(name string, seed uint64, count int, load LoadModel, o ReferenceOptions) (*Generator, error) {
	c, err := acopf.Load(name)
	if err != nil {
		return nil, err
	}
	sum, err := CaseSHA256(name)
	if err != nil {
		return nil, err
	}
	m, err := acopf.NewModel(c)
	if err != nil {
		return nil, err
	}
	solve, solver, err := Reference(m, o)
	if err != nil {
		return nil, err
	}
	if o.Tol == 0 {
		o.Tol = solvers.DefaultTol
	}
	nx, ny := m.Dims()
	g := &Generator{
		Spec: Spec{Case: c.Name, CaseSHA256: sum, Formulation: FormulationName(o.Formulation), Seed: seed, Count: count,
			Load: load, Solver: solver, Tol: o.Tol, NX: nx, NY: ny},
		Base: m.Loads(), Solve: solve,
	}
	return g, g.Spec.Validate()
}
