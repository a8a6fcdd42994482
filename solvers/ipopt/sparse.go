//go:build ipopt

package ipopt

/*
#cgo pkg-config: ipopt
#include <stdint.h>
#include <stdlib.h>
#include <IpStdCInterface.h>

extern Bool goSparseEvalF(Index n, Number* x, Bool new_x, Number* obj, UserDataPtr ud);
extern Bool goSparseEvalGradF(Index n, Number* x, Bool new_x, Number* grad, UserDataPtr ud);
extern Bool goSparseEvalG(Index n, Number* x, Bool new_x, Index m, Number* g, UserDataPtr ud);
extern Bool goSparseEvalJacG(Index n, Number* x, Bool new_x, Index m, Index nele, Index* iRow, Index* jCol, Number* values, UserDataPtr ud);
extern Bool goSparseEvalH(Index n, Number* x, Bool new_x, Number obj_factor, Index m, Number* lambda, Bool new_lambda, Index nele, Index* iRow, Index* jCol, Number* values, UserDataPtr ud);
extern Bool goSparseIntermediate(Index alg_mod, Index iter_count, Number obj_value, Number inf_pr, Number inf_du, Number mu, Number d_norm, Number regularization_size, Number alpha_du, Number alpha_pr, Index ls_trials, UserDataPtr ud);
*/
import "C"

import (
	"fmt"
	"math"
	"runtime/cgo"
	"time"
	"unsafe"

	"github.com/enforce-nn/enforce/solvers"
)

// sparseProblem is what the sparse callbacks see through the user-data
// pointer.
type sparseProblem struct {
	p          *solvers.SparseNLP
	iterations int
}

// ipoptInf is IPOPT's default magnitude for an infinite bound
// (nlp_lower_bound_inf = −1e19, nlp_upper_bound_inf = 1e19).
const ipoptInf = 2e19

