// Package colour colours the columns of a sparse matrix for Curtis–Powell–Reid
// column compression: columns that share no row get the same colour, so
// that one directional derivative along the sum of a colour's unit vectors
// recovers every one of its columns (each row touches at most one column of
// a colour). This is a distance-2 colouring of the bipartite row–column
// graph, a distance-1 colouring of the column intersection graph, computed
// greedily without forming that graph: colouring column j visits the rows
// of j and their columns, so the whole colouring costs O(Σ_i r_i²) for row
// lengths r_i, with O(m + n + nnz) memory.
package colour

import "sort"

// Order is the order in which the greedy colouring visits the columns.
type Order int

const (
	// Natural visits the columns 0, 1, …, n−1.
	Natural Order = iota
	// LargestFirst visits the columns by decreasing number of nonzeros
	// (ties in natural order), which usually needs fewer colours on
	// irregular patterns.
	LargestFirst
)

// Columns colours the n columns of the m×n pattern given in compressed
// sparse row form (the columns of row i are col[rowPtr[i]:rowPtr[i+1]],
// each at most once per row) so that no two columns of the same colour
// share a row. It returns each column's colour in [0, count) and count,
// which is at least the largest row length (and zero for n = 0). It panics
// if the pattern's sizes are inconsistent or a column index is outside
// [0, n).
func Columns(m, n int, rowPtr, col []int, order Order) (colours []int, count int) {
	if len(rowPtr) != m+1 || rowPtr[0] != 0 || rowPtr[m] != len(col) {
		panic("colour: inconsistent CSR pattern")
	}
	// The rows of each column (compressed sparse column form).
	cp := make([]int, n+1)
	for _, j := range col {
		if j < 0 || j >= n {
			panic("colour: column index out of range")
		}
		cp[j+1]++
	}
	for j := range n {
		cp[j+1] += cp[j]
	}
	rows := make([]int, len(col))
	next := append([]int(nil), cp[:n]...)
	for i := range m {
		for q := rowPtr[i]; q < rowPtr[i+1]; q++ {
			j := col[q]
			rows[next[j]] = i
			next[j]++
		}
	}
	visit := make([]int, n)
	for j := range visit {
		visit[j] = j
	}
	if order == LargestFirst {
		sort.SliceStable(visit, func(a, b int) bool {
			ja, jb := visit[a], visit[b]
			return cp[ja+1]-cp[ja] > cp[jb+1]-cp[jb]
		})
	}
	colours = make([]int, n)
	for j := range colours {
		colours[j] = -1
	}
	// forbidden[c] == j+1 marks colour c as taken by a neighbour of j.
	var forbidden []int
	for _, j := range visit {
		for r := cp[j]; r < cp[j+1]; r++ {
			i := rows[r]
			for q := rowPtr[i]; q < rowPtr[i+1]; q++ {
				if c := colours[col[q]]; c >= 0 {
					forbidden[c] = j + 1
				}
			}
		}
		c := 0
		for c < len(forbidden) && forbidden[c] == j+1 {
			c++
		}
		if c == len(forbidden) {
			forbidden = append(forbidden, 0)
		}
		colours[j] = c
		count = max(count, c+1)
	}
	return colours, count
}
