// Package optexp runs the ENFORCE paper's optimisation experiments
// (§5.3, Tables 3–4 and the appendix scaling tables) for the commands
// examples/nonconvex-linear and examples/nonconvex-quadratic: reference
// optima by solvers.Solve (IPOPT with -tags ipopt), then MLP, Soft (λ_C
// sweep), DC3 (by default for the linear benchmark only) and ENFORCE trained unsupervised on the objective, evaluated on one
// batch of test inputs.
package optexp

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/dc3"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/solvers"
	"github.com/enforce-nn/enforce/train"
)

// reference is the solver of the reference optima: solvers.Solve, or
// IPOPT when the command is built with -tags ipopt (see ipopt.go).
var reference = struct {
	name   string
	method solvers.Method
}{"solvers.Solve", solvers.SQP{}}

// Size is one problem size (N_O, N_C).
type Size struct{ NO, NC int }

// Paper holds the paper's numbers for one method at one size: objective
// and max equality violation (NaN where the paper reports none).
type Paper struct{ Obj, MaxEq float64 }

// Experiment describes one of the two benchmarks.
type Experiment struct {
	// Name is "linear" or "quadratic".
	Name string
	// Sizes are the paper's sizes.
	Sizes []Size
	// Build returns the instance of a size, its constraint and the
	// reference NLP of one input.
	Build func(s Size, seed uint64) (Instance, error)
	// Paper[method][size index] are the paper's numbers.
	Paper map[string][]Paper
	// DC3 says whether the DC3 baseline runs by default (the -dc3 flag
	// overrides it).
	DC3 bool
	// DC3Generator says that the instances come with DC3's generator
	// (Instance.DC3Partial is set): -dc3-partial then defaults to
	// dc3-noineq, DC3's choice of partial variables on the paper's
	// generator, which draws no inequalities; otherwise to seed.
	DC3Generator bool
	// Seed is the default of -seed, the seed of the instance and its data
	// (the paper's instances for the linear benchmark: problems.PaperSeed);
	// 0 means 1.
	Seed uint64
}

// Instance is one drawn problem.
type Instance struct {
	Objective  problems.SineQuadratic
	Constraint enforce.Constraint
	SampleX    func(n int, seed uint64) *mat.Dense
	// Data, if not nil, returns the training and test inputs in place of
	// SampleX (the paper's instances come with DC3's inputs and split): at
	// most nTrain and nTest rows.
	Data func(nTrain, nTest int) (xTrain, xTest *mat.Dense, err error)
	NLP  func(x []float64) solvers.NLP
	// DC3 builds the DC3 baseline for the instance, and DC3Resume resumes
	// it from the checkpoint in dir (dc3.Resume or dc3.ResumeNewton; an
	// error wrapping fs.ErrNotExist when there is none).
	DC3       func(cfg dc3.Config) (*dc3.Model, error)
	DC3Resume func(dir string, cfg dc3.Config) (*dc3.Model, error)
	// DC3Partial, if not nil, returns the partial variables DC3's
	// generator chooses for the instance when it draws nIneq inequality
	// rows first (problems.NonconvexLinear.DC3Partial), for -dc3-partial.
	DC3Partial func(nIneq int) ([]int, error)
}

