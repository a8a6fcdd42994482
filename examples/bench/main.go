// Command bench measures one NP step of AdaNP on the paper's benchmark
// sizes and prints one table: our time per step and its spread over the
// repetitions, the arithmetic rate achieved and its fraction of the dgemm
// ceiling measured in the same run, and, labelled as such, a stored figure
// for the PyTorch reference's time (2 CPU threads, float32, torch's default
// BLAS, timed on benchcases.RefDate; not measured in this run, see
// benchcases.Case.RefSec) with its ratio to ours. It prints how a step on
// the distillation constraint written with Func compares with the same
// step on the analytic constraint, then measures a training step (forward
// + Unrolled backward) against the forward step, and the memory a trace
// holds against the paper's formula.
//
// Ratios to the reference measured in the same run come from
// reference/compare.py (see reference/README.md), which alternates the
// reference with this command's -items mode on the same instances.
//
//	go run ./examples/bench                                   # pure Go
//	go run -tags openblas ./examples/bench                    # OpenBLAS (apt-get install libopenblas-dev)
//	go run ./examples/bench -quick                            # batches divided by 8 (-scale 8), a smoke test
//	go run ./examples/bench -instances DIR                    # the work items' data, for reference/compare.py
//	go run ./examples/bench -instances DIR -tableb-ntrain 1000  # and the (200, 150) data, for reference/tableb.py
//	go run ./examples/bench -tableb-train 1,2 -tableb-set always,nores  # ours on that data with some of the reference's settings
//	go run ./examples/bench -items                            # serve the work items to reference/compare.py
//
// Each repetition times a depth-1 and a depth-3 projection of the same batch
// back to back; the time per step is (T(depth 3) − T(depth 1))/2, so the
// extra evaluation of c at the final point, which a depth-1 run pays once,
// is not counted. The table's time is that difference for the best of
// -reps times of each depth, and the spread column gives the minimum, median
// and maximum of the per-repetition differences.
//
// The float64 ceiling (the faster of the BLAS's dgemm and internal/sgemm's
// float64 kernel, on which Quadratic's batched evaluation runs) is measured
// before the first case and after every case,
// and the best of these measurements is kept, so that a burst of load from
// other processes lowers it only if it lasts the whole run. If a case still
// runs faster than the measured ceiling, the ceiling is raised to that
// case's rate and a warning says so. The load average (/proc/loadavg) is
// printed before and after, with a warning when it suggests that other
// processes competed for the cores.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/benchcases"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// options are the command-line settings.
type options struct {
	reps, scale int
	precision   string
	// items and instances select the modes of the same-run comparison
	// (items.go); in is where -items reads its requests.
	items     bool
	inner     int
	instances string
	// tablebNTrain, with instances, adds examples/nonconvex-quadratic's
	// (200, 150) instance and inputs with that many training inputs.
	tablebNTrain int
	// tablebTrain, tablebSet, tablebEpochs and tablebIpopt are
	// -tableb-train's seeds and settings (tableb.go).
	tablebTrain, tablebSet string
	tablebEpochs           int
	tablebIpopt            float64
	tablebInit             string
	in                     io.Reader
	// cpuprofile, when set, is where a CPU profile of the whole run is
	// written (runtime/pprof).
	cpuprofile string
}

