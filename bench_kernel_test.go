package enforce_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/benchcases"
	"github.com/enforce-nn/enforce/internal/cputime"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// The benchmarks of this file time several things alternately in one run
// and report the best time of each (the least disturbed by other load on a
// shared machine) and their ratios, which is what docs/performance.md
// quotes: they are measurements, not assertions. Each is timed twice: in wall-clock
// time, and in the CPU time of the process (all threads; on Unix), whose
// ratios are what can still be read on a machine so loaded that the
// wall-clock ones are not (they leave out the time a parallel section
// waits for its slowest part).

// largestCase returns the (833, 200, 150) quadratic case.
func largestCase(b *testing.B) benchcases.Case {
	b.Helper()
	for _, tc := range benchCases(b) {
		if strings.HasPrefix(tc.Name, "quadratic (833, 200, 150)") {
			return tc
		}
	}
	b.Fatal("no (833, 200, 150) case")
	return benchcases.Case{}
}

// best keeps the smallest wall-clock and CPU times of the runs it times.
type best struct{ wall, cpu time.Duration }

func (m *best) time(f func()) {
	c, t := cputime.Process(), time.Now()
	f()
	wall, cpu := time.Since(t), cputime.Process()-c
	if m.wall == 0 || wall < m.wall {
		m.wall = wall
	}
	if m.cpu == 0 || cpu < m.cpu {
		m.cpu = cpu
	}
}

func (m best) sec() float64 { return m.wall.Seconds() }

// cpuSec is the best CPU time in seconds.
func (m best) cpuSec() float64 { return m.cpu.Seconds() }

// sgemmCeiling returns a function that runs sgemm.Mul at BenchmarkMul's
// shape (48×200 by 200×30000, a 48-row block at a time) on every core, the
// columns split between them, and the arithmetic it does.
func sgemmCeiling() (run func(), flops float64) {
	rnd := rand.New(rand.NewPCG(7, 8))
	m, k, n := 48, 200, 30000
	a, bb := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(rnd.NormFloat64())
	}
	for i := range bb {
		bb[i] = float32(rnd.NormFloat64())
	}
	var p sgemm.Panels
	p.Pack(k, n, bb, n)
	procs := runtime.GOMAXPROCS(0)
	per := (n/1024 + procs - 1) / procs * 1024
	run = func() {
		var wg sync.WaitGroup
		for w := range procs {
			wg.Go(func() {
				work, c := make([]float32, sgemm.WorkLen(m, k)), make([]float32, m*1024)
				for j0 := w * per; j0 < min((w+1)*per, n); j0 += 1024 {
					sgemm.Mul(m, a, k, &p, j0, min(j0+1024, n), c, 1024, false, work)
				}
			})
		}
		wg.Wait()
	}
	return run, 2 * float64(m*k*n)
}

