package sparse

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The choices of the symbolic analysis, measured on the matrix of issue
// 31's batch target (spMeshB, whose G = B·Bᵀ couples grid nodes up to
// Manhattan distance 2): the factor's flops with AMD on G against (a) the
// quasi-definite augmented system [W Bᵀ; B −εI] ordered by AMD and (b) a
// geometric nested dissection of the grid (separators two lines wide, the
// leaves and separators each ordered by AMD). docs/sparse-benchmarks.md quotes the
// numbers `go test -v -run TestOrderingStudy ./internal/sparse` prints.

// augmentedPattern returns the lower triangle, in CSC, of the pattern of
// [W Bᵀ; B −εI] for B (rows × cols): columns 0…cols−1 are B's columns
// (diagonal and the rows cols+i that use them), then one column per row
// of B holding its diagonal.
func augmentedPattern(b csr) (n int, cp, ri []int) {
	n = b.cols + b.rows
	colsOf := make([][]int, n)
	for j := range n {
		colsOf[j] = []int{j}
	}
	for i := 0; i < b.rows; i++ {
		for q := b.ptr[i]; q < b.ptr[i+1]; q++ {
			colsOf[b.col[q]] = append(colsOf[b.col[q]], b.cols+i)
		}
	}
	cp = []int{0}
	for j := range n {
		ri = append(ri, colsOf[j]...)
		cp = append(cp, len(ri))
	}
	return n, cp, ri
}

// gridND returns a nested dissection ordering of the g×g grid for a
// pattern adj whose edges join nodes up to Manhattan distance w: the grid
// is cut across its longer side by a separator w lines wide, recursively,
// down to blocks of at most leaf nodes; each block and each separator is
// ordered by AMD on the subgraph it induces, separators after the two
// halves they split.
func gridND(adj *adjacency, g, w, leaf int) []int {
	var perm []int
	emit := func(nodes []int) {
		loc := make(map[int]int, len(nodes))
		for k, v := range nodes {
			loc[v] = k
		}
		sub := &adjacency{n: len(nodes), ptr: make([]int, len(nodes)+1)}
		for k, v := range nodes {
			for q := adj.ptr[v]; q < adj.ptr[v+1]; q++ {
				if l, ok := loc[int(adj.idx[q])]; ok {
					sub.idx = append(sub.idx, int32(l))
				}
			}
			sub.ptr[k+1] = len(sub.idx)
		}
		for _, k := range amdOrder(sub, -1) {
			perm = append(perm, nodes[k])
		}
	}
	block := func(r0, r1, c0, c1 int) []int {
		var ns []int
		for r := r0; r < r1; r++ {
			for c := c0; c < c1; c++ {
				ns = append(ns, r*g+c)
			}
		}
		return ns
	}
	var rec func(r0, r1, c0, c1 int)
	rec = func(r0, r1, c0, c1 int) {
		h, wd := r1-r0, c1-c0
		switch {
		case h*wd <= leaf || h <= 2*w+1 || wd <= 2*w+1:
			emit(block(r0, r1, c0, c1))
		case h >= wd:
			m := (r0 + r1 - w) / 2
			rec(r0, m, c0, c1)
			rec(m+w, r1, c0, c1)
			emit(block(m, m+w, c0, c1))
		default:
			m := (c0 + c1 - w) / 2
			rec(r0, r1, c0, m)
			rec(r0, r1, m+w, c1)
			emit(block(r0, r1, m, m+w))
		}
	}
	rec(0, g, 0, g)
	return perm
}

// TestOrderingStudy: on the mesh of the batch target, neither the
// augmented system nor nested dissection needs fewer flops than AMD on
// G, which is why the sparse path factors G with AMD.
func TestOrderingStudy(t *testing.T) {
	sides := []int{100, 317}
	if testing.Short() {
		sides = sides[:1]
	}
	for _, g := range sides {
		b := spMeshB(rand.New(rand.NewPCG(uint64(g), 31)), g)
		amd, err := CountGram(b.rows, b.cols, b.ptr, b.col, Options{})
		require.NoError(t, err)
		n, cp, ri := augmentedPattern(b)
		aug, err := AnalyseSym(n, cp, ri, Options{})
		require.NoError(t, err)
		adj := testAdjacency(b)
		t.Logf("g=%d nc=%d: AMD on G nnz(L) %d, %.3g flops; augmented (n=%d) nnz(L) %d, %.3g flops",
			g, b.rows, amd.NNZL, amd.Flops, n, aug.NNZL(), aug.Flops())
		assert.Greater(t, aug.Flops(), amd.Flops, "augmented system")
		for _, leaf := range []int{64, 1024} {
			nd, err := CountGram(b.rows, b.cols, b.ptr, b.col, Options{Ordering: Given, Perm: gridND(adj, g, 2, leaf)})
			require.NoError(t, err)
			t.Logf("g=%d: nested dissection (leaves ≤ %d) nnz(L) %d, %.3g flops", g, leaf, nd.NNZL, nd.Flops)
			assert.Greater(t, nd.Flops, amd.Flops, "nested dissection, leaves ≤ %d", leaf)
		}
	}
}
