package acopf

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/cputime"
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
	controls := []struct {
		name string
		s    enforce.Settings
	}{
		{"full", enforce.Settings{}},
		{"linesearch", enforce.Settings{LineSearch: true}},
		{"damping", enforce.Settings{Damping: enforce.DefaultDamping}},
		{"smoothing+damping", enforce.Settings{Smoothing: 1e-2, Damping: enforce.DefaultDamping}},
	}
	for _, name := range benchGridNames() {
		m := loadModel(b, name)
		k, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon})
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
			starts = append(starts, struct {
				name string
				y    *mat.Dense
			}{fmt.Sprintf("sigma=%g", sigma), func() *mat.Dense { _, y := perturbedOptima(b, m, rows, sigma); return y }()})
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
				benchProjection(b, fmt.Sprintf("%s/%s/%s", name, st.name, ctl.name), a, x, st.y)
			}
		}
	}
}

// BenchmarkEqualitySteps measures Settings.EqualitySteps on the shipped
// PGLib grids with their full constraint set (the branch thermal and
// angle limits included, ConstraintOptions.BranchLimits): steps per
// sample, rows that missed 1e-6 and the mean distance from ŷ, from
// perturbed optima (σ = 1e-3 and 1e-2, 20 rows; 10 on case10000_goc),
// from the flat start and the case file's operating point, and from eight
// untrained-network-like points (farStarts), with Smoothing 1e-2 and
// DefaultDamping (the acopf-learn projection) and with one or two steps on
// the power flow first. Run it with
//
//	go test -run '^$' -bench EqualitySteps -benchtime 1x -timeout 2h ./problems/acopf/
//
// (tens of minutes: the rows without EqualitySteps from σ = 1e-2 take up to
// 615 steps; -short keeps case1354_pegase only).
func BenchmarkEqualitySteps(b *testing.B) {
	for _, name := range benchGridNames() {
		k, starts := fullSetStarts(b, name)
		for _, st := range starts {
			for _, eqs := range []int{0, 1, 2} {
				a, err := enforce.NewAdaNP(k, enforce.Settings{Path: enforce.PathSparse, Smoothing: 1e-2,
					Damping: enforce.DefaultDamping, MaxDepth: 300, EqualitySteps: eqs})
				if err != nil {
					b.Fatal(err)
				}
				benchProjection(b, fmt.Sprintf("%s/%s/eqsteps=%d", name, st.name, eqs), a, st.x, st.y)
			}
		}
	}
}

// BenchmarkFarStarts100 projects 100 far starts of every shipped grid
// (farStarts(m, 98, 7): the flat start, the case file's operating point and
// 98 untrained-network-like points) onto PGLib's full set with
// TestFarStartFullSet's settings (Smoothing 1e-2, EqualitySteps 2,
// MaxDepth 300, PathSparse, the damping from θ₀ = farDamping), and
// reports the steps, the rows that missed 1e-6 (AdaNP's own check) and
// those above 1e-6 on any of PGLib's constraints (Model.Violations). Run it
// with
//
//	go test -run '^$' -bench FarStarts100 -benchtime 1x -timeout 1h ./problems/acopf/ -acopf.big
//
// (case57 to case1354_pegase without -acopf.big, the case57s with -short;
// about 4 minutes in all with -acopf.big on a 2-core VM).
func BenchmarkFarStarts100(b *testing.B) {
	for _, name := range farStartGrids() {
		m := loadModel(b, name)
		k, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: true})
		if err != nil {
			b.Fatal(err)
		}
		a, err := enforce.NewAdaNP(k, enforce.Settings{Path: enforce.PathSparse, Smoothing: 1e-2, Damping: farDamping,
			EqualitySteps: 2, MaxDepth: 300})
		if err != nil {
			b.Fatal(err)
		}
		x, y := farStarts(m, 98, 7)
		b.Run(name, func(b *testing.B) {
			var out *mat.Dense
			var st enforce.Stats
			for b.Loop() {
				if out, st, err = a.Project(x, y); err != nil {
					b.Fatal(err)
				}
			}
			r, _ := out.Dims()
			infeasible := 0
			for i := range r {
				v := m.Violations(x.RawRowView(i), out.RawRowView(i))
				if !(v.Eq() <= 1e-6 && v.Ineq() <= 1e-6) {
					infeasible++
				}
			}
			b.ReportMetric(st.MeanDepth, "steps/sample")
			b.ReportMetric(float64(st.Depth), "maxsteps")
			b.ReportMetric(float64(st.NotConverged), "missed")
			b.ReportMetric(float64(infeasible), "infeasible")
			b.ReportMetric(float64(r), "rows")
			b.ReportMetric(st.Displacement.Mean, "disp")
		})
	}
}

