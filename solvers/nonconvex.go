package solvers

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/problems"
)

// Linear returns the instance of p for input x (length N_C) as an NLP:
//
//	min_y ½yᵀQy + pᵀ sin y   s.t.   Cy − x = 0,
//
// with the exact Hessian of the Lagrangian, diag(Q − p ⊙ sin y) (the
// constraints are affine). It panics if len(x) ≠ N_C.
func Linear(p *problems.NonconvexLinear, x []float64) NLP {
	checkX("Linear", x, p.NC)
	x = append([]float64(nil), x...)
	eq := p.Equalities()
	return NLP{
		N: p.NO, M: p.NC,
		Objective:   func(y []float64) float64 { return p.Objective(nil, y) },
		Grad:        func(y, grad []float64) { p.ObjectiveGrad(nil, y, grad) },
		Constraints: func(y, c, jac []float64) { eq.Eval(x, y, c, jac) },
		Hessian: func(y, _, hess []float64) {
			clear(hess)
			objectiveHessian(p.SineQuadratic, y, hess)
		},
	}
}

// Quadratic returns the instance of p for input x (length N_C) as an NLP:
//
//	min_y ½yᵀQy + pᵀ sin y   s.t.   yᵀA_i y + C_i·y + d_i − x_i³ = 0,
//
// with the exact Hessian of the Lagrangian,
// diag(Q − p ⊙ sin y) + 2Σ_i λ_i A_i. It panics if len(x) ≠ N_C.
func Quadratic(p *problems.NonconvexQuadratic, x []float64) NLP {
	checkX("Quadratic", x, p.NC)
	x = append([]float64(nil), x...)
	eq := p.Equalities()
	n := p.NO
	a := make([][]float64, len(p.A))
	for i, ai := range p.A {
		a[i] = ai.RawSymmetric().Data // upper triangle valid, row stride n
	}
	return NLP{
		N: n, M: p.NC,
		Objective:   func(y []float64) float64 { return p.Objective(nil, y) },
		Grad:        func(y, grad []float64) { p.ObjectiveGrad(nil, y, grad) },
		Constraints: func(y, c, jac []float64) { eq.Eval(x, y, c, jac) },
		Hessian: func(y, lambda, hess []float64) {
			clear(hess)
			for i, ai := range a {
				w := 2 * lambda[i]
				if w == 0 {
					continue
				}
				for r := range n {
					row, src := hess[r*n+r:(r+1)*n], ai[r*n+r:(r+1)*n]
					for k, v := range src {
						row[k] += w * v
					}
				}
			}
			for r := range n {
				for k := r + 1; k < n; k++ {
					hess[k*n+r] = hess[r*n+k]
				}
			}
			objectiveHessian(p.SineQuadratic, y, hess)
		},
	}
}

// objectiveHessian adds ∇²f(y) = diag(Q − p ⊙ sin y) to hess.
func objectiveHessian(o problems.SineQuadratic, y, hess []float64) {
	n := len(y)
	for k, yk := range y {
		hess[k*n+k] += o.Q[k] - o.P[k]*math.Sin(yk)
	}
}

// LeastNormStart returns the Gauss–Newton step from the origin,
// y₀ = −J(0)ᵀ(J(0)J(0)ᵀ)⁻¹c(0), the starting point DC3's optimiser
// baseline uses for linear equalities (y₀ = C⁺x). It is feasible for
// both nonconvex benchmarks: for Linear because the constraints are
// affine, for Quadratic because the quadratic terms live on null(C) and
// the step lies in range(Cᵀ) (see problems.NewNonconvexQuadratic). It
// returns an error if J(0) does not have full row rank.
func LeastNormStart(p NLP) ([]float64, error) {
	y0 := make([]float64, p.N) // the origin, then the step from it
	c, jac := make([]float64, p.M), make([]float64, p.M*p.N)
	p.Constraints(y0, c, jac)
	if p.M == 0 {
		return y0, nil
	}
	j := mat.NewDense(p.M, p.N, jac)
	var g mat.SymDense
	g.SymOuterK(1, j)
	var chol mat.Cholesky
	if !chol.Factorize(&g) {
		return nil, fmt.Errorf("solvers: LeastNormStart: J(0)J(0)ᵀ is not positive definite")
	}
	var mu mat.VecDense
	if err := chol.SolveVecTo(&mu, mat.NewVecDense(p.M, c)); err != nil {
		return nil, fmt.Errorf("solvers: LeastNormStart: %w", err)
	}
	y := mat.NewVecDense(p.N, y0)
	y.MulVec(j.T(), &mu)
	y.ScaleVec(-1, y)
	return y0, nil
}

func checkX(where string, x []float64, nc int) {
	if len(x) != nc {
		panic(fmt.Sprintf("solvers: %s: len(x) = %d, want N_C = %d", where, len(x), nc))
	}
}
