// Command distillation reproduces the extractive-distillation case study
// of the ENFORCE paper (§5.4.1, Table 4): surrogate models of an Aspen Plus
// column separating R-410A with the ionic liquid [EMIM][SCN], from the
// KKT-HardNet data set (problems.LoadDistillation: 4308 simulations, the
// reference's 3015 / 861 / 432 train / validation / test split), under six
// bilinear mass-balance equalities h(x, y) = 0 (problems.Distillation).
//
// Two models share the backbone, the seed and the optimiser:
//
//   - MLP: the backbone alone;
//   - ENFORCE: the backbone followed by AdaNP, loss MSE + λ_D·displacement,
//     λ_D = 0.5, the activation rule, training tolerance mean|h| ≤ 1e-4
//     and inference tolerance max|h| ≤ 1e-6. By default AdaNP projects in
//     the metric of standardised units (train.Config with Standardize and
//     the default weights: W = diag(σ_max²/σ_j²)), the distance the loss and
//     the activation rule measure; -weights auto uses the reference's
//     per-sample diagonal weighting enforce.AutoDiagonal with Tikhonov
//     ε = 1e-8 instead.
//
// KKT-HardNet's row is the paper's (it is not reimplemented here).
//
// Setting: the reference's (KKT-HardNet's configuration for this case):
// a 3-64-64-9 ReLU network initialised as PyTorch's, 1200 epochs of Adam
// at learning rate 1e-4 with batch 64, x and y standardised with the
// training mean and standard deviation (constraints evaluated and
// projected in original units). Where the paper is silent: λ_D = 0.5 and
// the tolerances of §5.1; MSE is over all nine outputs of the 432 test
// points in original units; "Max eq." and "Mean eq." are max and mean of
// |h_k| over test points and constraints; the inference time is the median
// wall time of one prediction of the whole test set.
//
// Why the default metric: one output (x_D_IL ≈ 1e-20) has a standard
// deviation of 1.8e-21. Projected in original units (as the reference and
// -weights auto do), AdaNP's correction of that output is tiny in mol/mol
// but enormous in the standardised units of the loss, so the activation
// rule rejects every training batch (ENFORCE then trains as the MLP does,
// and AdaNP acts only at inference), and forcing projection
// (-alwaysproject) makes the loss diverge. The table's "projected" column
// shows the fraction of training batches AdaNP projected.
//
// The data are read from ../shared/data (or $ENFORCE_DATA); without them
// the program exits with a message saying where it looked.
//
//	go run ./examples/distillation -quick
//	go run ./examples/distillation            # the paper's scale
//	go run ./examples/distillation -seeds 3
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/report"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// options are the command-line settings of one experiment.
type options struct {
	epochs, width, batch, seeds, logLines, nTrain int
	lr, lambdaD                                   float64
	seed                                          uint64
	alwaysProject                                 bool
	out, dataDir                                  string
	weights                                       string // "standardised" or "auto"
}

// defaults returns the paper's setting.
func defaults() options {
	return options{epochs: 1200, width: 64, batch: 64, seeds: 1, logLines: 10, lr: 1e-4, lambdaD: 0.5, seed: 1, weights: "standardised",
		out: filepath.Join(os.TempDir(), "enforce-figures", "distillation")}
}

