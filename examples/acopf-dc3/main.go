// Command acopf-dc3 runs DC3's ACOPF experiment (Donti, Rolnick & Kolter,
// ICLR 2021, Table 2) on MATPOWER 6.0's case57: DC3's data recipe,
// regenerated here from a fixed seed with reference optima, then the
// methods of DC3's table trained unsupervised on DC3's scaled generation
// cost, evaluated with DC3's metrics on DC3's test split, beside DC3's
// published numbers.
//
// Data (data.go): DC3's GenerateSamples.m and make_dataset.py
// (locuslab/DC3): loads scaled by a normal distribution truncated to
// ±70 % (correlation 0.5), power factors uniform in [0.8, 1], 1200
// samples split 1000/100/100 in order, optima of the ACOPF without line
// limits (DC3's formulation; acopf.Model.NLP with Formulation
// {NoFlowLimits, NoAngleLimits}) by IPOPT (-tags ipopt) or the pure-Go
// interior-point method solvers.SolveSparse. The data set is cached in
// -data as a gzip'd CSV with a JSON provenance file holding its SHA-256;
// an interrupted generation resumes from its partial file.
//
// Objective: DC3's, the generation cost in $/h divided by 10⁴ (the square
// of the generators' mean MVA base). Metrics (DC3's): the test set's mean
// objective, the mean over test samples of the max and mean |equality
// residual| (p.u.; the 2·nb balances) and of the max and mean inequality
// violation (the voltage and generation bounds), and the time to predict a
// batch of 100 (the test set); the table adds the worst test sample's.
//
// Methods (-methods), all 2×200 ReLU networks trained with Adam
// unsupervised on the objective, batch 200 (DC3's settings):
//
//   - MLP: the network's output y, no constraint in the loss;
//   - Soft: DC3's soft loss f + 50‖c‖² + 50‖max(0, g)‖²;
//   - ENFORCE: AdaNP onto the power flow and the limits
//     (acopf.Model.ConstraintWith: enforce.WithInequalities, with the
//     smoothing ε of -fbeps) in training and at inference (max|c| ≤ 1e-6);
//   - DC3: DC3's completion (dc3.ACOPFCompletion: the network predicts Pg
//     of the non-reference generators and Vm of the generator buses within
//     their bounds, Newton's method solves the power flow for the rest) and
//     DC3's soft loss f + 5‖c‖² + 5‖max(0, g)‖² on the completed point,
//     with DC3's gradient-based correction of the bounds (dc3.Correction:
//     5 steps of 1e-4, momentum 0.5) in training (its gradient taken as
//     the identity, dc3.ACOPFCompletion.CorrectNode) and at test time
//     (-corr);
//   - ENFORCE+DC3: ENFORCE (as above) on DC3's backbone (as above): the
//     completed point satisfies the power flow, AdaNP adds the limits.
//
// The MLP, Soft and ENFORCE networks are not DC3's (no BatchNorm or
// Dropout, no sigmoid into the bounds): their outputs are scaled so that
// a zero output is the middle of each bound interval (Va: 0) and a unit
// output half its width (Va: -vascale rad).
//
// Beyond DC3's experiment: -case runs the recipe on another grid (on
// grids with many loads the truncated law is drawn by conditioning on
// the common factor, the same law as DC3's rejection sampler); -maxiter
// bounds the reference solver's iterations (an infeasible draw costs all
// of them); -supervised fits the networks to the reference optima (a
// surrogate of the solver) instead of training on the objective;
// -pf-only projects onto the power flow alone; -restarts re-projects the
// samples AdaNP left above its tolerance, and -refine-fbeps does so onto
// limits with a smaller smoothing ε_FB (enforce.Refine), after a first
// projection that -infer-maxdepth may cut short, and -interior finishes
// the samples still above it with enforce.Interior, the bounds kept
// strictly instead of smoothed (-refine-all: every sample, not only those
// above the tolerance); -cosine decays the
// learning rate along a cosine and -clipnorm clips the gradients; -grad
// picks the gradient ENFORCE trains with through AdaNP;
// -project-mean trains nothing and
// projects the training optima's mean at the test loads, which isolates
// the projection from the training; -checkpoint makes training resumable
// and lets later runs evaluate a trained model again.
//
//	go run -tags ipopt ./examples/acopf-dc3            # data (IPOPT) and the table
//	go run ./examples/acopf-dc3 -quick                 # a smoke test, seconds
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
)

