package acopf

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// BenchmarkStepControl measures AdaNP's step control on the shipped PGLib
// grids (issue 54): steps per sample and rows that missed 1e-6, per batch,
// from perturbed optima (σ = 1e-2 and 1e-3, the points of docs/acopf.md)
// and from the flat start, with the paper's full steps and with
// Settings.Damping and Settings.Smoothing. Run it with
//
//	go test -run '^$' -bench StepControl -benchtime 1x ./problems/acopf/
//
// (the case10000_goc rows take minutes; -short leaves them out).
func BenchmarkStepControl(b *testing.B) {
	cases := []string{"pglib_opf_case1354_pegase", "pglib_opf_case2869_pegase", "pglib_opf_case10000_goc"}
	if testing.Short() {
		cases = cases[:1]
	}
	controls := []struct {
		name string
		s    enforce.Settings
	}{
		{"full", enforce.Settings{}},
		{"linesearch", enforce.Settings{LineSearch: true}},
		{"damping", enforce.Settings{Damping: enforce.DefaultDamping}},
		{"smoothing+damping", enforce.Settings{Smoothing: 1e-2, Damping: enforce.DefaultDamping}},
	}
	for _, name := range cases {
		c, err := Load(name)
		if err != nil {
			b.Fatal(err)
		}
		m, err := NewModel(c)
		if err != nil {
			b.Fatal(err)
		}
		k, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon})
		if err != nil {
			b.Fatal(err)
		}
		opt, err := ReferenceOptimum(name)
		if err != nil {
			b.Fatal(err)
		}
		nx, ny := m.Dims()
		rows := 100
		if name == "pglib_opf_case10000_goc" {
			rows = 20
		}
		starts := []struct {
			name string
			y    *mat.Dense
		}{}
		for _, sigma := range []float64{1e-3, 1e-2} {
			y := mat.NewDense(rows, ny, nil)
			rng := rand.New(rand.NewPCG(1, 28))
			for r := range rows {
				m.Perturb(y.RawRowView(r), opt.Y, Perturbation{Vm: sigma, Va: sigma, PQ: sigma}, rng)
			}
			starts = append(starts, struct {
				name string
				y    *mat.Dense
			}{fmt.Sprintf("sigma=%g", sigma), y})
		}
		starts = append(starts, struct {
			name string
			y    *mat.Dense
		}{"flat", mat.NewDense(1, ny, m.FlatStart())})
		for _, st := range starts {
			r, _ := st.y.Dims()
			x := mat.NewDense(r, nx, nil)
			for i := range r {
				x.SetRow(i, m.Loads())
			}
			for _, ctl := range controls {
				s := ctl.s
				s.Path = enforce.PathSparse
				a, err := enforce.NewAdaNP(k, s)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(fmt.Sprintf("%s/%s/%s", name, st.name, ctl.name), func(b *testing.B) {
					b.ReportAllocs()
					var stats enforce.Stats
					for b.Loop() {
						if _, stats, err = a.Project(x, st.y); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(stats.MeanDepth, "steps/sample")
					b.ReportMetric(float64(stats.Depth), "maxsteps")
					b.ReportMetric(float64(stats.NotConverged), "missed")
					b.ReportMetric(float64(r), "rows")
					b.ReportMetric(stats.Displacement.Mean, "disp")
				})
			}
		}
	}
}