func main() {
	o := defaults()
	quick := flag.Bool("quick", false, "reduced scale (30 epochs) that finishes in well under a minute (flags given explicitly still apply)")
	flag.IntVar(&o.epochs, "epochs", o.epochs, "epochs per model")
	flag.IntVar(&o.width, "width", o.width, "width of the two hidden ReLU layers")
	flag.IntVar(&o.batch, "batch", o.batch, "mini-batch size")
	flag.IntVar(&o.nTrain, "ntrain", 0, "use only the first n training rows (0: all 3015)")
	flag.Float64Var(&o.lr, "lr", o.lr, "Adam learning rate")
	flag.Float64Var(&o.lambdaD, "lambdaD", o.lambdaD, "λ_D, the weight of ENFORCE's displacement term")
	flag.BoolVar(&o.alwaysProject, "alwaysproject", false, "project every training batch (bypass the activation rule)")
	flag.StringVar(&o.weights, "weights", o.weights, `AdaNP's metric: "standardised" (W = diag(σ_max²/σ_j²), the loss's units) or "auto" (the reference's enforce.AutoDiagonal, ε = 1e-8, original units)`)
	flag.Uint64Var(&o.seed, "seed", o.seed, "first model seed; model seeds are seed, seed+1, …")
	flag.IntVar(&o.seeds, "seeds", o.seeds, "number of model seeds")
	flag.IntVar(&o.logLines, "log", o.logLines, "progress lines per model on stderr (0: none)")
	flag.StringVar(&o.out, "out", o.out, "folder for the PNG figures and the history CSV (empty: none)")
	flag.StringVar(&o.dataDir, "data", "", "the shared data folder (default: $ENFORCE_DATA or ../shared/data)")
	flag.Parse()
	if *quick {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["epochs"] {
			o.epochs = 30
		}
	}
	err := run(o, os.Stdout, os.Stderr)
	if errors.Is(err, problems.ErrNoData) {
		fmt.Fprintln(os.Stderr, "distillation: the KKT-HardNet data are not available:", err)
		os.Exit(2)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// result is one trained model measured on the test set.
type result struct {
	mse, meanC, maxC, depth, projected, trainDepth float64
	notConverged                                   int
	predict, train                                 time.Duration
	history                                        train.History
	pred                                           *mat.Dense
}

// paperRows is Table 4 of the paper: MSE, max eq., mean eq., inference
// time [s], training time [s].
var paperRows = []struct {
	name  string
	cells [5]string
}{
	{"MLP (paper)", [5]string{"(7.6 ± 2.1)e-8", "0.003 ± 0.001", "(2 ± 0)e-4", "(1.0 ± 0.0)e-4", "105 ± 1"}},
	{"KKT-HardNet (paper)", [5]string{"(1.1 ± 0.0)e-4", "< 1e-7", "< 1e-7", "0.29 ± 0.04", "38,631 ± 440"}},
	{"ENFORCE (paper)", [5]string{"(1.2 ± 0.1)e-7", "< 1e-7", "< 1e-7", "0.006 ± 0.001", "391 ± 2"}},
}

func run(o options, stdout, progress io.Writer) error {
	if o.weights != "standardised" && o.weights != "auto" {
		return fmt.Errorf("-weights %q: want standardised or auto", o.weights)
	}
	if o.seeds < 1 || o.epochs < 1 || o.width < 1 || o.batch < 1 || o.nTrain < 0 {
		return errors.New("-seeds, -epochs, -width and -batch must be positive, -ntrain not negative")
	}
	dir := o.dataDir
	if dir == "" {
		var err error
		if dir, err = problems.DataDir(); err != nil {
			return err
		}
	}
	all, split, err := problems.LoadDistillation(dir)
	if err != nil {
		return err
	}
	trainSet, _, testSet := all.Partition(split)
	if o.nTrain > 0 && o.nTrain < trainSet.Len() {
		idx := make([]int, o.nTrain)
		for i := range idx {
			idx[i] = i
		}
		trainSet = trainSet.Rows(idx)
	}
	p := problems.Distillation{}
	fmt.Fprintf(stdout, "ENFORCE §5.4.1: extractive distillation surrogate under 6 bilinear equalities (KKT-HardNet data, %s)\n", dir)
	fmt.Fprintf(stdout, "data: %d training and %d test simulations (the reference's split)\n", trainSet.Len(), testSet.Len())
	fmt.Fprintf(stdout, "backbone: 3-%d-%d-9 ReLU, PyTorch init, standardised x and y, Adam lr %g, batch %d, %d epochs; λ_D %g, W %s; activation rule %v; %d seed(s) from %d; CPU, GOMAXPROCS %d\n\n",
		o.width, o.width, o.lr, o.batch, o.epochs, o.lambdaD, o.weights, !o.alwaysProject, o.seeds, o.seed, runtime.GOMAXPROCS(0))

	modes := []train.Mode{train.MLP, train.ENFORCE}
	results := map[train.Mode][]result{}
	var runs []report.Run
	for s := range o.seeds {
		seed := o.seed + uint64(s)
		for _, mode := range modes {
			ts, infer := train.TrainSettings(), enforce.Settings{}
			if o.weights == "auto" {
				ts.Weights, ts.Reg = enforce.AutoDiagonal, 1e-8
				infer = enforce.Settings{Weights: enforce.AutoDiagonal, Reg: 1e-8}
			}
			cfg := train.Config{
				Sizes: []int{3, o.width, o.width, 9}, Hidden: layers.ReLU, PyTorchInit: true,
				Constraint: p.Equalities(), Mode: mode, Train: ts,
				Infer:     infer,
				LearnRate: o.lr, BatchSize: o.batch, Epochs: o.epochs, Seed: seed,
				LambdaD: o.lambdaD, Standardize: true, AlwaysProject: o.alwaysProject,
			}
			if o.logLines > 0 {
				cfg.LogEvery, cfg.Progress = max(1, o.epochs/o.logLines), progress
				fmt.Fprintf(progress, "training %v, seed %d\n", mode, seed)
			} else {
				cfg.Quiet = true
			}
			r, err := evaluate(cfg, p, trainSet, testSet)
			if err != nil {
				return fmt.Errorf("%v, seed %d: %w", mode, seed, err)
			}
			results[mode] = append(results[mode], r)
			runs = append(runs, report.Run{Label: fmt.Sprintf("%v seed %d", mode, seed), History: r.history})
		}
	}

	tab := report.NewTable(fmt.Sprintf("Table 4 (§5.4.1): %d test points; ours: mean ± std over %d seed(s), float64, CPU", testSet.Len(), o.seeds),
		"method", "MSE", "max eq.", "mean eq.", "inf. time [s]", "train time [s]", "AdaNP depth", "not converged", "projected batches", "train depth")
	for _, pr := range paperRows {
		tab.AddRow(pr.name, pr.cells[0], pr.cells[1], pr.cells[2], pr.cells[3], pr.cells[4])
	}
	for _, mode := range modes {
		rs := results[mode]
		col := func(f func(result) float64, format string) string {
			xs := make([]float64, len(rs))
			for i, r := range rs {
				xs[i] = f(r)
			}
			return report.Summarize(xs).Format(format)
		}
		row := []string{mode.String() + " (ours)",
			col(func(r result) float64 { return r.mse }, "%.2e"),
			col(func(r result) float64 { return r.maxC }, "%.1e"),
			col(func(r result) float64 { return r.meanC }, "%.1e"),
			col(func(r result) float64 { return r.predict.Seconds() }, "%.4f"),
			col(func(r result) float64 { return r.train.Seconds() }, "%.0f")}
		if mode == train.ENFORCE {
			row = append(row,
				col(func(r result) float64 { return r.depth }, "%.2f"),
				col(func(r result) float64 { return float64(r.notConverged) }, "%.0f"),
				col(func(r result) float64 { return 100 * r.projected }, "%.1f %%"),
				col(func(r result) float64 { return r.trainDepth }, "%.2f"))
		}
		tab.AddRow(row...)
	}
	tab.AddNote("MSE over the 9 outputs in original units; eq. = |h_k(x, ỹ)| over test points and constraints; inf. time = median")
	tab.AddNote("wall time of Model.Predict on the whole test set; AdaNP depth = NP steps per test sample at inference; projected")
	tab.AddNote("batches = share of training batches (all epochs) that AdaNP projected; train depth = mean NP steps over those batches.")
	tab.AddNote("The paper's numbers: A100 GPU, float32; KKT-HardNet is not reimplemented here.")
	if err := tab.WriteText(stdout); err != nil {
		return err
	}
	if o.out == "" {
		return nil
	}
	return figures(o.out, testSet, results, runs, stdout)
}

// evaluate trains one model and measures it on the test set.
func evaluate(cfg train.Config, p problems.Distillation, trainSet, testSet problems.Dataset) (result, error) {
	var r result
	model, err := train.New(cfg)
	if err != nil {
		return r, err
	}
	start := time.Now()
	if r.history, err = model.Fit(trainSet.X, trainSet.Y); err != nil {
		return r, err
	}
	r.train = time.Since(start)
	r.projected, r.trainDepth = report.Projection(r.history)
	pred, st, err := model.Predict(testSet.X)
	if err != nil {
		return r, err
	}
	r.pred, r.depth, r.notConverged = pred, st.MeanDepth, st.NotConverged
	r.mse = report.MSE(pred, testSet.Y)
	if r.meanC, r.maxC, err = report.Residual(p.Equalities(), testSet.X, pred); err != nil {
		return r, err
	}
	r.predict, err = report.MedianTime(11, func() error {
		_, _, err := model.Predict(testSet.X)
		return err
	})
	return r, err
}

// outputNames are the nine outputs, in order.
var outputNames = []string{"D", "B", "x_D_R32", "x_D_R125", "x_D_IL", "x_B_R32", "x_B_R125", "x_B_IL", "L"}

// figures writes predicted against true values of the first seed (for D,
// B and L, the outputs in mol/s), the training loss and AdaNP depth
// against the epoch, and the history CSV.
func figures(dir string, testSet problems.Dataset, results map[train.Mode][]result, runs []report.Run, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var parity []report.Series
	hi := 0.0
	for _, j := range []int{0, 1, 8} {
		for _, mode := range []train.Mode{train.MLP, train.ENFORCE} {
			s := report.Series{Label: fmt.Sprintf("%s, %v", outputNames[j], mode), Points: true,
				X: mat.Col(nil, j, testSet.Y), Y: mat.Col(nil, j, results[mode][0].pred)}
			for _, v := range s.X {
				hi = max(hi, v)
			}
			parity = append(parity, s)
		}
	}
	parity = append(parity, report.Series{Label: "y = x", X: []float64{0, hi}, Y: []float64{0, hi}, Dashed: true})
	var enf []report.Run
	for i, r := range runs {
		if i%2 == 1 {
			enf = append(enf, r)
		}
	}
	plots := []report.Plot{
		{Name: "distillation_parity.png", Fig: report.Figure{Title: "Distillation: predicted against simulated flows (test set, first seed)", XLabel: "simulated [mol/s]", YLabel: "predicted [mol/s]"}, Series: parity},
		{Name: "distillation_loss.png", Fig: report.Figure{Title: "Training loss (standardised units)", XLabel: "epoch", YLabel: "loss", LogY: true},
			Series: report.HistorySeries(func(e train.Epoch) float64 { return e.Loss }, true, runs...)},
		{Name: "distillation_depth.png", Fig: report.Figure{Title: "ENFORCE: AdaNP depth and share of projected batches", XLabel: "epoch", YLabel: "NP steps / share"},
			Series: report.DepthAndShare(enf...)},
	}
	names, err := report.WriteOutputs(dir, plots, "distillation_history.csv", runs...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %v to %s\n", names, dir)
	return nil
}
