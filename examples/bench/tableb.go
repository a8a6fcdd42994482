package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// tablebOptions are the settings of -tableb-train: which model seeds to
// train, on how many training inputs, for how many epochs, with which of
// the reference's settings (set), and the IPOPT mean the gap is measured
// against (NaN: no gap).
type tablebOptions struct {
	seeds     []uint64
	nTrain    int
	epochs    int
	set       []string
	ipoptMean float64
	// warmup is Config.Warmup, from set's warmup or warmup=N (0: none).
	warmup int
	// initDir, when set, holds the reference's initial weights per seed
	// (reference/tableb.py --dump-init), which replace ours.
	initDir string
}

// tablebSettings are the names -tableb-set accepts: each switches one
// setting of examples/nonconvex-quadratic's ENFORCE to the reference's
// (benchmark_problems/config_benchmarking.py, as reference/tableb.py
// builds it).
var tablebSettings = map[string]string{
	"standardize": "inputs standardised with the training inputs' mean and population σ (Config.Standardize)",
	"always":      "every training batch projected, no activation rule (Config.AlwaysProject)",
	"nores":       "no residual term in the loss or the rule (LambdaC < 0)",
	"float32":     "float32 backbone and AdaNP, training and inference",
	"warmup":      "the first fifth of the epochs (warmup=N: the first N) train the backbone on the objective alone, without the projection (Config.Warmup; the reference's epoch_start_hard_constrained, 0 in its benchmark)",
	"layers3":     "three hidden layers of 200, as the reference builds HIDDEN_LAYERS = 2 (an input layer and two hidden ones; the paper and our program: two)",
	"nodisp":      "no displacement term (LambdaD < 0; not a reference setting: a recipe candidate)",
	"meandisp":    "the displacement as the reference's torch.mean((ŷ−ỹ)²), a mean over the N_O outputs too: λ_D = 0.5/N_O in our (1/N)Σ‖ŷ−ỹ‖²",
}

// parseTableB reads -tableb-train's seeds and -tableb-set's settings.
func parseTableB(seeds, set string, nTrain, epochs int, ipoptMean float64) (tablebOptions, error) {
	o := tablebOptions{nTrain: nTrain, epochs: epochs, ipoptMean: ipoptMean}
	if o.nTrain == 0 {
		o.nTrain = 1000
	}
	if o.nTrain < 200 || o.epochs < 1 {
		return o, fmt.Errorf("-tableb-train: want -tableb-ntrain ≥ 200 (one batch) and -tableb-epochs ≥ 1")
	}
	for _, s := range strings.Split(seeds, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return o, fmt.Errorf("-tableb-train %q: %w", seeds, err)
		}
		o.seeds = append(o.seeds, v)
	}
	for _, s := range strings.Split(set, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		name, n, hasN := strings.Cut(s, "=")
		if _, ok := tablebSettings[name]; !ok || hasN && name != "warmup" {
			return o, fmt.Errorf("-tableb-set: unknown setting %q (want standardize, always, nores, float32, meandisp, layers3, nodisp, warmup or warmup=N)", s)
		}
		if name == "warmup" {
			o.warmup = max(1, o.epochs/5)
			var err error
			if hasN {
				o.warmup, err = strconv.Atoi(n)
			}
			if err != nil || o.warmup < 1 || o.warmup >= o.epochs {
				return o, fmt.Errorf("-tableb-set %s: want a warm-up of 1 ≤ N < -tableb-epochs (%d) epochs", s, o.epochs)
			}
		}
		o.set = append(o.set, s)
	}
	return o, nil
}

// tablebConfig is examples/nonconvex-quadratic's ENFORCE model at (200,
// 150) (optexp's trainModel: 2×200 ReLU with PyTorch's initialisation,
// Adam 1e-4, batch 200, λ_C = 1, the activation rule, raw inputs,
// float64, tolerances 1e-3) for model seed seed, with the settings in set
// switched (warmup, parsed by parseTableB, comes as the warm-up's epochs).
func tablebConfig(q *problems.NonconvexQuadratic, seed uint64, epochs, warmup int, set []string) train.Config {
	trainSet := train.TrainSettings()
	trainSet.Tol = 1e-3
	cfg := train.Config{
		Sizes: []int{q.NC, 200, 200, q.NO}, Hidden: layers.ReLU, PyTorchInit: true,
		Constraint: q.Equalities(), Mode: train.ENFORCE, LambdaC: 1,
		Train: trainSet, Infer: enforce.Settings{Tol: 1e-3},
		LearnRate: 1e-4, BatchSize: 200, Epochs: epochs, Seed: seed, LogEvery: max(1, epochs/5), Warmup: warmup,
	}
	if epochs <= 20 {
		cfg.LogEvery = 1
	}
	for _, s := range set {
		switch s {
		case "standardize":
			cfg.Standardize = true
		case "always":
			cfg.AlwaysProject = true
		case "nores":
			cfg.LambdaC = -1
		case "float32":
			cfg.Precision, cfg.Train.Precision, cfg.Infer.Precision = enforce.Float32, enforce.Float32, enforce.Float32
		case "meandisp":
			cfg.LambdaD = train.DefaultLambdaD / float64(q.NO)
		case "nodisp":
			cfg.LambdaD = -1
		case "layers3":
			cfg.Sizes = []int{q.NC, 200, 200, 200, q.NO}
		}
	}
	return cfg
}