// flags registers the command line on o.
func flags(o *options) *harness.Flags {
	f := harness.New("bench", "Times one NP step of AdaNP on the paper's sizes against our kernels' ceilings (with stored, labelled reference figures), a Func step against an analytic one, a training step, and a trace's memory; -items and -instances serve reference/compare.py, which times the PyTorch reference in the same run.")
	f.IntVar(&o.reps, "reps", o.reps, "repetitions per measurement")
	f.StringVar(&o.precision, "precision", o.precision, "float64, float32 or both (enforce.Settings.Precision)")
	f.IntVar(&o.scale, "scale", o.scale, "divide the batch sizes by this (the reference's times are for 1)")
	f.BoolVar(&o.items, "items", o.items, "serve the same-run comparison (reference/compare.py): read work-item names from stdin, one per line, and answer each with its time as a JSON line")
	f.IntVar(&o.inner, "inner", o.inner, "with -items: timings per request of the short items (the answer is their best)")
	f.StringVar(&o.instances, "instances", o.instances, "write the instances and inputs of the work items into this folder (for reference/compare.py) and exit")
	f.IntVar(&o.tablebNTrain, "tableb-ntrain", o.tablebNTrain, "with -instances: also write examples/nonconvex-quadratic's (200, 150) instance of -seed 1 with the first N training inputs it draws at -ntrain N and its 833 test inputs (for reference/tableb.py; 0: not written)")
	f.StringVar(&o.tablebTrain, "tableb-train", o.tablebTrain, "train our ENFORCE on the (200, 150) data of -tableb-ntrain (default 1000) for these comma-separated model seeds, as examples/nonconvex-quadratic does but with the reference's settings in -tableb-set, print its test numbers and exit (with an error when a seed's test predictions are not all feasible to 1e-3)")
	f.StringVar(&o.tablebSet, "tableb-set", o.tablebSet, "with -tableb-train: comma-separated settings switched to the reference's (standardize, always, nores, float32, meandisp, layers3) or recipe candidates (nodisp, warmup)")
	f.IntVar(&o.tablebEpochs, "tableb-epochs", o.tablebEpochs, "with -tableb-train: epochs")
	f.StringVar(&o.tablebInit, "tableb-init", "", "with -tableb-train: start from the reference's initial weights in DIR/init-seed<s>.json (reference/tableb.py --dump-init DIR; needs -tableb-set layers3)")
	f.Float64Var(&o.tablebIpopt, "tableb-ipopt", o.tablebIpopt, "with -tableb-train: the IPOPT mean on the first 20 test inputs the gap is measured against (examples/nonconvex-quadratic prints it)")
	f.StringVar(&o.cpuprofile, "cpuprofile", o.cpuprofile, "write a CPU profile of the run (all modes but -instances) to this file, for go tool pprof")
	f.Quick("scale", "8")
	return f
}

func main() { os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr)) }

// cli runs the command with the arguments args and returns its exit status.
func cli(args []string, stdout, stderr io.Writer) int {
	o := options{reps: 3, scale: 1, precision: "both", inner: 3, in: os.Stdin, tablebEpochs: 50, tablebIpopt: -31.95}
	f := flags(&o)
	return f.Main(args, stderr, func() (err error) {
		switch {
		case o.scale < 1:
			return fmt.Errorf("-scale %d: want at least 1", o.scale)
		case o.tablebNTrain < 0 || o.tablebNTrain > 0 && o.instances == "" && o.tablebTrain == "":
			return fmt.Errorf("-tableb-ntrain %d: want at least 0, and -instances or -tableb-train", o.tablebNTrain)
		case o.tablebTrain != "":
			to, err := parseTableB(o.tablebTrain, o.tablebSet, o.tablebNTrain, o.tablebEpochs, o.tablebIpopt)
			if err != nil {
				return err
			}
			to.initDir = o.tablebInit
			return trainTableB(stdout, stderr, to)
		case o.instances != "":
			return writeInstances(o.instances, o.scale, o.tablebNTrain)
		}
		if o.cpuprofile != "" {
			stop, err := startProfile(o.cpuprofile)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, stop()) }()
		}
		if o.items {
			return serveItems(o.in, stdout, o.scale, o.inner)
		}
		f.PrintSmoke(stdout) // not before -items' or -instances' output, which programs read
		return run(o, stdout)
	})
}

// startProfile starts a CPU profile written to path and returns the
// function that stops it and closes the file.
func startProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// precisions returns the precisions the flag -precision names.
func precisions(name string) ([]enforce.Precision, error) {
	switch name {
	case "float64":
		return []enforce.Precision{enforce.Float64}, nil
	case "float32":
		return []enforce.Precision{enforce.Float32}, nil
	case "both":
		return []enforce.Precision{enforce.Float64, enforce.Float32}, nil
	}
	return nil, fmt.Errorf("-precision %q: want float64, float32 or both", name)
}

