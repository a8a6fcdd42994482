// Command acopf-learn evaluates predictors of the AC optimal power flow on
// a labelled test set of examples/acopf-data (issue 53), each prediction
// projected by AdaNP onto PGLib-OPF's full constraint set (the power flow,
// the voltage and generation bounds, the branches' thermal and
// angle-difference limits: acopf.ConstraintOptions.BranchLimits), and
// prints the summary row of RESULTS.md for each:
//
//	| grid | buses | method | gap % | max eq | max ineq | infeasible | ms per instance | IPOPT s per instance |
//
// "gap %" is the mean objective of the projected predictions over the
// mean optimal objective of the test set, minus one; "max eq" and "max
// ineq" the largest power-flow residual and the largest excess over any
// inequality (acopf.Model.Violations, p.u. and radians) over the test set;
// "infeasible" the number of test instances above 1e-6 on any of them;
// "ms per instance" the wall time of projecting the batch (a batch of the
// whole test set) over its size; "IPOPT s per instance" the mean wall time
// of the reference solver on the first -ipopt instances of the same set,
// in the same run (with -tags ipopt: IPOPT; otherwise the pure-Go solver,
// practical to a few hundred buses: its cells say so, and -ipopt refuses it
// on grids above 500 buses).
//
// The methods so far:
//
//   - "case optimum + AdaNP (no training)": the case's cached reference
//     optimum as the prediction for every instance, projected at the
//     instance's loads: what the projection alone gives, the baseline a
//     trained model must beat.
//
// With -screen MARGIN each row's projection goes first onto the power flow,
// the bounds and only the branch-limit rows within MARGIN of binding at a
// training optimum, and then projects every point that violates PGLib's
// whole set by more than 1e-6 again onto the whole set, so that the
// table's feasibility is the whole set's; its times include that check.
//
// Usage:
//
//	go run -tags ipopt ./examples/acopf-learn -data test.tsv -ipopt 5
//
// A run in which every instance is infeasible exits with status 1.
package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/problems/acopf/dataset"
)

type options struct {
	data      string
	ipopt     int
	smoothing float64
	// eqSteps is enforce.Settings.EqualitySteps of every projection.
	eqSteps int
	// smFirst is enforce.Settings.SmoothingFirstDepth of every projection.
	smFirst int
	// stopFeasible is enforce.Settings.StopWhenFeasible of every row's
	// projection (not of the training projection, nor of the settings a
	// trained model saves).
	stopFeasible bool
	// nonmonotone is enforce.Settings.Nonmonotone of every row's
	// projection (as stopFeasible).
	nonmonotone int
	// smNonmonotone is enforce.Settings.SmoothingNonmonotone of every
	// row's projection (as stopFeasible).
	smNonmonotone int
	// smPatience is enforce.Settings.SmoothingPatience of every row's
	// projection (as stopFeasible).
	smPatience int
	// smFromAttempt is enforce.Settings.SmoothingFromAttempt of every
	// row's projection (as stopFeasible).
	smFromAttempt bool
	// ladder is enforce.Settings.SmoothingLadder of every row's
	// projection (as stopFeasible).
	ladder []float64
	// rowPath is enforce.Settings.Path of every row's projection (as
	// stopFeasible): PathSparse, or PathAugmented with -path augmented.
	rowPath enforce.Path
	// screen is the margin of -screen (0: none): every row's projection
	// goes first onto the power flow, the bounds and the branch limits
	// within it of binding at a training optimum (screenKeep), then onto
	// the whole set for the points that violate it (rowProjector).
	screen   float64
	damping  float64
	fbeps    float64
	maxDepth int
	out      string

	trainData string // -train: the labelled training set; empty: no training
	seeds     string
	recipe    recipe
}

