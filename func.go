package enforce

import (
	"errors"
	"fmt"
	"sync"

	"gonum.org/v1/gonum/num/hyperdual"
)

// Func returns the constraint c(x, y) = 0 defined by f, a function of
// x ∈ ℝ^nx and y ∈ ℝ^ny that writes c ∈ ℝ^nc, written as ordinary Go code
// over hyperdual numbers:
//
//	circle, err := enforce.Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
//		// c = y₁² + y₂² − x₁²
//		c[0] = hyperdual.Sub(
//			hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])),
//			hyperdual.Mul(x[0], x[0]))
//	})
//
// Every derivative is exact to rounding: forward-mode automatic
// differentiation seeds the ϵ₁ and ϵ₂ parts of x and y and reads them off c.
// With n = ny and m = nx the costs, in evaluations of f, are
//
//	Eval without jy                      1
//	Eval with jy = ∂c/∂y (nc×n)          ⌈n/2⌉ (ϵ₁ seeds y_j, ϵ₂ seeds y_{j+1})
//	JacobianX, ∂c/∂x (nc×m)              ⌈m/2⌉
//	HessVec, Σ_i w_i ∇²_yy c_i v         n     (ϵ₁ = e_j on y, ϵ₂ = v on y)
//	MixedHessVec, Σ_i w_i ∇²_xy c_i v    m     (ϵ₁ = e_k on x, ϵ₂ = v on y)
//
// on the dense path. The constraint's Capabilities declare JacobianX,
// HessVec and MixedHessVec.
//
// # Large sparse systems
//
// For a Func with at least 16 equations (any size with Settings.Path =
// PathSparse; never with BatchDiagonal or TrainableDiagonal weights, which
// the sparse path does not implement), NewAdaNP detects the pattern of
// ∂c/∂y, once per constraint: by group testing with hyperdual evaluations of f at two
// random points (x and y uniform in [0.5, 1.5]; points where c is not
// finite are skipped), which for rows of at most about 6 entries takes
// some 60 to 150 evaluations of f per point, at most about ny, and
// O(nnz + nc + ny) memory (10⁴ equations of 4 entries: 162 evaluations
// and 9 MB in all, measured by TestFuncDetectionMemory, which bounds them
// by 600 and 40 MB; a dense Jacobian is 5 002 evaluations and 800 MB). PathAuto then takes the sparse path where its rule prefers it
// for the detected pattern, and the constraint is evaluated there as the
// SparseFunc of that pattern, with its costs (⌈K/2⌉ evaluations per
// Jacobian, K per HessVec, K the number of colours): issue 56's Func of
// 10⁴ equations with 4 entries per row projects a batch of 8 in about
// 0.3 s (BenchmarkFuncSparseProject), where the dense path did not
// finish one sample in 10 minutes.
//
// Detection misses an entry that is exactly zero at both probe points
// but not elsewhere: an output read only in a branch the probes do not
// take (an if on a value of y, max, min, a piecewise law), or an entry
// below 1e-10 of the others it is summed with. The first projection
// checks the pattern at its first sample (see ProjectTo); where that
// sample reads a missed entry, the projection returns a *PatternError
// with Detected set. At later samples a miss is not checked: the steps
// then use a Jacobian without the entry, converge slowly or not at all
// (Stats.NotConverged) and give inexact gradients. For a constraint with
// such branches declare the pattern with SparseFunc, or keep the dense
// path with Settings.Path = PathDense. If f is not finite at any probe
// point (or panics), the dense path is taken (PathSparse is an error).
//
// On each call f receives x and y of lengths nx and ny and c of length nc
// with c zeroed; it must write every c_i it defines, must not retain the
// slices, and must be safe for concurrent use, since AdaNP evaluates the
// samples of a batch in parallel. f must use hyperdual arithmetic for every
// operation that depends on x or y: a value computed through float64 (for
// example math.Sin(y[0].Real)) is a constant to the derivatives. The
// package hd writes the same constraints more briefly, and its Sin, Tanh,
// Atan and Inv keep the second derivative that gonum's hyperdual
// functions of the same names drop where the argument is exactly 0 (or,
// for Inv, tiny): prefer hd where curvature matters (Unrolled and Implicit
// gradients). NaN or Inf
// written by f propagate to the outputs. The returned constraint does not
// allocate in steady state as long as f does not.
//
// Func returns an error if nx < 0, ny < 1, nc < 1 or f is nil.
func Func(nx, ny, nc int, f func(x, y, c []hyperdual.Number)) (Constraint, error) {
	switch {
	case nx < 0:
		return nil, fmt.Errorf("enforce: Func: nx = %d, want nx ≥ 0", nx)
	case ny < 1:
		return nil, fmt.Errorf("enforce: Func: ny = %d, want ny ≥ 1", ny)
	case nc < 1:
		return nil, fmt.Errorf("enforce: Func: nc = %d, want nc ≥ 1", nc)
	case f == nil:
		return nil, errors.New("enforce: Func: nil function")
	}
	fc := &funcConstraint{nx: nx, ny: ny, nc: nc, f: f}
	fc.caps = Capabilities{JacobianX: fc.JacobianX, HessVec: fc.HessVec, MixedHessVec: fc.MixedHessVec}
	fc.pool.New = func() any {
		return &funcScratch{
			x: make([]hyperdual.Number, nx),
			y: make([]hyperdual.Number, ny),
			c: make([]hyperdual.Number, nc),
		}
	}
	return fc, nil
}