// measurement is one row of the table: a case in one precision.
type measurement struct {
	tc   benchcases.Case
	prec enforce.Precision
}

// plan returns the rows of the table: every case in every precision of
// precs, Float32 only where it changes the arithmetic (a Gram matrix or
// an evaluation large enough).
func plan(cases []benchcases.Case, precs []enforce.Precision) []measurement {
	var out []measurement
	for _, tc := range cases {
		for _, p := range precs {
			if p == enforce.Float32 && !tc.Large {
				continue
			}
			out = append(out, measurement{tc, p})
		}
	}
	return out
}

// memoryCases are the cases of the memory table: the fitting case and the
// two quadratic sizes, each once (the first three of benchcases.Cases).
func memoryCases(cases []benchcases.Case) []benchcases.Case {
	return cases[:min(3, len(cases))]
}

// run measures and prints the tables to w.
func run(o options, w io.Writer) error {
	if o.reps < 1 || o.scale < 1 {
		return fmt.Errorf("-reps %d, -scale %d: want at least 1", o.reps, o.scale)
	}
	precs, err := precisions(o.precision)
	if err != nil {
		return err
	}
	cases, err := benchcases.Cases(o.scale)
	if err != nil {
		return err
	}
	loadBefore, loadErr := loadAvg()
	var gemm dgemm
	var sg sgemmRate
	var dk dkernRate
	ceilings, ceilings32 := []float64{max(gemm.rate(), dk.rate())}, []float64{sg.rate()}
	planned := plan(cases, precs)
	rows := make([]row, len(planned))
	for i, m := range planned {
		if rows[i], err = measureCase(m.tc, o.reps, m.prec); err != nil {
			return err
		}
		ceilings = append(ceilings, max(gemm.rate(), dk.rate()))
		ceilings32 = append(ceilings32, sg.rate())
	}
	loadAfter, loadAfterErr := loadAvg()
	loadErr = firstErr(loadErr, loadAfterErr)

	measured := slices.Max(ceilings)
	rates := make([]float64, len(rows))
	for i, r := range rows {
		if r.step > 0 && r.prec != enforce.Float32 { // the ceiling is dgemm's
			rates[i] = planned[i].tc.Flops / r.step
		}
	}
	ceiling, fastest := raiseCeiling(measured, rates)
	report.Wrapf(w, "BLAS: %s; GOMAXPROCS %d; float64 ceiling: %.1f GFLOP/s (the faster of the BLAS's dgemm and internal/sgemm's float64 kernel, best of %d measurements interleaved with the cases, %.1f–%.1f)\n",
		enforce.BLASImplementation, runtime.GOMAXPROCS(0), ceiling/1e9, len(ceilings), slices.Min(ceilings)/1e9, measured/1e9)
	if fastest >= 0 {
		report.Wrapf(w, "warning: %s ran at %.1f GFLOP/s, above every float64 ceiling measurement; the ceiling is raised to it (the machine was busy while the ceiling was measured)\n",
			planned[fastest].tc.Name, ceiling/1e9)
	}
	ceiling32 := slices.Max(ceilings32)
	report.Wrapf(w, "sgemm ceiling: %.1f GFLOP/s (internal/sgemm's kernel at BenchmarkMul's shape, split over GOMAXPROCS, best of %d, %.1f–%.1f)\n",
		ceiling32/1e9, len(ceilings32), slices.Min(ceilings32)/1e9, ceiling32/1e9)
	printLoad(w, loadBefore, loadAfter, loadErr)
	fmt.Fprintln(w)

	noisy := false
	tab := report.NewTable("", "case (BS, N_O, N_C)", "precision", "ours / step", "spread: min / median / max", "GFLOP/s", "of ceiling",
		"stored ref", "stored ref / ours", "train step / fwd step", "to 1e-6 (mean depth)")
	tab.Keep, tab.AlignRight = 2, true
	for i, m := range planned {
		tc, r := m.tc, rows[i]
		step, ref, ratio, rate, frac := "T(3) ≤ T(1)", "–", "–", "–", "–"
		if tc.RefSec > 0 && o.scale == 1 {
			ref = fmtDur(tc.RefSec)
		}
		if r.step > 0 {
			step = fmtDur(r.step)
			if tc.RefSec > 0 && o.scale == 1 {
				ratio = fmt.Sprintf("%.1f×", tc.RefSec/r.step)
			}
			rate = fmt.Sprintf("%.1f", tc.Flops/r.step/1e9)
			if r.prec != enforce.Float32 {
				frac = fmt.Sprintf("%.0f%% f64", 100*tc.Flops/r.step/ceiling)
			} else {
				frac = fmt.Sprintf("%.0f%% sgemm", 100*tc.Flops/r.step/ceiling32)
			}
		} else {
			noisy = true
		}
		tab.AddRow(tc.Name, fmt.Sprint(r.prec), step,
			fmt.Sprintf("%s / %s / %s", fmtDur(slices.Min(r.steps)), fmtDur(median(r.steps)), fmtDur(slices.Max(r.steps))),
			rate, frac, ref, ratio, fmt.Sprintf("%.2f", r.train/r.fwd1), fmt.Sprintf("%s (%.2f)", fmtDur(r.full), r.fullDepth))
	}
	if err := tab.WriteText(w); err != nil {
		return err
	}
	printFuncVsAnalytic(w, planned, rows)
	if noisy {
		report.Wrapf(w, "\nwarning: for a case marked T(3) ≤ T(1), the best depth-3 time was not above the best depth-1 time: timing noise exceeds a step; rerun with more -reps on a quieter machine\n")
	}
	fmt.Fprintln(w, `
ours / step: (T(depth 3) − T(depth 1))/2 with each T the best of -reps runs, whole batch; float32
  rows (Settings.Precision Float32, for the cases large enough for it to change the arithmetic) time
  steps taken in single precision, which is how a sample far from the constraint set is projected.
spread: the same difference within each repetition (depth 1 and depth 3 timed back to back).
GFLOP/s: the step's arithmetic (Jacobian products, Gram matrix, Cholesky) over its time.
of ceiling: that rate over the float64 ceiling above (float64 rows) or the sgemm ceiling (float32 rows).
stored ref: a STORED FIGURE, not measured in this run: the PyTorch reference per NP step (analytic
  Jacobian, float32, 2 threads) timed on `+benchcases.RefDate+` with `+benchcases.RefBLAS+` on a machine of
  this kind; with OpenBLAS as torch's BLAS it is about 2× faster. Same-run ratios:
  python3 examples/bench/reference/compare.py --reference PATH (examples/bench/reference/README.md).
train step / fwd step: depth-1 ProjectTrace + Unrolled VJP over depth-1 ProjectTo (best of -reps each).
to 1e-6: a whole projection to max|c| ≤ 1e-6 (default settings) from the case's ŷ, best of -reps, and
  its mean depth: float32 takes its last steps in float64, so from these near-feasible ŷ (two or three
  Newton steps) it gains less than per step.`)
	return memory(w, memoryCases(cases))
}

