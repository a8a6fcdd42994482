package sparse

import "math"

// Sym is the symbolic analysis of a symmetric n×n matrix A given by the
// pattern of its lower triangle in compressed sparse column form: column j
// holds its rows i ≥ j in rowIdx[colPtr[j]:colPtr[j+1]], strictly
// increasing. Missing diagonal entries are zero. It uses the same ordering,
// elimination tree and factorisation as Gram. A Sym is read-only after
// AnalyseSym and may be shared by goroutines, each with its own SymFactor.
type Sym struct {
	sym  *symbolic
	nnzA int
	pos  []int32 // pos[p]: position in ci of entry p of the input
	tol  float64
}

// AnalyseSym analyses the lower-triangular CSC pattern (colPtr of length
// n+1, colPtr[0] = 0, colPtr[n] = len(rowIdx)); an entry above the diagonal,
// out of range or out of order gives an error matching ErrPattern.
func AnalyseSym(n int, colPtr, rowIdx []int, opt Options) (*Sym, error) {
	if n < 0 || n > maxIndex || len(rowIdx) > maxIndex {
		return nil, errPattern("order %d with %d entries out of range", n, len(rowIdx))
	}
	if len(colPtr) != n+1 {
		return nil, errPattern("len(colPtr) = %d, want n+1 = %d", len(colPtr), n+1)
	}
	if colPtr[0] != 0 || colPtr[n] != len(rowIdx) {
		return nil, errPattern("colPtr[0] = %d and colPtr[n] = %d, want 0 and len(rowIdx) = %d", colPtr[0], colPtr[n], len(rowIdx))
	}
	for j := 0; j < n; j++ {
		if colPtr[j+1] < colPtr[j] {
			return nil, errPattern("colPtr decreases at column %d", j)
		}
		prev := j - 1
		for p := colPtr[j]; p < colPtr[j+1]; p++ {
			i := rowIdx[p]
			if i < j || i >= n {
				return nil, errPattern("column %d has row %d outside [%d, %d)", j, i, j, n)
			}
			if i <= prev {
				return nil, errPattern("column %d: rows not strictly increasing (%d after %d)", j, i, prev)
			}
			prev = i
		}
	}
	adj := edgeAdjacency(n, func(yield func(a, b int)) {
		for j := 0; j < n; j++ {
			for _, i := range rowIdx[colPtr[j]:colPtr[j+1]] {
				if i != j {
					yield(i, j)
				}
			}
		}
	})
	sym, err := newSymbolic(adj, &opt, true)
	if err != nil {
		return nil, err
	}
	pos := make([]int32, len(rowIdx))
	for j := 0; j < n; j++ {
		for p := colPtr[j]; p < colPtr[j+1]; p++ {
			a, b := sym.iperm[rowIdx[p]], sym.iperm[j]
			if a > b {
				a, b = b, a
			}
			pos[p] = int32(sym.position(a, b))
		}
	}
	return &Sym{sym: sym, nnzA: len(rowIdx), pos: pos, tol: opt.pivotTol()}, nil
}

// N returns the order n.
func (s *Sym) N() int { return s.sym.n }

// NNZA returns the number of entries of the lower-triangular input pattern.
func (s *Sym) NNZA() int { return s.nnzA }

// NNZL returns the number of entries of L strictly below its unit diagonal.
func (s *Sym) NNZL() int { return s.sym.nnzL() }

// Method returns the numeric factorisation chosen (see Gram.Method).
func (s *Sym) Method() Method { return s.sym.method }

// Flops returns the multiply–add count of one numeric factorisation (see
// Gram.Flops).
func (s *Sym) Flops() float64 { return s.sym.flops }

// Perm returns a copy of the permutation (see Gram.Perm).
func (s *Sym) Perm() []int { return append([]int(nil), s.sym.perm...) }

// SymFactor is one worker's numeric factor P·A·Pᵀ = L·D·Lᵀ of a Sym pattern;
// like Factor it allocates nothing after NewFactor and is not safe for
// concurrent use.
type SymFactor struct {
	a *Sym
	numeric
}

// NewFactor returns a SymFactor with the pivot tolerance of the Options s
// was analysed with.
func (s *Sym) NewFactor() *SymFactor {
	return &SymFactor{a: s, numeric: newNumeric(s.sym, s.tol, false)}
}

// Factor factors A with the values vals of the lower-triangular pattern (in
// rowIdx order). Errors as for Factor.Factor. It panics if
// len(vals) != NNZA().
func (f *SymFactor) Factor(vals []float64) error {
	if len(vals) != f.a.nnzA {
		panic("sparse: SymFactor.Factor: len(vals) != NNZA()")
	}
	f.ok = false
	clear(f.cx)
	for p, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ErrNonFinite
		}
		f.cx[f.a.pos[p]] += v
	}
	return f.factor()
}

// MaxDiag returns max_i A_ii of the last Factor call.
func (f *SymFactor) MaxDiag() float64 { return f.maxDiag }

// Solve overwrites x with A⁻¹x using the last successful Factor; see
// Factor.Solve.
func (f *SymFactor) Solve(x []float64) { f.solve(x) }
