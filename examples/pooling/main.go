// Command pooling reproduces the pooling case study of the ENFORCE paper
// (§5.4.2, Table 5): surrogate models of Haverly's pooling problem from the
// KKT-HardNet data set (problems.LoadPooling: 2000 optimal solutions, the
// reference's 1600 / 400 train / test split), under four equalities
// (mass and sulfur balances, one bilinear) and two bilinear inequalities
// (product sulfur specifications) joined through Fischer–Burmeister
// (problems.Pooling).
//
// Two models share the backbone, the seed and the optimiser:
//
//   - MLP: the backbone alone;
//   - ENFORCE: the backbone followed by AdaNP on the Fischer–Burmeister
//     system (W = I, Tikhonov ε = 1e-3 on G as the reference,
//     problems.PoolingReg), loss MSE + λ_D·displacement, λ_D = 0.5, the
//     activation rule, training tolerance mean|c| ≤ 1e-4 and inference
//     tolerance max|c| ≤ 1e-6.
//
// KKT-HardNet's row is the paper's (it is not reimplemented here).
//
// The paper is silent on the network and the training of this case; this
// program uses the distillation case's (KKT-HardNet's configuration): a
// 4-64-64-5 ReLU network initialised as PyTorch's, 1200 epochs of Adam at
// learning rate 1e-4 with batch 64, x and y standardised with the training
// mean and standard deviation (constraints evaluated and projected in
// original units). MSE is over all five outputs of the 400 test points in
// original units; "max eq." is max |h_k| and "max ineq." max g_j⁺ over the
// test points; "infeas." counts test points with g_j > 1e-6; the
// inference time is the median wall time of one prediction of the whole
// test set.
//
// The data have one degree of freedom that x does not determine (the
// split of the pool outflow between the products), so every method's MSE
// stays near 60–70 (see ../shared/data/kkt_hardnet/SOURCE.md).
//
// The data are read from ../shared/data (or $ENFORCE_DATA); without them
// the program exits with a message saying where it looked.
//
//	go run ./examples/pooling -quick
//	go run ./examples/pooling            # the paper's scale (our choice of setting)
//	go run ./examples/pooling -seeds 3
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
}

// defaults returns the paper's setting.
func defaults() options {
	return options{epochs: 1200, width: 64, batch: 64, seeds: 1, logLines: 10, lr: 1e-4, lambdaD: 0.5, seed: 1,
		out: filepath.Join(os.TempDir(), "enforce-figures", "pooling")}
}

