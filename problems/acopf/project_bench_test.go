package acopf

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/sparse"
)

// BenchmarkProjectPerturbed projects a batch of 100 points perturbed
// around the cached reference optimum (Perturbation σ = 1e-3 on Vm, Va and
// the injections, seed 1) onto the power flow and limits of the large
// PGLib cases (Model.ConstraintWith with the smoothing FBEpsilon and
// ProjectionFBEpsilon, AdaNP's sparse path, Tol 1e-6, MaxDepth 100), as
// examples/acopf -project does, and reports the mean and largest depth,
// the samples that did not converge and max|c| after. Minutes per
// iteration on two cores for case10000_goc with FBEpsilon:
//
//	go test -run '^$' -bench ProjectPerturbed -benchtime 1x ./problems/acopf
func BenchmarkProjectPerturbed(b *testing.B) {
	for _, bc := range []struct {
		name string
		eps  float64
	}{
		{"pglib_opf_case1354_pegase", FBEpsilon}, {"pglib_opf_case1354_pegase", ProjectionFBEpsilon},
		{"pglib_opf_case2869_pegase", FBEpsilon}, {"pglib_opf_case2869_pegase", ProjectionFBEpsilon},
		{"pglib_opf_case10000_goc", FBEpsilon}, {"pglib_opf_case10000_goc", ProjectionFBEpsilon},
	} {
		name := bc.name
		b.Run(fmt.Sprintf("%s/eps=%g", name, bc.eps), func(b *testing.B) {
			m := loadModel(b, name)
			con, err := m.ConstraintWith(ConstraintOptions{FBEps: bc.eps})
			require.NoError(b, err)
			a, err := enforce.NewAdaNP(con, enforce.Settings{Tol: 1e-6, MaxDepth: 100, Path: enforce.PathSparse})
			require.NoError(b, err)
			x, y := perturbedOptima(b, m, 100, 1e-3)
			dst := mat.NewDense(y.RawMatrix().Rows, y.RawMatrix().Cols, nil)
			var st enforce.Stats
			b.ReportAllocs()
			for b.Loop() {
				st, err = a.ProjectTo(dst, x, y)
				require.NoError(b, err)
			}
			b.ReportMetric(st.MeanDepth, "depth/mean")
			b.ReportMetric(float64(st.Depth), "depth/max")
			b.ReportMetric(float64(st.NotConverged), "fails")
			b.ReportMetric(st.After.Max, "max|c|")
		})
	}
}

// BenchmarkProjectPerturbedInterior projects the same kind of batch, 100
// points perturbed with σ = 1e-3 and with σ = 1e-2, onto case1354_pegase's
// power flow within its limits in two ways: AdaNP with the limits'
// Fischer–Burmeister rows (ProjectionFBEpsilon) and enforce.Interior
// (Model.Box), both on the sparse path, Tol 1e-6, MaxDepth 100. At σ = 1e-2
// the rows stall on every point and Interior converges
// (docs/acopf.md, "Bounds kept strictly"):
//
//	go test -run '^$' -bench ProjectPerturbedInterior -benchtime 1x ./problems/acopf
func BenchmarkProjectPerturbedInterior(b *testing.B) {
	m := loadModel(b, "pglib_opf_case1354_pegase")
	con, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon})
	require.NoError(b, err)
	s := enforce.Settings{Tol: 1e-6, MaxDepth: 100, Path: enforce.PathSparse}
	fb, err := enforce.NewAdaNP(con, s)
	require.NoError(b, err)
	in, err := enforce.NewInterior(m.PowerFlow(), m.Box(), 0, s)
	require.NoError(b, err)
	for _, sigma := range []float64{1e-3, 1e-2} {
		x, y := perturbedOptima(b, m, 100, sigma)
		dst := mat.NewDense(y.RawMatrix().Rows, y.RawMatrix().Cols, nil)
		for _, p := range []struct {
			name string
			f    func() (enforce.Stats, error)
		}{
			{"fb", func() (enforce.Stats, error) { return fb.ProjectTo(dst, x, y) }},
			{"interior", func() (enforce.Stats, error) { return in.ProjectTo(dst, x, y) }},
		} {
			b.Run(fmt.Sprintf("sigma=%g/%s", sigma, p.name), func(b *testing.B) {
				var st enforce.Stats
				for b.Loop() {
					st, err = p.f()
					require.NoError(b, err)
				}
				b.ReportMetric(st.MeanDepth, "depth/mean")
				b.ReportMetric(float64(st.NotConverged), "fails")
				b.ReportMetric(st.After.Max, "max|c|")
			})
		}
	}
}

// BenchmarkGramPairs factors and solves once with the Gram matrix
// G = B·Bᵀ of the power flow and limits of the large PGLib cases (B at the
// first perturbed point of BenchmarkProjectPerturbed, ε_FB =
// ProjectionFBEpsilon), as one AdaNP step on the sparse path does, with
// the kernel's elimination of the limits' pair rows (pairs=true, what
// AdaNP uses) and without it (pairs=false); it reports the sizes of L.
// Repeat the command to alternate the two:
//
//	for i in 1 2 3; do go test -run '^$' -bench GramPairs ./problems/acopf; done
func BenchmarkGramPairs(b *testing.B) {
	for _, name := range []string{"pglib_opf_case1354_pegase", "pglib_opf_case2869_pegase", "pglib_opf_case10000_goc"} {
		m := loadModel(b, name)
		con, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon})
		require.NoError(b, err)
		sj := enforce.CapabilitiesOf(con).Sparse
		_, n, nc := con.Dims()
		x, y := perturbedOptima(b, m, 1, 1e-3)
		yext := make([]float64, n)
		copy(yext, y.RawRowView(0))
		c := make([]float64, nc)
		vals := make([]float64, len(sj.Col))
		sj.Eval(x.RawRowView(0), yext, c, vals)
		ones := make([]float64, n)
		for i := range ones {
			ones[i] = 1
		}
		for _, pairs := range []bool{false, true} {
			g, err := sparse.AnalyseGram(nc, n, sj.RowPtr, sj.Col, sparse.Options{EliminatePairs: pairs})
			require.NoError(b, err)
			f := g.NewFactor()
			rhs := make([]float64, nc)
			b.Run(fmt.Sprintf("%s/pairs=%v", name, pairs), func(b *testing.B) {
				for b.Loop() {
					require.NoError(b, f.Factor(vals, ones, 0))
					copy(rhs, c)
					f.Solve(rhs)
				}
				b.ReportMetric(float64(g.NNZL()), "nnz(L)")
				b.ReportMetric(float64(g.PairRows()), "pair-rows")
			})
		}
	}
}