// Options are the command-line settings.
type Options struct {
	Epochs, DC3Epochs, NTrain, NTest, NRef, Batch, Seeds, Width int
	// Layers is the number of hidden layers of the MLP, Soft and ENFORCE
	// backbones (-layers; the paper: 2; the reference's code builds 3,
	// see docs/setup.md §1.1). DC3 keeps its own two.
	Layers int
	LR     float64
	Soft   []float64
	Sizes  string
	Out    string
	Seed   uint64
	// Resume is the checkpoint folder of the models, DC3 included
	// (-resume; see harness.Common.Resume).
	Resume string
	DC3    bool
	// DC3Partial is how DC3's partial variables are chosen (-dc3-partial):
	// "seed" draws them from the model seed, "dc3" takes DC3's generator's
	// choice (after its 50 inequality rows), "dc3-noineq" that of the same
	// generator without inequality rows (the default where the experiment
	// has DC3's generator, Experiment.DC3Generator); see
	// Instance.DC3Partial.
	DC3Partial string
	// FirstSeed is the index of the first model seed to run (-first-seed):
	// seeds FirstSeed..Seeds−1 of the table, so that processes sharing a
	// -resume folder can each train some of them; a later run with
	// FirstSeed 0 then loads the finished models and prints the whole table.
	FirstSeed int
	// DC3Only trains DC3 alone, without MLP, Soft and ENFORCE (-dc3-only).
	DC3Only bool
	// SoftOnly trains the Soft rows alone, without MLP, ENFORCE and DC3
	// (-soft-only): to add the rows of another penalty form to a table.
	SoftOnly bool
	// Precision is AdaNP's arithmetic in training and inference
	// (enforce.Float32 with -float32).
	Precision enforce.Precision
	// BackbonePrecision is the arithmetic of the MLP, Soft and ENFORCE
	// backbones (-precision; train.Config.Precision). DC3 keeps float64.
	BackbonePrecision enforce.Precision
	// Quick reports a smoke run (-quick): the table says so and its rows
	// are labelled "(smoke)".
	Quick bool

	// SoftPenalty is the Soft rows' penalty form (-softpenalty): the
	// default train.SquaredNorm, λ_C·mean‖c‖² (the form of the tables
	// before 2026-11-28), train.Norm (the paper's unsquared ‖c‖) or
	// train.SquaredNormMeanAbs (the reference's ‖c‖² + mean|c|). Rows and
	// checkpoints of a form other than the default are named after it.
	SoftPenalty train.Penalty

	// WarmStart, if positive, solves the reference problem of the first
	// WarmStart test inputs again from ENFORCE's predictions (-warmstart;
	// at most NRef): a local solve that says which local optimum the
	// network's feasible predictions lie next to, against the reference's
	// optimum from its own start. It reports on the progress writer only.
	WarmStart int

	// Warmup is the ENFORCE rows' warm-up epochs (-warmup;
	// train.Config.Warmup): trained without the projection, on the
	// objective alone, before the projected ones. Their checkpoints go to
	// folders of their own (…-warmupN).
	Warmup int

	// Evaluate, if set, is a train checkpoint folder whose model is
	// evaluated on the test inputs instead of training anything
	// (-evaluate; train.LoadCheckpoint): how far a run in progress has
	// got. It needs one size.
	Evaluate string

	softs       string // -soft, parsed into Soft
	softPenalty string // -softpenalty, parsed into SoftPenalty
	float32     bool   // -float32, read into Precision
}

