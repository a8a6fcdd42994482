// Command inequality reproduces the function-fitting experiment with
// inequality constraints of the ENFORCE paper (§5.2, Table 2): learn
//
//	f(x) = h(x)·sin x,   h(x) = 1 + x²/(3π²),   x ~ U(0, 3π),
//
// from 1200 biased noisy labels f + 0.1·sign(f) + N(0, 0.3²) under the
// envelope g₁ = y − h(x) ≤ 0, g₂ = −h(x) − y ≤ 0, and test on 300
// noiseless points. Three models share the backbone (1×64 ReLU, PyTorch's
// initialisation), the seed and the optimiser (Adam 1e-3, batch 128, 500
// epochs):
//
//   - MLP: the backbone alone;
//   - Soft: the paper's "quadratic penalty on constraint violations",
//     λ_C·(1/N)Σ_iΣ_j max(0, g_j(x_i, ŷ_i))², λ_C = 1, on the raw
//     inequalities (train.SquaredHinge), as the reference's trainer
//     computes it (-softpenalty fb gives the earlier form: the squared
//     Fischer–Burmeister residual at zero multipliers, about four times
//     larger);
//   - ENFORCE: AdaNP in the extended space (y, λ₁, λ₂), λ_D = 0.5,
//     training tolerance mean|c| ≤ 1e-4, inference max|c| ≤ ε_I = 1e-6
//     (-infertol), at most 100 steps.
//
// Settings the paper does not state, and what this program chooses:
//
//   - The activation rule (Algorithm 2) is off: every training batch is
//     projected, as the reference code does for this case (-activation
//     turns it on). With the rule on, the projection of the noisy early
//     predictions rarely lowers the batch MSE, AdaNP is skipped for most
//     of training, and the fit is worse.
//   - x and y are standardised for the network (training mean and
//     population standard deviation; constraints are evaluated and
//     projected in original units). -standardize=false feeds raw x ∈ [0, 3π]
//     to the network: a ReLU layer initialised as PyTorch's then has
//     almost all its kinks near x ∈ [−1, 1], too few to follow the
//     oscillation beyond x ≈ 5, and all three methods stop at R² 0.73
//     (seed 1) against the paper's 0.994–0.995.
//   - ε_I is the paper's 1e-6 (§5.2 and Table 2's caption). The reference
//     runs this case with 1e-4, and its stored run, whose metrics equal
//     the paper's Table 2, reached max|c| 9.5e-5 (docs/setup.md §3):
//     -infertol 1e-4 reproduces that setting.
//
// The table reports the paper's R², NRMSE = RMSE/σ_y (σ_y the standard
// deviation of the noiseless test targets) and the percentage of test
// predictions with g_j > ε_I (the reference's threshold), beside the
// paper's numbers. Figures (PNG) and
// the per-epoch history (CSV) go to -out.
//
//	go run ./examples/inequality -quick       # a few seconds
//	go run ./examples/inequality              # the paper's scale
//	go run ./examples/inequality -seeds 5     # mean ± std over 5 seeds
package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// options are the command-line settings of one experiment.
type options struct {
	harness.Common
	n, nTest, batch         int
	softLambda, inferTol    float64
	softPenalty             string // "hinge" or "fb"
	activation, standardize bool
}