// printFuncVsAnalytic prints how a step on the distillation constraint
// written with Func compares with the same step on the analytic
// constraint, if both were measured.
func printFuncVsAnalytic(w io.Writer, planned []measurement, rows []row) {
	var fn, an = -1, -1
	for i, m := range planned {
		switch {
		case strings.HasPrefix(m.tc.Name, "distillation, Func"):
			fn = i
		case strings.HasPrefix(m.tc.Name, "distillation, analytic"):
			an = i
		}
	}
	if fn < 0 || an < 0 {
		return
	}
	f, a := rows[fn], rows[an]
	text := fmt.Sprintf("Func against analytic, distillation: a step takes %s with Func (hyperdual Jacobian, ⌈9/2⌉ = 5 evaluations of f) and %s analytic",
		fmtDur(f.step), fmtDur(a.step))
	if f.step > 0 && a.step > 0 {
		text += fmt.Sprintf(": Func costs %.2f× the analytic step", f.step/a.step)
	}
	text += fmt.Sprintf(" (medians of the spreads: %s and %s)", fmtDur(median(f.steps)), fmtDur(median(a.steps)))
	report.Wrapf(w, "\n%s\n", text)
}

func fmtDur(sec float64) string {
	switch {
	case sec >= 1:
		return fmt.Sprintf("%.2f s", sec)
	case sec >= 1e-3:
		return fmt.Sprintf("%.2f ms", sec*1e3)
	}
	return fmt.Sprintf("%.1f µs", sec*1e6)
}