// reference solves an ACOPF; referenceName names it (ipopt.go replaces it
// under the ipopt build tag).
var (
	reference     = pureGo
	referenceName = "pure-Go interior point (solvers.SolveSparse)"
)

func pureGo(p *solvers.SparseNLP, init []float64, tol float64, maxIter int) (*solvers.Result, error) {
	return solvers.SolveSparse(p, init, &solvers.Settings{Tol: tol, FeasTol: 1e-9, MaxIterations: maxIter})
}

type options struct {
	samples, epochs, seeds, batch, width int
	ntrain, ntest, firstSeed, maxIter    int
	restarts, inferMaxDepth              int
	refineFBEps                          string
	runs                                 string
	seed                                 uint64
	tol, lr, vaScale, fbEps, clipNorm    float64
	data, out, methods, weights, shard   string
	path, caseName, checkpoint, corr     string
	corrGrad                             string
	grad                                 string
	dataOnly, softProject, supervised    bool
	pfOnly, projectMean, cosine          bool
	refineAll, inferLineSearch           bool
	predictions                          string
	interior                             int
}

func defaults() options {
	return options{
		samples: dc3Samples, epochs: 200, seeds: 5, batch: 200, width: 200, seed: 1,
		tol: 1e-8, lr: 1e-3, vaScale: 0.1, data: "examples/acopf-dc3/data", out: harness.DefaultOut("acopf-dc3"),
		methods: "MLP,Soft,ENFORCE,DC3", path: "auto", grad: "unrolled", caseName: dc3Case, maxIter: 500, corr: "train+test", corrGrad: "identity",
	}
}