// flags registers the command line on o.
func flags(o *options) *harness.Flags {
	f := harness.New("inequality", "The ENFORCE paper's fitting experiment with inequality constraints (§5.2, Table 2): MLP, Soft and ENFORCE under |y| ≤ h(x).")
	o.Register(f, "seed of the data and the first model; model seeds are seed, seed+1, …")
	f.IntVar(&o.n, "n", o.n, "noisy training points")
	f.IntVar(&o.nTest, "ntest", o.nTest, "noiseless test points")
	f.IntVar(&o.batch, "batch", o.batch, "mini-batch size")
	f.Float64Var(&o.softLambda, "soft", o.softLambda, "λ_C, the penalty weight of the Soft baseline")
	f.StringVar(&o.softPenalty, "softpenalty", o.softPenalty, `the Soft baseline's penalty: "hinge" (λ_C(1/N)ΣΣ max(0, g_j)², the paper's and the reference's) or "fb" (λ_C(1/N)Σ‖φ_FB(x, ŷ, 0)‖², ≈ 4× larger)`)
	f.Float64Var(&o.inferTol, "infertol", o.inferTol, "ε_I, the inference tolerance on max|c| and the threshold above which g_j counts as infeasible (the paper's 1e-6; the reference's 1e-4)")
	f.BoolVar(&o.activation, "activation", o.activation, "use the activation rule of Algorithm 2 (the reference turns it off here)")
	f.BoolVar(&o.standardize, "standardize", o.standardize, "standardise x and y for the network (constraints stay in original units)")
	f.Quick("epochs", "60")
	return f
}

// cli runs the command with the arguments args and returns its exit status.
var cli = harness.Command(defaults, flags, run)

func main() { os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr)) }

// defaults returns the paper's setting.
func defaults() options {
	return options{Common: harness.Common{Epochs: 500, Width: 64, Seeds: 1, LogLines: 5, LR: 1e-3, LambdaD: 0.5, Seed: 1, Out: harness.DefaultOut("inequality")},
		n: 1200, nTest: 300, batch: 128, softLambda: 1, inferTol: 1e-6, softPenalty: "hinge", standardize: true}
}

// A test prediction counts as infeasible when a g_j exceeds the inference
// tolerance ε_I (-infertol), as in the reference: the Fischer–Burmeister
// residual max|c| ≤ ε_I that AdaNP meets allows g_j of order ε_I above
// zero, so counting g_j > 0 would call ε-feasible points infeasible.

// result is one trained model measured on the test set.
type result struct {
	r2, nrmse, maxG, maxC, depth float64
	infeas                       []float64
	predict, train               time.Duration
	pred                         *mat.Dense
	history                      train.History
}

// paperRows is Table 2 of the paper: R², NRMSE [%], infeasible g₁ and g₂
// [%], inference time [s] for the 300 test points.
var paperRows = map[train.Mode][5]string{
	train.MLP:     {"0.994", "7.84", "15.33", "9.33", "0.0002"},
	train.Soft:    {"0.995", "6.86", "4.00", "0.00", "0.0003"},
	train.ENFORCE: {"0.995", "7.16", "0.00", "0.00", "0.020"},
}