// row holds one case's measurements, in seconds.
type row struct {
	prec      enforce.Precision
	full      float64   // best projection to the default tolerance
	fullDepth float64   // its mean depth
	step      float64   // (best T(depth 3) − best T(depth 1))/2
	steps     []float64 // (T(depth 3) − T(depth 1))/2 within each repetition
	fwd1      float64   // best T(depth 1)
	train     float64   // best depth-1 training step
}

// measureCase times tc's depth-1 and depth-3 projections back to back reps
// times, after one untimed warm-up of each, then its training step.
func measureCase(tc benchcases.Case, reps int, prec enforce.Precision) (row, error) {
	proj, err := stepProjections(tc, prec)
	if err != nil {
		return row{}, err
	}
	r := row{prec: prec}
	var fastest [2]float64
	for k := 0; k < reps; k++ {
		var t [2]float64
		for i, f := range proj {
			var err error
			if t[i], err = timed(f); err != nil {
				return row{}, err
			}
			if k == 0 || t[i] < fastest[i] {
				fastest[i] = t[i]
			}
		}
		r.steps = append(r.steps, max(t[1]-t[0], 0)/2)
	}
	r.step, r.fwd1 = max(fastest[1]-fastest[0], 0)/2, fastest[0]
	if r.train, err = trainStepTime(tc, reps, prec); err != nil {
		return r, err
	}
	full, err := enforce.NewAdaNP(tc.C, enforce.Settings{Precision: prec})
	if err != nil {
		return r, err
	}
	dst := mat.DenseCopyOf(tc.YHat)
	var st enforce.Stats
	r.full, err = best(reps, func() error {
		var err error
		st, err = full.ProjectTo(dst, tc.X, tc.YHat)
		if err == nil && !st.Converged() {
			err = fmt.Errorf("%s, %v: %d samples not converged", tc.Name, prec, st.NotConverged)
		}
		return err
	})
	r.fullDepth = st.MeanDepth
	return r, err
}

// raiseCeiling returns max(measured, rates…) and the index of the rate
// that set it, or −1 if measured did.
func raiseCeiling(measured float64, rates []float64) (ceiling float64, fastest int) {
	ceiling, fastest = measured, -1
	for i, r := range rates {
		if r > ceiling {
			ceiling, fastest = r, i
		}
	}
	return ceiling, fastest
}

// timed returns the duration of f in seconds.
func timed(f func() error) (float64, error) {
	start := time.Now()
	err := f()
	return time.Since(start).Seconds(), err
}

// best returns the shortest of reps runs of f, in seconds, after one
// untimed warm-up run.
func best(reps int, f func() error) (float64, error) {
	if err := f(); err != nil {
		return 0, err
	}
	t := 0.0
	for i := 0; i < reps; i++ {
		d, err := timed(f)
		if err != nil {
			return 0, err
		}
		if i == 0 || d < t {
			t = d
		}
	}
	return t, nil
}

// median returns the median of xs, which must not be empty.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func trainStepTime(tc benchcases.Case, reps int, prec enforce.Precision) (float64, error) {
	a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: 1, MaxDepth: 1, Precision: prec})
	if err != nil {
		return 0, err
	}
	dst := mat.DenseCopyOf(tc.YHat)
	gy := mat.DenseCopyOf(tc.YHat)
	var tr enforce.Trace
	return best(reps, func() error {
		if _, err := a.ProjectTrace(dst, tc.X, tc.YHat, &tr); err != nil {
			return err
		}
		return a.VJP(&tr, tc.YHat, gy, nil)
	})
}

// dgemm measures the rate of a 1000×1000×1000 product with the BLAS in use.
type dgemm struct {
	a, b, c []float64
}