// Flags registers the command line of the experiment e on o and returns
// it; -soft and -float32 are parsed into o by Options.finish when Main
// runs.
func Flags(e Experiment, o *Options) *harness.Flags {
	name := "nonconvex-" + e.Name
	f := harness.New(name, fmt.Sprintf("The ENFORCE paper's nonconvex %s benchmark (§5.3): reference optima, then MLP, Soft, DC3 and ENFORCE trained on the objective.", e.Name))
	*o = Options{Epochs: 1000, DC3Epochs: 3500, NTrain: 8334, NTest: 833, NRef: 833, Batch: 200, Width: 200, Layers: 2, LR: 1e-4, Seeds: 1, Seed: max(e.Seed, 1), DC3: e.DC3, softs: "5,1,0.1", softPenalty: "squarednorm"}
	f.IntVar(&o.Epochs, "epochs", o.Epochs, "epochs for MLP, Soft and ENFORCE (the paper: 1000)")
	f.IntVar(&o.DC3Epochs, "dc3epochs", o.DC3Epochs, "epochs for DC3 (the paper: 3500)")
	f.IntVar(&o.NTrain, "ntrain", o.NTrain, "training inputs (DC3's split of 10,000: 8334 train, 833 valid, 833 test)")
	f.IntVar(&o.NTest, "ntest", o.NTest, "test inputs, one inference batch (the paper: 833)")
	f.IntVar(&o.NRef, "nref", o.NRef, "test inputs solved by the reference solver (first rows of the test batch)")
	f.IntVar(&o.Batch, "batch", o.Batch, "batch size (the paper: 200)")
	f.IntVar(&o.Width, "width", o.Width, "width of the hidden ReLU layers (the paper: 200)")
	f.IntVar(&o.Layers, "layers", o.Layers, "hidden layers of the MLP, Soft and ENFORCE backbones (the paper: 2; the reference's code: 3)")
	f.Float64Var(&o.LR, "lr", o.LR, "Adam learning rate (the paper: 1e-4)")
	f.IntVar(&o.Seeds, "seeds", o.Seeds, "model seeds; mean ± std over them (the paper: 5)")
	f.IntVar(&o.FirstSeed, "first-seed", 0, "run only model seeds first-seed..seeds−1 (0-based; to spread one table's seeds over processes sharing -resume)")
	f.StringVar(&o.Sizes, "sizes", "", "comma-separated indices into the paper's sizes (default: all)")
	f.Out(&o.Out)
	f.StringVar(&o.Resume, "resume", "", harness.ResumeUsage)
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the problem instance and the data")
	f.StringVar(&o.softs, "soft", o.softs, "λ_C values of the Soft baseline (the paper: 5, 1, 0.1)")
	f.StringVar(&o.softPenalty, "softpenalty", o.softPenalty, `the Soft baseline's penalty: "squarednorm" (λ_C·mean‖c‖², these tables' form), "norm" (λ_C·mean‖c‖, the paper's) or "squarednormmeanabs" (λ_C·(mean‖c‖² + mean|c|), the reference's)`)
	f.IntVar(&o.Warmup, "warmup", 0, "ENFORCE's first N epochs train the backbone on the objective alone, without the projection (train.Config.Warmup; within -epochs)")
	f.StringVar(&o.Evaluate, "evaluate", "", "evaluate the model of the train checkpoint in this folder (a run in progress, say) on the test inputs of the one size in -sizes, against the reference optima, instead of training; exits with an error if an ENFORCE model's prediction misses its tolerance")
	f.IntVar(&o.WarmStart, "warmstart", 0, "after ENFORCE's test predictions, solve the reference problem of the first N test inputs again starting from them (at most -nref) and report the local optima reached beside the reference's: which local optimum the predictions lie next to")
	f.BoolVar(&o.float32, "float32", false, "AdaNP in enforce.Float32 precision (single-precision steps far from the constraint set, float64 at the end; the tolerances are unchanged)")
	harness.PrecisionVar(f, &o.BackbonePrecision)
	f.BoolVar(&o.DC3, "dc3", o.DC3, "train the DC3 baseline (linear completion, or Newton completion for nonlinear equalities)")
	f.BoolVar(&o.DC3Only, "dc3-only", false, "train DC3 alone (implies -dc3): no MLP, Soft or ENFORCE rows")
	f.BoolVar(&o.SoftOnly, "soft-only", false, "train the Soft rows alone (implies -dc3=false): no MLP, ENFORCE or DC3 rows")
	partial := "seed"
	if e.DC3Generator {
		partial = "dc3-noineq"
	}
	f.StringVar(&o.DC3Partial, "dc3-partial", partial, "DC3's partial variables: dc3-noineq (DC3's choice, once per data set, on the paper's generator, which draws no inequalities), dc3 (DC3's choice after the 50 inequality rows its own generator draws), seed (drawn per model seed, as the runs before 2026-11-25)")
	f.QuickVar(&o.Quick)
	f.Quick("epochs", "20").Quick("dc3epochs", "20").Quick("ntrain", "400").Quick("ntest", "200").Quick("nref", "20").
		Quick("width", "64").Quick("lr", "1e-3").Quick("sizes", "0").Quick("soft", "1")
	return f
}

// backboneName names the backbones' precision in the header.
func backboneName(p enforce.Precision) string {
	if p == enforce.Float32 {
		return "float32"
	}
	return "float64"
}

// finish parses the flags -soft, -softpenalty and -float32 into o.
func (o *Options) finish() error {
	switch o.softPenalty {
	case "squarednorm", "norm", "squarednormmeanabs":
		if err := o.SoftPenalty.UnmarshalText([]byte(o.softPenalty)); err != nil {
			return err
		}
	default:
		return fmt.Errorf("bad -softpenalty %q: want squarednorm, norm or squarednormmeanabs", o.softPenalty)
	}
	if o.float32 {
		o.Precision = enforce.Float32
	}
	switch o.DC3Partial {
	case "", "seed", "dc3", "dc3-noineq":
	default:
		return fmt.Errorf("bad -dc3-partial %q: want seed, dc3 or dc3-noineq", o.DC3Partial)
	}
	if o.Warmup < 0 || o.Warmup >= o.Epochs && o.Warmup > 0 {
		return fmt.Errorf("bad -warmup %d: want 0 to -epochs − 1 (%d)", o.Warmup, o.Epochs-1)
	}
	if o.Evaluate != "" && (o.Sizes == "" || strings.Contains(o.Sizes, ",")) {
		return fmt.Errorf("-evaluate %s: give the checkpoint's one size with -sizes", o.Evaluate)
	}
	if o.WarmStart < 0 || o.WarmStart > o.NRef {
		return fmt.Errorf("bad -warmstart %d: want 0 to -nref (%d)", o.WarmStart, o.NRef)
	}
	if o.WarmStart > 0 && (o.DC3Only || o.SoftOnly) {
		return errors.New("-warmstart starts from ENFORCE's predictions: not with -dc3-only or -soft-only, which train no ENFORCE model")
	}
	if o.DC3Only {
		o.DC3 = true
	}
	o.Soft = o.Soft[:0]
	for _, s := range splitComma(o.softs) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("bad -soft: %w", err)
		}
		o.Soft = append(o.Soft, v)
	}
	if o.SoftOnly {
		if o.DC3Only || len(o.Soft) == 0 {
			return errors.New("-soft-only wants λ_C values in -soft and no -dc3-only")
		}
		o.DC3 = false
	}
	return nil
}

