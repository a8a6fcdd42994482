package sparse

import (
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/cputime"
)

// csr is a sparse matrix in compressed sparse row form.
type csr struct {
	rows, cols int
	ptr, col   []int
	val        []float64
}

// randomB returns an nc×ny matrix with perRow entries per row at random
// columns and values in [-1, 1). With private, row i also has column ny+i
// (so B has ny+nc columns and full row rank almost surely, whatever the
// random part).
func randomB(rng *rand.Rand, nc, ny, perRow int, private bool) csr {
	b := csr{rows: nc, cols: ny, ptr: make([]int, nc+1)}
	if private {
		b.cols += nc
	}
	for i := 0; i < nc; i++ {
		set := map[int]bool{}
		for len(set) < perRow && len(set) < ny {
			set[rng.IntN(ny)] = true
		}
		if private {
			set[ny+i] = true
		}
		cols := make([]int, 0, len(set))
		for c := range set {
			cols = append(cols, c)
		}
		sort.Ints(cols)
		for _, c := range cols {
			b.col = append(b.col, c)
			b.val = append(b.val, 2*rng.Float64()-1)
		}
		b.ptr[i+1] = len(b.col)
	}
	return b
}

// meshB returns the node–edge incidence-like matrix of an nx×ny grid: one
// row per node, one column per node (a self term) and per grid edge; the
// node's row has its own column and the columns of its incident edges. So
// B·Bᵀ has the 5-point-stencil pattern of the grid.
func meshB(rng *rand.Rand, nx, ny int) csr {
	nc := nx * ny
	id := func(x, y int) int { return x*ny + y }
	type edge struct{ a, b int }
	var edges []edge
	for x := 0; x < nx; x++ {
		for y := 0; y < ny; y++ {
			if x+1 < nx {
				edges = append(edges, edge{id(x, y), id(x+1, y)})
			}
			if y+1 < ny {
				edges = append(edges, edge{id(x, y), id(x, y+1)})
			}
		}
	}
	rowsOf := make([][]int, nc)
	for i := 0; i < nc; i++ {
		rowsOf[i] = append(rowsOf[i], i)
	}
	for e, ed := range edges {
		rowsOf[ed.a] = append(rowsOf[ed.a], nc+e)
		rowsOf[ed.b] = append(rowsOf[ed.b], nc+e)
	}
	b := csr{rows: nc, cols: nc + len(edges), ptr: make([]int, nc+1)}
	for i := 0; i < nc; i++ {
		sort.Ints(rowsOf[i])
		for _, c := range rowsOf[i] {
			b.col = append(b.col, c)
			b.val = append(b.val, 2*rng.Float64()-1)
		}
		b.ptr[i+1] = len(b.col)
	}
	return b
}

// denseGram returns B·diag(winv)·Bᵀ + eps·I.
func denseGram(b csr, winv []float64, eps float64) *mat.SymDense {
	bd := mat.NewDense(b.rows, b.cols, nil)
	for i := 0; i < b.rows; i++ {
		for p := b.ptr[i]; p < b.ptr[i+1]; p++ {
			bd.Set(i, b.col[p], b.val[p]*winv[b.col[p]])
		}
	}
	bt := mat.NewDense(b.rows, b.cols, nil)
	for i := 0; i < b.rows; i++ {
		for p := b.ptr[i]; p < b.ptr[i+1]; p++ {
			bt.Set(i, b.col[p], b.val[p])
		}
	}
	var g mat.Dense
	g.Mul(bd, bt.T())
	s := mat.NewSymDense(b.rows, nil)
	for i := 0; i < b.rows; i++ {
		for j := i; j < b.rows; j++ {
			v := 0.5 * (g.At(i, j) + g.At(j, i))
			if i == j {
				v += eps
			}
			s.SetSym(i, j, v)
		}
	}
	return s
}

func randomVec(rng *rand.Rand, n int, lo, hi float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// testAdjacency returns the pattern of B·Bᵀ without its diagonal.
func testAdjacency(m csr) *adjacency {
	bcp := make([]int, m.cols+1)
	for _, c := range m.col {
		bcp[c+1]++
	}
	for k := 0; k < m.cols; k++ {
		bcp[k+1] += bcp[k]
	}
	bri := make([]int32, len(m.col))
	next := append([]int(nil), bcp[:m.cols]...)
	for i := 0; i < m.rows; i++ {
		for p := m.ptr[i]; p < m.ptr[i+1]; p++ {
			bri[next[m.col[p]]] = int32(i)
			next[m.col[p]]++
		}
	}
	adj, err := gramPattern(m.rows, m.ptr, m.col, bcp, bri, 0)
	if err != nil {
		panic(err)
	}
	return adj
}

// loopCPU runs fn in b.Loop on one locked OS thread and reports its CPU
// time per call as "cpu-ns/op" besides the wall time: on a loaded machine
// the thread's CPU time is the steadier measure (zero where cputime.Thread is
// not available).
func loopCPU(b *testing.B, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := cputime.Thread()
	n := 0
	for b.Loop() {
		fn()
		n++
	}
	b.ReportMetric(float64(cputime.Thread()-start)/float64(n), "cpu-ns/op")
}

// spMeshB returns the Jacobian pattern of the root package's spMesh
// benchmark constraint (the mesh of BenchmarkSparseMesh) with random
// values: one row per node of a g×g grid, with the node's two columns 2i
// and 2i+1 and the first column 2j of each of its 4 grid neighbours j, so
// that B·Bᵀ couples nodes up to Manhattan distance 2 (13 entries per row).
func spMeshB(rng *rand.Rand, g int) csr {
	b := csr{rows: g * g, cols: 2 * g * g, ptr: []int{0}}
	for i := range g * g {
		r, c := i/g, i%g
		cols := []int{2 * i, 2*i + 1}
		for _, d := range [][2]int{{-1, 0}, {0, -1}, {0, 1}, {1, 0}} {
			rr, cc := r+d[0], c+d[1]
			if rr >= 0 && rr < g && cc >= 0 && cc < g {
				cols = append(cols, 2*(rr*g+cc))
			}
		}
		sort.Ints(cols)
		for _, j := range cols {
			b.col = append(b.col, j)
			b.val = append(b.val, 2*rng.Float64()-1)
		}
		b.ptr = append(b.ptr, len(b.col))
	}
	return b
}
