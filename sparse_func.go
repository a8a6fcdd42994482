package enforce

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce/internal/colour"
)

// SparseFunc is Func for large sparse systems: the constraint c(x, y) = 0
// defined by f, Go code over hyperdual numbers (package hd), whose
// equation i depends on the outputs pattern[i] only. It declares
// Capabilities.Sparse with that pattern, so that AdaNP can take its sparse
// path, and computes every derivative by Curtis–Powell–Reid column
// compression: the outputs are coloured so that no equation depends on two
// outputs of one colour (a greedy distance-2 colouring, internal/colour),
// and one evaluation of f seeded along the sum of a colour's unit vectors
// gives the derivatives of every equation with respect to its one output
// of that colour. With K colours (at least the longest pattern row; 5 to 7
// for a 5-point stencil, whatever ny), n = ny and m = nx, the costs, in
// evaluations of f, are
//
//	Eval, or Sparse.Eval without values       1
//	Sparse.Eval with ∂c/∂y's values           ⌈K/2⌉ (ϵ₁ and ϵ₂ seed two colours)
//	Eval with the dense jy (nc×n)             ⌈K/2⌉
//	HessVec, Σ_i w_i ∇²_yy c_i v              K  (ϵ₁ along a colour, ϵ₂ = v)
//	JacobianX (nc×m), (∂c/∂x)ᵀw               ⌈m/2⌉
//	MixedHessVec, Σ_i w_i ∇²_xy c_i v          m  (ϵ₁ = e_k on x, ϵ₂ = v)
//
// against Func's ⌈n/2⌉ and n for the y-derivatives. HessVec's compression
// is exact because ∇²c_i vanishes outside pattern[i]×pattern[i]: with ϵ₁
// along colour C the ϵ₁ϵ₂ part of c_i is (∇²c_i v)_j for the one j of C in
// pattern[i]. The x-derivatives cost a number of passes that grows with
// nx, which is small in the applications in mind (a network's input);
// their pattern is not declared.
//
// The pattern is declared, not detected (Func detects one):
// pattern[i] lists the indices of the outputs that c_i may depend on (in
// any order, without repeats). A dependence that the pattern omits sends
// its derivatives to another output of the same colour or drops them.
// AdaNP's first projection checks the pattern at its first sample by an
// uncompressed hyperdual product ∂c/∂y·u against the compressed one (see
// ProjectTo) and returns a *PatternError naming the rows that disagree;
// a dependence that is zero at that sample but not elsewhere escapes the
// check, and the projection then converges slowly or not at all
// (Stats.NotConverged) with wrong gradients. Declare every output that
// an equation reads; an extra index costs only its zero; and run
// CheckSparse once on a new constraint, which compares the compressed
// Jacobian with an uncompressed one and names the entries that disagree.
//
// f follows Func's rules (c zeroed on entry, no retention, safe for
// concurrent use, hyperdual arithmetic for everything that depends on x or
// y). The constraint's Capabilities declare JacobianX, HessVec,
// MixedHessVec and Sparse (with JacobianXTVec). It does not allocate in
// steady state as long as f does not.
//
// SparseFunc returns an error if nx < 0, ny < 1, nc < 1, f is nil,
// len(pattern) ≠ nc, or an index is outside [0, ny) or repeated in a row.
func SparseFunc(nx, ny, nc int, pattern [][]int, f func(x, y, c []hyperdual.Number)) (Constraint, error) {
	switch {
	case nx < 0:
		return nil, fmt.Errorf("enforce: SparseFunc: nx = %d, want nx ≥ 0", nx)
	case ny < 1:
		return nil, fmt.Errorf("enforce: SparseFunc: ny = %d, want ny ≥ 1", ny)
	case nc < 1:
		return nil, fmt.Errorf("enforce: SparseFunc: nc = %d, want nc ≥ 1", nc)
	case f == nil:
		return nil, errors.New("enforce: SparseFunc: nil function")
	case len(pattern) != nc:
		return nil, fmt.Errorf("enforce: SparseFunc: pattern has %d rows, want nc = %d", len(pattern), nc)
	}
	rowPtr := make([]int, nc+1)
	var col []int
	for i, row := range pattern {
		r := slices.Clone(row)
		slices.Sort(r)
		for p, j := range r {
			if j < 0 || j >= ny {
				return nil, fmt.Errorf("enforce: SparseFunc: pattern row %d has index %d outside [0, %d)", i, j, ny)
			}
			if p > 0 && r[p-1] == j {
				return nil, fmt.Errorf("enforce: SparseFunc: pattern row %d repeats index %d", i, j)
			}
		}
		col = append(col, r...)
		rowPtr[i+1] = len(col)
	}
	return newSparseFunc(nx, ny, nc, f, rowPtr, col), nil
}