// Command returns the entry point of the command of the experiment e: it
// runs the command with the arguments args and returns its exit status
// (harness.Flags.Main).
func Command(e Experiment) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		var o Options
		return Flags(e, &o).Main(args, stderr, func() error {
			if err := o.finish(); err != nil {
				return err
			}
			return Run(stdout, stderr, e, o)
		})
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// metrics are one model's numbers on the test batch.
type metrics struct {
	obj, refSubsetObj, gap, maxEq, meanEq, infer, train float64
	notConverged                                        int // ENFORCE: test predictions above the inference tolerance
}

// Run runs the experiment with options o, writing the tables to w and
// progress to progress.
func Run(w, progress io.Writer, e Experiment, o Options) error {
	if o.FirstSeed < 0 || o.FirstSeed >= o.Seeds {
		return fmt.Errorf("optexp: need 0 ≤ -first-seed < -seeds (got %d and %d)", o.FirstSeed, o.Seeds)
	}
	if o.Seeds < 1 || o.NTest < 1 || o.NRef < 0 || o.NRef > o.NTest || o.NTrain < o.Batch {
		return fmt.Errorf("optexp: need -seeds ≥ 1, 0 ≤ -nref ≤ -ntest, -ntrain ≥ -batch")
	}
	if o.Layers < 1 || o.Width < 1 {
		return fmt.Errorf("optexp: need -layers ≥ 1 and -width ≥ 1")
	}
	idx := make([]int, len(e.Sizes))
	for i := range idx {
		idx[i] = i
	}
	if o.Sizes != "" {
		idx = idx[:0]
		for _, s := range splitComma(o.Sizes) {
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(e.Sizes) {
				return fmt.Errorf("optexp: bad -sizes entry %q", s)
			}
			idx = append(idx, i)
		}
	}
	if o.Out != "" {
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return err
		}
	}
	report.Wrapf(w, "§5.3 of the ENFORCE paper, nonconvex %s benchmark: %d training / %d test inputs, x ~ U(−5, 5), %d×%d ReLU (%v), Adam %g, batch %d, %d epochs (DC3 %d), %d seed(s)\n",
		e.Name, o.NTrain, o.NTest, o.Layers, o.Width, backboneName(o.BackbonePrecision), o.LR, o.Batch, o.Epochs, o.DC3Epochs, o.Seeds)
	if o.Warmup > 0 {
		report.Wrapf(w, "ENFORCE: the first %d of the %d epochs train the backbone on the objective alone, without the projection (-warmup)\n", o.Warmup, o.Epochs)
	}
	for _, si := range idx {
		s := e.Sizes[si]
		inst, err := e.Build(s, o.Seed)
		if err != nil {
			return err
		}
		var xTrain, xTest *mat.Dense
		if inst.Data != nil {
			if xTrain, xTest, err = inst.Data(o.NTrain, o.NTest); err != nil {
				return err
			}
		} else {
			xTrain, xTest = inst.SampleX(o.NTrain, o.Seed+100), inst.SampleX(o.NTest, o.Seed+200)
		}

		// Reference optima.
		ref, err := referenceOptima(progress, o, e, s, inst, xTest)
		if err != nil {
			return err
		}
		refObj := make([]float64, o.NRef)
		var refTime, refViol float64
		failed := 0
		for i, r := range ref {
			refObj[i] = float64(r.Objective)
			refTime += r.Runtime.Seconds() / float64(o.NRef)
			refViol = math.Max(refViol, float64(r.MaxViolation))
			if r.Status != solvers.Success {
				failed++
			}
		}
		_, fStar := inst.Objective.Minimizer()

		refMean := stat.Mean(refObj, nil)
		if o.Evaluate != "" {
			return evaluateCheckpoint(w, o.Evaluate, inst, s, xTest, refObj, refMean)
		}
		rows := map[string][]metrics{}
		var order []string
		var runs []report.Run
		add := func(name string, seed uint64, m metrics) {
			if _, ok := rows[name]; !ok {
				order = append(order, name)
			}
			m.gap = (m.refSubsetObj - refMean) / math.Abs(refMean)
			rows[name] = append(rows[name], m)
			// Each seed's row, which the table's mean ± std hides.
			fmt.Fprintf(progress, "[%d/%d %s seed %d] test: obj. %.4f, gap to ref. %+.2f%%, max eq. %.3g\n", s.NO, s.NC, name, seed, m.obj, 100*m.gap, m.maxEq)
		}
		for seed := o.FirstSeed; seed < o.Seeds; seed++ {
			mseed := o.Seed + uint64(seed)
			type cfgRun struct {
				name string
				mode train.Mode
				lc   float64
			}
			cfgs := []cfgRun{{"MLP", train.MLP, 0}}
			for _, l := range o.Soft {
				cfgs = append(cfgs, cfgRun{softName(o.SoftPenalty, l), train.Soft, l})
			}
			cfgs = append(cfgs, cfgRun{"ENFORCE", train.ENFORCE, 1})
			switch {
			case o.DC3Only:
				cfgs = nil
			case o.SoftOnly:
				cfgs = cfgs[1 : len(cfgs)-1]
			}
			for _, r := range cfgs {
				m, hist, err := trainModel(progress, inst, s, o, r.mode, r.lc, mseed, xTrain, xTest, refObj, r.name)
				if err != nil {
					return fmt.Errorf("%s: %w", r.name, err)
				}
				add(r.name, mseed, m)
				runs = append(runs, report.Run{Label: fmt.Sprintf("%s seed %d", r.name, mseed), History: hist})
			}
			if o.DC3 {
				m, hist, err := trainDC3(progress, inst, s, o, mseed, xTrain, xTest, refObj)
				if err != nil {
					return fmt.Errorf("DC3: %w", err)
				}
				add("DC3", mseed, m)
				runs = append(runs, report.Run{Label: fmt.Sprintf("DC3 seed %d", mseed), History: hist})
			}
		}

		t := report.NewTable(fmt.Sprintf("Nonconvex %s, (N_O, N_C) = (%d, %d)", e.Name, s.NO, s.NC),
			"method", "obj.", "paper obj.", "gap to ref.", "max eq.", "paper max eq.", "mean eq.", "inf. time [s]", "train time [min]")
		t.Smoke = o.Quick
		label := func(name string) string {
			if o.Quick {
				return name + " (smoke)"
			}
			return name
		}
		pp := e.Paper["IPOPT"][si]
		t.AddRow("reference: "+reference.name+" (paper: IPOPT)", fmt.Sprintf("%.2f ± %.2f", refMean, stat.StdDev(refObj, nil)),
			fmt.Sprintf("%.2f", pp.Obj), "–", fmt.Sprintf("%.1e", refViol), "0.00", "–", fmt.Sprintf("%.3g per instance", refTime), "–")
		for _, name := range order {
			ms := rows[name]
			col := func(format string, f func(metrics) float64) string {
				v := make([]float64, len(ms))
				for i, m := range ms {
					v[i] = f(m)
				}
				return report.Summarize(v).Format(format)
			}
			paperObj, paperEq := "–", "–"
			if pv, ok := e.Paper[paperKey(name)]; ok {
				paperObj, paperEq = fmt.Sprintf("%.2f", pv[si].Obj), fmt.Sprintf("%.2f", pv[si].MaxEq)
			}
			t.AddRow(label(name), col("%.2f", func(m metrics) float64 { return m.obj }), paperObj,
				col("%+.1f%%", func(m metrics) float64 { return 100 * m.gap }),
				col("%.3g", func(m metrics) float64 { return m.maxEq }), paperEq,
				col("%.3g", func(m metrics) float64 { return m.meanEq }),
				col("%.3g", func(m metrics) float64 { return m.infer }),
				col("%.3g", func(m metrics) float64 { return m.train / 60 }))
		}
		if ms, ok := rows["ENFORCE"]; ok {
			notConv := 0
			for _, m := range ms {
				notConv += m.notConverged
			}
			t.AddNote("ENFORCE: %d test prediction(s) over all seeds with max|c| above the inference tolerance 1e-3", notConv)
		}
		if _, ok := rows["DC3"]; ok {
			t.AddNote("DC3's partial variables: %s (-dc3-partial %s)", partialName(o.DC3Partial), cmp.Or(o.DC3Partial, "seed"))
		}
		t.AddNote("reference on the first %d of %d test inputs, %d not converged; unconstrained minimum %.2f (what an unconstrained network can reach)", o.NRef, o.NTest, failed, fStar)
		t.AddNote("gap to ref.: (mean obj. − mean reference obj.)/|mean reference obj.| on the reference's inputs; max/mean eq.: of |c| over all test inputs and constraints; inf. time: median of 3 predictions of the whole test batch")
		if e.Name == "quadratic" {
			t.AddNote("paper Soft objectives 1000, 10000, 100000 stand for the paper's bounds >10³, >10⁴, >10⁵")
		}
		fmt.Fprintln(w)
		if err := t.WriteText(w); err != nil {
			return err
		}
		if err := save(o.Out, s, fStar, t, runs); err != nil {
			return err
		}
	}
	return nil
}