// benchGridNames returns the shipped PGLib grids of the benchmarks
// (-short: case1354_pegase only).
func benchGridNames() []string {
	cases := []string{"pglib_opf_case1354_pegase", "pglib_opf_case2869_pegase", "pglib_opf_case10000_goc"}
	if testing.Short() {
		cases = cases[:1]
	}
	return cases
}

// benchStart is a named batch of starting points.
type benchStart struct {
	name string
	x, y *mat.Dense
}

// fullSetStarts returns grid name's full PGLib constraint set (the branch
// limits included) and the starts of the far-start benchmarks: optima
// perturbed by σ = 1e-3 and 1e-2 (20 rows; 10 on case10000_goc) and the
// rows of farStarts.
func fullSetStarts(b *testing.B, name string) (enforce.Constraint, []benchStart) {
	m := loadModel(b, name)
	k, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: true})
	if err != nil {
		b.Fatal(err)
	}
	rows := 20
	if name == "pglib_opf_case10000_goc" {
		rows = 10
	}
	var starts []benchStart
	for _, sigma := range []float64{1e-3, 1e-2} {
		x, y := perturbedOptima(b, m, rows, sigma)
		starts = append(starts, benchStart{fmt.Sprintf("sigma=%g", sigma), x, y})
	}
	fx, fy := farStarts(m, 8, 1)
	return k, append(starts, benchStart{"far", fx, fy})
}

// withFlatStart returns fullSetStarts with the flat start alone last.
func withFlatStart(b *testing.B, name string) (enforce.Constraint, []benchStart) {
	k, starts := fullSetStarts(b, name)
	m := loadModel(b, name)
	nx, ny := m.Dims()
	return k, append(starts, benchStart{"flat", mat.NewDense(1, nx, m.Loads()), mat.NewDense(1, ny, m.FlatStart())})
}

// benchProjection runs a.Project(x, y) as the sub-benchmark label and
// reports the steps per sample, the most steps, the rows that missed the
// tolerance, the rows and the mean distance from ŷ.
func benchProjection(b *testing.B, label string, a *enforce.AdaNP, x, y *mat.Dense) {
	b.Run(label, func(b *testing.B) {
		b.ReportAllocs()
		var stats enforce.Stats
		var err error
		for b.Loop() {
			if _, stats, err = a.Project(x, y); err != nil {
				b.Fatal(err)
			}
		}
		r, _ := y.Dims()
		b.ReportMetric(stats.MeanDepth, "steps/sample")
		b.ReportMetric(float64(stats.Depth), "maxsteps")
		b.ReportMetric(float64(stats.NotConverged), "missed")
		b.ReportMetric(float64(r), "rows")
		b.ReportMetric(stats.Displacement.Mean, "disp")
	})
}

// BenchmarkSmoothingNonmonotone measures Settings.SmoothingNonmonotone
// (a nonmonotone line search in Smoothing's last stage alone) on the full
// PGLib set with a projection like examples/acopf-learn's rows' (Smoothing
// 1e-2 with the rung 1e-4, DefaultDamping, StopWhenFeasible, MaxDepth
// 300, PathSparse, but W = I) and one step on the power flow first
// (EqualitySteps, without which the starts from σ = 1e-2 crawl: 17 of
// 20 missed on case1354_pegase), without it and with 5, and with
// Settings.Nonmonotone 5 in every stage instead (allnm=5): steps per sample, the most
// steps, rows that missed 1e-6 and the mean distance from ŷ, from perturbed
// optima (σ = 1e-3 and 1e-2, 20 rows; 10 on case10000_goc), from the rows
// of farStarts (the flat start, the case file's operating point and eight
// untrained-network-like points) and from the flat start alone. Run it with
//
//	go test -run '^$' -bench SmoothingNonmonotone -benchtime 1x -timeout 2h ./problems/acopf/
//
// (-short keeps case1354_pegase only).
func BenchmarkSmoothingNonmonotone(b *testing.B) {
	var vs []fullSetVariant
	for _, v := range []struct {
		name     string
		last, nm int
	}{{"lastnm=0", 0, 0}, {"lastnm=5", 5, 0}, {"allnm=5", 0, 5}} {
		vs = append(vs, fullSetVariant{v.name, func(s *enforce.Settings) { s.SmoothingNonmonotone, s.Nonmonotone = v.last, v.nm }})
	}
	benchFullSetVariants(b, vs)
}

