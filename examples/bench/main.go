// Command bench measures one NP step of AdaNP on the paper's benchmark
// sizes and prints one table: our time per step, the PyTorch reference's
// time on this kind of machine (2 cores, CPU, float32, from the project's
// REFERENCE.md), their ratio, the arithmetic rate achieved and its fraction
// of the dgemm ceiling measured in the same run. It then measures a
// training step (forward + Unrolled backward) against the forward step, and
// the memory a trace holds against the paper's formula.
//
//	go run ./examples/bench                                   # pure Go
//	go run -tags openblas ./examples/bench                    # OpenBLAS (apt-get install libopenblas-dev)
//	go run ./examples/bench -quick                            # smaller batches, for a smoke test
//
// Time per step is (T(depth 3) − T(depth 1))/2 over the same batch, so the
// extra evaluation of c at the final point, which a depth-1 run pays once,
// is not counted; each time is the best of -reps runs.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems"
)

// benchCase is one row of the table.
type benchCase struct {
	name    string
	c       enforce.Constraint
	x, yhat *mat.Dense
	refSec  float64 // reference time per step in seconds, 0 if none
	flops   float64 // arithmetic of one step (forward), in flop
}

func main() {
	reps := flag.Int("reps", 3, "repetitions per measurement (the best is kept)")
	quick := flag.Bool("quick", false, "divide batch sizes by 8")
	flag.Parse()
	scale := 1
	if *quick {
		scale = 8
	}
	cases, err := buildCases(scale)
	if err != nil {
		log.Fatal(err)
	}
	ceiling := dgemmRate(*reps)
	fmt.Printf("BLAS: %s; GOMAXPROCS %d; dgemm ceiling measured now: %.1f GFLOP/s\n\n", enforce.BLASImplementation, runtime.GOMAXPROCS(0), ceiling/1e9)

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case (BS, N_O, N_C)\tours / step\treference\tref / ours\tGFLOP/s\tof dgemm\ttrain step / fwd step\t")
	for _, tc := range cases {
		step, err := stepTime(tc, *reps)
		if err != nil {
			log.Fatal(err)
		}
		train, err := trainStepTime(tc, *reps)
		if err != nil {
			log.Fatal(err)
		}
		fwd1, err := fixedDepth(tc, 1, *reps, false)
		if err != nil {
			log.Fatal(err)
		}
		ref, ratio := "–", "–"
		if tc.refSec > 0 && scale == 1 {
			ref = fmtDur(tc.refSec)
			ratio = fmt.Sprintf("%.1f×", tc.refSec/step)
		}
		rate := tc.flops / scaleF(scale) / step
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.0f%%\t%.2f\t\n", tc.name, fmtDur(step), ref, ratio, rate/1e9, 100*rate/ceiling, train/fwd1)
	}
	tw.Flush()
	fmt.Println(`
ours / step: (T(depth 3) − T(depth 1))/2, float64, whole batch.
reference: the PyTorch reference per NP step (analytic Jacobian), same machine type, float32.
GFLOP/s: the step's arithmetic (Jacobian products, Gram matrix, Cholesky) over its time;
  "of dgemm" can pass 100% in the pure-Go build, whose matrix–vector kernel (used for
  the quadratic Jacobians) is faster than its dgemm.
train step / fwd step: depth-1 ProjectTrace + Unrolled VJP over depth-1 ProjectTo.`)
	memory(cases)
}

func scaleF(s int) float64 { return float64(s) }

func fmtDur(sec float64) string {
	switch {
	case sec >= 1:
		return fmt.Sprintf("%.2f s", sec)
	case sec >= 1e-3:
		return fmt.Sprintf("%.2f ms", sec*1e3)
	}
	return fmt.Sprintf("%.1f µs", sec*1e6)
}