func main() {
	o := defaults()
	quick := flag.Bool("quick", false, "reduced scale (30 epochs) that finishes in well under a minute (flags given explicitly still apply)")
	flag.IntVar(&o.epochs, "epochs", o.epochs, "epochs per model")
	flag.IntVar(&o.width, "width", o.width, "width of the two hidden ReLU layers")
	flag.IntVar(&o.batch, "batch", o.batch, "mini-batch size")
	flag.IntVar(&o.nTrain, "ntrain", 0, "use only the first n training rows (0: all 1600)")
	flag.Float64Var(&o.lr, "lr", o.lr, "Adam learning rate")
	flag.Float64Var(&o.lambdaD, "lambdaD", o.lambdaD, "λ_D, the weight of ENFORCE's displacement term")
	flag.BoolVar(&o.alwaysProject, "alwaysproject", false, "project every training batch (bypass the activation rule)")
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
		fmt.Fprintln(os.Stderr, "pooling: the KKT-HardNet data are not available:", err)
		os.Exit(2)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// result is one trained model measured on the test set.
type result struct {
	mse, maxC, maxG, depth, projected, trainDepth float64
	infeas                                        []float64
	notConverged                                  int
	predict, train                                time.Duration
	history                                       train.History
	pred                                          *mat.Dense
}

// paperRows is Table 5 of the paper: MSE, max eq., max ineq., inference
// time [s], training time [s].
var paperRows = []struct {
	name  string
	cells [5]string
}{
	{"MLP (paper)", [5]string{"64 ± 3", "7.4 ± 2.2", "3.4 ± 1.5", "(2 ± 0)e-4", "579 ± 1"}},
	{"KKT-HardNet (paper)", [5]string{"54 ± 1", "< 1e-7", "< 1e-7", "0.66 ± 0.07", "61,768 ± 1,155"}},
	{"ENFORCE (paper)", [5]string{"61 ± 3", "< 1e-7", "< 1e-7", "0.057 ± 0.007", "4,041 ± 209"}},
}

func run(o options, stdout, progress io.Writer) error {
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
	all, split, err := problems.LoadPooling(dir)
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
	p := problems.Pooling{}
	c, err := p.Constraint()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ENFORCE §5.4.2: pooling surrogate under 4 equalities and 2 inequalities (KKT-HardNet data, %s)\n", dir)
	fmt.Fprintf(stdout, "data: %d training and %d test solutions (the reference's split)\n", trainSet.Len(), testSet.Len())
	fmt.Fprintf(stdout, "backbone: 4-%d-%d-5 ReLU, PyTorch init, standardised x and y, Adam lr %g, batch %d, %d epochs (the paper is silent: the distillation setting); λ_D %g, W = I, ε %g; activation rule %v; %d seed(s) from %d; CPU, GOMAXPROCS %d\n\n",
		o.width, o.width, o.lr, o.batch, o.epochs, o.lambdaD, problems.PoolingReg, !o.alwaysProject, o.seeds, o.seed, runtime.GOMAXPROCS(0))

	modes := []train.Mode{train.MLP, train.ENFORCE}
	results := map[train.Mode][]result{}
	var runs []report.Run
	for s := range o.seeds {
		seed := o.seed + uint64(s)
		for _, mode := range modes {
			// W = I in original units, as the reference: an explicit
			// all-ones Diagonal, since with Standardize the default
			// (Identity) weights mean the metric of standardised units.
			ones := []float64{1, 1, 1, 1, 1}
			ts := train.TrainSettings()
			ts.Reg, ts.Weights, ts.Diag = problems.PoolingReg, enforce.Diagonal, ones
			cfg := train.Config{
				Sizes: []int{4, o.width, o.width, 5}, Hidden: layers.ReLU, PyTorchInit: true,
				Constraint: c, Mode: mode, Train: ts,
				Infer:     enforce.Settings{Reg: problems.PoolingReg, Weights: enforce.Diagonal, Diag: ones},
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

	tab := report.NewTable(fmt.Sprintf("Table 5 (§5.4.2): %d test points; ours: mean ± std over %d seed(s), float64, CPU", testSet.Len(), o.seeds),
		"method", "MSE", "max eq.", "max ineq.", "inf. time [s]", "train time [s]", "infeas. g₁ [%]", "infeas. g₂ [%]", "AdaNP depth", "not converged", "projected batches", "train depth")
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
			col(func(r result) float64 { return r.mse }, "%.1f"),
			col(func(r result) float64 { return r.maxC }, "%.1e"),
			col(func(r result) float64 { return r.maxG }, "%.1e"),
			col(func(r result) float64 { return r.predict.Seconds() }, "%.4f"),
			col(func(r result) float64 { return r.train.Seconds() }, "%.0f"),
			col(func(r result) float64 { return r.infeas[0] }, "%.2f"),
			col(func(r result) float64 { return r.infeas[1] }, "%.2f")}
		if mode == train.ENFORCE {
			row = append(row,
				col(func(r result) float64 { return r.depth }, "%.2f"),
				col(func(r result) float64 { return float64(r.notConverged) }, "%.0f"),
				col(func(r result) float64 { return 100 * r.projected }, "%.1f %%"),
				col(func(r result) float64 { return r.trainDepth }, "%.2f"))
		}
		tab.AddRow(row...)
	}
	tab.AddNote("MSE over the 5 outputs in original units; max eq. = max |h_k(x, ỹ)|; max ineq. = max g_j(x, ỹ)⁺ over the test points;")
	tab.AddNote("infeas. g_j = %% of test points with g_j > 1e-6; inf. time = median wall time of Model.Predict on the whole test set;")
	tab.AddNote("AdaNP depth = NP steps per test sample at inference; projected batches = share of training batches that AdaNP")
	tab.AddNote("projected; train depth = mean NP steps over those batches. The paper's numbers: A100 GPU, float32; KKT-HardNet is not")
	tab.AddNote("reimplemented here.")
	if err := tab.WriteText(stdout); err != nil {
		return err
	}
	if o.out == "" {
		return nil
	}
	return figures(o.out, testSet, results, runs, stdout)
}

// evaluate trains one model and measures it on the test set.
func evaluate(cfg train.Config, p problems.Pooling, trainSet, testSet problems.Dataset) (result, error) {
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
	if _, r.maxC, err = report.Residual(p.Equalities(), testSet.X, pred); err != nil {
		return r, err
	}
	if r.infeas, err = report.Infeasible(p.Inequalities(), testSet.X, pred, 1e-6); err != nil {
		return r, err
	}
	g := make([]float64, 2)
	for i := range testSet.Len() {
		p.Inequalities().Eval(testSet.X.RawRowView(i), pred.RawRowView(i), g, nil)
		r.maxG = max(r.maxG, g[0], g[1])
	}
	r.predict, err = report.MedianTime(11, func() error {
		_, _, err := model.Predict(testSet.X)
		return err
	})
	return r, err
}

// outputNames are the five outputs, in order.
var outputNames = []string{"m", "P_x", "P_y", "C_x", "C_y"}

// figures writes predicted against true flows of the first seed, the
// training loss and AdaNP depth against the epoch, and the history CSV.
func figures(dir string, testSet problems.Dataset, results map[train.Mode][]result, runs []report.Run, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var parity []report.Series
	hi := 0.0
	for j := 1; j < 5; j++ {
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
		{Name: "pooling_parity.png", Fig: report.Figure{Title: "Pooling: predicted against optimal flows (test set, first seed)", XLabel: "optimal flow", YLabel: "predicted flow"}, Series: parity},
		{Name: "pooling_loss.png", Fig: report.Figure{Title: "Training loss (standardised units)", XLabel: "epoch", YLabel: "loss", LogY: true},
			Series: report.HistorySeries(func(e train.Epoch) float64 { return e.Loss }, true, runs...)},
		{Name: "pooling_depth.png", Fig: report.Figure{Title: "ENFORCE: AdaNP depth and share of projected batches", XLabel: "epoch", YLabel: "NP steps / share"},
			Series: report.DepthAndShare(enf...)},
	}
	names, err := report.WriteOutputs(dir, plots, "pooling_history.csv", runs...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %v to %s\n", names, dir)
	return nil
}
