package enforce

import (
	"errors"
	"fmt"
	"sync"

	"github.com/enforce-nn/enforce/internal/affine"
)

// Stack returns the concatenation of the constraint systems cs, which must
// share nx and ny: with cs = (c¹, …, cᵖ) of nc¹, …, ncᵖ rows,
//
//	c(x, y) = (c¹(x, y), …, cᵖ(x, y)) ∈ ℝ^(nc¹+…+ncᵖ),
//
// and the rows of ∂c/∂y and ∂c/∂x are the parts' rows in the same order.
// HessVec and MixedHessVec split w into the parts' blocks w = (w¹, …, wᵖ) and
// sum the parts' outputs, Σ_p Σ_i wᵖ_i ∇²cᵖ_i v.
//
// The result's Capabilities are built from the parts' (see Capabilities):
// JacobianX, HessVec, MixedHessVec and ConstantJacobian when every part has
// them (the constant Jacobians concatenated once, here); EvalBatch and
// EvalBatch32 when some part has a batched evaluation, the other parts
// being evaluated sample by sample (and their Jacobians rounded to
// float32); HessVecBatch and HessVecBatch32 when every part has HessVec and
// some part a batched one; Sparse when some part is sparse, the parts'
// patterns as block rows, a part without a pattern taken in as full rows
// as long as such parts hold at most 65 536 Jacobian entries in all (and
// JacobianXTVec when every part has an x-derivative). So the
// single-precision path of a Quadratic reaches a Stack that contains it,
// a Stack of Linear constraints is projected in batches as one Linear
// would be, and a Stack of sparse systems takes the sparse path.
//
// Stack returns an error if cs is empty, a part is nil, the parts' nx or ny
// differ, or a part has latent variables (apply WithInequalities to the
// stacked system instead).
func Stack(cs ...Constraint) (Constraint, error) {
	if len(cs) == 0 {
		return nil, errors.New("enforce: Stack: no constraints")
	}
	s := &stackConstraint{parts: make([]*part, len(cs)), off: make([]int, len(cs)+1)}
	all := func(has func(k *Capabilities) bool) bool {
		for _, p := range s.parts {
			if !has(&p.k) {
				return false
			}
		}
		return true
	}
	for p, c := range cs {
		nx, ny, nc, k, err := checkConstraintArg(c)
		if err != nil {
			return nil, fmt.Errorf("enforce: Stack: part %d: %w", p, err)
		}
		if p == 0 {
			s.nx, s.ny = nx, ny
		} else if nx != s.nx || ny != s.ny {
			return nil, fmt.Errorf("enforce: Stack: part %d has (nx, ny) = (%d, %d), part 0 has (%d, %d)",
				p, nx, ny, s.nx, s.ny)
		}
		s.parts[p] = newPart(c, k)
		s.off[p+1] = s.off[p] + nc
	}
	s.nc = s.off[len(cs)]
	k := &s.k
	if all(func(k *Capabilities) bool { return k.JacobianX != nil }) {
		k.JacobianX = s.jacobianX
	}
	if all(func(k *Capabilities) bool { return k.HessVec != nil }) {
		k.HessVec = s.hessVec
	}
	if all(func(k *Capabilities) bool { return k.MixedHessVec != nil }) {
		k.MixedHessVec = s.mixedHessVec
	}
	if all(func(k *Capabilities) bool { return k.ConstantJacobian != nil }) {
		k.ConstantJacobian = make([]float64, 0, s.nc*s.ny)
		for _, p := range s.parts {
			k.ConstantJacobian = append(k.ConstantJacobian, p.k.ConstantJacobian...)
		}
	}
	if all(func(k *Capabilities) bool { return k.linear != nil }) {
		k.linear = s.linear()
	}
	k.finiteJ = all(func(k *Capabilities) bool { return k.finiteJ })
	for _, p := range s.parts {
		if p.hasBatch() {
			k.EvalBatch = s.evalBatch
		}
		if p.k.EvalBatch32 != nil {
			k.EvalBatch32 = s.evalBatch32
		}
		if k.HessVec != nil && p.hasHessVecBatch() {
			k.HessVecBatch = s.hessVecBatch
		}
		if k.HessVec != nil && p.k.HessVecBatch32 != nil {
			k.HessVecBatch32 = s.hessVecBatch32
		}
	}
	n := max(s.nx, s.ny)
	s.pool.New = func() any {
		t := make([]float64, n)
		return &t
	}
	s.scratch.New = func() any { return new(stackScratch) }
	s.makeSparse()
	return s, nil
}