// save writes the table as Markdown, the histories as CSV and the loss
// and depth plots as PNG into dir (nothing if dir is empty).
func save(dir string, s Size, fStar float64, t *report.Table, runs []report.Run) error {
	if dir == "" {
		return nil
	}
	base := filepath.Join(dir, fmt.Sprintf("%d-%d", s.NO, s.NC))
	if err := report.WriteFile(base+"-table.md", t.WriteMarkdown); err != nil {
		return err
	}
	if err := report.WriteFile(base+"-history.csv", func(w io.Writer) error { return report.WriteHistoryCSV(w, runs...) }); err != nil {
		return err
	}
	// The objective minus the unconstrained minimum is never negative, so
	// a log axis shows every method, DC3's large early values included.
	obj := report.HistorySeries(func(e train.Epoch) float64 { return e.Task - fStar }, true, runs...)
	if err := report.SavePlot(base+"-objective.png", report.Figure{
		Title: fmt.Sprintf("training objective f − f* (batch mean; f* the unconstrained min), (N_O, N_C) = (%d, %d)", s.NO, s.NC), XLabel: "epoch",
		YLabel: "f − f*", LogY: true, Width: 7,
	}, obj...); err != nil {
		return err
	}
	enf := report.Select("ENFORCE", runs...)
	if len(enf) == 0 {
		return nil
	}
	depth := report.HistorySeries(func(e train.Epoch) float64 { return e.Depth }, false, enf...)
	return report.SavePlot(base+"-depth.png", report.Figure{
		Title: "ENFORCE: mean AdaNP depth in training", XLabel: "epoch", YLabel: "NP steps per sample",
	}, depth...)
}