func buildCases(scale int) ([]benchCase, error) {
	var cases []benchCase
	fit := problems.FittingEquality{}
	bs := 1000 / scale
	d := fit.Sample(bs, 1)
	cases = append(cases, benchCase{fmt.Sprintf("fitting (%d, 2, 1)", bs), fit.Equalities(), d.X, perturb(d.Y, 0.05, 1), 1.4e-3, float64(1000) * 30})
	for _, sz := range []struct {
		nO, nC int
		ref    float64
	}{{100, 50, 0.22}, {200, 150, 2.0}} {
		p, err := problems.NewNonconvexQuadratic(sz.nO, sz.nC, 1)
		if err != nil {
			return nil, err
		}
		bs := 833 / scale
		x := p.SampleX(bs, 2)
		y := mat.NewDense(bs, sz.nO, nil)
		rnd := rand.New(rand.NewPCG(3, 3))
		for s := 0; s < bs; s++ {
			row := y.RawRowView(s)
			for j := range row {
				row[j] = rnd.NormFloat64()
			}
			p.Complete(x.RawRowView(s), row, row)
		}
		c, _ := p.Constraint()
		nO, nC := float64(sz.nO), float64(sz.nC)
		flops := 833 * (2*nC*nO*nO + nC*nC*nO + nC*nC*nC/3 + 4*nC*nO)
		cases = append(cases, benchCase{fmt.Sprintf("quadratic (%d, %d, %d)", bs, sz.nO, sz.nC), c, x, perturb(y, 0.01, 4), sz.ref, flops})
	}
	dist, err := problems.DistillationFunc()
	if err != nil {
		return nil, err
	}
	bs = 1000 / scale
	x, y := distillationLike(bs)
	cases = append(cases,
		benchCase{fmt.Sprintf("distillation, Func (%d, 9, 6)", bs), dist, x, y, 0, 1000 * (9*6*2*20 + 6*6*9 + 100)},
		benchCase{fmt.Sprintf("distillation, analytic (%d, 9, 6)", bs), problems.Distillation{}.Equalities(), x, y, 0, 1000 * (6*6*9 + 100)})
	return cases, nil
}

// distillationLike returns inputs and near-feasible outputs in the ranges
// of the distillation data set, without reading it.
func distillationLike(n int) (x, y *mat.Dense) {
	rnd := rand.New(rand.NewPCG(5, 5))
	x, y = mat.NewDense(n, 3, nil), mat.NewDense(n, 9, nil)
	for s := 0; s < n; s++ {
		f, il, rr := 0.36+0.06*rnd.Float64(), 1.31+0.25*rnd.Float64(), 2.5+1.8*rnd.Float64()
		d := 0.12
		bot := f + il - d
		xd32 := 0.05
		xb32 := (problems.FeedR32*f - d*xd32) / bot
		xb125 := (problems.FeedR125*f - d*(1-xd32)) / bot
		x.SetRow(s, []float64{f, il, rr})
		y.SetRow(s, []float64{d, bot, xd32, 1 - xd32, 0, xb32, xb125, 1 - xb32 - xb125, rr * d})
	}
	return x, perturb(y, 1e-3, 6)
}

func perturb(m *mat.Dense, scale float64, seed uint64) *mat.Dense {
	rnd := rand.New(rand.NewPCG(seed, seed))
	out := mat.DenseCopyOf(m)
	raw := out.RawMatrix().Data
	for i := range raw {
		raw[i] += scale * rnd.NormFloat64()
	}
	return out
}

// best returns the shortest of reps runs of f, in seconds.
func best(reps int, f func() error) (float64, error) {
	if err := f(); err != nil { // warm-up: buffers, pools, lazily built layouts
		return 0, err
	}
	t := 0.0
	for i := 0; i < reps; i++ {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if d := time.Since(start).Seconds(); i == 0 || d < t {
			t = d
		}
	}
	return t, nil
}

func fixedDepth(tc benchCase, depth, reps int, trace bool) (float64, error) {
	a, err := enforce.NewAdaNP(tc.c, enforce.Settings{MinDepth: depth, MaxDepth: depth})
	if err != nil {
		return 0, err
	}
	dst := mat.DenseCopyOf(tc.yhat)
	var tr enforce.Trace
	return best(reps, func() error {
		var err error
		if trace {
			_, err = a.ProjectTrace(dst, tc.x, tc.yhat, &tr)
		} else {
			_, err = a.ProjectTo(dst, tc.x, tc.yhat)
		}
		return err
	})
}

