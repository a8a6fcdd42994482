//go:build ipopt

package ipopt

/*
#cgo pkg-config: ipopt
#include <stdint.h>
#include <stdlib.h>
#include <IpStdCInterface.h>

extern Bool goEvalF(Index n, Number* x, Bool new_x, Number* obj, UserDataPtr ud);
extern Bool goEvalGradF(Index n, Number* x, Bool new_x, Number* grad, UserDataPtr ud);
extern Bool goEvalG(Index n, Number* x, Bool new_x, Index m, Number* g, UserDataPtr ud);
extern Bool goEvalJacG(Index n, Number* x, Bool new_x, Index m, Index nele, Index* iRow, Index* jCol, Number* values, UserDataPtr ud);
extern Bool goEvalH(Index n, Number* x, Bool new_x, Number obj_factor, Index m, Number* lambda, Bool new_lambda, Index nele, Index* iRow, Index* jCol, Number* values, UserDataPtr ud);
extern Bool goIntermediate(Index alg_mod, Index iter_count, Number obj_value, Number inf_pr, Number inf_du, Number mu, Number d_norm, Number regularization_size, Number alpha_du, Number alpha_pr, Index ls_trials, UserDataPtr ud);
*/
import "C"

import (
	"fmt"
	"math"
	"runtime/cgo"
	"sort"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"gonum.org/v1/gonum/floats"

	"github.com/enforce-nn/enforce/solvers"
)

// Solver is a solvers.Method that calls IPOPT with the exact Hessian of
// the Lagrangian (dense), no variable bounds and equality constraints
// c(y) = 0; SolveSparse solves a solvers.SparseNLP. Zero fields keep
// IPOPT's defaults; Solve and SolveSparse return an error for a negative,
// NaN or infinite Tol or ConstrViolTol and a negative MaxIterations.
type Solver struct {
	// Tol is IPOPT's option "tol" (IPOPT's default 1e-8).
	Tol float64
	// MaxIterations is "max_iter" (IPOPT's default 3000).
	MaxIterations int
	// PrintLevel is "print_level" (0, silent, by default here).
	PrintLevel int
	// ConstrViolTol is "constr_viol_tol", the largest unscaled constraint
	// and bound violation at which IPOPT may stop (IPOPT's default 1e-4).
	ConstrViolTol float64
	// Options are further IPOPT options by name, set after the fields
	// above, in the order of their names. A value is passed as an
	// integer option if it parses as an integer and IPOPT takes it as
	// one, else as a number if it parses as one and IPOPT takes it,
	// else as a string; an option IPOPT rejects is an error.
	Options map[string]string
}

// mu serialises calls into IPOPT: the sequential MUMPS linear solver it
// is built with in Debian keeps global state, so concurrent solves are
// not safe. SolveAll with a Solver therefore runs one solve at a time.
var mu sync.Mutex

// problem is what the callbacks see through the user-data pointer.
type problem struct {
	p          solvers.NLP
	hess, tmp  []float64
	zero       []float64
	iterations int
}

