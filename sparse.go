package enforce

import "fmt"

// SparseJacobian declares that ∂c/∂y is sparse, with a pattern that is the
// same for every x and y, and evaluates the constraint with the Jacobian's
// values in that pattern. A constraint declares it in Capabilities.Sparse;
// AdaNP then takes its sparse path (see Settings), whose cost and memory
// follow the number of nonzeros instead of nc²·ny and nc·ny.
//
// The pattern is in compressed sparse row form: the nonzeros of row i are
// in the columns Col[RowPtr[i]:RowPtr[i+1]], strictly increasing, with
// RowPtr of length nc+1, RowPtr[0] = 0 and nnz = RowPtr[nc]. A pattern
// entry may hold the value zero at some (x, y); an entry outside the
// pattern must be zero everywhere (AdaNP's first projection checks it at
// one sample and returns a *PatternError; CheckSparse checks every
// entry). The slices must not be modified.
type SparseJacobian struct {
	// RowPtr (length nc+1) and Col (length nnz) are the pattern of ∂c/∂y.
	RowPtr, Col []int
	// Eval writes c(x, y) into c (length nc) and, when vals is not nil,
	// the values of ∂c/∂y in pattern order into vals (length nnz):
	// vals[p] = ∂c_i/∂y_Col[p] for RowPtr[i] ≤ p < RowPtr[i+1]. It follows
	// Constraint.Eval's rules (no retention, no allocation in steady
	// state, safe for concurrent use).
	Eval func(x, y, c, vals []float64)
	// JacobianXTVec, if not nil, writes out = (∂c/∂x)ᵀ·w (length nx) for
	// w of length nc: the x-gradient without an nc×nx matrix.
	JacobianXTVec func(x, y, w, out []float64)
}

// nnz returns the number of nonzeros of the pattern.
func (s *SparseJacobian) nnz() int { return s.RowPtr[len(s.RowPtr)-1] }

// check returns an error unless s is a valid pattern for a constraint with
// ny outputs and nc constraints.
func (s *SparseJacobian) check(ny, nc int) error {
	if s.Eval == nil {
		return fmt.Errorf("sparse Jacobian has no Eval")
	}
	if len(s.RowPtr) != nc+1 {
		return fmt.Errorf("sparse Jacobian has %d row pointers, want nc+1 = %d", len(s.RowPtr), nc+1)
	}
	if s.RowPtr[0] != 0 {
		return fmt.Errorf("sparse Jacobian's RowPtr[0] = %d, want 0", s.RowPtr[0])
	}
	for i := 0; i < nc; i++ {
		lo, hi := s.RowPtr[i], s.RowPtr[i+1]
		if hi < lo || hi > len(s.Col) {
			return fmt.Errorf("sparse Jacobian's row %d spans [%d, %d) outside the %d column indices", i, lo, hi, len(s.Col))
		}
		for p := lo; p < hi; p++ {
			j := s.Col[p]
			if j < 0 || j >= ny {
				return fmt.Errorf("sparse Jacobian's row %d has column %d outside [0, %d)", i, j, ny)
			}
			if p > lo && j <= s.Col[p-1] {
				return fmt.Errorf("sparse Jacobian's row %d has columns %d, %d not strictly increasing", i, s.Col[p-1], j)
			}
		}
	}
	if s.RowPtr[nc] != len(s.Col) {
		return fmt.Errorf("sparse Jacobian has %d column indices, RowPtr[nc] = %d", len(s.Col), s.RowPtr[nc])
	}
	return nil
}