// softName names a Soft row (and its checkpoint folder): "Soft (λ_C=5)"
// with the default penalty, the tables' name since before -softpenalty,
// else with the form, such as "Soft Norm (λ_C=5)".
func softName(p train.Penalty, lambdaC float64) string {
	if p == train.SquaredNorm {
		return fmt.Sprintf("Soft (λ_C=%g)", lambdaC)
	}
	return fmt.Sprintf("Soft %v (λ_C=%g)", p, lambdaC)
}

// paperKey is the name of the paper's row beside our row name: a Soft row
// of any penalty form sits beside the paper's Soft row of its λ_C (the
// paper's form is the unsquared norm; RESULTS.md §5.3 discusses which
// form its numbers had).
func paperKey(name string) string {
	if i := strings.Index(name, " (λ_C="); i >= 0 && strings.HasPrefix(name, "Soft ") {
		return "Soft" + name[i:]
	}
	return name
}

// trainModel trains one train.Model and evaluates it.
func trainModel(progress io.Writer, inst Instance, s Size, o Options, mode train.Mode, lambdaC float64, seed uint64,
	xTrain, xTest *mat.Dense, refObj []float64, name string) (metrics, train.History, error) {
	trainSet := train.TrainSettings()
	trainSet.Tol = 1e-3
	trainSet.Precision = o.Precision
	var penalty train.Penalty
	if mode == train.Soft {
		penalty = o.SoftPenalty
	}
	cfg := train.Config{
		Sizes: hiddenSizes(s.NC, o.Width, o.Layers, s.NO), Hidden: layers.ReLU, PyTorchInit: true,
		Constraint: inst.Constraint, Mode: mode, LambdaC: lambdaC, Penalty: penalty,
		Train: trainSet, Infer: enforce.Settings{Tol: 1e-3, Precision: o.Precision},
		LearnRate: o.LR, BatchSize: o.Batch, Epochs: o.Epochs, Seed: seed,
		Progress: harness.Prefixed(progress, fmt.Sprintf("[%d/%d %s seed %d] ", s.NO, s.NC, name, seed)),
		LogEvery: max(1, o.Epochs/5), Precision: o.BackbonePrecision,
	}
	if mode == train.ENFORCE && o.Warmup > 0 {
		cfg.Warmup = o.Warmup
	}
	parts := []any{fmt.Sprintf("%dx%d", s.NO, s.NC), name, fmt.Sprintf("seed%d", seed)}
	if cfg.Warmup > 0 {
		parts = append(parts, fmt.Sprintf("warmup%d", cfg.Warmup))
	}
	if dir := harness.RunDir(o.Resume, parts...); dir != "" {
		cfg.Checkpoint = train.Checkpoint{Dir: dir}
	}
	m, err := harness.NewModel(cfg)
	if err != nil {
		return metrics{}, nil, err
	}
	hist, err := m.FitUnsupervised(xTrain, func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return inst.Objective.ObjectiveNode(y) })
	if err != nil {
		return metrics{}, nil, err
	}
	trainDur := m.TrainingTime()
	var y *mat.Dense
	var st enforce.Stats
	inferDur, err := report.MedianTime(3, func() (err error) {
		y, st, err = m.Predict(xTest)
		return err
	})
	if err != nil {
		return metrics{}, nil, err
	}
	met := evaluate(inst, xTest, y, refObj)
	met.infer, met.train = inferDur.Seconds(), trainDur.Seconds()
	if mode == train.ENFORCE {
		met.notConverged = st.NotConverged
		if o.WarmStart > 0 {
			if err := warmStart(cfg.Progress, inst, o.WarmStart, xTest, y, refObj); err != nil {
				return metrics{}, nil, err
			}
		}
	}
	return met, hist, nil
}

