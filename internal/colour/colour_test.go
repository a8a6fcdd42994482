package colour

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomPattern returns an m×n CSR pattern with about k nonzeros per row.
func randomPattern(rnd *rand.Rand, m, n, k int) (rowPtr, col []int) {
	rowPtr = []int{0}
	for range m {
		seen := map[int]bool{}
		for range 1 + rnd.IntN(k) {
			seen[rnd.IntN(n)] = true
		}
		for j := range n {
			if seen[j] {
				col = append(col, j)
			}
		}
		rowPtr = append(rowPtr, len(col))
	}
	return rowPtr, col
}

// meshPattern returns the pattern of a 5-point stencil on a g×g grid.
func meshPattern(g int) (rowPtr, col []int) {
	rowPtr = []int{0}
	for r := range g {
		for c := range g {
			for _, d := range [][2]int{{-1, 0}, {0, -1}, {0, 0}, {0, 1}, {1, 0}} {
				rr, cc := r+d[0], c+d[1]
				if rr >= 0 && rr < g && cc >= 0 && cc < g {
					col = append(col, rr*g+cc)
				}
			}
			rowPtr = append(rowPtr, len(col))
		}
	}
	return rowPtr, col
}

// assertValid checks that no row touches two columns of one colour and
// that count is the number of colours used.
func assertValid(t *testing.T, m int, rowPtr, col, colours []int, count int) {
	t.Helper()
	used := make([]bool, count)
	for _, c := range colours {
		require.True(t, c >= 0 && c < count)
		used[c] = true
	}
	for c, u := range used {
		assert.True(t, u, "colour %d unused", c)
	}
	for i := range m {
		seen := map[int]int{}
		for q := rowPtr[i]; q < rowPtr[i+1]; q++ {
			c := colours[col[q]]
			if j, ok := seen[c]; ok {
				t.Fatalf("row %d touches columns %d and %d of colour %d", i, j, col[q], c)
			}
			seen[c] = col[q]
		}
	}
}

func TestColumnsValid(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		m, n int
		k    int
	}{
		{"tall", 200, 50, 4},
		{"wide", 50, 300, 6},
		{"dense-ish", 30, 30, 20},
		{"single", 1, 5, 5},
	} {
		for _, order := range []Order{Natural, LargestFirst} {
			rp, col := randomPattern(rnd, tc.m, tc.n, tc.k)
			colours, count := Columns(tc.m, tc.n, rp, col, order)
			assertValid(t, tc.m, rp, col, colours, count)
			longest := 0
			for i := range tc.m {
				longest = max(longest, rp[i+1]-rp[i])
			}
			assert.GreaterOrEqual(t, count, longest, tc.name)
		}
	}
}

// A 5-point stencil needs few colours: greedy finds at most 7 (the optimum
// is 5), independent of the grid size.
func TestColumnsMesh(t *testing.T) {
	for _, g := range []int{3, 10, 60} {
		rp, col := meshPattern(g)
		colours, count := Columns(g*g, g*g, rp, col, Natural)
		assertValid(t, g*g, rp, col, colours, count)
		assert.LessOrEqual(t, count, 7)
		assert.GreaterOrEqual(t, count, 5)
	}
}

func TestColumnsEmpty(t *testing.T) {
	colours, count := Columns(2, 3, []int{0, 0, 0}, nil, Natural)
	assert.Equal(t, []int{0, 0, 0}, colours)
	assert.Equal(t, 1, count)
	_, count = Columns(0, 0, []int{0}, nil, Natural)
	assert.Equal(t, 0, count)
}

func TestColumnsPanics(t *testing.T) {
	assert.Panics(t, func() { Columns(1, 2, []int{0, 1}, []int{2}, Natural) })
	assert.Panics(t, func() { Columns(2, 2, []int{0, 1}, []int{0}, Natural) })
}

// BenchmarkColumnsMesh colours a 5-point stencil with 10⁵ columns.
func BenchmarkColumnsMesh(b *testing.B) {
	rp, col := meshPattern(317)
	b.ReportAllocs()
	for b.Loop() {
		Columns(317*317, 317*317, rp, col, Natural)
	}
}