func defaults() options {
	return options{ipopt: 3, maxDepth: 300, stopFeasible: true, ladder: []float64{1e-4}, rowPath: enforce.PathSparse, smoothing: 1e-2, damping: enforce.DefaultDamping, fbeps: acopf.ProjectionFBEpsilon, out: harness.DefaultOut("acopf-learn"),
		seeds: "1", recipe: recipe{path: enforce.PathSparse, supEpochs: 300, epochs: 5, supBatch: 32, batch: 16, supLR: 1e-3, lr: 1e-5, stdFloor: -1, lambdaC: -1, width: 0, grad: "final-projector", weights: "spread"}}
}

func flags(o *options) *harness.Flags {
	f := harness.New("acopf-learn", "Learned ACOPF on PGLib grids: predictors projected by AdaNP onto the full PGLib constraint set, evaluated on a labelled test set of examples/acopf-data (the summary row of RESULTS.md).")
	f.StringVar(&o.data, "data", o.data, "the labelled test set (a file written by acopf-data generate or merge)")
	f.IntVar(&o.ipopt, "ipopt", o.ipopt, "time the reference solver on this many test instances in the same run (0: none): IPOPT in a build with -tags ipopt, otherwise the pure-Go interior point, which the table's cells then name and which is refused above 500 buses")
	f.Float64Var(&o.smoothing, "smoothing", o.smoothing, "enforce.Settings.Smoothing of the projection (0: off)")
	f.IntVar(&o.smFirst, "smoothing-first", o.smFirst, "enforce.Settings.SmoothingFirstDepth of every projection: the plain attempt's steps before Smoothing's fallback (0: 15)")
	f.IntVar(&o.eqSteps, "equality-steps", o.eqSteps, "enforce.Settings.EqualitySteps of every projection: steps on the power flow alone before the limits join (0: none, as before 2026-12-07)")
	f.BoolVar(&o.stopFeasible, "stop-feasible", o.stopFeasible, "enforce.Settings.StopWhenFeasible of every row's projection (not of training's): a sample stops once it meets the constraints to the tolerance, its multipliers' complementarity not settled (false: stop on the whole Fischer–Burmeister system, as every run recorded before the flag existed)")
	f.Func("smoothing-ladder", "enforce.Settings.SmoothingLadder of every row's projection (not of training's): smaller smoothings, comma-separated, that Smoothing's fallback tries first, each from ŷ for at most -smoothing-first steps, so that a sample that converges on one lands nearer ŷ than Smoothing's stage puts it (default 1e-4; \"\": Smoothing's stage alone, as every run recorded before 2026-12-07 14:00)", func(v string) (err error) {
		o.ladder, err = parseLadder(v)
		return err
	})
	f.Func("model-ladder", "enforce.Settings.SmoothingLadder of the trained models' own projections, training's and the inference settings they save (comma-separated; default none, as the checkpoints written before 2026-12-07 14:30 record, which a different value cannot resume); the rows' projection takes -smoothing-ladder", func(v string) (err error) {
		o.recipe.ladder, err = parseLadder(v)
		return err
	})
	f.Func("path", "enforce.Settings.Path of every row's projection (not of training's): \"sparse\" (PathSparse: G = B·W⁻¹·Bᵀ factored, as every run recorded before 2026-12-07 16:30) or \"augmented\" (PathAugmented: solves through the augmented system [W Bᵀ; B −δI], whose factor has a fraction of G's fill on the grids' full constraint sets; the same steps up to rounding) (default sparse)", func(v string) error {
		p, err := harness.ParseSparsePath(v)
		o.rowPath = p
		return err
	})
	f.Func("model-path", "enforce.Settings.Path of the trained models' own projections, training's and the inference settings they save: \"sparse\" or \"augmented\", as -path (default sparse, as every checkpoint written before 2026-12-07 19:00 records, which a different value cannot resume; through \"augmented\" case2869_pegase's training diverged where \"sparse\" did not: docs/acopf-learn.md); the rows' projection takes -path", func(v string) error {
		p, err := harness.ParseSparsePath(v)
		o.recipe.path = p
		return err
	})
	f.IntVar(&o.nonmonotone, "nonmonotone", o.nonmonotone, "enforce.Settings.Nonmonotone of every row's projection (not of training's): the line search compares a trial with the largest merit of the last N iterates (0: monotone)")
	f.IntVar(&o.smNonmonotone, "smoothing-nonmonotone", o.smNonmonotone, "enforce.Settings.SmoothingNonmonotone of every row's projection (not of training's): -nonmonotone for Smoothing's last stage alone (0: that stage takes -nonmonotone)")
	f.IntVar(&o.smPatience, "smoothing-patience", o.smPatience, "enforce.Settings.SmoothingPatience of every row's projection (not of training's): a sample leaves Smoothing's plain attempt for its fallback once this many steps in a row did not lower its residual by 1 % (0: the attempt runs -smoothing-first steps, as every run recorded before 2026-12-07 23:40)")
	f.BoolVar(&o.smFromAttempt, "smoothing-from-attempt", o.smFromAttempt, "enforce.Settings.SmoothingFromAttempt of every row's projection (not of training's): a sample that misses Smoothing's plain attempt starts the fallback from the attempt's last point instead of from its prediction (false: from the prediction, as every run recorded before 2026-12-08 00:28)")
	f.Float64Var(&o.screen, "screen", o.screen, "screen the branch limits of every row's projection (not of training's): the projection goes first onto the power flow, the bounds and only the thermal and angle-difference rows within this margin (p.u., rad) of binding at a training optimum (the case's reference optimum without -train), and each point that then violates PGLib's whole set by more than 1e-6 is projected again from its prediction onto the whole set; the times include the check and those projections (0: every row in one projection, as every run recorded before 2026-12-08)")
	f.Float64Var(&o.damping, "damping", o.damping, "enforce.Settings.Damping of the projection (0: off)")
	f.IntVar(&o.maxDepth, "maxdepth", o.maxDepth, "enforce.Settings.MaxDepth of the inference projection, which bounds each of Smoothing's stages: a sample that takes the fallback may take the plain attempt's steps plus twice this (100 before 2026-12-06 21:20)")
	f.Float64Var(&o.fbeps, "fbeps", o.fbeps, "the limits' Fischer–Burmeister smoothing ε (acopf.ConstraintOptions.FBEps)")
	f.StringVar(&o.trainData, "train", o.trainData, "a labelled training set (acopf-data, another seed than the test set's): train the recipe's models and add their rows")
	f.StringVar(&o.seeds, "seeds", o.seeds, "the model seeds, separated by commas")
	f.IntVar(&o.recipe.width, "width", o.recipe.width, "the MLP's two hidden layers' width; 0: the ridge regression (a linear network through n hidden units, n the training instances, fitted in closed form)")
	f.IntVar(&o.recipe.supEpochs, "sup-epochs", o.recipe.supEpochs, "epochs of the supervised warm start (no projection)")
	f.IntVar(&o.recipe.supBatch, "sup-batch", o.recipe.supBatch, "batch size of the supervised warm start")
	f.Float64Var(&o.recipe.supLR, "sup-lr", o.recipe.supLR, "Adam's step of the supervised warm start")
	f.IntVar(&o.recipe.epochs, "epochs", o.recipe.epochs, "epochs of training on the cost through AdaNP (every batch projected; 0: the warm start only)")
	f.IntVar(&o.recipe.batch, "batch", o.recipe.batch, "batch size of training through AdaNP")
	f.Float64Var(&o.recipe.lr, "lr", o.recipe.lr, "Adam's step of training through AdaNP")
	f.Float64Var(&o.recipe.lambdaD, "lambda-d", o.recipe.lambdaD, "train.Config.LambdaD of training through AdaNP (0: train's default; negative: none)")
	f.Float64Var(&o.recipe.lambdaC, "lambda-c", o.recipe.lambdaC, "train.Config.LambdaC of training through AdaNP (0: train's default; negative: none)")
	f.Float64Var(&o.recipe.trainTol, "train-tol", o.recipe.trainTol, "the training projection's tolerance on max|c| (0: train's default, mean|c| ≤ 1e-4)")
	f.StringVar(&o.recipe.grad, "grad", o.recipe.grad, "the gradient through AdaNP in training: unrolled, implicit, projector or final-projector")
	f.StringVar(&o.recipe.weights, "weights", o.recipe.weights, "W of the trained models' projections: spread (W_j = σ̃/max(σ_j, σ̃/10), σ_j output j's spread over the training labels, σ̃ their median), spread:F:P (W_j = (σ̃/max(σ_j, F·σ̃))^P) or unit (W = I, the rows recorded before 2026-12-06 21:00)")
	f.Float64Var(&o.recipe.stdFloor, "std-floor", o.recipe.stdFloor, "train.Config.OutputStdFloor: outputs whose spread over the labels is below it are only mean-centred")
	f.IntVar(&o.recipe.ntrain, "ntrain", o.recipe.ntrain, "use the first N labelled training instances (0: all)")
	f.StringVar(&o.recipe.checkpoint, "checkpoint", o.recipe.checkpoint, "a folder for resumable checkpoints of every model (empty: none)")
	f.Out(&o.out)
	return f
}