func run(o options, stdout, progress io.Writer) error {
	if o.Seeds < 1 || o.n < 1 || o.nTest < 2 || o.Epochs < 1 || o.Width < 1 || o.Layers < 0 || o.batch < 1 {
		return fmt.Errorf("-seeds, -n, -epochs, -width and -batch must be positive and -ntest at least 2")
	}
	if !(o.inferTol > 0) || math.IsInf(o.inferTol, 1) {
		return fmt.Errorf("-infertol %v must be positive and finite", o.inferTol)
	}
	if o.softPenalty != "hinge" && o.softPenalty != "fb" {
		return fmt.Errorf("-softpenalty %q: want hinge or fb", o.softPenalty)
	}
	p := problems.FittingInequality{}
	c, err := p.Constraint()
	if err != nil {
		return err
	}
	trainSet := p.SampleNoisy(o.n, o.Seed)
	testSet := p.Sample(o.nTest, o.Seed+1_000_003)
	report.Wrapf(stdout, "ENFORCE §5.2: fitting f = h(x) sin x under |y| ≤ h(x) = 1 + x²/(3π²)\n")
	fmt.Fprintf(stdout, "data: %d noisy training points (bias 0.1, σ 0.3), %d noiseless test points, x ~ U(0, 3π), data seed %d\n",
		o.n, o.nTest, o.Seed)
	report.Wrapf(stdout, "backbone: %d×%d ReLU, PyTorch init, Adam lr %g, batch %d, %d epochs; λ_D %g, ε_I %g, Soft λ_C %g (%s penalty); activation rule %v, standardise %v; %d seed(s) from %d\n\n",
		max(o.Layers, 1), o.Width, o.LR, o.batch, o.Epochs, o.LambdaD, o.inferTol, o.softLambda, o.softPenalty, o.activation, o.standardize, o.Seeds, o.Seed)

	modes := []train.Mode{train.MLP, train.Soft, train.ENFORCE}
	results, runs, err := harness.Trials(modes, o.Seed, o.Seeds, func(mode train.Mode, seed uint64) (result, train.History, error) {
		cfg := train.Config{
			Sizes: o.Sizes(1, 1), Hidden: layers.ReLU, PyTorchInit: true,
			Constraint: c, Mode: mode, Infer: enforce.Settings{Tol: o.inferTol},
			LearnRate: o.LR, BatchSize: o.batch, Epochs: o.Epochs, Seed: seed,
			LambdaD: o.LambdaD, AlwaysProject: !o.activation, Standardize: o.standardize, Precision: o.Precision,
		}
		if mode == train.Soft {
			cfg.LambdaC = o.softLambda
			if o.softPenalty == "hinge" {
				cfg.PenaltyConstraint, cfg.Penalty = p.Inequalities(), train.SquaredHinge
			}
		}
		o.Checkpoint(&cfg, mode, fmt.Sprintf("seed%d", seed))
		harness.Progress(&cfg, progress, o.LogLines, fmt.Sprintf("%v, seed %d", mode, seed))
		r, err := evaluate(cfg, p, trainSet, testSet, o.inferTol)
		return r, r.history, err
	})
	if err != nil {
		return err
	}

	tab := report.NewTable(fmt.Sprintf("Table 2 (§5.2): %d test points; ours: mean ± std over %d seed(s), %s, %s",
		o.nTest, o.Seeds, o.PrecisionName(), machine()),
		"method", "R²", "NRMSE [%]", "infeas. g₁ [%]", "infeas. g₂ [%]", "max g⁺", "max|c| (FB)", "AdaNP depth", "inf. time [s]", "train time [s]")
	tab.Smoke = o.Quick
	for _, mode := range modes {
		rs := results[mode]
		col := func(f func(result) float64, format string) string { return report.SummarizeFunc(rs, f).Format(format) }
		pr := paperRows[mode]
		tab.AddRow(mode.String()+" (paper)", pr[0], pr[1], pr[2], pr[3], "", "", "", pr[4], "")
		tab.AddRow(mode.String()+o.Ours(),
			col(func(r result) float64 { return r.r2 }, "%.3f"),
			col(func(r result) float64 { return r.nrmse }, "%.2f"),
			col(func(r result) float64 { return r.infeas[0] }, "%.2f"),
			col(func(r result) float64 { return r.infeas[1] }, "%.2f"),
			col(func(r result) float64 { return r.maxG }, "%.1e"),
			col(func(r result) float64 { return r.maxC }, "%.1e"),
			col(func(r result) float64 { return r.depth }, "%.2f"),
			col(func(r result) float64 { return r.predict.Seconds() }, "%.4f"),
			col(func(r result) float64 { return r.train.Seconds() }, "%.1f"))
	}
	tab.AddNote("R² = 1 − Σ(y*−ỹ)²/Σ(y*−ȳ*)²; NRMSE = 100·RMSE/σ_y; infeas. g_j = %% of test points with g_j(x, ỹ) > ε_I = %g; "+
		"max g⁺ = max over test points and both g_j of max(g_j, 0); max|c| = the Fischer–Burmeister residual after the inference AdaNP "+
		"(ENFORCE; for MLP and Soft, AdaNP.Check's residual, which for inequalities is max(g_j, 0)); inf. time = median wall "+
		"time of one prediction of the %d test points.", o.inferTol, o.nTest)
	tab.AddNote("The paper's numbers: one run on an A100 GPU, float32.")
	if err := tab.WriteText(stdout); err != nil {
		return err
	}
	if o.Out == "" {
		return nil
	}
	return figures(o.Out, p, trainSet, testSet, results, runs, stdout)
}

