//go:build cholmod

package sparse

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/enforce-nn/enforce/internal/sparse/cholmodbench"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scaledCSC returns B·diag(√winv) in compressed sparse column form.
func scaledCSC(m csr, winv []float64) (ptr, idx []int, val []float64) {
	ptr = make([]int, m.cols+1)
	for _, c := range m.col {
		ptr[c+1]++
	}
	for k := 0; k < m.cols; k++ {
		ptr[k+1] += ptr[k]
	}
	idx = make([]int, len(m.col))
	val = make([]float64, len(m.col))
	next := append([]int(nil), ptr[:m.cols]...)
	for i := 0; i < m.rows; i++ {
		for p := m.ptr[i]; p < m.ptr[i+1]; p++ {
			c := m.col[p]
			idx[next[c]] = i
			val[next[c]] = m.val[p] * math.Sqrt(winv[c])
			next[c]++
		}
	}
	return ptr, idx, val
}

// gramLower returns the lower triangle of B·diag(winv)·Bᵀ + eps·I in CSC
// form, rows increasing.
func gramLower(m csr, winv []float64, eps float64) (ptr, idx []int, val []float64) {
	cp, ci, cv := scaledCSC(m, winv)
	acc := make([]float64, m.rows)
	mark := make([]int, m.rows)
	for i := range mark {
		mark[i] = -1
	}
	ptr = []int{0}
	var rows []int
	for j := 0; j < m.rows; j++ {
		rows = append(rows[:0], j)
		mark[j] = j
		acc[j] = eps
		for p := m.ptr[j]; p < m.ptr[j+1]; p++ {
			c := m.col[p]
			bj := m.val[p] * math.Sqrt(winv[c])
			for q := cp[c]; q < cp[c+1]; q++ {
				i := ci[q]
				if i < j {
					continue
				}
				if mark[i] != j {
					mark[i] = j
					acc[i] = 0
					rows = append(rows, i)
				}
				acc[i] += bj * cv[q]
			}
		}
		sort.Ints(rows)
		for _, i := range rows {
			idx = append(idx, i)
			val = append(val, acc[i])
		}
		ptr = append(ptr, len(idx))
	}
	return ptr, idx, val
}

// TestCholmodAMD: this package's AMD gives the same nnz(L) as CHOLMOD's
// AMD (both postordered) on the benchmark families' smaller matrices.
func TestCholmodAMD(t *testing.T) {
	for _, bc := range append(benchCases(1000), benchCases(10000)[0]) {
		m := bc.b
		g, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{})
		require.NoError(t, err)
		cp, ci, _ := scaledCSC(m, make([]float64, m.cols))
		c, err := cholmodbench.NewGram(m.rows, m.cols, cp, ci, cholmodbench.Simplicial)
		require.NoError(t, err)
		assert.Equal(t, c.NNZL(), g.NNZL(), bc.name)
		c.Free()
	}
}

// TestCholmodAgrees checks the harness: CHOLMOD and this package solve the
// same systems to the same answer.
func TestCholmodAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := meshB(rng, 12, 13)
	winv := randomVec(rng, m.cols, 0.5, 2)
	g, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{})
	require.NoError(t, err)
	f := g.NewFactor()
	require.NoError(t, f.Factor(m.val, winv, 0.1))
	cp, ci, cv := scaledCSC(m, winv)
	for _, mode := range []cholmodbench.Mode{cholmodbench.Simplicial, cholmodbench.Supernodal} {
		c, err := cholmodbench.NewGram(m.rows, m.cols, cp, ci, mode)
		require.NoError(t, err)
		require.NoError(t, c.Factor(cv, 0.1))
		x := randomVec(rng, m.rows, -1, 1)
		y := append([]float64(nil), x...)
		f.Solve(x)
		c.Solve(y)
		assert.InDeltaSlice(t, y, x, 1e-10)
		c.Free()
	}
}

