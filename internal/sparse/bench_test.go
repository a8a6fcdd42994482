package sparse

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchCase is one matrix of the benchmark families.
type benchCase struct {
	name string
	b    csr
}

// benchSizes are the N_C of issue 31's benchmark table.
var benchSizes = []int{1000, 10000, 100000}

// meshSide returns the side k of a k×k grid with k² ≈ nc.
func meshSide(nc int) int {
	k := 1
	for (k+1)*(k+1) <= nc {
		k++
	}
	return k
}

// benchCases returns the two synthetic families at N_C = nc:
//
//   - mesh: B = meshB(k, k), one row per node of a k×k grid (k² ≈ nc) with
//     a private column and one column per incident grid edge, so G = B·W⁻¹·Bᵀ
//     has the 5-point-stencil pattern (5 entries per row, like the 2-D
//     Laplacian; ~3 per row of the lower triangle);
//   - random: B with 3 random columns out of 2·nc per row plus a private
//     column (full row rank), so G is a random graph of average degree ≈ 3,
//     which has no small separators: heavy fill, nnz(L) growing like nc².
//
// The random family at nc = 10⁵ is left out of the numeric benchmarks: its
// factor does not fit (see TestRandomFill and the package report).
func benchCases(nc int) []benchCase {
	rng := rand.New(rand.NewPCG(uint64(nc), 31))
	k := meshSide(nc)
	cases := []benchCase{{name: fmt.Sprintf("mesh/nc=%d", k*k), b: meshB(rng, k, k)}}
	if nc <= 10000 {
		cases = append(cases, randomCase(nc))
	}
	return cases
}

// randomCase returns the random family's matrix at N_C = nc.
func randomCase(nc int) benchCase {
	rng := rand.New(rand.NewPCG(uint64(nc), 32))
	return benchCase{name: fmt.Sprintf("random/nc=%d", nc), b: randomB(rng, nc, 2*nc, 3, true)}
}

// BenchmarkRandomCount runs CountGram (ordering, elimination tree and
// column counts, no factor) on the random family at every size, 10⁵
// included, and reports the fill that makes its factorisation infeasible
// there.
func BenchmarkRandomCount(b *testing.B) {
	for _, nc := range benchSizes {
		bc := randomCase(nc)
		m := bc.b
		b.Run(bc.name, func(b *testing.B) {
			var st Stats
			for b.Loop() {
				var err error
				if st, err = CountGram(m.rows, m.cols, m.ptr, m.col, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.NNZL), "nnzL")
			b.ReportMetric(st.Flops, "flops")
			b.ReportMetric(float64(st.NNZA), "nnzG")
		})
	}
}

// BenchmarkGram times, per family and size, the AMD ordering alone and,
// for each numeric method, the symbolic analysis (AnalyseGram with AMD, the
// ordering included), the numeric factorisation (assembly of B·W⁻¹·Bᵀ
// included) and one solve. It reports nnz(L), the flops of one
// factorisation, the bytes of the shared analysis and of one Factor, and
// the CPU time per call (see loopCPU).
func BenchmarkGram(b *testing.B) {
	for _, nc := range benchSizes {
		for _, bc := range benchCases(nc) {
			b.Run(bc.name, func(b *testing.B) { benchGram(b, bc.b) })
		}
	}
}

// benchGram runs BenchmarkGram's cases on one matrix.
func benchGram(b *testing.B, m csr) {
	b.Run("amd", func(b *testing.B) {
		adj := testAdjacency(m)
		b.ReportAllocs()
		loopCPU(b, func() { amdOrder(adj, DefaultDense) })
	})
	for _, method := range []Method{Simplicial, Supernodal} {
		opt := Options{Method: method}
		rng := rand.New(rand.NewPCG(1, 2))
		winv := randomVec(rng, m.cols, 0.5, 2)
		g, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, opt)
		if err != nil {
			b.Fatal(err)
		}
		name := method.String()
		b.Run(name+"/symbolic", func(b *testing.B) {
			b.ReportAllocs()
			loopCPU(b, func() {
				if _, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, opt); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(g.NNZL()), "nnzL")
			b.ReportMetric(float64(g.bytes()), "gramB")
		})
		f := g.NewFactor()
		b.Run(name+"/factor", func(b *testing.B) {
			b.ReportAllocs()
			loopCPU(b, func() {
				if err := f.Factor(m.val, winv, 0); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(g.NNZL()), "nnzL")
			b.ReportMetric(g.Flops(), "flops")
			b.ReportMetric(float64(f.bytes()), "factorB")
		})
		x := randomVec(rng, m.rows, -1, 1)
		b.Run(name+"/solve", func(b *testing.B) {
			if err := f.Factor(m.val, winv, 0); err != nil { // when "factor" was filtered out
				b.Fatal(err)
			}
			b.ReportAllocs()
			loopCPU(b, func() { f.Solve(x) })
		})
		if method != Supernodal {
			continue
		}
		// The same factorisation and solve with L in single precision.
		fs := g.NewFactorSingle()
		b.Run(name+"/factor-single", func(b *testing.B) {
			b.ReportAllocs()
			loopCPU(b, func() {
				if err := fs.Factor(m.val, winv, 0); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(fs.bytes()), "factorB")
		})
		b.Run(name+"/solve-single", func(b *testing.B) {
			if err := fs.Factor(m.val, winv, 0); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			loopCPU(b, func() { fs.Solve(x) })
		})
	}
}

// BenchmarkSPMesh is BenchmarkGram on the pattern of the root package's
// BenchmarkSparseMesh at nc = 317² (spMeshB: B·Bᵀ couples nodes up to
// Manhattan distance 2), the matrix of issue 31's batch target.
func BenchmarkSPMesh(b *testing.B) {
	benchGram(b, spMeshB(rand.New(rand.NewPCG(317, 31)), 317))
}
