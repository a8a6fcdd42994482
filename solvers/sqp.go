package solvers

import (
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// NLP is a smooth equality-constrained nonlinear programme
//
//	min_y f(y)   s.t.   c(y) = 0,   y ∈ ℝ^N, c(y) ∈ ℝ^M,
//
// given by callbacks. Every callback writes into slices the caller owns.
type NLP struct {
	// N is the number of variables and M the number of equalities
	// (0 ≤ M ≤ N).
	N, M int
	// Objective returns f(y).
	Objective func(y []float64) float64
	// Grad writes ∇f(y) (length N) into grad.
	Grad func(y, grad []float64)
	// Constraints writes c(y) (length M) into c and, when jac is not nil,
	// the Jacobian ∂c/∂y (M×N, row-major) into jac.
	Constraints func(y, c, jac []float64)
	// Hessian writes the Hessian of the Lagrangian,
	// ∇²f(y) + Σ_i λ_i ∇²c_i(y) (N×N, row-major, both triangles), into
	// hess.
	Hessian func(y, lambda, hess []float64)
}

// validate reports a malformed NLP or starting point.
func (p NLP) validate(init []float64) error {
	switch {
	case p.N < 1 || p.M < 0 || p.M > p.N:
		return fmt.Errorf("solvers: N = %d, M = %d, want 0 ≤ M ≤ N, N ≥ 1", p.N, p.M)
	case p.Objective == nil || p.Grad == nil || p.Constraints == nil || p.Hessian == nil:
		return errors.New("solvers: NLP needs Objective, Grad, Constraints and Hessian")
	case len(init) != p.N:
		return fmt.Errorf("solvers: starting point has length %d, want %d", len(init), p.N)
	}
	for _, v := range init {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("solvers: starting point is not finite")
		}
	}
	return nil
}

// Status says how a solve ended.
type Status int

const (
	// Success: the first-order optimality conditions hold to the
	// tolerances of Settings.
	Success Status = iota
	// IterationLimit: Settings.MaxIterations were taken first.
	IterationLimit
	// LineSearchFailure: no step decreased the merit function (or three
	// steps in a row decreased it by no more than rounding); the point
	// returned is the last accepted one, and Result's Stationarity and
	// MaxViolation say how far from Tol and FeasTol it is.
	LineSearchFailure
	// NumericalFailure: the constraint Jacobian lost rank, or the
	// problem's callbacks returned non-finite values.
	NumericalFailure
)

var statusNames = [...]string{Success: "Success", IterationLimit: "IterationLimit",
	LineSearchFailure: "LineSearchFailure", NumericalFailure: "NumericalFailure"}

// String returns the status's name.
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Defaults used for zero fields of Settings.
const (
	// DefaultTol bounds the stationarity ‖∇f + Jᵀλ‖∞ at a solution.
	DefaultTol = 1e-8
	// DefaultFeasTol bounds max|c| at a solution.
	DefaultFeasTol = 1e-9
	// DefaultMaxIterations bounds the SQP iterations.
	DefaultMaxIterations = 1000
)

// Settings configures Solve. The zero value means the defaults: a zero
// field means its default. Solve returns an error for a field that is
// negative, NaN or infinite.
type Settings struct {
	// Tol is the stationarity tolerance on ‖∇f + Jᵀλ‖∞ with least-squares
	// multipliers λ (default DefaultTol).
	Tol float64
	// FeasTol is the feasibility tolerance on max|c| (default
	// DefaultFeasTol).
	FeasTol float64
	// MaxIterations bounds the iterations (default DefaultMaxIterations).
	MaxIterations int
}

