package harness

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// Surrogate are the settings of the KKT-HardNet surrogate programs
// (examples/distillation and examples/pooling), which train MLP and
// ENFORCE in the reference's configuration: an nx-W-W-ny ReLU network
// initialised as PyTorch's, Adam, x and y standardised.
type Surrogate struct {
	Common
	Batch int
	// NTrain > 0 keeps only the first NTrain training rows.
	NTrain        int
	AlwaysProject bool
	// StdFloor is the floor on the outputs' standard deviations
	// (train.Config.OutputStdFloor): an output with σ < StdFloor is only
	// mean-centred. 0 means exact scaling (no floor).
	StdFloor float64
	// DataDir is a folder holding the data files; empty means
	// problems.DataDir ($ENFORCE_DATA, or the copy embedded in package
	// problems).
	DataDir string
	// Resplit > 0 replaces the reference's split by a random partition of
	// all rows (problems.RandomSplit's permutation with this seed) into
	// sets of the reference split's sizes; 0 keeps the reference's split.
	Resplit uint64
	// WriteSplit, if not empty, is a file that Load writes the split it
	// uses to (before -ntrain cuts the training rows), as lines
	// "row,split" under a header, the format of the KKT-HardNet split
	// files, so that another program (the reference's, through
	// examples/pooling/reference/run_reference.py) can train on it.
	WriteSplit string
}

// DefaultSurrogate returns the reference's setting for the program name:
// 1200 epochs of Adam at 1e-4, batch 64, width 64, λ_D = 0.5, the outputs'
// σ floored at 1e-5, one seed.
func DefaultSurrogate(name string) Surrogate {
	return Surrogate{Common: Common{Epochs: 1200, Width: 64, Layers: 2, Seeds: 1, LogLines: 10, LR: 1e-4, LambdaD: 0.5, Seed: 1, Out: DefaultOut(name)}, Batch: 64,
		StdFloor: layers.DefaultStdFloor}
}

// Register registers s's flags on f; nAll is the size of the full
// training split, for -ntrain's help. -quick trains 30 epochs.
func (s *Surrogate) Register(f *Flags, nAll int) {
	s.Common.Register(f, "first model seed; model seeds are seed, seed+1, …")
	f.IntVar(&s.Batch, "batch", s.Batch, "mini-batch size")
	f.IntVar(&s.NTrain, "ntrain", s.NTrain, fmt.Sprintf("use only the first n training rows (0: all %d)", nAll))
	f.BoolVar(&s.AlwaysProject, "alwaysproject", s.AlwaysProject, "project every training batch (bypass the activation rule)")
	f.Float64Var(&s.StdFloor, "stdfloor", s.StdFloor, "outputs whose training σ is below this are only mean-centred (σ = 1), as in the reference; 0: exact scaling")
	f.StringVar(&s.DataDir, "data", s.DataDir, "a folder holding the data files (default: $ENFORCE_DATA, else the copy embedded in package problems)")
	f.Uint64Var(&s.Resplit, "resplit", s.Resplit, "0: the reference's train/test split; n > 0: a random partition of all rows (seed n) into sets of the same sizes")
	f.StringVar(&s.WriteSplit, "writesplit", s.WriteSplit, "write the train/test split in use to this file (lines row,split, as the KKT-HardNet split files)")
	f.Quick("epochs", "30")
}

// Load checks s and loads the data set with load from s.DataDir (or
// problems.DataDir), partitioned by the reference's split (or, with
// Resplit > 0, by a random partition into sets of the same sizes), the
// training rows cut to NTrain. It returns the folder read, for the
// programs' output. A folder that does not hold the files is an error.
func (s Surrogate) Load(load func(dir string) (problems.Dataset, problems.Split, error)) (dir string, trainSet, testSet problems.Dataset, err error) {
	if s.Seeds < 1 || s.Epochs < 1 || s.Width < 1 || s.Layers < 0 || s.Batch < 1 || s.NTrain < 0 || !(s.StdFloor >= 0) || math.IsInf(s.StdFloor, 1) {
		return "", trainSet, testSet, errors.New("-seeds, -epochs, -width and -batch must be positive, -ntrain and -stdfloor not negative")
	}
	dir = s.DataDir
	if dir == "" {
		if dir, err = problems.DataDir(); err != nil {
			return "", trainSet, testSet, fmt.Errorf("the KKT-HardNet data: %w", err)
		}
	}
	all, split, err := load(dir)
	if err != nil {
		return "", trainSet, testSet, err
	}
	if dir == "" {
		dir = "the copy embedded in package problems"
	}
	if s.Resplit > 0 {
		split = Resplit(split, s.Resplit)
	}
	if s.WriteSplit != "" {
		if err := WriteSplit(s.WriteSplit, split); err != nil {
			return "", trainSet, testSet, err
		}
	}
	trainSet, _, testSet = all.Partition(split)
	if s.NTrain > 0 && s.NTrain < trainSet.Len() {
		idx := make([]int, s.NTrain)
		for i := range idx {
			idx[i] = i
		}
		trainSet = trainSet.Rows(idx)
	}
	return dir, trainSet, testSet, nil
}