// rate returns the better of one timing of the product as one call
// (gonum's Gemm uses all cores itself) and one timing split across the
// cores (as the projection calls a single-threaded OpenBLAS), in FLOP/s.
func (d *dgemm) rate() float64 {
	const n = 1000
	if d.a == nil {
		d.a, d.b, d.c = make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
		for i := range d.a {
			d.a[i], d.b[i] = float64(i%7), float64(i%5)
		}
	}
	gemm := func(lo, hi int) {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: hi - lo, Cols: n, Stride: n, Data: d.a[lo*n:]},
			blas64.General{Rows: n, Cols: n, Stride: n, Data: d.b}, 0,
			blas64.General{Rows: hi - lo, Cols: n, Stride: n, Data: d.c[lo*n:]})
	}
	one, _ := timed(func() error { gemm(0, n); return nil })
	p := runtime.GOMAXPROCS(0)
	split, _ := timed(func() error {
		done := make(chan struct{}, p)
		rows := (n + p - 1) / p
		for w := 0; w < p; w++ {
			go func() {
				gemm(min(w*rows, n), min((w+1)*rows, n))
				done <- struct{}{}
			}()
		}
		for w := 0; w < p; w++ {
			<-done
		}
		return nil
	})
	return 2 * n * n * n / min(one, split)
}

// The kernel ceilings run their kernel at the shape of BenchmarkMul in
// internal/sgemm, the (833, 200, 150) evaluation's: 48 rows of A against
// 200×30000 packed panels, 1024 columns at a time, on every core at once.
const ceilM, ceilK, ceilN, ceilBlock = 48, 200, 30000, 1024

// onAllCores times run(w) on GOMAXPROCS goroutines at once (w = 0, 1, …)
// and returns the rate in FLOP/s of the ceiling shape's product on each.
func onAllCores(run func(w int)) float64 {
	procs := runtime.GOMAXPROCS(0)
	sec, _ := timed(func() error {
		done := make(chan struct{}, procs)
		for w := range procs {
			go func() {
				run(w)
				done <- struct{}{}
			}()
		}
		for range procs {
			<-done
		}
		return nil
	})
	return 2 * ceilM * ceilK * ceilN * float64(procs) / sec
}

// sgemmRate measures the rate of the package's float32 kernel
// (internal/sgemm's Mul) at the ceiling shape, one product per goroutine.
type sgemmRate struct {
	a, c, work [][]float32
	p          sgemm.Panels
}

// rate returns one timing's rate in FLOP/s.
func (s *sgemmRate) rate() float64 {
	if s.a == nil {
		b := make([]float32, ceilK*ceilN)
		for i := range b {
			b[i] = float32(i%7) - 3
		}
		s.p.Pack(ceilK, ceilN, b, ceilN)
		for range runtime.GOMAXPROCS(0) {
			a := make([]float32, ceilM*ceilK)
			for i := range a {
				a[i] = float32(i%5) - 2
			}
			s.a = append(s.a, a)
			s.c = append(s.c, make([]float32, ceilM*ceilBlock))
			s.work = append(s.work, make([]float32, sgemm.WorkLen(ceilM, ceilK)))
		}
	}
	return onAllCores(func(w int) {
		for j0 := 0; j0 < ceilN; j0 += ceilBlock {
			sgemm.Mul(ceilM, s.a[w], ceilK, &s.p, j0, min(j0+ceilBlock, ceilN), s.c[w], ceilBlock, false, s.work[w])
		}
	})
}

// dkernRate is sgemmRate for the package's float64 kernel
// (internal/sgemm's MulPacked64, which Quadratic's batched evaluation
// runs on in every build).
type dkernRate struct {
	pa, c, tile [][]float64
	p           sgemm.Panels64
}