// BenchmarkVsCholmod factors the benchmark families with this package
// (Simplicial and Supernodal) and with CHOLMOD (simplicial LDLᵀ and
// supernodal LLᵀ, each with its own AMD and postorder), in one run:
// "gram" factors B·W⁻¹·Bᵀ from B (assembly included on both sides; CHOLMOD
// gets B·W^{-1/2} and forms A·Aᵀ itself), "sym" factors the assembled G
// given by its lower triangle; "solve" is one solve with the sym factor;
// "-single" is Supernodal with L in float32 (NewFactorSingle), whose
// solve uses the gram factor. Each solve case factors first, so that a
// -bench filter may leave out the factorisations.
// Every case reports wall and thread CPU time per call (see loopCPU).
func BenchmarkVsCholmod(b *testing.B) {
	for _, nc := range benchSizes {
		for _, bc := range benchCases(nc) {
			b.Run(bc.name, func(b *testing.B) { benchVsCholmod(b, bc.b) })
		}
	}
}

// BenchmarkVsCholmodSPMesh is BenchmarkVsCholmod on the pattern of the
// root package's BenchmarkSparseMesh at nc = 317² (spMeshB), the matrix of
// issue 31's batch target.
func BenchmarkVsCholmodSPMesh(b *testing.B) {
	benchVsCholmod(b, spMeshB(rand.New(rand.NewPCG(317, 31)), 317))
}

// benchVsCholmod runs BenchmarkVsCholmod's cases on one matrix.
func benchVsCholmod(b *testing.B, m csr) {
	rng := rand.New(rand.NewPCG(1, 2))
	winv := randomVec(rng, m.cols, 0.5, 2)
	gp, gi, gv := gramLower(m, winv, 0)
	x := randomVec(rng, m.rows, -1, 1)
	for _, method := range []Method{Simplicial, Supernodal} {
		opt := Options{Method: method}
		g, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, opt)
		if err != nil {
			b.Fatal(err)
		}
		s, err := AnalyseSym(m.rows, gp, gi, opt)
		if err != nil {
			b.Fatal(err)
		}
		name := "ours-" + method.String()
		f := g.NewFactor()
		b.Run("gram/"+name, func(b *testing.B) {
			loopCPU(b, func() {
				if err := f.Factor(m.val, winv, 0); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(g.NNZL()), "nnzL")
		})
		sf := s.NewFactor()
		b.Run("sym/"+name, func(b *testing.B) {
			loopCPU(b, func() {
				if err := sf.Factor(gv); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(s.NNZL()), "nnzL")
		})
		b.Run("solve/"+name, func(b *testing.B) {
			if err := sf.Factor(gv); err != nil { // when "sym" was filtered out
				b.Fatal(err)
			}
			loopCPU(b, func() { sf.Solve(x) })
		})
		if method == Supernodal {
			fs := g.NewFactorSingle()
			b.Run("gram/"+name+"-single", func(b *testing.B) {
				loopCPU(b, func() {
					if err := fs.Factor(m.val, winv, 0); err != nil {
						b.Fatal(err)
					}
				})
			})
			b.Run("solve/"+name+"-single", func(b *testing.B) {
				if err := fs.Factor(m.val, winv, 0); err != nil {
					b.Fatal(err)
				}
				loopCPU(b, func() { fs.Solve(x) })
			})
		}
	}
	cp, ci, cv := scaledCSC(m, winv)
	for _, mode := range []struct {
		name string
		m    cholmodbench.Mode
	}{{"simplicial", cholmodbench.Simplicial}, {"supernodal", cholmodbench.Supernodal}} {
		c, err := cholmodbench.NewGram(m.rows, m.cols, cp, ci, mode.m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("gram/cholmod-"+mode.name, func(b *testing.B) {
			loopCPU(b, func() {
				if err := c.Factor(cv, 0); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(c.NNZL()), "nnzL")
		})
		c.Free()
		c, err = cholmodbench.NewSym(m.rows, gp, gi, mode.m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("sym/cholmod-"+mode.name, func(b *testing.B) {
			loopCPU(b, func() {
				if err := c.Factor(gv, 0); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(c.NNZL()), "nnzL")
		})
		b.Run("solve/cholmod-"+mode.name, func(b *testing.B) {
			if err := c.Factor(gv, 0); err != nil {
				b.Fatal(err)
			}
			loopCPU(b, func() { c.Solve(x) })
		})
		c.Free()
	}
}
