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
	nnz   int // nnz(L), strictly lower

	sn     *supernodal // the supernodes, for Method Supernodal; nil otherwise
	neg    []bool      // by step, a negative pivot (augmented systems); nil for none
	method Method      // Simplicial or Supernodal
}

// adjacency is a symmetric pattern without its diagonal, both triangles
// stored: the neighbours of i are idx[ptr[i]:ptr[i+1]].
type adjacency struct {
	n   int
	ptr []int
	idx []int32
}

// edgeAdjacency returns the adjacency of n nodes whose undirected edges
// a–b (a ≠ b) edges yields, in two passes that yield the same edges: each
// node's neighbours in the order of its edges, a neighbour repeated by
// another edge kept once.
func edgeAdjacency(n int, edges func(yield func(a, b int))) *adjacency {
	ptr := make([]int, n+1)
	edges(func(a, b int) {
		ptr[a+1]++
		ptr[b+1]++
	})
	for k := 0; k < n; k++ {
		ptr[k+1] += ptr[k]
	}
	idx := make([]int32, ptr[n])
	fill := append([]int(nil), ptr[:n]...)
	edges(func(a, b int) {
		idx[fill[a]] = int32(b)
		fill[a]++
		idx[fill[b]] = int32(a)
		fill[b]++
	})
	mark := make([]int32, n)
	for k := range mark {
		mark[k] = -1
	}
	out := 0
	for k := 0; k < n; k++ {
		lo, hi := ptr[k], ptr[k+1]
		ptr[k] = out
		for _, j := range idx[lo:hi] {
			if mark[j] != int32(k) {
				mark[j] = int32(k)
				idx[out] = j
				out++
			}
		}
	}
	ptr[n] = out
	return &adjacency{n: n, ptr: ptr, idx: idx[:out]}
}

// newSymbolic orders the pattern by opt and computes the pattern of C, the
// elimination tree and the column counts of L, and with full the pattern of
// L.
func newSymbolic(adj *adjacency, opt *Options, full bool) (*symbolic, error) {
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
	s := &symbolic{n: n, perm: perm, iperm: iperm, neg: opt.neg}
	if err := s.upper(adj); err != nil {
		return nil, err
	}
	if opt.Ordering == AMD {
		// A postorder of the elimination tree is an equivalent ordering
		// (the same fill and flops) whose subtrees are contiguous, for
		// locality in the numeric phase.
		post := postorder(etree(n, s.cp, s.ci))
		old := append([]int(nil), perm...)
		for k, a := range post {
			perm[k] = old[a]
		}
		for k, i := range perm {
			iperm[i] = k
		}
		if err := s.upper(adj); err != nil {
			return nil, err
		}
	}
	if err := s.factorPattern(opt.MaxNNZL, full); err != nil {
		return nil, err
	}
	method := opt.Method
	if method == Auto {
		method = Simplicial
		if s.flops >= AutoSupernodal*float64(s.nnz) && s.nnz > 0 {
			method = Supernodal
		}
	}
	switch method {
	case Simplicial:
		s.method = Simplicial
	case Supernodal:
		s.method = Supernodal
		if full {
			s.sn = newSupernodal(s, opt.neg)
			s.li, s.rp, s.rj = nil, nil, nil
		}
	default:
		return nil, errPattern("unknown method %d", int(opt.Method))
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

// factorPattern computes the elimination tree and the pattern of L; it
// stops with a *TooLargeError as soon as nnz(L) passes maxL (when maxL > 0)
// or the int32 index range, before allocating L. Without full it stops
// after the elimination tree and the column counts: O(nnz(L)) time, O(n)
// memory. Row k
// of L is the set of nodes reached by walking the elimination tree up from
// each a < k with C_ak ≠ 0 until k (the row subtree); each walk stops at a
// node already visited for this k, so the cost is O(nnz(L)).
func (s *symbolic) factorPattern(maxL int, full bool) error {
	n := s.n
	parent := make([]int, n)
	flag := make([]int, n)
	cnt := make([]int, n)
	limit := maxIndex
	if maxL > 0 && maxL < limit {
		limit = maxL
	}
	total := 0
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
				total++
			}
		}
		if total > limit {
			return &TooLargeError{NNZL: total, Rows: k + 1, N: n, Limit: limit}
		}
	}
	lp := make([]int, n+1)
	var flops float64
	for j := 0; j < n; j++ {
		lp[j+1] = lp[j] + cnt[j]
		c := float64(cnt[j])
		flops += c * (c + 3) / 2
	}
	s.parent, s.lp, s.flops, s.nnz = parent, lp, flops, lp[n]
	if !full {
		return nil
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
	s.li, s.rp, s.rj = li, rp, rj
	return nil
}

// etree returns the elimination tree of the matrix whose upper triangle is
// (cp, ci) by Liu's algorithm with path compression (Davis §4.1):
// O(nnz·α) time.
func etree(n int, cp []int, ci []int32) []int {
	parent := make([]int, n)
	anc := make([]int, n)
	for k := 0; k < n; k++ {
		parent[k] = -1
		anc[k] = -1
		for _, a32 := range ci[cp[k]:cp[k+1]] {
			for a := int(a32); a != -1 && a < k; {
				up := anc[a]
				anc[a] = k
				if up == -1 {
					parent[a] = k
				}
				a = up
			}
		}
	}
	return parent
}

// postorder returns a depth-first postorder of the forest parent: post[k]
// is the k-th node visited, children in increasing order.
func postorder(parent []int) []int {
	n := len(parent)
	head := make([]int, n)
	next := make([]int, n)
	for j := range head {
		head[j] = -1
	}
	for j := n - 1; j >= 0; j-- {
		if p := parent[j]; p != -1 {
			next[j] = head[p]
			head[p] = j
		}
	}
	post := make([]int, 0, n)
	stack := make([]int, 0, 64)
	for root := 0; root < n; root++ {
		if parent[root] != -1 {
			continue
		}
		stack = append(stack, root)
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			if c := head[top]; c != -1 {
				head[top] = next[c]
				stack = append(stack, c)
				continue
			}
			stack = stack[:len(stack)-1]
			post = append(post, top)
		}
	}
	return post
}

// position returns the index in ci of C_ab (a ≤ b), which must be in the
// pattern.
func (s *symbolic) position(a, b int) int {
	col := s.ci[s.cp[b]:s.cp[b+1]]
	t := sort.Search(len(col), func(t int) bool { return int(col[t]) >= a })
	return s.cp[b] + t
}

// nnzL returns the number of entries of L strictly below the diagonal.
func (s *symbolic) nnzL() int { return s.nnz }

// bytes returns the memory held by the analysis.
func (s *symbolic) bytes() int {
	b := 8*(len(s.perm)+len(s.iperm)+len(s.cp)+len(s.parent)+len(s.lp)+len(s.rp)) +
		4*(len(s.ci)+len(s.li)+len(s.rj))
	if sn := s.sn; sn != nil {
		b += 8*(len(sn.super)+len(sn.rp)+len(sn.xp)+len(sn.lowP)) +
			4*(len(sn.snode)+len(sn.rows)+len(sn.lowI)+len(sn.lowPos))
	}
	return b
}
