package enforce

import (
	"errors"
	"fmt"
	"sync"
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
// The result implements every optional interface and Provider: a capability
// is provided only when every part provides it (see Provides). Calling
// JacobianX, HessVec or MixedHessVec when it is not provided panics;
// ConstantJacobian then returns nil. When every part has a constant
// Jacobian, Stack concatenates them once, at construction.
//
// Stack returns an error if cs is empty, a part is nil, the parts' nx or ny
// differ, or a part has latent variables (apply WithInequalities to the
// stacked system instead).
func Stack(cs ...Constraint) (Constraint, error) {
	if len(cs) == 0 {
		return nil, errors.New("enforce: Stack: no constraints")
	}
	s := &stackConstraint{parts: append([]Constraint(nil), cs...), off: make([]int, len(cs)+1)}
	for p, c := range cs {
		nx, ny, nc, err := checkConstraintArg(c)
		if err != nil {
			return nil, fmt.Errorf("enforce: Stack: part %d: %w", p, err)
		}
		if p == 0 {
			s.nx, s.ny = nx, ny
		} else if nx != s.nx || ny != s.ny {
			return nil, fmt.Errorf("enforce: Stack: part %d has (nx, ny) = (%d, %d), part 0 has (%d, %d)",
				p, nx, ny, s.nx, s.ny)
		}
		s.off[p+1] = s.off[p] + nc
	}
	s.nc = s.off[len(cs)]
	if s.providedByAll(CapConstantJacobian) {
		s.constJac = make([]float64, 0, s.nc*s.ny)
		for _, c := range s.parts {
			s.constJac = append(s.constJac, c.(ConstantJacobianer).ConstantJacobian()...)
		}
		if len(s.constJac) != s.nc*s.ny {
			return nil, fmt.Errorf("enforce: Stack: the parts' constant Jacobians have %d elements in all, want nc·ny = %d",
				len(s.constJac), s.nc*s.ny)
		}
	}
	n := max(s.nx, s.ny)
	s.pool.New = func() any {
		t := make([]float64, n)
		return &t
	}
	return s, nil
}

// stackConstraint is the Constraint returned by Stack. Part p owns rows
// off[p] to off[p+1]−1 of c.
type stackConstraint struct {
	nx, ny, nc int
	parts      []Constraint
	off        []int
	constJac   []float64 // nil unless every part has a constant Jacobian.
	pool       sync.Pool // *[]float64 of length max(nx, ny), for the parts' outputs.
}

var (
	_ JacobianXer        = (*stackConstraint)(nil)
	_ HessVecer          = (*stackConstraint)(nil)
	_ MixedHessVecer     = (*stackConstraint)(nil)
	_ ConstantJacobianer = (*stackConstraint)(nil)
	_ Provider           = (*stackConstraint)(nil)
)

// Dims returns the sizes of x, y and c.
func (s *stackConstraint) Dims() (nx, ny, nc int) { return s.nx, s.ny, s.nc }

// Provides reports whether every part provides the capability.
func (s *stackConstraint) Provides(capability Capability) bool {
	if capability == CapConstantJacobian {
		return s.constJac != nil
	}
	return s.providedByAll(capability)
}

// providedByAll reports whether every part provides the capability.
func (s *stackConstraint) providedByAll(capability Capability) bool {
	for _, c := range s.parts {
		if !Provides(c, capability) {
			return false
		}
	}
	return true
}

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
		part.Eval(x, y, c[lo:hi], jp)
	}
}

// JacobianX writes ∂c/∂x (nc×nx, row-major) into jx.
func (s *stackConstraint) JacobianX(x, y, jx []float64) {
	checkJacobianXLen("Stack.JacobianX", s.nx, s.ny, s.nc, x, y, jx)
	for p, part := range s.parts {
		jp, ok := part.(JacobianXer)
		if !ok {
			panic(stackMissingMessage(p, "JacobianX"))
		}
		jp.JacobianX(x, y, jx[s.off[p]*s.nx:s.off[p+1]*s.nx])
	}
}

// HessVec writes out = Σ_i w_i ∇²_yy c_i(x, y) v (length ny).
func (s *stackConstraint) HessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Stack.HessVec", s.nx, s.ny, s.nc, s.ny, x, y, w, v, out)
	s.sumParts(out, func(p int, dst []float64) {
		hp, ok := s.parts[p].(HessVecer)
		if !ok {
			panic(stackMissingMessage(p, "HessVec"))
		}
		hp.HessVec(x, y, w[s.off[p]:s.off[p+1]], v, dst)
	})
}

// MixedHessVec writes out_k = Σ_i w_i Σ_j ∂²c_i/∂x_k∂y_j v_j (length nx).
func (s *stackConstraint) MixedHessVec(x, y, w, v, out []float64) {
	checkHessVecLen("Stack.MixedHessVec", s.nx, s.ny, s.nc, s.nx, x, y, w, v, out)
	s.sumParts(out, func(p int, dst []float64) {
		mp, ok := s.parts[p].(MixedHessVecer)
		if !ok {
			panic(stackMissingMessage(p, "MixedHessVec"))
		}
		mp.MixedHessVec(x, y, w[s.off[p]:s.off[p+1]], v, dst)
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

// stackMissingMessage formats the panic message for a capability that a part
// lacks.
func stackMissingMessage(p int, method string) string {
	return fmt.Sprintf("enforce: Stack.%s: part %d does not implement it (check Provides first)", method, p)
}

// ConstantJacobian returns the parts' constant Jacobians concatenated
// (nc×ny, row-major), or nil unless every part has one. The caller must not
// modify it.
func (s *stackConstraint) ConstantJacobian() []float64 { return s.constJac }