// fullSetVariant names a change to fullSetSettings.
type fullSetVariant struct {
	name string
	set  func(*enforce.Settings)
}

// fullSetSettings are the far-start benchmarks' projection: like
// examples/acopf-learn's rows' (Smoothing 1e-2 with the rung 1e-4,
// DefaultDamping, StopWhenFeasible, MaxDepth 300), PathSparse, W = I, and
// one step on the power flow first.
func fullSetSettings() enforce.Settings {
	return enforce.Settings{Path: enforce.PathSparse, Smoothing: 1e-2, SmoothingLadder: []float64{1e-4},
		Damping: enforce.DefaultDamping, StopWhenFeasible: true, MaxDepth: 300, EqualitySteps: 1}
}

// benchFullSetVariants runs, on every benchmark grid's full set and every
// start of withFlatStart, fullSetSettings changed by each variant, as
// the sub-benchmark grid/start/variant.
func benchFullSetVariants(b *testing.B, vs []fullSetVariant) {
	for _, name := range benchGridNames() {
		k, starts := withFlatStart(b, name)
		for _, st := range starts {
			for _, v := range vs {
				s := fullSetSettings()
				v.set(&s)
				a, err := enforce.NewAdaNP(k, s)
				if err != nil {
					b.Fatal(err)
				}
				benchProjection(b, fmt.Sprintf("%s/%s/%s", name, st.name, v.name), a, st.x, st.y)
			}
		}
	}
}

// BenchmarkSmoothingPatience measures Settings.SmoothingPatience (the
// plain attempt of Smoothing ends for a sample after that many steps
// without 1 % progress) with BenchmarkSmoothingNonmonotone's projection
// and starts: without it and with 3, each with a monotone line search
// and with Settings.Nonmonotone 5 (the setting of RESULTS' acopf-learn
// rows). Run it with
//
//	go test -run '^$' -bench SmoothingPatience -benchtime 1x -timeout 3h ./problems/acopf/
//
// (-short keeps case1354_pegase only).
func BenchmarkSmoothingPatience(b *testing.B) {
	var vs []fullSetVariant
	for _, nm := range []int{0, 5} {
		for _, pat := range []int{0, 3} {
			vs = append(vs, fullSetVariant{fmt.Sprintf("nm=%d/patience=%d", nm, pat), func(s *enforce.Settings) { s.Nonmonotone, s.SmoothingPatience = nm, pat }})
		}
	}
	benchFullSetVariants(b, vs)
}

// BenchmarkSmoothingFromAttempt measures Settings.SmoothingFromAttempt
// (the fallback starts from the plain attempt's last iterate, not ŷ) with
// BenchmarkSmoothingPatience's projection and starts, Nonmonotone 5 and
// SmoothingPatience 3 (RESULTS' acopf-learn rows), without and with it.
// Run it with
//
//	go test -run '^$' -bench SmoothingFromAttempt -benchtime 1x -timeout 3h ./problems/acopf/
//
// (-short keeps case1354_pegase only).
func BenchmarkSmoothingFromAttempt(b *testing.B) {
	var vs []fullSetVariant
	for _, from := range []bool{false, true} {
		vs = append(vs, fullSetVariant{fmt.Sprintf("from=%v", from), func(s *enforce.Settings) {
			s.Nonmonotone, s.SmoothingPatience, s.SmoothingFromAttempt = 5, 3, from
		}})
	}
	benchFullSetVariants(b, vs)
}