// linear returns, for a Stack of Linear constraints, the stacked system
// C·y − r(x) that AdaNP projects in batches (linbatch.go): a single part's
// own, or C = [C¹; …; Cᵖ] with r = (r¹, …, rᵖ).
func (s *stackConstraint) linear() *linearConstraint {
	if len(s.parts) == 1 {
		return s.parts[0].k.linear
	}
	nx := s.nx
	rhs := func(x, r, jx []float64) {
		for p, part := range s.parts {
			lo, hi := s.off[p], s.off[p+1]
			var jp []float64
			if jx != nil {
				jp = jx[lo*nx : hi*nx]
			}
			if f := part.k.linear.r; f != nil {
				f(x, r[lo:hi], jp)
				continue
			}
			clear(r[lo:hi])
			clear(jp)
		}
	}
	return &linearConstraint{nx: nx, ny: s.ny, nc: s.nc, c: s.k.ConstantJacobian, r: rhs}
}

// AffineResidual returns, for a Stack of Linear constraints, the batched
// evaluator of the stacked system (see linearConstraint.AffineResidual),
// and nil otherwise.
func (s *stackConstraint) AffineResidual() *affine.Residual {
	if s.k.linear == nil {
		return nil
	}
	return s.k.linear.AffineResidual()
}

// stackConstraint is the Constraint returned by Stack. Part p owns rows
// off[p] to off[p+1]−1 of c.
type stackConstraint struct {
	nx, ny, nc int
	parts      []*part
	off        []int
	k          Capabilities
	pool       sync.Pool // *[]float64 of length max(nx, ny), for the parts' outputs.
	scratch    sync.Pool // *stackScratch, for the batched methods
}

// stackScratch holds a part's outputs in the batched methods, grown on
// demand.
type stackScratch struct {
	c, j, w, out []float64
	j32          []float32
}

var _ Capable = (*stackConstraint)(nil)

// Dims returns the sizes of x, y and c.
func (s *stackConstraint) Dims() (nx, ny, nc int) { return s.nx, s.ny, s.nc }

// Capabilities returns what the parts' capabilities give (see Stack).
func (s *stackConstraint) Capabilities() Capabilities { return s.k }

// Eval writes c(x, y) into c and, if jy != nil, ∂c/∂y (nc×ny, row-major)
// into jy.
func (s *stackConstraint) Eval(x, y, c, jy []float64) {
	checkEvalLen("Stack.Eval", s.nx, s.ny, s.nc, x, y, c, jy)
	for p, part := range s.parts {
		lo, hi := s.off[p], s.off[p+1]
		var jp []float64
		if jy != nil {
			jp = jy[lo*s.ny : hi*s.ny]
		}
		part.c.Eval(x, y, c[lo:hi], jp)
	}
}

// jacobianX writes ∂c/∂x (nc×nx, row-major) into jx.
func (s *stackConstraint) jacobianX(x, y, jx []float64) {
	checkJacobianXLen("Stack.JacobianX", s.nx, s.ny, s.nc, x, y, jx)
	for p, part := range s.parts {
		part.k.JacobianX(x, y, jx[s.off[p]*s.nx:s.off[p+1]*s.nx])
	}
}

// hessVec writes out = Σ_i w_i ∇²_yy c_i(x, y) v (length ny).
func (s *stackConstraint) hessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Stack.HessVec", s.nx, s.ny, s.nc, s.ny, x, y, w, v, out)
	s.sumParts(out, func(p int, dst []float64) {
		s.parts[p].k.HessVec(x, y, w[s.off[p]:s.off[p+1]], v, dst)
	})
}

// mixedHessVec writes out_k = Σ_i w_i Σ_j ∂²c_i/∂x_k∂y_j v_j (length nx).
func (s *stackConstraint) mixedHessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Stack.MixedHessVec", s.nx, s.ny, s.nc, s.nx, x, y, w, v, out)
	s.sumParts(out, func(p int, dst []float64) {
		s.parts[p].k.MixedHessVec(x, y, w[s.off[p]:s.off[p+1]], v, dst)
	})
}

// sumParts writes out = Σ_p (output of part p), where eval(p, dst) writes
// the output of part p into dst.
func (s *stackConstraint) sumParts(out []float64, eval func(p int, dst []float64)) {
	eval(0, out)
	if len(s.parts) == 1 {
		return
	}
	t := s.pool.Get().(*[]float64)
	tmp := (*t)[:len(out)]
	for p := 1; p < len(s.parts); p++ {
		eval(p, tmp)
		for k, v := range tmp {
			out[k] += v
		}
	}
	s.pool.Put(t)
}

// checkBatchLen panics with a clear message unless x, y and c hold rows
// samples and jy, unless jyLen < 0, holds rows Jacobians.
func (s *stackConstraint) checkBatchLen(method string, rows int, x, y, c []float64, jyLen int) {
	if rows < 0 || len(x) != rows*s.nx || len(y) != rows*s.ny || len(c) != rows*s.nc || (jyLen >= 0 && jyLen != rows*s.nc*s.ny) {
		panic(fmt.Sprintf("enforce: Stack.%s: rows=%d len(x)=%d len(y)=%d len(c)=%d len(jy)=%d, want %d, %d, %d, %d",
			method, rows, len(x), len(y), len(c), jyLen, rows*s.nx, rows*s.ny, rows*s.nc, rows*s.nc*s.ny))
	}
}

