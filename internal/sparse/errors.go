package sparse

import (
	"errors"
	"fmt"
)

// ErrNotPositive is the sentinel matched (errors.Is) by a *NotPositiveError:
// the matrix is not numerically positive definite at the reported pivot.
var ErrNotPositive = errors.New("sparse: matrix not positive definite")

// ErrNonFinite is returned when a value given to a numeric factorisation is
// NaN or ±Inf, or when a weight or ε is out of its domain.
var ErrNonFinite = errors.New("sparse: non-finite or out-of-domain value")

// ErrPrecision is returned by the Factor of a single-precision Factor
// (NewFactorSingle) when a pivot d_j, computed in float32, falls below
// SingleTol·G_jj, zero or negative pivots included: cancellation has lost
// most of that column's digits, so single precision cannot tell whether
// the matrix is positive definite. Factor it again in float64, which
// decides (nil or a *NotPositiveError).
var ErrPrecision = errors.New("sparse: matrix too ill-conditioned for single precision")

// ErrTooLarge is the sentinel matched (errors.Is) by a *TooLargeError.
var ErrTooLarge = errors.New("sparse: factor too large")

// TooLargeError reports that the factor would have more than Limit entries
// (Options.MaxNNZL, or the int32 index range): NNZL entries were counted in
// the first Rows of the N rows of L when the analysis stopped, so NNZL is a
// lower bound on nnz(L) (equal to it when Rows == N). Rows = 0 means the
// analysis stopped before ordering, on the entries of G's strict lower
// triangle (NNZL), which L contains whatever the ordering.
type TooLargeError struct {
	NNZL, Rows, N, Limit int
}

// Error implements error.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("sparse: nnz(L) ≥ %d (counted in %d of %d rows) exceeds the limit %d", e.NNZL, e.Rows, e.N, e.Limit)
}

// Is reports target == ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// ErrPattern is the sentinel matched (errors.Is) by every error that a
// symbolic analysis returns for an invalid sparsity pattern.
var ErrPattern = errors.New("sparse: invalid pattern")

// NotPositiveError reports the pivot of the LDLᵀ factorisation that was not
// positive or was too small: Pivot ≤ PivotTol·MaxDiag, where MaxDiag is the
// largest diagonal entry of the assembled matrix. Index is the row of the
// matrix as the caller numbers it (before the fill-reducing permutation) and
// Step the elimination step (its position in the permutation).
type NotPositiveError struct {
	Index   int
	Step    int
	Pivot   float64
	MaxDiag float64
}

// Error implements error.
func (e *NotPositiveError) Error() string {
	return fmt.Sprintf("sparse: pivot %g at row %d (step %d) is not positive relative to max diagonal %g", e.Pivot, e.Index, e.Step, e.MaxDiag)
}

// Is reports target == ErrNotPositive.
func (e *NotPositiveError) Is(target error) bool { return target == ErrNotPositive }

// patternError is an invalid-pattern error; it matches ErrPattern.
type patternError struct{ msg string }

func (e *patternError) Error() string        { return "sparse: invalid pattern: " + e.msg }
func (e *patternError) Is(target error) bool { return target == ErrPattern }

func errPattern(format string, args ...any) error {
	return &patternError{msg: fmt.Sprintf(format, args...)}
}