// funcConstraint is the Constraint returned by Func.
type funcConstraint struct {
	nx, ny, nc int
	f          func(x, y, c []hyperdual.Number)
	pool       sync.Pool // *funcScratch
	caps       Capabilities
	detect     funcPattern // the detected pattern of ∂c/∂y (funcpattern.go)
}

// funcScratch holds the hyperdual arguments of one call of f.
type funcScratch struct {
	x, y, c []hyperdual.Number
}

var _ Capable = (*funcConstraint)(nil)

// Capabilities returns JacobianX, HessVec and MixedHessVec.
func (fc *funcConstraint) Capabilities() Capabilities { return fc.caps }

// Dims returns the sizes of x, y and c.
func (fc *funcConstraint) Dims() (nx, ny, nc int) { return fc.nx, fc.ny, fc.nc }

// get returns a scratch whose x and y hold the real values of x and y with
// all dual parts zero.
func (fc *funcConstraint) get(x, y []float64) *funcScratch {
	s := fc.pool.Get().(*funcScratch)
	for k, v := range x {
		s.x[k] = hyperdual.Number{Real: v}
	}
	for j, v := range y {
		s.y[j] = hyperdual.Number{Real: v}
	}
	return s
}

// call evaluates f on the scratch arguments into s.c.
func (fc *funcConstraint) call(s *funcScratch) {
	clear(s.c)
	fc.f(s.x, s.y, s.c)
}

// Eval writes c(x, y) into c and, if jy != nil, ∂c/∂y (nc×ny, row-major)
// into jy.
func (fc *funcConstraint) Eval(x, y, c, jy []float64) {
	checkEvalLen("Func.Eval", fc.nx, fc.ny, fc.nc, x, y, c, jy)
	s := fc.get(x, y)
	defer fc.pool.Put(s)
	if jy == nil {
		fc.call(s)
		realParts(c, s.c)
		return
	}
	fc.jacobian(s, s.y, jy, c)
}

// JacobianX writes ∂c/∂x (nc×nx, row-major) into jx.
func (fc *funcConstraint) JacobianX(x, y, jx []float64) {
	checkJacobianXLen("Func.JacobianX", fc.nx, fc.ny, fc.nc, x, y, jx)
	s := fc.get(x, y)
	defer fc.pool.Put(s)
	fc.jacobian(s, s.x, jx, nil)
}