// resolve validates s (nil means the zero value) and returns it with
// defaults in place of zero fields.
func (s *Settings) resolve() (Settings, error) {
	var r Settings
	if s != nil {
		r = *s
	}
	for _, f := range []struct {
		name string
		v    *float64
		def  float64
	}{{"Tol", &r.Tol, DefaultTol}, {"FeasTol", &r.FeasTol, DefaultFeasTol}} {
		switch {
		case math.IsNaN(*f.v) || math.IsInf(*f.v, 0) || *f.v < 0:
			return r, fmt.Errorf("solvers: Settings.%s = %v, want a finite value ≥ 0 (0 means the default %v)", f.name, *f.v, f.def)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	switch {
	case r.MaxIterations < 0:
		return r, fmt.Errorf("solvers: Settings.MaxIterations = %d, want ≥ 0 (0 means the default %d)", r.MaxIterations, DefaultMaxIterations)
	case r.MaxIterations == 0:
		r.MaxIterations = DefaultMaxIterations
	}
	return r, nil
}

// Result is the outcome of a solve.
type Result struct {
	// Y is the final point and Lambda its multipliers (∇f + Jᵀλ ≈ 0).
	Y, Lambda []float64
	// Objective is f(Y), MaxViolation max_i |c_i(Y)| and Stationarity
	// ‖∇f(Y) + J(Y)ᵀλ‖∞.
	Objective, MaxViolation, Stationarity float64
	// Iterations counts the steps taken, FuncEvals the evaluations of f and c.
	Iterations, FuncEvals int
	// Status says how the solve ended.
	Status Status
	// Runtime is the wall-clock time of the solve.
	Runtime time.Duration
}

// Solve finds a local minimum of p from init by sequential quadratic
// programming in the null space of the constraint Jacobian, with the
// exact Hessian of the Lagrangian and an ℓ₁ merit line search.
//
// Each iteration factors Jᵀ = [Q₁ Q₂][R; 0] (Householder QR), takes the
// least-norm step p_r = −Q₁R⁻ᵀc towards c = 0 and a Newton step
// p_z = −H̃⁻¹Q₂ᵀ(∇f + H p_r) in the null space, where H is the Hessian of
// the Lagrangian and H̃ the reduced Hessian Q₂ᵀHQ₂ if it is positive
// definite; otherwise H̃ has the eigenvalues θ of Q₂ᵀHQ₂ replaced by
// max(|θ|, 10⁻²·max|θ|). So d = p_r + Q₂p_z is a descent direction of the
// merit function φ = f + μ‖c‖₁ for a large enough μ, chosen as in Nocedal
// & Wright, eq. 18.36. ‖p_z‖₂ is capped at
// 10·(1 + ‖y‖₂). Steps t = 1, ½, ¼, … are tried with Armijo's rule on
// φ, each at y + td and, if that fails, with the second-order correction
// −Q₁R⁻ᵀc(y + td) added.
//
// It stops with Success when max|c| ≤ FeasTol and ‖∇f + Jᵀλ‖∞ ≤ Tol with
// least-squares multipliers λ. Near a nondegenerate local minimum the
// iterates converge quadratically. It returns an error only for a
// malformed problem, starting point or Settings; numerical trouble is a
// Status.
func Solve(p NLP, init []float64, settings *Settings) (*Result, error) {
	if err := p.validate(init); err != nil {
		return nil, err
	}
	s, err := settings.resolve()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	w := newWorkspace(p)
	copy(w.y, init)
	res := &Result{Y: w.y, Lambda: w.lambda}
	defer func() { res.Runtime = time.Since(start) }()

	if !w.evaluate(res) {
		res.Status = NumericalFailure
		return res, nil
	}
	mu := 0.0
	stalled := 0 // consecutive steps that left the merit unchanged to rounding
	for {
		if !w.factor() {
			res.Status = NumericalFailure
			return res, nil
		}
		w.leastSquaresMultipliers(w.g, w.lambda)
		res.Stationarity = w.stationarity()
		res.Objective, res.MaxViolation = w.f, floats.Norm(w.c, math.Inf(1))
		if res.MaxViolation <= s.FeasTol && res.Stationarity <= s.Tol {
			res.Status = Success
			return res, nil
		}
		if stalled >= 3 {
			res.Status = LineSearchFailure
			return res, nil
		}
		if res.Iterations >= s.MaxIterations {
			res.Status = IterationLimit
			return res, nil
		}
		res.Iterations++
		if !w.direction() {
			res.Status = NumericalFailure
			return res, nil
		}
		mu = math.Max(mu, w.penalty())
		phi0 := w.f + mu*floats.Norm(w.c, 1)
		phi, ok := w.lineSearch(mu, res)
		if !ok {
			res.Status = LineSearchFailure
			return res, nil
		}
		// A step the line search accepts but that changes the merit by no
		// more than its rounding makes no progress: after three in a row
		// the point cannot be improved (typically a stationarity a little
		// above Tol at a nearly singular reduced Hessian), so the next
		// check stops there, with Success if the point meets the
		// tolerances and LineSearchFailure otherwise, rather than spend
		// the remaining iterations.
		if phi0-phi <= 64*epsilon*math.Max(math.Abs(phi0), 1) {
			stalled++
		} else {
			stalled = 0
		}
		copy(w.lambda, w.lambdaNext)
		if !w.evaluate(res) {
			res.Status = NumericalFailure
			return res, nil
		}
	}
}

// workspace holds the iterate and the buffers of one solve.
type workspace struct {
	p    NLP
	n, m int

	y, trial, soc      []float64
	f                  float64
	g, c, jac, hess    []float64
	lambda, lambdaNext []float64
	d, tmpN, tmpM, cT  []float64

	q1, q2 *mat.Dense // orthonormal bases of range(Jᵀ) and null(J)
	r      *mat.Dense // M×M upper triangular: Jᵀ = Q₁R
}

func newWorkspace(p NLP) *workspace {
	n, m := p.N, p.M
	return &workspace{
		p: p, n: n, m: m,
		y: make([]float64, n), trial: make([]float64, n), soc: make([]float64, n),
		g: make([]float64, n), c: make([]float64, m), jac: make([]float64, m*n), hess: make([]float64, n*n),
		lambda: make([]float64, m), lambdaNext: make([]float64, m),
		d: make([]float64, n), tmpN: make([]float64, n), tmpM: make([]float64, m), cT: make([]float64, m),
	}
}

// evaluate computes f, ∇f, c and J at y; false if any is not finite.
func (w *workspace) evaluate(res *Result) bool {
	res.FuncEvals++
	w.f = w.p.Objective(w.y)
	w.p.Grad(w.y, w.g)
	w.p.Constraints(w.y, w.c, w.jac)
	return finite(w.f) && allFinite(w.g) && allFinite(w.c) && allFinite(w.jac)
}

// factor computes Q₁, Q₂ and R from Jᵀ; false if J is numerically rank
// deficient.
func (w *workspace) factor() bool {
	n, m := w.n, w.m
	if m == 0 {
		w.q2 = identity(n)
		return true
	}
	jt := mat.NewDense(n, m, nil)
	jt.Copy(mat.NewDense(m, n, w.jac).T())
	var qr mat.QR
	qr.Factorize(jt)
	var q, r mat.Dense
	qr.QTo(&q)
	qr.RTo(&r)
	w.q1 = mat.DenseCopyOf(q.Slice(0, n, 0, m))
	if m < n {
		w.q2 = mat.DenseCopyOf(q.Slice(0, n, m, n))
	} else {
		w.q2 = nil
	}
	w.r = mat.DenseCopyOf(r.Slice(0, m, 0, m))
	maxDiag := 0.0
	for i := range m {
		maxDiag = math.Max(maxDiag, math.Abs(w.r.At(i, i)))
	}
	for i := range m {
		if !(math.Abs(w.r.At(i, i)) > 1e-13*maxDiag) {
			return false
		}
	}
	return true
}

// leastSquaresMultipliers writes the λ minimising ‖v + Jᵀλ‖₂ into dst:
// Rλ = −Q₁ᵀv.
func (w *workspace) leastSquaresMultipliers(v, dst []float64) {
	if w.m == 0 {
		return
	}
	rhs := mat.NewVecDense(w.m, w.tmpM)
	rhs.MulVec(w.q1.T(), mat.NewVecDense(w.n, v))
	rhs.ScaleVec(-1, rhs)
	solveUpper(w.r, w.tmpM, dst)
}

// stationarity returns ‖∇f + Jᵀλ‖∞.
func (w *workspace) stationarity() float64 {
	copy(w.tmpN, w.g)
	for i := range w.m {
		floats.AddScaled(w.tmpN, w.lambda[i], w.jac[i*w.n:(i+1)*w.n])
	}
	return floats.Norm(w.tmpN, math.Inf(1))
}

// rangeStep writes −Q₁R⁻ᵀc into dst.
func (w *workspace) rangeStep(c, dst []float64) {
	clear(dst)
	if w.m == 0 {
		return
	}
	solveLowerT(w.r, c, w.tmpM) // Rᵀz = c
	v := mat.NewVecDense(w.n, dst)
	v.MulVec(w.q1, mat.NewVecDense(w.m, w.tmpM))
	v.ScaleVec(-1, v)
}

// direction computes the SQP step d and the QP multipliers lambdaNext at
// the current point; false if the Hessian is not finite.
func (w *workspace) direction() bool {
	n := w.n
	w.p.Hessian(w.y, w.lambda, w.hess)
	if !allFinite(w.hess) {
		return false
	}
	h := mat.NewDense(n, n, w.hess)
	w.rangeStep(w.c, w.d)
	if w.q2 != nil {
		k := n - w.m
		// Reduced gradient Q₂ᵀ(∇f + H p_r).
		hp := mat.NewVecDense(n, w.tmpN)
		hp.MulVec(h, mat.NewVecDense(n, w.d))
		hp.AddVec(hp, mat.NewVecDense(n, w.g))
		var rg mat.VecDense
		rg.MulVec(w.q2.T(), hp)
		var hq mat.Dense
		hq.Mul(h, w.q2)
		hz := mat.NewSymDense(k, nil)

		var hzd mat.Dense
		hzd.Mul(w.q2.T(), &hq)
		for i := range k {
			for j := i; j < k; j++ {
				hz.SetSym(i, j, 0.5*(hzd.At(i, j)+hzd.At(j, i)))
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(hz, true) {
			return false
		}
		vals := eig.Values(nil)
		var vecs mat.Dense
		eig.VectorsTo(&vecs)
		// A positive definite reduced Hessian is used as it is (Newton's
		// step); otherwise its eigenvalues θ become max(|θ|, floor).
		floor, big := 1e-8, 0.0
		for _, v := range vals {
			big = math.Max(big, math.Abs(v))
		}
		if vals[0] <= 1e-8*big {
			floor = math.Max(floor, minEigenRatio*big)
		}
		// p_z = −V diag(1/max(|θ_i|, floor)) Vᵀ rg.
		var coef mat.VecDense
		coef.MulVec(vecs.T(), &rg)
		for i, v := range vals {
			coef.SetVec(i, coef.AtVec(i)/math.Max(math.Abs(v), floor))
		}
		var pz mat.VecDense
		pz.MulVec(&vecs, &coef)
		if limit := maxStepRatio * (1 + floats.Norm(w.y, 2)); pz.Norm(2) > limit {
			pz.ScaleVec(limit/pz.Norm(2), &pz)
		}
		dv := mat.NewVecDense(n, w.d)
		var qp mat.VecDense
		qp.MulVec(w.q2, &pz)
		dv.SubVec(dv, &qp)
	}
	// QP multipliers: least squares on ∇f + Hd + Jᵀλ = 0.
	hd := make([]float64, n)
	mat.NewVecDense(n, hd).MulVec(h, mat.NewVecDense(n, w.d))
	floats.Add(hd, w.g)
	w.leastSquaresMultipliers(hd, w.lambdaNext)
	return allFinite(w.d) && allFinite(w.lambdaNext)
}

// penalty returns the smallest ℓ₁ penalty weight for which d is a
// descent direction of the merit function with a margin (Nocedal &
// Wright, Numerical Optimization, eq. 18.36 with ρ = 0.1):
// max(1.1‖λ‖∞, (∇fᵀd + ½max(dᵀHd, 0))/(0.9‖c‖₁)) + 1e-6.
func (w *workspace) penalty() float64 {
	mu := 1.1 * floats.Norm(w.lambdaNext, math.Inf(1))
	if c1 := floats.Norm(w.c, 1); c1 > 0 {
		hd := mat.NewVecDense(w.n, w.tmpN)
		hd.MulVec(mat.NewDense(w.n, w.n, w.hess), mat.NewVecDense(w.n, w.d))
		curv := math.Max(floats.Dot(w.d, w.tmpN), 0)
		mu = math.Max(mu, (floats.Dot(w.g, w.d)+0.5*curv)/(0.9*c1))
	}
	return mu + 1e-6
}

// merit evaluates φ = f + μ‖c‖₁ at y; NaN if not finite.
func (w *workspace) merit(y []float64, mu float64, res *Result) float64 {
	res.FuncEvals++
	f := w.p.Objective(y)
	w.p.Constraints(y, w.cT, nil)
	phi := f + mu*floats.Norm(w.cT, 1)
	if !finite(phi) {
		return math.NaN()
	}
	return phi
}

// lineSearch moves y along d (with a second-order correction if the full
// step fails) and returns the merit at the new y; false if no acceptable
// step was found.
func (w *workspace) lineSearch(mu float64, res *Result) (float64, bool) {
	phi0 := w.f + mu*floats.Norm(w.c, 1)
	slope := floats.Dot(w.g, w.d) - mu*floats.Norm(w.c, 1)
	if slope >= 0 {
		// Not a descent direction for the merit function (rounding at a
		// near-solution): accept a tiny step only if it helps.
		slope = -1e-12 * math.Abs(phi0)
	}
	const armijo = 1e-4
	for t := 1.0; t > 1e-12; t *= 0.5 {
		floats.AddScaledTo(w.trial, w.y, t, w.d)
		if phi := w.merit(w.trial, mu, res); phi <= phi0+armijo*t*slope {
			copy(w.y, w.trial)
			return phi, true
		}
		// Second-order correction with the constraint values at the trial
		// point (left in cT by merit).
		w.rangeStep(w.cT, w.soc)
		floats.Add(w.soc, w.trial)
		if phi := w.merit(w.soc, mu, res); phi <= phi0+armijo*t*slope {
			copy(w.y, w.soc)
			return phi, true
		}
	}
	return phi0, false
}

// solveUpper solves Rx = b for upper-triangular R (M×M).
func solveUpper(r *mat.Dense, b, x []float64) {
	m := len(b)
	for i := m - 1; i >= 0; i-- {
		s := b[i]
		for j := i + 1; j < m; j++ {
			s -= r.At(i, j) * x[j]
		}
		x[i] = s / r.At(i, i)
	}
}

// solveLowerT solves Rᵀx = b for upper-triangular R (M×M).
func solveLowerT(r *mat.Dense, b, x []float64) {
	m := len(b)
	for i := range m {
		s := b[i]
		for j := range i {
			s -= r.At(j, i) * x[j]
		}
		x[i] = s / r.At(i, i)
	}
}

func identity(n int) *mat.Dense {
	id := mat.NewDense(n, n, nil)
	for i := range n {
		id.Set(i, i, 1)
	}
	return id
}

// epsilon is the float64 machine epsilon.
const epsilon = 0x1p-52

// minEigenRatio bounds the eigenvalues of an indefinite reduced Hessian
// below, relative to the largest in magnitude, and maxStepRatio bounds the null-space step
// relative to 1 + ‖y‖₂.
const (
	minEigenRatio = 1e-2
	maxStepRatio  = 10
)

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func allFinite(v []float64) bool {
	for _, x := range v {
		if !finite(x) {
			return false
		}
	}
	return true
}