// warmStart solves the reference problem of the first n test inputs
// from the predictions y and reports, on w, the mean objective of the
// predictions, of the local optima reached from them and of the reference
// optima (from the reference's own start), and on how many inputs the
// local optimum is worse than the reference's by more than
// 1e-3·(1 + |f*|). Only successful solves enter the optima's means.
func warmStart(w io.Writer, inst Instance, n int, xTest, y *mat.Dense, refObj []float64) error {
	res, err := solvers.SolveAll(reference.method, n, 0, func(i int) (solvers.NLP, []float64, error) {
		return inst.NLP(xTest.RawRowView(i)), mat.Row(nil, i, y), nil
	})
	if err != nil {
		return fmt.Errorf("warm start: %w", err)
	}
	var pred, local, ref float64
	ok, worse := 0, 0
	for i, r := range res {
		pred += inst.Objective.Objective(nil, y.RawRowView(i)) / float64(n)
		if r.Status != solvers.Success || math.IsNaN(refObj[i]) || math.IsInf(refObj[i], 0) {
			continue
		}
		ok++
		local += r.Objective
		ref += refObj[i]
		if r.Objective > refObj[i]+1e-3*(1+math.Abs(refObj[i])) {
			worse++
		}
	}
	if ok == 0 {
		fmt.Fprintf(w, "warm start (%s from the predictions, first %d test inputs): predictions %.4g; no solve succeeded\n", reference.name, n, pred)
		return nil
	}
	fmt.Fprintf(w, "warm start (%s from the predictions, first %d test inputs): predictions %.4g; local optima %.4g against the reference's %.4g on the %d that converged; %d of them worse than the reference's by more than 1e-3·(1+|f*|)\n",
		reference.name, n, pred, local/float64(ok), ref/float64(ok), ok, worse)
	return nil
}

// trainDC3 trains the DC3 baseline and evaluates it.
func trainDC3(progress io.Writer, inst Instance, s Size, o Options, seed uint64, xTrain, xTest *mat.Dense, refObj []float64) (metrics, train.History, error) {
	cfg := dc3.Config{
		Hidden: []int{o.Width, o.Width}, LearnRate: o.LR, BatchSize: o.Batch, Epochs: o.DC3Epochs, Seed: seed,
		Progress: harness.Prefixed(progress, fmt.Sprintf("[%d/%d DC3 seed %d] ", s.NO, s.NC, seed)), LogEvery: max(1, o.DC3Epochs/5),
	}
	method := "DC3"
	if o.DC3Partial != "" && o.DC3Partial != "seed" {
		if inst.DC3Partial == nil {
			return metrics{}, nil, fmt.Errorf("-dc3-partial %s: the experiment has no DC3 generator", o.DC3Partial)
		}
		nIneq := problems.DC3Ineq
		if o.DC3Partial == "dc3-noineq" {
			nIneq = 0
		}
		var err error
		if cfg.Partial, err = inst.DC3Partial(nIneq); err != nil {
			return metrics{}, nil, err
		}
		method += "-" + o.DC3Partial // its own checkpoints: another Config
	}
	m, err := newDC3(inst, cfg, harness.RunDir(o.Resume, fmt.Sprintf("%dx%d", s.NO, s.NC), method, fmt.Sprintf("seed%d", seed)))
	if err != nil {
		return metrics{}, nil, err
	}
	defer m.Close()
	if m.Cond() > 0 {
		fmt.Fprintf(cfg.Progress, "partial variables: %s; cond₂(C_o) = %.4g\n", partialName(o.DC3Partial), m.Cond())
	}
	epochs, err := m.Fit(xTrain)
	if err != nil {
		return metrics{}, nil, err
	}
	// DC3's history in train's form: the loss is the objective.
	hist := make(train.History, len(epochs))
	for i, e := range epochs {
		hist[i] = train.Epoch{Epoch: e.Epoch, Loss: e.Objective, Task: e.Objective}
	}
	var y *mat.Dense
	inferDur, err := report.MedianTime(3, func() (err error) {
		y, err = m.Predict(xTest)
		return err
	})
	if err != nil {
		return metrics{}, nil, err
	}
	met := evaluate(inst, xTest, y, refObj)
	met.infer, met.train = inferDur.Seconds(), m.TrainTime().Seconds()
	return met, hist, nil
}