// newSparseFunc returns the sparseFunc of f with the valid CSR pattern
// rowPtr, col (strictly increasing columns in each row).
func newSparseFunc(nx, ny, nc int, f func(x, y, c []hyperdual.Number), rowPtr, col []int) *sparseFunc {
	sf := &sparseFunc{funcConstraint: funcConstraint{nx: nx, ny: ny, nc: nc, f: f}, rowPtr: rowPtr, col: col}
	nnz := len(sf.col)
	sf.colours, sf.k = colour.Columns(nc, ny, sf.rowPtr, sf.col, colour.LargestFirst)
	// byColour[c] lists the nonzeros q whose column has colour c, with
	// row[q] their row.
	sf.row = make([]int32, nnz)
	sf.byColour = make([][]int32, sf.k)
	for i := range nc {
		for q := sf.rowPtr[i]; q < sf.rowPtr[i+1]; q++ {
			sf.row[q] = int32(i)
			c := sf.colours[sf.col[q]]
			sf.byColour[c] = append(sf.byColour[c], int32(q))
		}
	}
	sf.members = make([][]int, sf.k)
	for j, c := range sf.colours {
		sf.members[c] = append(sf.members[c], j)
	}
	sf.pool.New = func() any {
		return &funcScratch{
			x: make([]hyperdual.Number, nx),
			y: make([]hyperdual.Number, ny),
			c: make([]hyperdual.Number, nc),
		}
	}
	sf.vals.New = func() any {
		v := make([]float64, nnz)
		return &v
	}
	sf.caps = Capabilities{
		JacobianX: sf.JacobianX, HessVec: sf.HessVec, MixedHessVec: sf.MixedHessVec,
		Sparse: &SparseJacobian{RowPtr: sf.rowPtr, Col: sf.col, Eval: sf.evalSparse, JacobianXTVec: sf.jacobianXTVec},
	}
	return sf
}

// sparseFunc is the Constraint returned by SparseFunc: a funcConstraint
// (whose JacobianX and MixedHessVec it uses) with column compression for
// the y-derivatives.
type sparseFunc struct {
	funcConstraint
	rowPtr, col []int
	colours     []int     // per output
	k           int       // number of colours
	members     [][]int   // per colour, its outputs
	byColour    [][]int32 // per colour, the nonzeros of its outputs
	row         []int32   // per nonzero, its row
	vals        sync.Pool // *[]float64 of length nnz, for the dense Eval
	// detected: the pattern was detected for a Func (funcpattern.go),
	// not declared.
	detected bool
}

// Colours returns the number of colours of the compression: Sparse.Eval
// with values takes ⌈Colours/2⌉ evaluations of f, HessVec Colours.
func (sf *sparseFunc) Colours() int { return sf.k }

// Eval writes c(x, y) into c and, if jy != nil, ∂c/∂y (nc×ny, row-major)
// into jy, from ⌈K/2⌉ compressed evaluations.
func (sf *sparseFunc) Eval(x, y, c, jy []float64) {
	checkEvalLen("SparseFunc.Eval", sf.nx, sf.ny, sf.nc, x, y, c, jy)
	if jy == nil {
		sf.evalSparse(x, y, c, nil)
		return
	}
	v := sf.vals.Get().(*[]float64)
	defer sf.vals.Put(v)
	sf.evalSparse(x, y, c, *v)
	clear(jy)
	for i := range sf.nc {
		for q := sf.rowPtr[i]; q < sf.rowPtr[i+1]; q++ {
			jy[i*sf.ny+sf.col[q]] = (*v)[q]
		}
	}
}