func flags(o *options) *harness.Flags {
	f := harness.New("acopf-dc3", "DC3's ACOPF experiment on MATPOWER 6.0's case57: DC3's data recipe with reference optima, then MLP, Soft, ENFORCE and DC3 (completion and correction) with DC3's metrics beside DC3's table; -case runs the recipe on another grid.")
	f.IntVar(&o.samples, "samples", o.samples, "number of samples (DC3: 1200; split 5/6, 1/12, 1/12 in order as DC3 splits them)")
	f.Uint64Var(&o.seed, "seed", o.seed, "seed of the load samples")
	f.Float64Var(&o.tol, "tol", o.tol, "the reference solver's tolerance")
	f.StringVar(&o.data, "data", o.data, `folder of the cached data set ("" caches nothing)`)
	f.StringVar(&o.shard, "shard", o.shard, `"K/OF/UPTO": solve only the draws i < UPTO with i mod OF = K into a partial file of their own, and exit (run OF such processes, then the command without -shard assembles the data set)`)
	f.BoolVar(&o.dataOnly, "data-only", o.dataOnly, "generate (or check) the data set and the optimizer row, train nothing")
	f.IntVar(&o.ntrain, "ntrain", o.ntrain, "train on the first ntrain samples of DC3's training split only (0: all)")
	f.IntVar(&o.ntest, "ntest", o.ntest, "evaluate on the last ntest samples of DC3's test split only (0: all)")
	f.IntVar(&o.epochs, "epochs", o.epochs, "training epochs (DC3: 1000)")
	f.IntVar(&o.seeds, "seeds", o.seeds, "model seeds per method")
	f.IntVar(&o.firstSeed, "first-seed", o.firstSeed, "index of the first model seed to train (seeds first-seed+1 … seeds), so that processes can share the seeds")
	f.StringVar(&o.runs, "runs", o.runs, "append each run's metrics to this JSON-lines file and print the table of every run in it (to combine processes; with -methods \"\" print that table only)")
	f.IntVar(&o.batch, "batch", o.batch, "batch size (DC3: 200)")
	f.IntVar(&o.width, "width", o.width, "hidden width of the 2-layer ReLU networks (DC3: 200)")
	f.Float64Var(&o.lr, "lr", o.lr, "Adam's learning rate (DC3: 1e-3)")
	f.Float64Var(&o.clipNorm, "clipnorm", o.clipNorm, "clip each batch's gradient to this Euclidean norm before Adam's step (train.Config.ClipNorm; 0: none, DC3's)")
	f.StringVar(&o.grad, "grad", o.grad, `the gradient ENFORCE trains with through AdaNP (enforce.Settings.Grad): "unrolled" (every step, the default), "projector" (every step, B and the weights held fixed), "implicit" (the implicit-function derivative at the final point) or "final-projector" (the projector at the final point only)`)
	f.BoolVar(&o.cosine, "cosine", o.cosine, "decay the learning rate along a cosine over the epochs to 1 % of -lr (train.CosineDecay; DC3: constant)")
	f.Float64Var(&o.vaScale, "vascale", o.vaScale, "the networks' output scale of the voltage angles (rad per unit output)")
	f.StringVar(&o.methods, "methods", o.methods, "comma-separated methods to train: MLP, Soft, ENFORCE, DC3, DC3-NNSolver (DC3's own network and loss: dc3.NewACOPF), ENFORCE+DC3")
	f.StringVar(&o.weights, "weights", o.weights, harness.WeightsHelp+`; "" keeps train's default`)
	f.BoolVar(&o.softProject, "soft-project", o.softProject, "also project the Soft network's test predictions by AdaNP (AutoDiagonal weights, max|c| ≤ 1e-6) at inference only, as an extra row")
	f.StringVar(&o.caseName, "case", o.caseName, "the grid: a shipped case (acopf.Load's names; DC3's is matpower6_case57) or the path of a MATPOWER .m or .m.gz file")
	f.IntVar(&o.maxIter, "maxiter", o.maxIter, "the reference solver's iteration limit: a draw it does not solve within it from either start is dropped (MATPOWER's MIPS, DC3's solver, stops at 150)")
	f.StringVar(&o.corr, "corr", o.corr, `DC3's gradient-based correction of the bounds (dc3.Correction, DC3's ACOPF settings): "train+test" (DC3's), "test" (at test time only) or "none" (the rows named plain "DC3")`)
	f.StringVar(&o.corrGrad, "corr-grad", o.corrGrad, `the gradient of DC3's training-time correction (-corr train+test): "identity" (straight-through, the default) or "exact" (through the steps, as DC3's autograd: dc3.Correction.ExactGradient)`)
	f.BoolVar(&o.supervised, "supervised", o.supervised, "train MLP, Soft and ENFORCE by regression on the reference optima (train.Fit) instead of on the objective (DC3's set-up); a surrogate of the solver")
	f.BoolVar(&o.pfOnly, "pf-only", o.pfOnly, "ENFORCE projects onto the power flow only (the limits are measured, not enforced)")
	f.BoolVar(&o.projectMean, "project-mean", o.projectMean, "train nothing: project the mean of the training optima onto the power flow, and onto it and the limits, at the test samples' loads, and print the residuals by number of steps (isolates the projection from the training)")
	f.IntVar(&o.restarts, "restarts", o.restarts, "at inference, project each ENFORCE prediction that missed the tolerance again from where it stopped (its multipliers afresh), up to this many times (0: none); counted in the time per batch")
	f.IntVar(&o.inferMaxDepth, "infer-maxdepth", o.inferMaxDepth, "at inference, ENFORCE's first projection takes at most this many steps (0: the model's inference settings, 100 steps); -restarts and -refine-fbeps then take over the samples it leaves")
	f.BoolVar(&o.inferLineSearch, "infer-linesearch", o.inferLineSearch, "at inference, ENFORCE's first projection backtracks each step until ‖c‖² decreases (enforce.Settings.LineSearch), so that no sample's iterate runs away; samples whose line search fails stop and are left to -restarts, -refine-fbeps and -interior")
	f.IntVar(&o.interior, "interior", o.interior, "at inference, after -restarts and -refine-fbeps, project each ENFORCE prediction still above the tolerance onto the power flow within the limits with enforce.Interior (affine-scaling Newton steps kept strictly inside the bounds; at most this many steps; 0: off); counted in the time per batch. With -project-mean: also from the mean itself")
	f.BoolVar(&o.refineAll, "refine-all", o.refineAll, "-restarts and -refine-fbeps project every ENFORCE prediction again, not only those above the tolerance (to see what the smoothing's margin costs in objective)")
	f.StringVar(&o.refineFBEps, "refine-fbeps", o.refineFBEps, `at inference, after -restarts, project each ENFORCE prediction still above the tolerance again from where it stopped onto the limits smoothed with each ε_FB of this comma-separated list in turn (enforce.Refine; e.g. "1e-6": a continuation in ε_FB); counted in the time per batch`)
	f.StringVar(&o.predictions, "predictions", o.predictions, `folder to write each trained network's test inputs and predictions ŷ (before any projection) into, one CSV per method and seed (x then ŷ per row), for examples/acopf -points ("" writes none)`)
	f.StringVar(&o.checkpoint, "checkpoint", o.checkpoint, `folder of training checkpoints, one subfolder per case, method and seed; a run whose checkpoint is there resumes from it ("" writes none)`)
	f.StringVar(&o.path, "path", o.path, "AdaNP's linear algebra in training and inference: auto, dense or sparse (enforce.Settings.Path)")
	f.Float64Var(&o.fbEps, "fbeps", o.fbEps, "smoothing ε of the limits' Fischer–Burmeister rows in ENFORCE's constraint, 0 for acopf.FBEpsilon (1e-8); acopf.ProjectionFBEpsilon is 1e-6 (acopf.ConstraintOptions.FBEps)")
	f.Out(&o.out)
	f.Quick("ntrain", "50").Quick("ntest", "10").Quick("epochs", "3").Quick("seeds", "1").Quick("batch", "25").Quick("width", "32")
	return f
}