// BenchmarkStepCeiling measures, alternately in one run at (833, 200, 150):
// the float32 kernel's rate on all cores (sgemm.Mul at BenchmarkMul's
// shape, the columns split between the cores: the ceiling); a float32 NP
// step over the batch, as T(depth 2) − T(depth 1) with every evaluation in
// single precision (Tol 1e-300 keeps Float32 from switching to float64,
// and the final float64 evaluation is in both); and the float64 check of
// a float32 projection, one float64 EvalBatch of the batch with its
// Jacobians (the evaluation Float32 makes of the final iterate). It
// reports the best time of each, the step's rate (benchcases' arithmetic
// count) as a percentage of the ceiling, and the check's time over the
// step's.
func BenchmarkStepCeiling(b *testing.B) {
	tc := largestCase(b)
	mul, mulFlops := sgemmCeiling()
	var proj [2]*enforce.AdaNP
	for i := range proj {
		a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: i + 1, MaxDepth: i + 1, Tol: 1e-300, Precision: enforce.Float32})
		if err != nil {
			b.Fatal(err)
		}
		proj[i] = a
	}
	rows, _ := tc.YHat.Dims()
	nx, ny, nc := tc.C.Dims()
	dst := mat.DenseCopyOf(tc.YHat)
	evalBatch := enforce.CapabilitiesOf(tc.C).EvalBatch
	c, jy := make([]float64, rows*nc), make([]float64, rows*nc*ny)
	x, y := tc.X.RawMatrix().Data[:rows*nx], tc.YHat.RawMatrix().Data[:rows*ny]
	project := func(a *enforce.AdaNP) func() {
		return func() {
			if _, err := a.ProjectTo(dst, tc.X, tc.YHat); err != nil {
				b.Fatal(err)
			}
		}
	}
	check := func() { evalBatch(rows, x, y, c, jy) }
	for _, f := range []func(){mul, project(proj[0]), project(proj[1]), check} { // warm-up
		f()
	}
	var tMul, t1, t2, tCheck best
	b.ResetTimer()
	for b.Loop() {
		tMul.time(mul)
		t1.time(project(proj[0]))
		t2.time(project(proj[1]))
		tCheck.time(check)
	}
	step := t2.sec() - t1.sec()
	ceiling := mulFlops / tMul.sec()
	b.ReportMetric(ceiling/1e9, "ceiling-GFLOP/s")
	b.ReportMetric(step*1e3, "step32-ms")
	b.ReportMetric(tc.Flops/step/1e9, "step32-GFLOP/s")
	b.ReportMetric(100*tc.Flops/step/ceiling, "%ceiling")
	b.ReportMetric(tCheck.sec()*1e3, "check64-ms")
	b.ReportMetric(tCheck.sec()/step, "check/step32")
	if stepCPU := t2.cpuSec() - t1.cpuSec(); stepCPU > 0 {
		b.ReportMetric(stepCPU*1e3, "step32-cpu-ms")
		b.ReportMetric(100*(tc.Flops/stepCPU)/(mulFlops/tMul.cpuSec()), "%ceiling-cpu")
		b.ReportMetric(tCheck.cpuSec()/stepCPU, "check/step32-cpu")
	}
}

// BenchmarkProjectionPrecision times whole projections to max|c| ≤ 1e-6
// (Settings' defaults) at (833, 200, 150) in Float64 and Float32
// alternately, and reports the best time of each and their ratio. Both
// must converge: Float32 finishes in float64, so it meets the same
// tolerance.
func BenchmarkProjectionPrecision(b *testing.B) {
	tc := largestCase(b)
	var proj [2]*enforce.AdaNP
	var depth [2]float64
	dst := mat.DenseCopyOf(tc.YHat)
	for i, p := range []enforce.Precision{enforce.Float64, enforce.Float32} {
		a, err := enforce.NewAdaNP(tc.C, enforce.Settings{Precision: p})
		if err != nil {
			b.Fatal(err)
		}
		st, err := a.ProjectTo(dst, tc.X, tc.YHat)
		if err != nil || !st.Converged() || !(st.After.Max <= 1e-6) {
			b.Fatalf("%v: %v %+v", p, err, st)
		}
		proj[i], depth[i] = a, st.MeanDepth
	}
	var t [2]best
	b.ResetTimer()
	for b.Loop() {
		for i, a := range proj {
			t[i].time(func() {
				if _, err := a.ProjectTo(dst, tc.X, tc.YHat); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
	b.ReportMetric(t[0].sec()*1e3, "f64-ms")
	b.ReportMetric(t[1].sec()*1e3, "f32-ms")
	b.ReportMetric(t[0].sec()/t[1].sec(), "f64/f32")
	b.ReportMetric(t[0].cpuSec()/t[1].cpuSec(), "f64/f32-cpu")
	b.ReportMetric(depth[0], "f64-depth")
	b.ReportMetric(math.Round(100*depth[1])/100, "f32-depth")
}
