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

// Method selects the numeric factorisation.
type Method int

const (
	// Auto chooses Supernodal when the factorisation's flops per entry of
	// L, Flops()/NNZL(), are at least AutoSupernodal, else Simplicial (the
	// default; the threshold comes from BenchmarkVsCholmod, see the package
	// documentation).
	Auto Method = iota
	// Simplicial is the up-looking LDLᵀ factorisation.
	Simplicial
	// Supernodal is the left-looking supernodal LLᵀ (Cholesky)
	// factorisation with relaxed amalgamation: dense kernels on blocks of
	// columns with a common structure, faster where L has large dense
	// blocks (heavy fill), at the cost of some explicit zeros.
	Supernodal
)

// String returns the method's name.
func (m Method) String() string {
	switch m {
	case Auto:
		return "Auto"
	case Simplicial:
		return "Simplicial"
	case Supernodal:
		return "Supernodal"
	}
	return "Method(?)"
}

// AutoSupernodal is the ratio Flops()/NNZL() from which Auto chooses the
// supernodal factorisation. In BenchmarkVsCholmod (2-core AMD EPYC, thread
// CPU time of the factorisation from B) the supernodal factor took, against
// the simplicial one in the same run, +13 % on the 10³ mesh (ratio 11),
// −27 % on the 10⁴ mesh (ratio 33) and −34 % on the random 10³ matrix
// (ratio 60); in another run −52 % on the 10⁵ mesh (ratio 91) and −63 % on
// the random 10⁴ matrix (ratio 665).
const AutoSupernodal = 20

// SingleTol is the relative pivot bound of a single-precision factor
// (NewFactorSingle): Factor returns ErrPrecision when a pivot d_j (the
// square of L_jj) is below SingleTol times the diagonal entry G_jj it
// started from, i.e. when the elimination cancelled all but about
// log10(1/SingleTol) of float32's 7 digits of that entry. The dense
// single-precision Cholesky of package enforce uses the same bound.
const SingleTol = 1e-5

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
	// Method is the numeric factorisation; Auto when zero.
	Method Method
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
	// MaxNNZL bounds nnz(L) (strictly lower entries): the analysis stops
	// with a *TooLargeError once the count passes it, after O(MaxNNZL) work
	// and before allocating the factor's pattern, or before the ordering
	// when G itself has more entries below its diagonal (for AnalyseGram
	// and CountGram). No bound when zero
	// (besides the int32 index range).
	MaxNNZL int
	// EliminatePairs (AnalyseGram and CountGram only) factors G through its
	// pair rows: a row of B with two entries, one of them in a column that
	// no other row has (a private column, such as the multiplier that
	// enforce.WithInequalities gives a bound on one variable). Such rows
	// are eliminated first, in closed form, by blocks of the pair rows that
	// share their other column (at most MaxPairBlock rows; more stay in the
	// matrix); the rest is factored as the Schur complement
	// B_P·diag(w′)·B_Pᵀ + εI, which has the pattern of the Gram matrix of
	// the other rows alone: w′ lowers the weight of each column the pair
	// rows touch. Factor.Solve still solves with the whole G, exactly
	// (up to rounding); Stats, Perm and Parent describe the whole G with
	// the pair rows ordered first. Without pair rows, or with the Given
	// ordering (a permutation of the whole matrix), the analysis is the
	// usual one.
	EliminatePairs bool

	// neg (AnalyseAugmented) marks, by elimination step of a Given
	// ordering, the pivots that must be negative: supernodes do not mix
	// them with positive ones.
	neg []bool
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
