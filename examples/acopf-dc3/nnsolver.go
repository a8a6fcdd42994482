package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/dc3"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// nnsolverMethod is the -methods name of DC3 as DC3's code trains it:
// dc3.NewACOPF (DC3's NNSolver with BatchNorm and Dropout, a sigmoid into
// the bounds, the completion, DC3's loss with unsquared norms), where the
// method "DC3" is DC3's completion and correction on this program's MLP
// with the squared soft penalty.
const nnsolverMethod = "DC3-NNSolver"

// runNNSolver trains (or resumes, with -checkpoint) seed s+1 of DC3's own
// ACOPF model on xTrain and returns its test metrics, the test-time
// correction counted in the time per batch as for "DC3".
func runNNSolver(m *acopf.Model, o options, s int, xTrain, xTest *mat.Dense, refObj []float64, corr dc3.Correction, progress io.Writer) (metrics, error) {
	seed := s + 1
	obj, err := objective(m)
	if err != nil {
		return metrics{}, err
	}
	loss := dc3.ACOPFLoss{Objective: obj, EqWeight: dc3.ACOPFEqWeight, IneqWeight: dc3.ACOPFIneqWeight}
	if o.corr == "train+test" {
		loss.Correction = &corr
	}
	cfg := dc3.Config{
		Hidden: []int{o.width, o.width}, LearnRate: o.lr, BatchSize: o.batch, Epochs: o.epochs, Seed: uint64(seed),
		Progress: prefixed{progress, fmt.Sprintf("[%s seed %d] ", nnsolverMethod, seed)}, LogEvery: max(1, o.epochs/5),
	}
	var nn *dc3.Model
	if o.checkpoint != "" {
		variant := strings.ReplaceAll(o.corr, "+", "-")
		if corr.ExactGradient {
			variant += "-exact"
		}
		dir := filepath.Join(o.checkpoint, fmt.Sprintf("%s-%s-corr-%s-seed%d", dataName(o.caseName), nnsolverMethod, variant, seed))
		cfg.Checkpoint = dc3.Checkpoint{Dir: dir}
		nn, err = dc3.ResumeACOPF(dir, m, loss, cfg)
		if errors.Is(err, fs.ErrNotExist) {
			nn, err = dc3.NewACOPF(m, loss, cfg)
		}
	} else {
		nn, err = dc3.NewACOPF(m, loss, cfg)
	}
	if err != nil {
		return metrics{}, err
	}
	defer nn.Close()
	if _, err := nn.Fit(xTrain); err != nil {
		return metrics{}, fmt.Errorf("%s seed %d: %w", nnsolverMethod, seed, err)
	}
	comp, err := dc3.NewACOPFCompletion(m)
	if err != nil {
		return metrics{}, err
	}
	testCorr := o.corr != "none"
	var y *mat.Dense
	steps := 0
	dur, err := report.MedianTime(3, func() (err error) {
		if y, err = nn.Predict(xTest); err != nil || !testCorr {
			return err
		}
		steps, err = comp.Correct(xTest, y, corr) // DC3's test-time correction
		return err
	})
	if err != nil {
		return metrics{}, err
	}
	met := evaluate(m, xTest, y, refObj)
	met.Secs = dur.Seconds()
	trainSecs := nn.TrainTime().Seconds()
	fmt.Fprintf(progress, "[%s seed %d] trained in %.0f s; test-time correction: %d steps; test: obj %.4f, max eq %.1e, max ineq %.1e, %.1f ms per batch of %d\n",
		nnsolverMethod, seed, trainSecs, steps, met.Obj, met.MaxEq, met.MaxIneq, 1e3*met.Secs, xTest.RawMatrix().Rows)
	met.Method, met.Seed, met.Epochs, met.NTrain, met.NTest, met.TrainSecs = dc3Label("DC3 (NNSolver, DC3's loss)", o.corr, corr.ExactGradient), seed, o.epochs, xTrain.RawMatrix().Rows, xTest.RawMatrix().Rows, trainSecs
	return met, nil
}

// dc3Label is the table's name of a DC3 row: base with the -corr mode
// ("train+test", "test" or "none") and, for the training correction, its
// gradient.
func dc3Label(base, corr string, exact bool) string {
	switch corr {
	case "train+test":
		if exact {
			return base + " with correction (exact gradient)"
		}
		return base + " with correction"
	case "test":
		return base + ", correction at test time only"
	}
	return base
}
