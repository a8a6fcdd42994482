package sparse

import (
	"math"
	"sort"
)

// maxIndex bounds n and the number of stored entries so that row indices and
// positions fit in int32.
const maxIndex = math.MaxInt32 - 1

// symbolic is the analysis shared by Gram and Sym: the permutation, the
// pattern of the permuted upper triangle C = P·A·Pᵀ, the elimination tree and
// the pattern of L (by columns and by rows). It is read-only after
// construction.
type symbolic struct {
	n     int
	perm  []int // perm[k]: the caller's row eliminated at step k
	iperm []int // iperm[perm[k]] = k

	// Upper triangle of C in CSC: column b holds the rows a ≤ b in
	// increasing order, the diagonal last.
	cp []int
	ci []int32

	parent []int // elimination tree of C; -1 at a root

	// Strictly lower L by columns (rows increasing) and by rows (columns
	// increasing).
	lp []int
	li []int32
	rp []int
	rj []int32

	flops float64
}

// adjacency is a symmetric pattern without its diagonal, both triangles
// stored: the neighbours of i are idx[ptr[i]:ptr[i+1]].
type adjacency struct {
	n   int
	ptr []int
	idx []int32
}

// newSymbolic orders the pattern by opt and computes the pattern of C and L.
func newSymbolic(adj *adjacency, opt *Options) (*symbolic, error) {
	n := adj.n
	var perm []int
	switch opt.Ordering {
	case AMD:
		dense := opt.Dense
		if dense == 0 {
			dense = DefaultDense
		}
		perm = amdOrder(adj, dense)
	case Natural:
		perm = make([]int, n)
		for i := range perm {
			perm[i] = i
		}
	case Given:
		if len(opt.Perm) != n {
			return nil, errPattern("Perm has length %d, want %d", len(opt.Perm), n)
		}
		perm = make([]int, n)
		copy(perm, opt.Perm)
	default:
		return nil, errPattern("unknown ordering %d", int(opt.Ordering))
	}
	iperm := make([]int, n)
	for i := range iperm {
		iperm[i] = -1
	}
	for k, i := range perm {
		if i < 0 || i >= n || iperm[i] >= 0 {
			return nil, errPattern("Perm is not a permutation of 0…%d (entry %d is %d)", n-1, k, i)
		}
		iperm[i] = k
	}
	s := &symbolic{n: n, perm: perm, iperm: iperm}
	if err := s.upper(adj); err != nil {
		return nil, err
	}
	if err := s.factorPattern(); err != nil {
		return nil, err
	}
	return s, nil
}

// upper builds the pattern of the upper triangle of C = P·A·Pᵀ with rows
// sorted in each column and the diagonal stored last.
func (s *symbolic) upper(adj *adjacency) error {
	n := s.n
	cnt := make([]int, n+1)
	for a := 0; a < n; a++ {
		i := s.perm[a]
		for _, j := range adj.idx[adj.ptr[i]:adj.ptr[i+1]] {
			if b := s.iperm[j]; b > a {
				cnt[b]++
			}
		}
	}
	cp := make([]int, n+1)
	for b := 0; b < n; b++ {
		cp[b+1] = cp[b] + cnt[b] + 1
	}
	if cp[n] > maxIndex {
		return errPattern("%d stored entries exceed the int32 index range", cp[n])
	}
	ci := make([]int32, cp[n])
	copy(cnt, cp[:n])
	for a := 0; a < n; a++ {
		i := s.perm[a]
		for _, j := range adj.idx[adj.ptr[i]:adj.ptr[i+1]] {
			if b := s.iperm[j]; b > a {
				ci[cnt[b]] = int32(a)
				cnt[b]++
			}
		}
	}
	for b := 0; b < n; b++ {
		ci[cp[b+1]-1] = int32(b)
	}
	s.cp, s.ci = cp, ci
	return nil
}

// factorPattern computes the elimination tree and the pattern of L. Row k
// of L is the set of nodes reached by walking the elimination tree up from
// each a < k with C_ak ≠ 0 until k (the row subtree); each walk stops at a
// node already visited for this k, so the cost is O(nnz(L)).
func (s *symbolic) factorPattern() error {
	n := s.n
	parent := make([]int, n)
	flag := make([]int, n)
	cnt := make([]int, n)
	for k := 0; k < n; k++ {
		parent[k] = -1
		flag[k] = k
		for _, a32 := range s.ci[s.cp[k] : s.cp[k+1]-1] {
			for a := int(a32); flag[a] != k; a = parent[a] {
				if parent[a] == -1 {
					parent[a] = k
				}
				cnt[a]++
				flag[a] = k
			}
		}
	}
	lp := make([]int, n+1)
	var flops float64
	for j := 0; j < n; j++ {
		lp[j+1] = lp[j] + cnt[j]
		c := float64(cnt[j])
		flops += c * (c + 3) / 2
	}
	if lp[n] > maxIndex {
		return errPattern("nnz(L) = %d exceeds the int32 index range", lp[n])
	}
	li := make([]int32, lp[n])
	rp := make([]int, n+1)
	rj := make([]int32, lp[n])
	next := cnt
	copy(next, lp[:n])
	for k := 0; k < n; k++ {
		flag[k] = -1
	}
	for k := 0; k < n; k++ {
		flag[k] = k
		for _, a32 := range s.ci[s.cp[k] : s.cp[k+1]-1] {
			for a := int(a32); flag[a] != k; a = parent[a] {
				li[next[a]] = int32(k)
				next[a]++
				flag[a] = k
			}
		}
	}
	// Rows of L: transpose the column pattern; columns come out increasing.
	rc := flag
	clear(rc)
	for _, k := range li {
		rc[k]++
	}
	for k := 0; k < n; k++ {
		rp[k+1] = rp[k] + rc[k]
	}
	copy(rc, rp[:n])
	for j := 0; j < n; j++ {
		for _, k := range li[lp[j]:lp[j+1]] {
			rj[rc[k]] = int32(j)
			rc[k]++
		}
	}
	s.parent, s.lp, s.li, s.rp, s.rj, s.flops = parent, lp, li, rp, rj, flops
	return nil
}

// position returns the index in ci of C_ab (a ≤ b), which must be in the
// pattern.
func (s *symbolic) position(a, b int) int {
	col := s.ci[s.cp[b]:s.cp[b+1]]
	t := sort.Search(len(col), func(t int) bool { return int(col[t]) >= a })
	return s.cp[b] + t
}

// nnzL returns the number of entries of L strictly below the diagonal.
func (s *symbolic) nnzL() int { return s.lp[s.n] }