// partialName describes a -dc3-partial value.
func partialName(mode string) string {
	switch mode {
	case "dc3":
		return "DC3's generator's choice (after its 50 inequality rows)"
	case "dc3-noineq":
		return "DC3's generator's choice without inequality rows"
	}
	return "drawn from the model seed"
}

// newDC3 returns the DC3 model cfg describes for inst. With a checkpoint
// folder dir (-resume) the model checkpoints there and, when dir holds a
// checkpoint, is resumed from it, so that its next Fit finishes the
// interrupted run bit for bit (a finished one is not trained again); a
// checkpoint of another configuration is an error.
func newDC3(inst Instance, cfg dc3.Config, dir string) (*dc3.Model, error) {
	if dir == "" {
		return inst.DC3(cfg)
	}
	if inst.DC3Resume == nil {
		return nil, errors.New("-resume: the experiment cannot resume DC3 (Instance.DC3Resume is nil)")
	}
	cfg.Checkpoint = dc3.Checkpoint{Dir: dir}
	m, err := inst.DC3Resume(dir, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		return inst.DC3(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("resuming DC3 from %s: %w", dir, err)
	}
	return m, nil
}

// evaluateCheckpoint prints the test line of the model in the train
// checkpoint in dir (-evaluate) and returns an error if it is an ENFORCE
// model one of whose predictions missed its tolerance.
func evaluateCheckpoint(w io.Writer, dir string, inst Instance, s Size, xTest *mat.Dense, refObj []float64, refMean float64) error {
	m, pos, err := train.LoadCheckpoint(dir, inst.Constraint)
	if err != nil {
		return err
	}
	y, st, err := m.Predict(xTest)
	if err != nil {
		return err
	}
	met := evaluate(inst, xTest, y, refObj)
	gap := (met.refSubsetObj - refMean) / math.Abs(refMean)
	mode := m.Config().Mode
	fmt.Fprintf(w, "[%d/%d %v checkpoint %s] after %d epochs (+%d batches), %.1f min of training: test obj. %.4f, gap to ref. %+.2f%%, max eq. %.3g",
		s.NO, s.NC, mode, dir, pos.Epochs, pos.Batch, pos.Training.Minutes(), met.obj, 100*gap, met.maxEq)
	if mode != train.ENFORCE {
		fmt.Fprintln(w)
		return nil
	}
	rows, _ := xTest.Dims()
	fmt.Fprintf(w, ", %d of %d predictions above the tolerance\n", st.NotConverged, rows)
	if st.NotConverged > 0 {
		return fmt.Errorf("-evaluate %s: %d of %d predictions missed the projection's tolerance", dir, st.NotConverged, rows)
	}
	return nil
}

// evaluate computes the objective, the gap and the violations of y.
func evaluate(inst Instance, x, y *mat.Dense, refObj []float64) metrics {
	n, _ := y.Dims()
	_, _, nc := inst.Constraint.Dims()
	c := make([]float64, nc)
	var m metrics
	for i := range n {
		f := inst.Objective.Objective(nil, y.RawRowView(i))
		m.obj += f / float64(n)
		if i < len(refObj) {
			m.refSubsetObj += f / float64(len(refObj))
		}
		inst.Constraint.Eval(x.RawRowView(i), y.RawRowView(i), c, nil)
		for _, v := range c {
			m.maxEq = math.Max(m.maxEq, math.Abs(v))
			m.meanEq += math.Abs(v) / float64(n*nc)
		}
	}
	return m
}

// hiddenSizes returns [nIn, width × layers, nOut].
func hiddenSizes(nIn, width, layers, nOut int) []int {
	sizes := []int{nIn}
	for range layers {
		sizes = append(sizes, width)
	}
	return append(sizes, nOut)
}