// evalSparse is Capabilities.Sparse.Eval: c and, if vals is not nil, the
// values of ∂c/∂y in the pattern, two colours per evaluation.
func (sf *sparseFunc) evalSparse(x, y, c, vals []float64) {
	if len(c) != sf.nc || len(y) != sf.ny || len(x) != sf.nx || vals != nil && len(vals) != len(sf.col) {
		panic(fmt.Sprintf("enforce: SparseFunc: Sparse.Eval: len(x, y, c, vals) = (%d, %d, %d, %d), want (%d, %d, %d, %d)",
			len(x), len(y), len(c), len(vals), sf.nx, sf.ny, sf.nc, len(sf.col)))
	}
	s := sf.get(x, y)
	defer sf.pool.Put(s)
	if vals == nil {
		sf.call(s)
		realParts(c, s.c)
		return
	}
	for c1 := 0; c1 < sf.k; c1 += 2 {
		sf.seed(s, c1, 1, 0)
		if c1+1 < sf.k {
			sf.seed(s, c1+1, 0, 1)
		}
		sf.call(s)
		sf.seed(s, c1, 0, 0)
		if c1+1 < sf.k {
			sf.seed(s, c1+1, 0, 0)
		}
		for _, q := range sf.byColour[c1] {
			vals[q] = s.c[sf.row[q]].E1mag
		}
		if c1+1 < sf.k {
			for _, q := range sf.byColour[c1+1] {
				vals[q] = s.c[sf.row[q]].E2mag
			}
		}
		if c1 == 0 {
			realParts(c, s.c)
		}
	}
}

// seed sets the ϵ₁ and ϵ₂ parts of the outputs of colour c to e1 and e2.
func (sf *sparseFunc) seed(s *funcScratch, c int, e1, e2 float64) {
	for _, j := range sf.members[c] {
		s.y[j].E1mag, s.y[j].E2mag = e1, e2
	}
}

// HessVec writes out = Σ_i w_i ∇²_yy c_i(x, y) v (length ny) from K
// evaluations: ϵ₂ = v on y and ϵ₁ along each colour in turn.
func (sf *sparseFunc) HessVec(x, y, w, v, out []float64) {
	checkHessVecLen("SparseFunc.HessVec", sf.nx, sf.ny, sf.nc, sf.ny, x, y, w, v, out)
	s := sf.get(x, y)
	defer sf.pool.Put(s)
	for j, vj := range v {
		s.y[j].E2mag = vj
	}
	clear(out)
	for c := range sf.k {
		for _, j := range sf.members[c] {
			s.y[j].E1mag = 1
		}
		sf.call(s)
		for _, j := range sf.members[c] {
			s.y[j].E1mag = 0
		}
		for _, q := range sf.byColour[c] {
			i := sf.row[q]
			out[sf.col[q]] += w[i] * s.c[i].E1E2mag
		}
	}
}

// jacobianXTVec writes out = (∂c/∂x)ᵀw (length nx) from ⌈nx/2⌉
// evaluations.
func (sf *sparseFunc) jacobianXTVec(x, y, w, out []float64) {
	checkLen("SparseFunc.JacobianXTVec", "w", w, sf.nc)
	checkLen("SparseFunc.JacobianXTVec", "out", out, sf.nx)
	s := sf.get(x, y)
	defer sf.pool.Put(s)
	n := sf.nx
	for k := 0; k < n; k += 2 {
		s.x[k].E1mag = 1
		if k+1 < n {
			s.x[k+1].E2mag = 1
		}
		sf.call(s)
		s.x[k].E1mag = 0
		var a, b float64
		for i, ci := range s.c {
			a += w[i] * ci.E1mag
			b += w[i] * ci.E2mag
		}
		out[k] = a
		if k+1 < n {
			s.x[k+1].E2mag = 0
			out[k+1] = b
		}
	}
}
