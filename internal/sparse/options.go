package sparse

// Ordering selects the fill-reducing permutation of a symbolic analysis.
type Ordering int

const (
	// AMD is the approximate minimum degree ordering (the default).
	AMD Ordering = iota
	// Natural keeps the caller's numbering: no permutation.
	Natural
	// Given uses Options.Perm.
	Given
)

// String returns the ordering's name.
func (o Ordering) String() string {
	switch o {
	case AMD:
		return "AMD"
	case Natural:
		return "Natural"
	case Given:
		return "Given"
	}
	return "Ordering(?)"
}

// DefaultPivotTol is the relative pivot tolerance used when
// Options.PivotTol is zero.
const DefaultPivotTol = 1e-13

// DefaultDense is the dense-row factor of AMD used when Options.Dense is
// zero: a row with more than max(16, Dense·√n) off-diagonal entries is
// ordered last instead of being eliminated by degree.
const DefaultDense = 10.0

// Options configures a symbolic analysis. The zero value means the defaults.
type Options struct {
	// Ordering is the fill-reducing permutation; AMD when zero.
	Ordering Ordering
	// Perm is the permutation used when Ordering is Given: Perm[k] is the
	// row of the matrix eliminated at step k. It must be a permutation of
	// 0…n-1.
	Perm []int
	// PivotTol is the relative pivot tolerance δ: a numeric factorisation
	// fails with a *NotPositiveError when a pivot d_k ≤ δ·max_i A_ii.
	// DefaultPivotTol when zero; a negative value means only d_k > 0 is
	// required.
	PivotTol float64
	// Dense is AMD's dense-row factor (see DefaultDense); DefaultDense when
	// zero; a negative value disables dense-row detection.
	Dense float64
}

func (o *Options) pivotTol() float64 {
	switch {
	case o.PivotTol == 0:
		return DefaultPivotTol
	case o.PivotTol < 0:
		return 0
	}
	return o.PivotTol
}