// Resplit returns a random partition of the rows of split (which must be
// a partition of 0..n−1) into training, validation and test sets of
// split's sizes: problems.RandomSplit's permutation for seed, cut at
// those sizes.
func Resplit(split problems.Split, seed uint64) problems.Split {
	nTrain, nVal := len(split.Train), len(split.Val)
	perm := problems.RandomSplit(nTrain+nVal+len(split.Test), 1, 0, seed).Train
	return problems.Split{
		Train: perm[:nTrain:nTrain],
		Val:   perm[nTrain : nTrain+nVal : nTrain+nVal],
		Test:  perm[nTrain+nVal:],
	}
}

// WriteSplit writes split to the file path as CSV lines "row,split"
// (train, val or test) in increasing row order under the header
// "row,split", the format of the KKT-HardNet split files in package
// problems.
func WriteSplit(path string, split problems.Split) error {
	names := map[int]string{}
	for name, rows := range map[string][]int{"train": split.Train, "val": split.Val, "test": split.Test} {
		for _, r := range rows {
			names[r] = name
		}
	}
	var b strings.Builder
	b.WriteString("row,split\n")
	for r := 0; r < len(names); r++ {
		name, ok := names[r]
		if !ok {
			return fmt.Errorf("writing the split: row %d is in no set", r)
		}
		fmt.Fprintf(&b, "%d,%s\n", r, name)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// SplitName describes the split Load uses, for the programs' output.
func (s Surrogate) SplitName() string {
	if s.Resplit > 0 {
		return fmt.Sprintf("a random partition, -resplit %d, with the reference split's sizes", s.Resplit)
	}
	return "the reference's split"
}

// Config returns the train.Config of one model: mode, seed, constraint c
// on nx inputs and ny outputs, AdaNP settings ts in training and infer at
// inference; with -resume, it checkpoints into RunDir(s.Resume, mode,
// "seed<seed>"), "seed<seed>-resplit<n>" under -resplit n.
func (s Surrogate) Config(mode train.Mode, seed uint64, nx, ny int, c enforce.Constraint, ts, infer enforce.Settings) train.Config {
	cfg := train.Config{
		Sizes: s.Sizes(nx, ny), Hidden: layers.ReLU, PyTorchInit: true,
		Constraint: c, Mode: mode, Train: ts, Infer: infer,
		LearnRate: s.LR, BatchSize: s.Batch, Epochs: s.Epochs, Seed: seed,
		LambdaD: s.LambdaD, Standardize: true, AlwaysProject: s.AlwaysProject, Precision: s.Precision,
		OutputStdFloor: s.StdFloor,
	}
	if s.StdFloor == 0 {
		cfg.OutputStdFloor = -1 // exact scaling
	}
	run := fmt.Sprintf("seed%d", seed)
	if s.Resplit > 0 {
		run += fmt.Sprintf("-resplit%d", s.Resplit) // another data set: another checkpoint
	}
	s.Checkpoint(&cfg, mode, run)
	return cfg
}

// Parity returns predicted against true values of the columns cols of y,
// one point cloud per mode (pred[mode]), and the diagonal y = x over
// their range.
func Parity(y *mat.Dense, pred map[train.Mode]*mat.Dense, modes []train.Mode, cols []int) []report.Series {
	var out []report.Series
	lo, hi := 0.0, 0.0
	for k, mode := range modes {
		s := report.Series{Label: mode.String(), Points: true}
		for _, j := range cols {
			s.X = append(s.X, mat.Col(nil, j, y)...)
			s.Y = append(s.Y, mat.Col(nil, j, pred[mode])...)
		}
		for i, v := range s.X {
			if k == 0 && i == 0 {
				lo, hi = v, v
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		out = append(out, s)
	}
	return append(out, report.Series{Label: "y = x", X: []float64{lo, hi}, Y: []float64{lo, hi}, Dashed: true})
}

// depthTitle is the title of the depth figure of the ENFORCE runs: it
// says so when none of them projected a training batch (the activation
// rule rejected all), where the figure is flat at zero.
func depthTitle(runs []report.Run) string {
	const title = "ENFORCE: AdaNP depth and share of projected batches"
	for _, r := range runs {
		if share, _ := report.Projection(r.History); share > 0 {
			return title
		}
	}
	return title + " (none: the activation rule rejected every batch)"
}

// SurrogateFigures writes name_parity.png (the parity series, laid out by
// fig), name_loss.png (training loss against the epoch), name_depth.png
// (ENFORCE's AdaNP depth and share of projected batches) and
// name_history.csv into dir, and names them on stdout.
func SurrogateFigures(dir, name string, fig report.Figure, parity []report.Series, runs []report.Run, stdout io.Writer) error {
	plots := []report.Plot{
		{Name: name + "_parity.png", Fig: fig, Series: parity},
		{Name: name + "_loss.png", Fig: report.Figure{Title: "Training loss (standardised units)", XLabel: "epoch", YLabel: "loss", LogY: true},
			Series: report.HistorySeries(func(e train.Epoch) float64 { return e.Loss }, true, runs...)},
		{Name: name + "_depth.png", Fig: report.Figure{Title: depthTitle(report.Select(train.ENFORCE.String(), runs...)), XLabel: "epoch", YLabel: "NP steps / share"},
			Series: report.DepthAndShare(report.Select(train.ENFORCE.String(), runs...)...)},
	}
	names, err := report.WriteOutputs(dir, plots, name+"_history.csv", runs...)
	if err != nil {
		return err
	}
	report.Wrapf(stdout, "\nwrote %v to %s\n", names, dir)
	return nil
}