// evalBatch evaluates rows samples, each part with its own EvalBatch or
// sample by sample, and interleaves the parts' rows.
func (s *stackConstraint) evalBatch(rows int, x, y, c, jy []float64) {
	jyLen := -1
	if jy != nil {
		jyLen = len(jy)
	}
	s.checkBatchLen("EvalBatch", rows, x, y, c, jyLen)
	if len(s.parts) == 1 {
		s.parts[0].evalBatch(rows, x, y, c, jy) // its rows are the Stack's
		return
	}
	sc := s.scratch.Get().(*stackScratch)
	defer s.scratch.Put(sc)
	ny, nc := s.ny, s.nc
	for p, part := range s.parts {
		lo, np := s.off[p], part.nc
		cp := grow(&sc.c, rows*np)
		var jp []float64
		if jy != nil {
			jp = grow(&sc.j, rows*np*ny)
		}
		part.evalBatch(rows, x, y, cp, jp)
		for r := range rows {
			copy(c[r*nc+lo:r*nc+lo+np], cp[r*np:(r+1)*np])
			if jy != nil {
				copy(jy[(r*nc+lo)*ny:(r*nc+lo+np)*ny], jp[r*np*ny:(r+1)*np*ny])
			}
		}
	}
}

// evalBatch32 is evalBatch with the Jacobians in float32: the parts with
// EvalBatch32 evaluate in single precision, the others in float64 with
// their Jacobians rounded.
func (s *stackConstraint) evalBatch32(rows int, x, y, c []float64, jy []float32) {
	s.checkBatchLen("EvalBatch32", rows, x, y, c, len(jy))
	if len(s.parts) == 1 {
		s.parts[0].evalBatch32(rows, x, y, c, jy)
		return
	}
	sc := s.scratch.Get().(*stackScratch)
	defer s.scratch.Put(sc)
	ny, nc := s.ny, s.nc
	for p, part := range s.parts {
		lo, np := s.off[p], part.nc
		cp := grow(&sc.c, rows*np)
		jp := grow(&sc.j32, rows*np*ny)
		part.evalBatch32(rows, x, y, cp, jp)
		for r := range rows {
			copy(c[r*nc+lo:r*nc+lo+np], cp[r*np:(r+1)*np])
			copy(jy[(r*nc+lo)*ny:(r*nc+lo+np)*ny], jp[r*np*ny:(r+1)*np*ny])
		}
	}
}

// hessVecBatch writes out_s = Σ_p Σ_i wᵖ_si ∇²cᵖ_i v_s, each part with its
// own HessVecBatch or sample by sample.
func (s *stackConstraint) hessVecBatch(rows int, x, y, w, v, out []float64) {
	s.hessVecBatchWith(rows, x, y, w, v, out, (*part).hessVecBatch)
}

// hessVecBatch32 is hessVecBatch with the parts' HessVecBatch32 where they
// have it.
func (s *stackConstraint) hessVecBatch32(rows int, x, y, w, v, out []float64) {
	s.hessVecBatchWith(rows, x, y, w, v, out, (*part).hessVecBatch32)
}

// hessVecBatchWith is hessVecBatch with hv as the parts' batched product.
func (s *stackConstraint) hessVecBatchWith(rows int, x, y, w, v, out []float64,
	hv func(p *part, rows int, x, y, w, v, out []float64)) {
	ny, nc := s.ny, s.nc
	if rows < 0 || len(x) != rows*s.nx || len(y) != rows*ny || len(w) != rows*nc || len(v) != rows*ny || len(out) != rows*ny {
		panic(fmt.Sprintf("enforce: Stack.HessVecBatch: rows=%d len(x)=%d len(y)=%d len(w)=%d len(v)=%d len(out)=%d",
			rows, len(x), len(y), len(w), len(v), len(out)))
	}
	if len(s.parts) == 1 {
		hv(s.parts[0], rows, x, y, w, v, out)
		return
	}
	sc := s.scratch.Get().(*stackScratch)
	defer s.scratch.Put(sc)
	for p, part := range s.parts {
		lo, np := s.off[p], part.nc
		wp := grow(&sc.w, rows*np)
		for r := range rows {
			copy(wp[r*np:(r+1)*np], w[r*nc+lo:r*nc+lo+np])
		}
		if p == 0 {
			hv(part, rows, x, y, wp, v, out)
			continue
		}
		tmp := grow(&sc.out, rows*ny)
		hv(part, rows, x, y, wp, v, tmp)
		for i, t := range tmp {
			out[i] += t
		}
	}
}