var cli = harness.Command(defaults, flags, run)

func main() { os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr)) }

// row is one line of the summary table.
type row struct {
	method                      string
	gap, maxEq, maxIneq         float64
	infeasible, n               int
	msPerInstance, ipoptSeconds float64
	// pureGo: ipoptSeconds timed the pure-Go reference solver (a build
	// without -tags ipopt), which the table says.
	pureGo bool
}

func run(o options, stdout, progress io.Writer) error {
	if o.data == "" {
		return errors.New("-data: name a labelled test set (examples/acopf-data)")
	}
	d, test, err := readLabelled(o.data)
	if err != nil {
		return err
	}
	c, err := acopf.Load(d.Spec.Case)
	if err != nil {
		return err
	}
	m, err := acopf.NewModel(c)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d labelled test instances of %d (%s, seed %d)\n", d.Spec.Case, len(test), len(d.Samples), d.Spec.Load, d.Spec.Seed)

	ipopt, pureGo, err := timeReference(m, test, o.ipopt, progress)
	if err != nil {
		return err
	}
	opt, err := acopf.ReferenceOptimum(d.Spec.Case)
	if err != nil {
		return err
	}
	nx, ny := m.Dims()
	x, yhat := mat.NewDense(len(test), nx, nil), mat.NewDense(len(test), ny, nil)
	for i, s := range test {
		x.SetRow(i, s.X)
		yhat.SetRow(i, opt.Y)
	}
	var tr []dataset.Sample
	if o.trainData != "" {
		var dt *dataset.Dataset
		if dt, tr, err = readLabelled(o.trainData); err != nil {
			return err
		}
		if dt.Spec.Case != d.Spec.Case {
			return fmt.Errorf("-train %s is of %s, the test set of %s", o.trainData, dt.Spec.Case, d.Spec.Case)
		}
		if dt.Spec.Seed == d.Spec.Seed {
			return fmt.Errorf("-train %s has the test set's seed %d: its loads would be the test loads", o.trainData, d.Spec.Seed)
		}
		if o.recipe.ntrain > 0 && o.recipe.ntrain < len(tr) {
			tr = tr[:o.recipe.ntrain]
		}
	}
	screenAt := tr
	if screenAt == nil {
		screenAt = []dataset.Sample{{X: m.Loads(), Y: opt.Y}}
	}
	keep, kept, nbl, err := screenKeep(m, screenAt, o.screen)
	if err != nil {
		return err
	}
	if keep != nil {
		fmt.Fprintf(stdout, "-screen %g: %d of %d branch-limit rows within it of binding at %d optima\n", o.screen, kept, nbl, len(screenAt))
	}
	r, err := evaluate(o, m, keep, test, x, yhat, "case optimum + AdaNP (no training)", stdout)
	if err != nil {
		return err
	}
	r.ipoptSeconds, r.pureGo = ipopt, pureGo
	rows := []row{r}
	if o.trainData != "" {
		seeds, err := seedList(o.seeds)
		if err != nil {
			return err
		}
		more, err := trainRows(o, o.recipe, seeds, m, keep, tr, test, x, stdout, progress)
		if err != nil {
			return err
		}
		for i := range more {
			more[i].ipoptSeconds, more[i].pureGo = ipopt, pureGo
		}
		rows = append(rows, more...)
	}
	return writeTable(stdout, d.Spec.Case, len(c.Buses), rows)
}

