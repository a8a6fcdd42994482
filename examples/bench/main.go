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
	"os"
	"runtime"
	"text/tabwriter"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/benchcases"
)

func main() {
	reps := flag.Int("reps", 3, "repetitions per measurement (the best is kept)")
	quick := flag.Bool("quick", false, "divide batch sizes by 8")
	flag.Parse()
	scale := 1
	if *quick {
		scale = 8
	}
	cases, err := benchcases.Cases(scale)
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
		if tc.RefSec > 0 && scale == 1 {
			ref = fmtDur(tc.RefSec)
			ratio = fmt.Sprintf("%.1f×", tc.RefSec/step)
		}
		rate := tc.Flops / step
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.0f%%\t%.2f\t\n", tc.Name, fmtDur(step), ref, ratio, rate/1e9, 100*rate/ceiling, train/fwd1)
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

func fmtDur(sec float64) string {
	switch {
	case sec >= 1:
		return fmt.Sprintf("%.2f s", sec)
	case sec >= 1e-3:
		return fmt.Sprintf("%.2f ms", sec*1e3)
	}
	return fmt.Sprintf("%.1f µs", sec*1e6)
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

func fixedDepth(tc benchcases.Case, depth, reps int, trace bool) (float64, error) {
	a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: depth, MaxDepth: depth})
	if err != nil {
		return 0, err
	}
	dst := mat.DenseCopyOf(tc.YHat)
	var tr enforce.Trace
	return best(reps, func() error {
		var err error
		if trace {
			_, err = a.ProjectTrace(dst, tc.X, tc.YHat, &tr)
		} else {
			_, err = a.ProjectTo(dst, tc.X, tc.YHat)
		}
		return err
	})
}

func stepTime(tc benchcases.Case, reps int) (float64, error) {
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

func trainStepTime(tc benchcases.Case, reps int) (float64, error) {
	a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: 1, MaxDepth: 1})
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
func memory(cases []benchcases.Case) {
	fmt.Println("\nTrace memory per training step (MB, capacity held, so including growth slack):")
	fmt.Println("ours (float64: y, μ, W, B and G's factor per step) vs the paper's M_train (float32)")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tdepth\tUnrolled\tImplicit\tpaper M_train\t")
	for _, tc := range cases[:3] {
		r, nO := tc.YHat.Dims()
		_, _, nC := tc.C.Dims()
		for _, depth := range []int{1, 3, 5} {
			var bytes [2]int
			for i, mode := range []enforce.GradMode{enforce.Unrolled, enforce.Implicit} {
				a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: depth, MaxDepth: depth, Grad: mode})
				if err != nil {
					log.Fatal(err)
				}
				var tr enforce.Trace
				if _, err := a.ProjectTrace(mat.DenseCopyOf(tc.YHat), tc.X, tc.YHat, &tr); err != nil {
					log.Fatal(err)
				}
				bytes[i] = tr.Bytes()
			}
			paper := 4 * depth * r * (nO + 1) * (nC + nO)
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t\n", tc.Name, depth, float64(bytes[0])/1e6, float64(bytes[1])/1e6, float64(paper)/1e6)
		}
	}
	tw.Flush()
}