// Solve runs IPOPT on p from init and reports the result with the status
// mapped to solvers.Status: Solve_Succeeded and Solved_To_Acceptable_Level
// are Success, Maximum_Iterations_Exceeded is IterationLimit,
// Restoration_Failed and Search_Direction_Becomes_Too_Small are
// LineSearchFailure, and every other status is NumericalFailure.
// Objective, MaxViolation and Stationarity are recomputed in Go at the
// returned point. It returns an error for a malformed problem, for invalid
// Solver fields or if IPOPT rejects an option.
func (s Solver) Solve(p solvers.NLP, init []float64) (*solvers.Result, error) {
	if p.N < 1 || p.M < 0 || p.M > p.N || len(init) != p.N ||
		p.Objective == nil || p.Grad == nil || p.Constraints == nil || p.Hessian == nil {
		return nil, fmt.Errorf("ipopt: malformed NLP (N = %d, M = %d, len(init) = %d) or nil callback", p.N, p.M, len(init))
	}
	if err := s.checkFields(); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	start := time.Now()
	n, m := p.N, p.M
	pr := &problem{p: p, hess: make([]float64, n*n), tmp: make([]float64, n*n), zero: make([]float64, m)}

	// C arrays: bounds (none on y, equalities on c) and the iterate.
	cf := func(k int) *C.Number {
		return (*C.Number)(C.malloc(C.size_t(max(k, 1)) * C.size_t(unsafe.Sizeof(C.Number(0)))))
	}
	xL, xU, gL, gU, x, g, multG := cf(n), cf(n), cf(m), cf(m), cf(n), cf(m), cf(m)
	for _, ptr := range []*C.Number{xL, xU, gL, gU, x, g, multG} {
		defer C.free(unsafe.Pointer(ptr))
	}
	sl := func(ptr *C.Number, k int) []float64 { return unsafe.Slice((*float64)(unsafe.Pointer(ptr)), k) }
	for i := range n {
		sl(xL, n)[i], sl(xU, n)[i] = -2e19, 2e19 // IPOPT's ±infinity
	}
	clear(sl(gL, m))
	clear(sl(gU, m))
	copy(sl(x, n), init)

	nlp := C.CreateIpoptProblem(C.Index(n), xL, xU, C.Index(m), gL, gU,
		C.Index(m*n), C.Index(n*(n+1)/2), 0,
		C.Eval_F_CB(C.goEvalF), C.Eval_G_CB(C.goEvalG), C.Eval_Grad_F_CB(C.goEvalGradF),
		C.Eval_Jac_G_CB(C.goEvalJacG), C.Eval_H_CB(C.goEvalH))
	if nlp == nil {
		return nil, fmt.Errorf("ipopt: CreateIpoptProblem failed")
	}
	defer C.FreeIpoptProblem(nlp)
	C.SetIntermediateCallback(nlp, C.Intermediate_CB(C.goIntermediate))
	if err := s.setOptions(nlp); err != nil {
		return nil, err
	}

	h := cgo.NewHandle(pr)
	defer h.Delete()
	ud := (*C.uintptr_t)(C.malloc(C.size_t(unsafe.Sizeof(C.uintptr_t(0)))))
	defer C.free(unsafe.Pointer(ud))
	*ud = C.uintptr_t(h)
	var obj C.Number
	status := C.IpoptSolve(nlp, x, g, &obj, multG, nil, nil, C.UserDataPtr(unsafe.Pointer(ud)))

	res := &solvers.Result{
		Y:          append([]float64(nil), sl(x, n)...),
		Lambda:     append([]float64(nil), sl(multG, m)...),
		Iterations: pr.iterations,
	}
	res.Objective = p.Objective(res.Y)
	c, jac, grad := make([]float64, m), make([]float64, m*n), make([]float64, n)
	p.Constraints(res.Y, c, jac)
	p.Grad(res.Y, grad)
	for i := range m {
		floats.AddScaled(grad, res.Lambda[i], jac[i*n:(i+1)*n])
	}
	res.MaxViolation = floats.Norm(c, math.Inf(1))
	res.Stationarity = floats.Norm(grad, math.Inf(1))
	switch status {
	case C.Solve_Succeeded, C.Solved_To_Acceptable_Level:
		res.Status = solvers.Success
	case C.Maximum_Iterations_Exceeded:
		res.Status = solvers.IterationLimit
	case C.Restoration_Failed, C.Search_Direction_Becomes_Too_Small:
		res.Status = solvers.LineSearchFailure
	default:
		res.Status = solvers.NumericalFailure
	}
	res.Runtime = time.Since(start)
	return res, nil
}

// setOptions passes the Solver's fields to IPOPT: print_level, sb = yes
// (no banner), and tol and max_iter when they are set.
func (s Solver) setOptions(nlp C.IpoptProblem) error {
	str := func(key, val string) C.Bool {
		k, v := C.CString(key), C.CString(val)
		defer C.free(unsafe.Pointer(k))
		defer C.free(unsafe.Pointer(v))
		return C.AddIpoptStrOption(nlp, k, v)
	}
	num := func(key string, val float64) C.Bool {
		k := C.CString(key)
		defer C.free(unsafe.Pointer(k))
		return C.AddIpoptNumOption(nlp, k, C.Number(val))
	}
	integer := func(key string, val int) C.Bool {
		k := C.CString(key)
		defer C.free(unsafe.Pointer(k))
		return C.AddIpoptIntOption(nlp, k, C.Int(val))
	}
	if integer("print_level", s.PrintLevel) == 0 {
		return fmt.Errorf("ipopt: option %q rejected", "print_level")
	}
	if str("sb", "yes") == 0 {
		return fmt.Errorf("ipopt: option %q rejected", "sb")
	}
	if s.Tol > 0 && num("tol", s.Tol) == 0 {
		return fmt.Errorf("ipopt: option %q rejected", "tol")
	}
	if s.MaxIterations > 0 && integer("max_iter", s.MaxIterations) == 0 {
		return fmt.Errorf("ipopt: option %q rejected", "max_iter")
	}
	if s.ConstrViolTol > 0 && num("constr_viol_tol", s.ConstrViolTol) == 0 {
		return fmt.Errorf("ipopt: option %q rejected", "constr_viol_tol")
	}
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := s.Options[k]
		if i, err := strconv.Atoi(v); err == nil && integer(k, i) != 0 {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && num(k, f) != 0 {
			continue
		}
		if str(k, v) == 0 {
			return fmt.Errorf("ipopt: option %q = %q rejected", k, v)
		}
	}
	return nil
}