// writeTable prints the summary table of rows for the grid, and returns
// an error if every instance of every row is infeasible (a run that must
// not look like a result).
func writeTable(w io.Writer, grid string, buses int, rows []row) error {
	fmt.Fprintln(w, "| grid | buses | method | gap % | max eq | max ineq | infeasible | ms per instance | IPOPT s per instance |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	all := true
	for _, r := range rows {
		ip := "–"
		if !math.IsNaN(r.ipoptSeconds) {
			ip = fmt.Sprintf("%.2f", r.ipoptSeconds)
			if r.pureGo {
				ip += " (pure-Go solver, not IPOPT)"
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %+.2f | %.1e | %.1e | %d of %d | %.0f | %s |\n",
			grid, buses, r.method, r.gap, r.maxEq, r.maxIneq, r.infeasible, r.n, r.msPerInstance, ip)
		all = all && r.infeasible == r.n
	}
	if all {
		return errors.New("every instance of every method is infeasible")
	}
	return nil
}

// evaluate projects yhat at the loads x with AdaNP onto the full PGLib
// constraint set and measures the row of method.
func evaluate(o options, m *acopf.Model, keep []bool, test []dataset.Sample, x, yhat *mat.Dense, method string, stdout io.Writer) (row, error) {
	p, err := newRowProjector(o, m, nil, keep)
	if err != nil {
		return row{}, err
	}
	start := time.Now()
	y, st, note, err := p.project(x, yhat)
	wall := time.Since(start)
	if err != nil {
		return row{}, err
	}
	printProjection(stdout, method, st, note)
	return measure(m, test, y, method, wall), nil
}

// printProjection prints a row's projection line.
func printProjection(w io.Writer, method string, st enforce.Stats, note string) {
	if note != "" {
		note = "; " + note
	}
	fmt.Fprintf(w, "%s: projection %v%s\n", method, st, note)
}

// timeReference returns the mean wall time of the reference solver over
// the first n test instances (NaN for n = 0).
func timeReference(m *acopf.Model, test []dataset.Sample, n int, progress io.Writer) (seconds float64, pureGo bool, err error) {
	if n <= 0 {
		return math.NaN(), false, nil
	}
	solve, name, err := dataset.Reference(m, dataset.ReferenceOptions{})
	if err != nil {
		return 0, false, err
	}
	pureGo = !strings.HasPrefix(name, "IPOPT")
	if buses := len(m.Case.Buses); pureGo && buses > pureGoMaxBuses {
		return 0, true, fmt.Errorf("-ipopt %d: this build's reference solver is the pure-Go interior point (build with -tags ipopt for IPOPT), practical to a few hundred buses, not %s's %d: build with -tags ipopt or pass -ipopt 0", n, m.Case.Name, buses)
	}
	n = min(n, len(test))
	var total time.Duration
	for _, s := range test[:n] {
		start := time.Now()
		if _, _, err := solve(s.X); err != nil {
			return 0, pureGo, fmt.Errorf("reference solver (%s): %w", name, err)
		}
		total += time.Since(start)
	}
	fmt.Fprintf(progress, "reference: %s, %d instances\n", name, n)
	return total.Seconds() / float64(n), pureGo, nil
}

// pureGoMaxBuses is the largest grid whose instances -ipopt times with the
// pure-Go reference solver (a build without -tags ipopt): on
// case1354_pegase three solves had not finished after 2.5 minutes, at
// 7.6 GB.
const pureGoMaxBuses = 500