func stepTime(tc benchCase, reps int) (float64, error) {
	t1, err := fixedDepth(tc, 1, reps, false)
	if err != nil {
		return 0, err
	}
	t3, err := fixedDepth(tc, 3, reps, false)
	if err != nil {
		return 0, err
	}
	return max(t3-t1, 0) / 2, nil
}

func trainStepTime(tc benchCase, reps int) (float64, error) {
	a, err := enforce.NewAdaNP(tc.c, enforce.Settings{MinDepth: 1, MaxDepth: 1})
	if err != nil {
		return 0, err
	}
	dst := mat.DenseCopyOf(tc.yhat)
	gy := mat.DenseCopyOf(tc.yhat)
	var tr enforce.Trace
	return best(reps, func() error {
		if _, err := a.ProjectTrace(dst, tc.x, tc.yhat, &tr); err != nil {
			return err
		}
		return a.VJP(&tr, tc.yhat, gy, nil)
	})
}

// dgemmRate measures the rate of a 1000×1000×1000 product with the BLAS in
// use, both as one call (gonum's Gemm uses all cores itself) and split
// across the cores (as the projection calls a single-threaded OpenBLAS),
// and returns the better.
func dgemmRate(reps int) float64 {
	const n = 1000
	a := make([]float64, n*n)
	b := make([]float64, n*n)
	c := make([]float64, n*n)
	for i := range a {
		a[i], b[i] = float64(i%7), float64(i%5)
	}
	one, _ := best(reps, func() error {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: n, Cols: n, Stride: n, Data: a},
			blas64.General{Rows: n, Cols: n, Stride: n, Data: b}, 0,
			blas64.General{Rows: n, Cols: n, Stride: n, Data: c})
		return nil
	})
	p := runtime.GOMAXPROCS(0)
	split, _ := best(reps, func() error {
		done := make(chan struct{}, p)
		rows := (n + p - 1) / p
		for w := 0; w < p; w++ {
			lo, hi := w*rows, min((w+1)*rows, n)
			go func() {
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
					blas64.General{Rows: hi - lo, Cols: n, Stride: n, Data: a[lo*n:]},
					blas64.General{Rows: n, Cols: n, Stride: n, Data: b}, 0,
					blas64.General{Rows: hi - lo, Cols: n, Stride: n, Data: c[lo*n:]})
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

// memory prints the bytes a trace holds per training step against the
// paper's M_train = 4·n·BS·(N_O+1)·(N_C+N_O) (float32 bytes), for depths
// 1, 3 and 5, with Unrolled and Implicit gradients.
func memory(cases []benchCase) {
	fmt.Println("\nTrace memory per training step (MB, capacity held, so including growth slack):")
	fmt.Println("ours (float64: y, μ, W, B and G's factor per step) vs the paper's M_train (float32)")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tdepth\tUnrolled\tImplicit\tpaper M_train\t")
	for _, tc := range cases[:3] {
		r, nO := tc.yhat.Dims()
		_, _, nC := tc.c.Dims()
		for _, depth := range []int{1, 3, 5} {
			var bytes [2]int
			for i, mode := range []enforce.GradMode{enforce.Unrolled, enforce.Implicit} {
				a, err := enforce.NewAdaNP(tc.c, enforce.Settings{MinDepth: depth, MaxDepth: depth, Grad: mode})
				if err != nil {
					log.Fatal(err)
				}
				var tr enforce.Trace
				if _, err := a.ProjectTrace(mat.DenseCopyOf(tc.yhat), tc.x, tc.yhat, &tr); err != nil {
					log.Fatal(err)
				}
				bytes[i] = tr.Bytes()
			}
			paper := 4 * depth * r * (nO + 1) * (nC + nO)
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t\n", tc.name, depth, float64(bytes[0])/1e6, float64(bytes[1])/1e6, float64(paper)/1e6)
		}
	}
	tw.Flush()
}