// checkFields returns an error for invalid Solver fields.
func (s Solver) checkFields() error {
	switch {
	case math.IsNaN(s.Tol) || math.IsInf(s.Tol, 0) || s.Tol < 0:
		return fmt.Errorf("ipopt: Solver.Tol = %v, want a finite value ≥ 0 (0 means IPOPT's default)", s.Tol)
	case s.MaxIterations < 0:
		return fmt.Errorf("ipopt: Solver.MaxIterations = %d, want ≥ 0 (0 means IPOPT's default)", s.MaxIterations)
	case math.IsNaN(s.ConstrViolTol) || math.IsInf(s.ConstrViolTol, 0) || s.ConstrViolTol < 0:
		return fmt.Errorf("ipopt: Solver.ConstrViolTol = %v, want a finite value ≥ 0 (0 means IPOPT's default)", s.ConstrViolTol)
	}
	return nil
}

// fromUD returns the problem behind a user-data pointer.
func fromUD(ud C.UserDataPtr) *problem {
	return cgo.Handle(*(*C.uintptr_t)(ud)).Value().(*problem)
}

func numbers(ptr *C.Number, k int) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(ptr)), k)
}

func indices(ptr *C.Index, k int) []C.Index { return unsafe.Slice(ptr, k) }

func ok(v ...float64) C.Bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
	}
	return 1
}

//export goEvalF
func goEvalF(n C.Index, x *C.Number, newX C.Bool, obj *C.Number, ud C.UserDataPtr) C.Bool {
	f := fromUD(ud).p.Objective(numbers(x, int(n)))
	*obj = C.Number(f)
	return ok(f)
}

//export goEvalGradF
func goEvalGradF(n C.Index, x *C.Number, newX C.Bool, grad *C.Number, ud C.UserDataPtr) C.Bool {
	g := numbers(grad, int(n))
	fromUD(ud).p.Grad(numbers(x, int(n)), g)
	return ok(g...)
}

//export goEvalG
func goEvalG(n C.Index, x *C.Number, newX C.Bool, m C.Index, g *C.Number, ud C.UserDataPtr) C.Bool {
	if m == 0 {
		return 1
	}
	c := numbers(g, int(m))
	fromUD(ud).p.Constraints(numbers(x, int(n)), c, nil)
	return ok(c...)
}

//export goEvalJacG
func goEvalJacG(n C.Index, x *C.Number, newX C.Bool, m C.Index, nele C.Index, iRow, jCol *C.Index, values *C.Number, ud C.UserDataPtr) C.Bool {
	if nele == 0 {
		return 1
	}
	if values == nil { // structure: dense, row-major
		rows, cols := indices(iRow, int(nele)), indices(jCol, int(nele))
		for i := range int(m) {
			for k := range int(n) {
				rows[i*int(n)+k], cols[i*int(n)+k] = C.Index(i), C.Index(k)
			}
		}
		return 1
	}
	pr := fromUD(ud)
	jac := numbers(values, int(nele))
	pr.p.Constraints(numbers(x, int(n)), pr.zero, jac)
	return ok(jac...)
}

//export goEvalH
func goEvalH(n C.Index, x *C.Number, newX C.Bool, objFactor C.Number, m C.Index, lambda *C.Number, newLambda C.Bool, nele C.Index, iRow, jCol *C.Index, values *C.Number, ud C.UserDataPtr) C.Bool {
	nn := int(n)
	if values == nil { // structure: lower triangle, row by row
		rows, cols := indices(iRow, int(nele)), indices(jCol, int(nele))
		e := 0
		for r := range nn {
			for c := 0; c <= r; c++ {
				rows[e], cols[e] = C.Index(r), C.Index(c)
				e++
			}
		}
		return 1
	}
	pr := fromUD(ud)
	y := numbers(x, nn)
	lam := make([]float64, int(m))
	if m > 0 {
		copy(lam, numbers(lambda, int(m)))
	}
	sigma := float64(objFactor)
	// IPOPT asks for σ∇²f + Σλ_i∇²c_i; NLP.Hessian gives ∇²f + Σλ_i∇²c_i.
	if sigma != 0 {
		floats.Scale(1/sigma, lam)
		pr.p.Hessian(y, lam, pr.hess)
		floats.Scale(sigma, pr.hess)
	} else {
		pr.p.Hessian(y, lam, pr.hess)
		clear(lam)
		pr.p.Hessian(y, lam, pr.tmp)
		floats.Sub(pr.hess, pr.tmp)
	}
	v := numbers(values, int(nele))
	e := 0
	for r := range nn {
		for c := 0; c <= r; c++ {
			v[e] = pr.hess[r*nn+c]
			e++
		}
	}
	return ok(v...)
}

//export goIntermediate
func goIntermediate(algMod, iter C.Index, obj, infPr, infDu, barrier, dNorm, reg, alphaDu, alphaPr C.Number, lsTrials C.Index, ud C.UserDataPtr) C.Bool {
	fromUD(ud).iterations = int(iter)
	return 1
}