// SolveSparse runs IPOPT on p from init with p's sparse first and second
// derivatives, bounds and inequality constraints, and returns the result
// with the status mapped as by Solve. Lambda holds the multipliers of the
// M constraints, MaxViolation is p.Violation at Y, and Stationarity is
// ‖∇f + Jᵀλ − z_L + z_U‖∞ with IPOPT's bound multipliers z_L, z_U, all
// recomputed in Go at the returned point. FuncEvals is not counted (0).
// It returns an error for a malformed problem (SparseNLP.Validate), for
// invalid Solver fields or if IPOPT rejects an option. Calls are
// serialised, as for Solve.
func (s Solver) SolveSparse(p *solvers.SparseNLP, init []float64) (*solvers.Result, error) {
	if err := p.Validate(init); err != nil {
		return nil, fmt.Errorf("ipopt: %w", err)
	}
	if err := s.checkFields(); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	start := time.Now()
	n, m := p.N, p.M
	cf := func(k int) *C.Number {
		return (*C.Number)(C.malloc(C.size_t(max(k, 1)) * C.size_t(unsafe.Sizeof(C.Number(0)))))
	}
	xL, xU, gL, gU, x, g, multG, multL, multU := cf(n), cf(n), cf(m), cf(m), cf(n), cf(m), cf(m), cf(n), cf(n)
	for _, ptr := range []*C.Number{xL, xU, gL, gU, x, g, multG, multL, multU} {
		defer C.free(unsafe.Pointer(ptr))
	}
	sl := func(ptr *C.Number, k int) []float64 { return unsafe.Slice((*float64)(unsafe.Pointer(ptr)), k) }
	clip := func(v float64) float64 { return math.Max(-ipoptInf, math.Min(ipoptInf, v)) }
	for i := range n {
		lo, hi := math.Inf(-1), math.Inf(1)
		if p.Lower != nil {
			lo = p.Lower[i]
		}
		if p.Upper != nil {
			hi = p.Upper[i]
		}
		sl(xL, n)[i], sl(xU, n)[i] = clip(lo), clip(hi)
	}
	for i := range m {
		sl(gL, m)[i], sl(gU, m)[i] = clip(p.GLower[i]), clip(p.GUpper[i])
	}
	copy(sl(x, n), init)

	nlp := C.CreateIpoptProblem(C.Index(n), xL, xU, C.Index(m), gL, gU,
		C.Index(len(p.JacRows)), C.Index(len(p.HessRows)), 0,
		C.Eval_F_CB(C.goSparseEvalF), C.Eval_G_CB(C.goSparseEvalG), C.Eval_Grad_F_CB(C.goSparseEvalGradF),
		C.Eval_Jac_G_CB(C.goSparseEvalJacG), C.Eval_H_CB(C.goSparseEvalH))
	if nlp == nil {
		return nil, fmt.Errorf("ipopt: CreateIpoptProblem failed")
	}
	defer C.FreeIpoptProblem(nlp)
	C.SetIntermediateCallback(nlp, C.Intermediate_CB(C.goSparseIntermediate))
	if err := s.setOptions(nlp); err != nil {
		return nil, err
	}
	pr := &sparseProblem{p: p}
	h := cgo.NewHandle(pr)
	defer h.Delete()
	ud := (*C.uintptr_t)(C.malloc(C.size_t(unsafe.Sizeof(C.uintptr_t(0)))))
	defer C.free(unsafe.Pointer(ud))
	*ud = C.uintptr_t(h)
	var obj C.Number
	status := C.IpoptSolve(nlp, x, g, &obj, multG, multL, multU, C.UserDataPtr(unsafe.Pointer(ud)))

	res := &solvers.Result{
		Y:          append([]float64(nil), sl(x, n)...),
		Lambda:     append([]float64(nil), sl(multG, m)...),
		Iterations: pr.iterations,
	}
	res.Objective = p.Objective(res.Y)
	res.MaxViolation = p.Violation(res.Y, nil)
	grad, jac := make([]float64, n), make([]float64, len(p.JacRows))
	p.Grad(res.Y, grad)
	p.Jacobian(res.Y, jac)
	for e, r := range p.JacRows {
		grad[p.JacCols[e]] += res.Lambda[r] * jac[e]
	}
	zl, zu := sl(multL, n), sl(multU, n)
	for i := range n {
		res.Stationarity = math.Max(res.Stationarity, math.Abs(grad[i]-zl[i]+zu[i]))
	}
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

// sparseFromUD returns the problem behind a user-data pointer.
func sparseFromUD(ud C.UserDataPtr) *sparseProblem {
	return cgo.Handle(*(*C.uintptr_t)(ud)).Value().(*sparseProblem)
}

//export goSparseEvalF
func goSparseEvalF(n C.Index, x *C.Number, newX C.Bool, obj *C.Number, ud C.UserDataPtr) C.Bool {
	f := sparseFromUD(ud).p.Objective(numbers(x, int(n)))
	*obj = C.Number(f)
	return ok(f)
}

//export goSparseEvalGradF
func goSparseEvalGradF(n C.Index, x *C.Number, newX C.Bool, grad *C.Number, ud C.UserDataPtr) C.Bool {
	g := numbers(grad, int(n))
	sparseFromUD(ud).p.Grad(numbers(x, int(n)), g)
	return ok(g...)
}

//export goSparseEvalG
func goSparseEvalG(n C.Index, x *C.Number, newX C.Bool, m C.Index, g *C.Number, ud C.UserDataPtr) C.Bool {
	if m == 0 {
		return 1
	}
	c := numbers(g, int(m))
	sparseFromUD(ud).p.Constraints(numbers(x, int(n)), c)
	return ok(c...)
}

// putIndices writes a triplet structure (rows, cols) into IPOPT's iRow and
// jCol arrays.
func putIndices(iRow, jCol *C.Index, rows, cols []int) {
	ir, jc := indices(iRow, len(rows)), indices(jCol, len(cols))
	for e := range rows {
		ir[e], jc[e] = C.Index(rows[e]), C.Index(cols[e])
	}
}

//export goSparseEvalJacG
func goSparseEvalJacG(n C.Index, x *C.Number, newX C.Bool, m C.Index, nele C.Index, iRow, jCol *C.Index, values *C.Number, ud C.UserDataPtr) C.Bool {
	if nele == 0 {
		return 1
	}
	p := sparseFromUD(ud).p
	if values == nil {
		putIndices(iRow, jCol, p.JacRows, p.JacCols)
		return 1
	}
	v := numbers(values, int(nele))
	p.Jacobian(numbers(x, int(n)), v)
	return ok(v...)
}

//export goSparseEvalH
func goSparseEvalH(n C.Index, x *C.Number, newX C.Bool, objFactor C.Number, m C.Index, lambda *C.Number, newLambda C.Bool, nele C.Index, iRow, jCol *C.Index, values *C.Number, ud C.UserDataPtr) C.Bool {
	if nele == 0 {
		return 1
	}
	p := sparseFromUD(ud).p
	if values == nil {
		putIndices(iRow, jCol, p.HessRows, p.HessCols)
		return 1
	}
	var lam []float64
	if m > 0 {
		lam = numbers(lambda, int(m))
	}
	v := numbers(values, int(nele))
	p.Hessian(numbers(x, int(n)), float64(objFactor), lam, v)
	return ok(v...)
}

//export goSparseIntermediate
func goSparseIntermediate(algMod, iter C.Index, obj, infPr, infDu, barrier, dNorm, reg, alphaDu, alphaPr C.Number, lsTrials C.Index, ud C.UserDataPtr) C.Bool {
	sparseFromUD(ud).iterations = int(iter)
	return 1
}