var cli = harness.Command(defaults, flags, run)

func main() { os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr)) }

func run(o options, stdout, progress io.Writer) error {
	if o.samples < 12 {
		return fmt.Errorf("-samples %d: need at least 12 for DC3's split", o.samples)
	}
	c, err := acopf.Load(o.caseName)
	if err != nil {
		return err
	}
	m, err := acopf.NewModel(c)
	if err != nil {
		return err
	}
	var sh shard
	if o.shard != "" {
		if _, err := fmt.Sscanf(o.shard, "%d/%d/%d", &sh.K, &sh.Of, &sh.Upto); err != nil || sh.Of < 1 || sh.K < 0 || sh.K >= sh.Of || o.data == "" {
			return fmt.Errorf("-shard %q: want K/OF/UPTO with 0 ≤ K < OF, and a -data folder", o.shard)
		}
	}
	d, err := loadOrGenerate(m, dataName(o.caseName), o.samples, o.seed, o.tol, o.maxIter, o.data, sh, progress)
	if err != nil {
		return err
	}
	if d == nil {
		fmt.Fprintf(stdout, "shard %s done\n", o.shard)
		return nil
	}
	d.Obj = make([]float64, len(d.Y))
	for i, y := range d.Y {
		d.Obj[i] = m.Objective(y) / objScale
	}
	nTr, nVa := split(o.samples)
	fmt.Fprintf(stdout, "%s: %d samples (train %d, valid %d, test %d), seed %d, reference %s\n",
		dataName(o.caseName), o.samples, nTr, nVa, o.samples-nTr-nVa, o.seed, d.Solver)
	dc3Obj := ""
	if o.caseName == dc3Case {
		dc3Obj = " (DC3: 3.8118)"
	}
	fmt.Fprintf(stdout, "optimizer: mean objective (DC3-scaled) all %.4f, test %.4f%s, mean solve %.3f s; %d draws for %d samples\n",
		mean(d.Obj), mean(d.Obj[nTr+nVa:]), dc3Obj, mean(d.Secs), d.Drawn, len(d.X))
	if o.dataOnly {
		return nil
	}
	if o.projectMean {
		if o.refineAll {
			return errors.New("-refine-all: -project-mean refines the samples it missed only")
		}
		return projectMean(o, m, d, stdout)
	}
	return experiment(o, m, d, stdout, progress)
}

// dataName is the name of case in the data set's file names: a shipped
// case's name, or a file's base name without .m or .m.gz.
func dataName(caseName string) string {
	n := filepath.Base(caseName)
	n = strings.TrimSuffix(n, ".gz")
	return strings.TrimSuffix(n, ".m")
}

// split returns DC3's training and validation sizes for n samples
// (int(n·0.8334), int(n·0.9167) − int(n·0.8334)).
func split(n int) (nTrain, nValid int) {
	nTrain = int(float64(n) * (1 - 0.0833 - 0.0833))
	return nTrain, int(float64(n)*(1-0.0833)) - nTrain
}