// BenchmarkStopWhenFeasible measures Settings.StopWhenFeasible on the
// shipped PGLib grids from optima perturbed by σ = 1e-3 (100 rows, 20 on
// case10000_goc), on the power flow and bounds (DefaultDamping, issue 54's
// case10000_goc row) and on the full set (the branch limits too, with one
// step on the power flow first, Smoothing 1e-2 and DefaultDamping), the
// two rules alternated twice: steps per sample, rows that missed 1e-6, the
// mean distance from ŷ and the time per sample. Run it with
//
//	go test -run '^$' -bench StopWhenFeasible -benchtime 1x -timeout 1h ./problems/acopf/
//
// (-short keeps case1354_pegase only).
func BenchmarkStopWhenFeasible(b *testing.B) {
	forBenchGrids(b, func(name string, m *Model, x, y *mat.Dense, rows int) {
		for _, set := range []struct {
			name string
			opt  ConstraintOptions
			s    enforce.Settings
		}{
			{"pf+bounds", ConstraintOptions{FBEps: ProjectionFBEpsilon}, enforce.Settings{Damping: enforce.DefaultDamping}},
			{"full", ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: true},
				enforce.Settings{Damping: enforce.DefaultDamping, Smoothing: 1e-2, EqualitySteps: 1, MaxDepth: 300}},
		} {
			k, err := m.ConstraintWith(set.opt)
			if err != nil {
				b.Fatal(err)
			}
			for round := range 2 {
				for _, stop := range []bool{false, true} {
					s := set.s
					s.Path, s.StopWhenFeasible = enforce.PathSparse, stop
					a, err := enforce.NewAdaNP(k, s)
					if err != nil {
						b.Fatal(err)
					}
					b.Run(fmt.Sprintf("%s/%s/stop=%v/round=%d", name, set.name, stop, round), func(b *testing.B) {
						var stats enforce.Stats
						for b.Loop() {
							if _, stats, err = a.Project(x, y); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(stats.MeanDepth, "steps/sample")
						b.ReportMetric(float64(stats.Depth), "maxsteps")
						b.ReportMetric(float64(stats.NotConverged), "missed")
						b.ReportMetric(stats.Displacement.Mean, "disp")
						b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*rows), "ms/sample")
					})
				}
			}
		}
	})
}

// BenchmarkAugmented projects perturbed optima (σ = 1e-3; 100 per PEGASE
// grid, 20 on case10000_goc) onto PGLib's full constraint set with the
// settings of acopf-learn's rows (DefaultDamping, StopWhenFeasible,
// Smoothing 1e-2 with the ladder {1e-4}, MaxDepth 300) on PathSparse and
// PathAugmented, alternated twice: wall and CPU time (every thread of the process) and steps per sample, the
// factorisations that fell back to G's, and each factor's multiply–adds.
// Run it with
//
//	go test -run '^$' -bench Augmented -benchtime 1x -timeout 1h ./problems/acopf/
//
// (-short keeps case1354_pegase only).
func BenchmarkAugmented(b *testing.B) {
	forBenchGrids(b, func(name string, m *Model, x, y *mat.Dense, rows int) {
		k, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: true})
		if err != nil {
			b.Fatal(err)
		}
		for round := range 2 {
			for _, path := range []enforce.Path{enforce.PathSparse, enforce.PathAugmented} {
				a, err := enforce.NewAdaNP(k, enforce.Settings{Path: path, Damping: enforce.DefaultDamping, StopWhenFeasible: true,
					Smoothing: 1e-2, SmoothingLadder: []float64{1e-4}, MaxDepth: 300})
				if err != nil {
					b.Fatal(err)
				}
				pname := "sparse"
				if path == enforce.PathAugmented {
					pname = "augmented"
				}
				b.Run(fmt.Sprintf("%s/%s/round=%d", name, pname, round), func(b *testing.B) {
					var stats enforce.Stats
					cpu := cputime.Process()
					for b.Loop() {
						if _, stats, err = a.Project(x, y); err != nil {
							b.Fatal(err)
						}
					}
					cpu = cputime.Process() - cpu
					info, _ := a.SparseInfo()
					b.ReportMetric(stats.MeanDepth, "steps/sample")
					b.ReportMetric(float64(stats.NotConverged), "missed")
					b.ReportMetric(float64(stats.Clamped), "clamped")
					b.ReportMetric(float64(info.AugmentedFallbacks), "fallbacks")
					b.ReportMetric(info.Flops, "G-flops")
					b.ReportMetric(info.AugFlops, "K-flops")
					b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*rows), "ms/sample")
					b.ReportMetric(cpu.Seconds()*1e3/float64(b.N*rows), "cpu-ms/sample")
				})
			}
		}
	})
}

// forBenchGrids calls fn with the model of case1354_pegase, case2869_pegase
// and case10000_goc (-short: case1354_pegase only) and points perturbed
// around its reference optimum (σ = 1e-3; 100, and 20 on case10000_goc).
func forBenchGrids(b *testing.B, fn func(name string, m *Model, x, y *mat.Dense, rows int)) {
	for _, name := range benchGridNames() {
		m := loadModel(b, name)
		rows := 100
		if name == "pglib_opf_case10000_goc" {
			rows = 20
		}
		x, y := perturbedOptima(b, m, rows, 1e-3)
		fn(name, m, x, y, rows)
	}
}