// machine describes where this program runs.
func machine() string {
	return fmt.Sprintf("CPU, GOMAXPROCS %d", runtime.GOMAXPROCS(0))
}

// evaluate trains one model and measures it on the test set.
// g_j > infeasTol counts as infeasible.
func evaluate(cfg train.Config, p problems.FittingInequality, trainSet, testSet problems.Dataset, infeasTol float64) (result, error) {
	f, err := harness.Fit(cfg, trainSet, testSet.X, 0)
	if err != nil {
		return result{}, err
	}
	pred := f.Pred
	r := result{pred: pred, history: f.History, train: f.Train, predict: f.Predict, maxC: f.Stats.After.Max, depth: f.Stats.MeanDepth}
	r.r2, r.nrmse = report.R2(pred, testSet.Y), report.NRMSE(pred, testSet.Y)
	if r.infeas, err = report.Infeasible(p.Inequalities(), testSet.X, pred, infeasTol); err != nil {
		return r, err
	}
	h := make([]float64, 2)
	for i := range testSet.Len() {
		p.Inequalities().Eval(testSet.X.RawRowView(i), pred.RawRowView(i), h, nil)
		r.maxG = math.Max(r.maxG, math.Max(h[0], h[1]))
	}
	return r, nil
}

// figures writes the predictions of the first seed against the truth, the
// training loss and AdaNP depth against the epoch, and the history CSV.
func figures(dir string, p problems.FittingInequality, trainSet, testSet problems.Dataset, results map[train.Mode][]result, runs []report.Run, stdout io.Writer) error {
	idx := harness.SortedRows(testSet.X, 0)
	xs := harness.Column(testSet.X, 0, idx)
	upper, lower := make([]float64, len(xs)), make([]float64, len(xs))
	for k, x := range xs {
		upper[k], lower[k] = p.Envelope(x), -p.Envelope(x)
	}
	pred := []report.Series{
		{Label: "training labels", X: mat.Col(nil, 0, trainSet.X), Y: mat.Col(nil, 0, trainSet.Y), Points: true},
		{Label: "truth f(x)", X: xs, Y: harness.Column(testSet.Y, 0, idx)},
		{Label: "envelope ±h(x)", X: xs, Y: upper, Dashed: true},
		{X: xs, Y: lower}, // continues the envelope: same colour and dashes, one legend entry
	}
	for _, mode := range []train.Mode{train.MLP, train.Soft, train.ENFORCE} {
		pred = append(pred, report.Series{Label: mode.String(), X: xs, Y: harness.Column(results[mode][0].pred, 0, idx)})
	}
	plots := []report.Plot{
		{Name: "inequality_predictions.png", Fig: report.Figure{Title: "Fitting with inequality constraints (first seed)", XLabel: "x", YLabel: "y", Width: 7, Height: 4.5}, Series: pred},
		{Name: "inequality_loss.png", Fig: report.Figure{Title: "Training loss", XLabel: "epoch", YLabel: "loss", LogY: true},
			Series: report.HistorySeries(func(e train.Epoch) float64 { return e.Loss }, true, runs...)},
		{Name: "inequality_depth.png", Fig: report.Figure{Title: "ENFORCE: AdaNP depth and share of projected batches", XLabel: "epoch", YLabel: "NP steps / share"},
			Series: report.DepthAndShare(report.Select("ENFORCE", runs...)...)},
	}
	names, err := report.WriteOutputs(dir, plots, "inequality_history.csv", runs...)
	if err != nil {
		return err
	}
	report.Wrapf(stdout, "\nwrote %v to %s\n", names, dir)
	return nil
}
