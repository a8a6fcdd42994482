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
// supernodal factorisation. In one run of BenchmarkVsCholmod on the
// benchmark families (2-core AMD EPYC, thread CPU time of the gram
// factorisation) the supernodal factor was slower than the simplicial one
// at ratio 11 (mesh, N_C = 10³: +15 %) and faster from ratio 33 (mesh
// 10⁴: −27 %; random 10³, ratio 60: −34 %; mesh 10⁵, ratio 91: about −50 %).
const AutoSupernodal = 20

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
	// and before allocating the factor's pattern. No bound when zero
	// (besides the int32 index range).
	MaxNNZL int
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