// trainTableB trains our ENFORCE on the (200, 150) instance and inputs of
// examples/nonconvex-quadratic -seed 1 (those -tableb-ntrain exports) for
// each model seed and prints, as that program evaluates, the mean
// objective on all test inputs and on the first 20 (the inputs IPOPT
// solved), the gap to o.ipoptMean, max|c| over the test inputs and the
// predictions above 1e-3. Progress goes to progress.
func trainTableB(w, progress io.Writer, o tablebOptions) error {
	q, err := problems.NewNonconvexQuadratic(200, 150, tablebSeed)
	if err != nil {
		return err
	}
	xTrain, xTest := q.SampleX(o.nTrain, tablebSeed+100), q.SampleX(tablebNTest, tablebSeed+200)
	set := "none (examples/nonconvex-quadratic's ENFORCE)"
	if len(o.set) > 0 {
		set = strings.Join(o.set, ", ")
	}
	fmt.Fprintf(w, "(200, 150) instance of -seed 1, %d training / %d test inputs, %d epochs; the reference's settings: %s\n",
		o.nTrain, tablebNTest, o.epochs, set)
	if o.initDir != "" {
		fmt.Fprintf(w, "initial weights: the reference's, from %s\n", o.initDir)
	}
	var infeasible []string
	for _, seed := range o.seeds {
		cfg := tablebConfig(q, seed, o.epochs, o.warmup, o.set)
		cfg.Progress = harness.Prefixed(progress, fmt.Sprintf("[tableb seed %d] ", seed))
		m, err := train.New(cfg)
		if err == nil && cfg.Standardize {
			err = m.FitStandardizers(xTrain, nil)
		}
		if err == nil && o.initDir != "" {
			err = setReferenceInit(m, cfg.Sizes, filepath.Join(o.initDir, fmt.Sprintf("init-seed%d.json", seed)))
		}
		if err != nil {
			return err
		}
		if _, err := m.FitUnsupervised(xTrain, func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return q.ObjectiveNode(y) }); err != nil {
			return err
		}
		y, _, err := m.Predict(xTest)
		if err != nil {
			return err
		}
		mean, obj20, maxC, above := tablebEvaluate(q, xTest, y, 20)
		gap := (obj20 - o.ipoptMean) / math.Abs(o.ipoptMean)
		fmt.Fprintf(w, "[tableb seed %d] test: obj. %.4f (first 20: %.4f), gap to IPOPT %+.2f%%, max|c| %.3g, %d of %d above 1e-3; train %.2f min\n",
			seed, mean, obj20, 100*gap, maxC, above, tablebNTest, m.TrainingTime().Minutes())
		if above > 0 {
			infeasible = append(infeasible, fmt.Sprintf("seed %d: %d of %d", seed, above, tablebNTest))
		}
	}
	return tablebVerdict(infeasible)
}

// tablebVerdict is -tableb-train's result: an error naming the seeds whose
// test predictions were not all feasible to 1e-3 (the paper's tolerance),
// whose gaps are then no ENFORCE row, so that the run does not exit 0.
func tablebVerdict(infeasible []string) error {
	if len(infeasible) == 0 {
		return nil
	}
	return fmt.Errorf("test predictions with max|c| above 1e-3 (%s): their gaps are not rows of a feasible method", strings.Join(infeasible, "; "))
}

// setReferenceInit replaces m's initial weights by the reference's, read
// from path (written by reference/tableb.py --dump-init), whose layer sizes
// must be sizes.
func setReferenceInit(m *train.Model, sizes []int, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("-tableb-init: %w", err)
	}
	var f struct {
		Sizes   []int       `json:"sizes"`
		Weights [][]float64 `json:"weights"`
		X0      []float64   `json:"x0"` // a training input and the reference network's output there
		Y0      []float64   `json:"y0"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("-tableb-init: %s: %w", path, err)
	}
	if !slices.Equal(f.Sizes, sizes) {
		return fmt.Errorf("-tableb-init: %s is for layer sizes %v, the model has %v (the reference's network needs -tableb-set layers3)", path, f.Sizes, sizes)
	}
	if err := m.SetWeights(f.Weights); err != nil {
		return fmt.Errorf("-tableb-init: %s: %w", path, err)
	}
	// The layout check: the same network computes the same output (to
	// float32 rounding), which also needs the same input scaling.
	if len(f.X0) != sizes[0] || len(f.Y0) != sizes[len(sizes)-1] {
		return fmt.Errorf("-tableb-init: %s: no check point x0, y0 of the right sizes", path)
	}
	y, err := m.Backbone(mat.NewDense(1, len(f.X0), f.X0))
	if err != nil {
		return err
	}
	for j, want := range f.Y0 {
		if got := y.At(0, j); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
			return fmt.Errorf("-tableb-init: %s: our network with these weights gives %g at output %d of x0, the reference's %g (the reference standardises its inputs: -tableb-set standardize)", path, got, j, want)
		}
	}
	return nil
}

// tablebEvaluate returns the mean objective of the predictions y over all
// rows and over the first n, the largest |c| and how many rows have a
// |c_i| above 1e-3.
func tablebEvaluate(q *problems.NonconvexQuadratic, x, y *mat.Dense, n int) (obj, objN, maxC float64, above int) {
	rows, _ := y.Dims()
	c := make([]float64, q.NC)
	for i := range rows {
		f := q.Objective(nil, y.RawRowView(i))
		obj += f / float64(rows)
		if i < n {
			objN += f / float64(n)
		}
		q.Equalities().Eval(x.RawRowView(i), y.RawRowView(i), c, nil)
		rowMax := 0.0
		for _, v := range c {
			rowMax = math.Max(rowMax, math.Abs(v))
		}
		maxC = math.Max(maxC, rowMax)
		if rowMax > 1e-3 {
			above++
		}
	}
	return obj, objN, maxC, above
}