// jacobian writes ∂c/∂seeds (nc×len(seeds), row-major) into jac, seeds
// being s.y or s.x: each evaluation carries two directions, ϵ₁ = e_k and
// ϵ₂ = e_{k+1} (one, ϵ₁ = e_k, for the last column of an odd count). If c
// is not nil it also receives c's value, from the first evaluation.
func (fc *funcConstraint) jacobian(s *funcScratch, seeds []hyperdual.Number, jac, c []float64) {
	n := len(seeds)
	k := 0
	for ; k+1 < n; k += 2 {
		seeds[k].E1mag, seeds[k+1].E2mag = 1, 1
		fc.call(s)
		seeds[k].E1mag, seeds[k+1].E2mag = 0, 0
		for i := range s.c {
			v := &s.c[i]
			pair := jac[i*n+k : i*n+k+2 : i*n+k+2]
			pair[0], pair[1] = v.E1mag, v.E2mag
		}
		if k == 0 {
			realParts(c, s.c)
		}
	}
	if k < n {
		seeds[k].E1mag = 1
		fc.call(s)
		seeds[k].E1mag = 0
		for i := range s.c {
			jac[i*n+k] = s.c[i].E1mag
		}
		if k == 0 {
			realParts(c, s.c)
		}
	}
}

// realParts writes the real parts of v into dst, unless dst is nil.
func realParts(dst []float64, v []hyperdual.Number) {
	if dst == nil {
		return
	}
	dst = dst[:len(v)]
	for i := range v {
		dst[i] = v[i].Real
	}
}

// HessVec writes out = Σ_i w_i ∇²_yy c_i(x, y) v (length ny).
func (fc *funcConstraint) HessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Func.HessVec", fc.nx, fc.ny, fc.nc, fc.ny, x, y, w, v, out)
	s := fc.get(x, y)
	defer fc.pool.Put(s)
	fc.curvature(s, s.y, w, v, out)
}

// MixedHessVec writes out_k = Σ_i w_i Σ_j ∂²c_i/∂x_k∂y_j v_j (length nx).
func (fc *funcConstraint) MixedHessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Func.MixedHessVec", fc.nx, fc.ny, fc.nc, fc.nx, x, y, w, v, out)
	s := fc.get(x, y)
	defer fc.pool.Put(s)
	fc.curvature(s, s.x, w, v, out)
}

// curvature seeds ϵ₂ = v on y and ϵ₁ = e_k on each of seeds (y or x) in
// turn, writing out_k = Σ_i w_i (c_i)_{ϵ₁ϵ₂} = Σ_i w_i ∂²c_i/∂seed_k∂y · v.
func (fc *funcConstraint) curvature(s *funcScratch, seeds []hyperdual.Number, w, v, out []float64) {
	for j, vj := range v {
		s.y[j].E2mag = vj
	}
	for k := range out {
		seeds[k].E1mag = 1
		fc.call(s)
		out[k] = weightedE1E2(w, s.c)
		seeds[k].E1mag = 0
	}
}

// weightedE1E2 returns Σ_i w_i (c_i)_{ϵ₁ϵ₂}.
func weightedE1E2(w []float64, c []hyperdual.Number) float64 {
	var sum float64
	for i, ci := range c {
		sum += w[i] * ci.E1E2mag
	}
	return sum
}

// checkEvalLen panics with a clear message unless x, y and c have the
// lengths nx, ny and nc and jy is nil or of length nc·ny.
func checkEvalLen(method string, nx, ny, nc int, x, y, c, jy []float64) {
	checkLen(method, "x", x, nx)
	checkLen(method, "y", y, ny)
	checkLen(method, "c", c, nc)
	if jy != nil {
		checkLen(method, "jy", jy, nc*ny)
	}
}

// checkJacobianXLen panics with a clear message unless x, y and jx have the
// lengths nx, ny and nc·nx.
func checkJacobianXLen(method string, nx, ny, nc int, x, y, jx []float64) {
	checkLen(method, "x", x, nx)
	checkLen(method, "y", y, ny)
	checkLen(method, "jx", jx, nc*nx)
}

// checkHessVecLen panics with a clear message unless x, y, w, v and out have
// the lengths nx, ny, nc, ny and nout.
func checkHessVecLen(method string, nx, ny, nc, nout int, x, y, w, v, out []float64) {
	checkLen(method, "x", x, nx)
	checkLen(method, "y", y, ny)
	checkLen(method, "w", w, nc)
	checkLen(method, "v", v, ny)
	checkLen(method, "out", out, nout)
}

// checkLen panics with a clear message unless len(s) == want.
func checkLen(method, arg string, s []float64, want int) {
	if len(s) != want {
		panic(fmt.Sprintf("enforce: %s: len(%s) = %d, want %d", method, arg, len(s), want))
	}
}