// rate returns one timing's rate in FLOP/s.
func (s *dkernRate) rate() float64 {
	if s.pa == nil {
		b := make([]float64, ceilK*ceilN)
		for i := range b {
			b[i] = float64(i%7) - 3
		}
		s.p.Pack(ceilK, ceilN, b, ceilN)
		a := make([]float64, ceilM*ceilK)
		for i := range a {
			a[i] = float64(i%5) - 2
		}
		for range runtime.GOMAXPROCS(0) {
			pa := make([]float64, sgemm.WorkLen(ceilM, ceilK)-sgemm.MR*sgemm.NR)
			sgemm.PackA64(ceilM, ceilK, a, ceilK, pa)
			s.pa = append(s.pa, pa)
			s.c = append(s.c, make([]float64, ceilM*ceilBlock))
			s.tile = append(s.tile, make([]float64, sgemm.MR*sgemm.NR))
		}
	}
	return onAllCores(func(w int) {
		for j0 := 0; j0 < ceilN; j0 += ceilBlock {
			sgemm.MulPacked64(ceilM, s.pa[w], &s.p, j0, min(j0+ceilBlock, ceilN), s.c[w], ceilBlock, s.tile[w])
		}
	})
}

// loadAvg returns the 1-, 5- and 15-minute load averages from /proc/loadavg.
func loadAvg() ([3]float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return [3]float64{}, err
	}
	return parseLoadAvg(string(b))
}

// parseLoadAvg parses the first three fields of /proc/loadavg's content.
func parseLoadAvg(s string) ([3]float64, error) {
	var l [3]float64
	f := strings.Fields(s)
	if len(f) < 3 {
		return l, fmt.Errorf("/proc/loadavg: unexpected content %q", s)
	}
	for i := range l {
		var err error
		if l[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return l, fmt.Errorf("/proc/loadavg: %w", err)
		}
	}
	return l, nil
}

// firstErr returns the first non-nil error of errs.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// printLoad prints the load averages and warns when busy says so.
func printLoad(w io.Writer, before, after [3]float64, err error) {
	if err != nil {
		fmt.Fprintf(w, "load average: unavailable (%v); cannot tell whether the machine was busy\n", err)
		return
	}
	fmt.Fprintf(w, "load average (1, 5, 15 min): before %.2f %.2f %.2f, after %.2f %.2f %.2f; %d CPUs\n",
		before[0], before[1], before[2], after[0], after[1], after[2], runtime.NumCPU())
	if busy(before, after, runtime.NumCPU()) {
		report.Wrapf(w, "warning: the load average suggests other processes were using the CPUs; times and ratios may be off by tens of percent, repeat on a quiet machine\n")
	}
}

// memory prints the bytes a trace holds per training step against the
// paper's M_train = 4·n·BS·(N_O+1)·(N_C+N_O) (float32 bytes), for depths
// 1, 3 and 5, with Unrolled and Implicit gradients, one block per case.
func memory(w io.Writer, cases []benchcases.Case) error {
	fmt.Fprintln(w, "\nTrace memory per training step (MB, capacity held, so including growth slack):")
	fmt.Fprintln(w, "ours (float64: y, μ, W, B and G's factor per step) vs the paper's M_train (float32)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tdepth\tUnrolled\tImplicit\tpaper M_train\t")
	for _, tc := range cases {
		r, nO := tc.YHat.Dims()
		_, _, nC := tc.C.Dims()
		for _, depth := range []int{1, 3, 5} {
			var bytes [2]int
			for i, mode := range []enforce.GradMode{enforce.Unrolled, enforce.Implicit} {
				a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: depth, MaxDepth: depth, Grad: mode})
				if err != nil {
					return err
				}
				var tr enforce.Trace
				if _, err := a.ProjectTrace(mat.DenseCopyOf(tc.YHat), tc.X, tc.YHat, &tr); err != nil {
					return err
				}
				bytes[i] = tr.Bytes()
			}
			paper := 4 * depth * r * (nO + 1) * (nC + nO)
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t\n", tc.Name, depth, float64(bytes[0])/1e6, float64(bytes[1])/1e6, float64(paper)/1e6)
		}
	}
	return tw.Flush()
}

// busy reports whether the 1-minute load averages suggest that other
// processes competed for the cpus: above half of them before the run, when
// only other processes count, or above 1.5 times them after it, when this
// run itself keeps up to GOMAXPROCS of them busy.
func busy(before, after [3]float64, cpus int) bool {
	return before[0] > 0.5*float64(cpus) || after[0] > 1.5*float64(cpus)
}
