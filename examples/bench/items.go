package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/benchcases"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// This file is our side of the same-run comparison with the PyTorch
// reference (examples/bench/reference/compare.py): -instances writes the
// instances and inputs the reference needs, so that both time the same
// data, and -items times the work items one request at a time, so that
// the script can alternate our runs with the reference's round by round.

// The work items of the table, at the paper's settings: a 2×200
// ReLU backbone with PyTorch's initialisation, Adam with step size 1e-4,
// batch 200, 8334 training inputs, tolerances 1e-3 (training: mean|c|,
// inference: max|c|), the nonconvex instances at (N_O, N_C) = (100, 50).
const (
	itemStep200  = "np-step-200-150-f32"
	itemStep100  = "np-step-100-50-f32"
	itemMLPEpoch = "mlp-epoch"
	itemMLPFwd   = "mlp-forward-833"
	itemEpochLin = "enforce-epoch-linear"
	itemEpochQua = "enforce-epoch-quadratic"
	itemInferQua = "enforce-infer-quadratic-833"
)

// itemNames lists the items in the order the script runs them.
var itemNames = []string{itemStep200, itemStep100, itemMLPFwd, itemMLPEpoch, itemEpochLin, itemEpochQua, itemInferQua}

// quadraticSeed is the seed of the quadratic instances (benchcases uses it
// for the NP-step cases, whose instance the step items share).
const quadraticSeed = 1

// Seeds of the inputs: trainSeed for the 8334 training inputs of the
// quadratic instance and testSeed for its 833 test inputs (the linear
// instance uses DC3's own split, PaperData).
const (
	trainSeed = 11
	testSeed  = 12
	// modelSeed seeds our models' initialisation and shuffling.
	modelSeed = 1
)

// The (200, 150) data of -tableb-ntrain: examples/nonconvex-quadratic's
// instance and inputs at its default -seed 1 (instance 1 of the runs of
// Table B's budget) and its default -ntest.
const (
	tablebSeed  = 1
	tablebNTest = 833
)

// backbonePrecision names the arithmetic of our backbone in the items
// that train or run it: float32 (train.Config.Precision, set in
// trainConfig), as the reference's torch modules are.
const backbonePrecision = "float32 backbone"

// itemResult is one answer of -items: the time of one request in seconds
// and a note on what was timed.
type itemResult struct {
	Item  string  `json:"item"`
	Sec   float64 `json:"sec"`
	Note  string  `json:"note,omitempty"`
	Error string  `json:"error,omitempty"`
}

// itemHeader is the first line -items writes: what the script prints
// about our side.
type itemHeader struct {
	Items      []string `json:"items"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	BLAS       string   `json:"blas"`
	GoVersion  string   `json:"go"`
	Revision   string   `json:"revision,omitempty"`
	Modified   bool     `json:"modified,omitempty"`
	Scale      int      `json:"scale"`
}

// item is a prepared work item: run performs one request and returns its
// time in seconds and a note.
type item struct {
	run func() (float64, string, error)
}

// serveItems answers requests read from in, one item name per line, with
// one JSON line each on out, after a header line. It prepares an item
// (instance, model, warm-up run) on its first request, so that every
// answer times the work itself. inner is the number of timings per
// request of the short items (the answer is their best). An unknown name
// is answered with an error field; reading ends at EOF or an empty line.
func serveItems(in io.Reader, out io.Writer, scale, inner int) error {
	h := itemHeader{Items: itemNames, GOMAXPROCS: runtime.GOMAXPROCS(0), BLAS: enforce.BLASImplementation, Scale: scale}
	if bi, ok := debug.ReadBuildInfo(); ok {
		h.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				h.Revision = s.Value
			case "vcs.modified":
				h.Modified = s.Value == "true"
			}
		}
	}
	enc := json.NewEncoder(out)
	if err := enc.Encode(h); err != nil {
		return err
	}
	prepared := map[string]item{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if name == "" {
			break
		}
		r := itemResult{Item: name}
		it, ok := prepared[name]
		var err error
		if !ok {
			if it, err = prepareItem(name, scale, inner); err == nil {
				prepared[name] = it
			}
		}
		if err == nil {
			r.Sec, r.Note, err = it.run()
		}
		if err != nil {
			r.Error = err.Error()
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return sc.Err()
}

// prepareItem builds the item name at the given scale (batches and data
// sets divided by it) and runs it once untimed.
func prepareItem(name string, scale, inner int) (item, error) {
	var it item
	var err error
	switch name {
	case itemStep200, itemStep100:
		it, err = stepItem(name, scale, inner)
	case itemMLPFwd:
		it, err = forwardItem(scale, inner)
	case itemMLPEpoch, itemEpochLin, itemEpochQua:
		it, err = epochItem(name, scale)
	case itemInferQua:
		it, err = inferItem(scale, inner)
	default:
		return item{}, fmt.Errorf("unknown item %q (want one of %s)", name, strings.Join(itemNames, ", "))
	}
	if err != nil {
		return item{}, err
	}
	if _, _, err := it.run(); err != nil { // warm-up
		return item{}, err
	}
	return it, nil
}

// casesAt caches benchcases.Cases by scale: building them draws the
// (200, 150) quadratic instance, which takes seconds.
var casesAt = map[int][]benchcases.Case{}

// stepCase returns the benchcases case of a step item.
func stepCase(name string, scale int) (benchcases.Case, error) {
	cases, ok := casesAt[scale]
	if !ok {
		var err error
		if cases, err = benchcases.Cases(scale); err != nil {
			return benchcases.Case{}, err
		}
		casesAt[scale] = cases
	}
	size := "200, 150)"
	if name == itemStep100 {
		size = "100, 50)"
	}
	for _, c := range cases {
		if strings.HasPrefix(c.Name, "quadratic (") && strings.HasSuffix(c.Name, size) {
			return c, nil
		}
	}
	return benchcases.Case{}, fmt.Errorf("%s: no benchcases case of size (…, %s", name, size)
}

// stepItem times one float32 NP step as the table does, (T(3) − T(1))/2
// with each T the best of inner runs.
func stepItem(name string, scale, inner int) (item, error) {
	tc, err := stepCase(name, scale)
	if err != nil {
		return item{}, err
	}
	proj, err := stepProjections(tc, enforce.Float32)
	if err != nil {
		return item{}, err
	}
	return item{run: func() (float64, string, error) {
		var t [2]float64
		for k := 0; k < inner; k++ {
			for i, f := range proj {
				d, err := timed(f)
				if err != nil {
					return 0, "", err
				}
				if k == 0 || d < t[i] {
					t[i] = d
				}
			}
		}
		return max(t[1]-t[0], 0) / 2, fmt.Sprintf("%s, (T(3) − T(1))/2, best of %d", tc.Name, inner), nil
	}}, nil
}

// stepProjections returns depth-1 and depth-3 projections of tc's batch
// in precision prec, each run once (buffers, pools, lazily built
// layouts). A tolerance that no step reaches keeps Float32's steps in
// single precision (the last evaluation is repeated in float64 at both
// depths, so the difference does not count it).
func stepProjections(tc benchcases.Case, prec enforce.Precision) ([2]func() error, error) {
	var proj [2]func() error
	for i, depth := range []int{1, 3} {
		a, err := enforce.NewAdaNP(tc.C, enforce.Settings{MinDepth: depth, MaxDepth: depth, Tol: 1e-300, Precision: prec})
		if err != nil {
			return proj, err
		}
		dst := mat.DenseCopyOf(tc.YHat)
		proj[i] = func() error {
			_, err := a.ProjectTo(dst, tc.X, tc.YHat)
			return err
		}
		if err := proj[i](); err != nil {
			return proj, err
		}
	}
	return proj, nil
}

// itemData is the data of the items beyond the step cases: the instances
// at (100, 50) with their training and test inputs.
type itemData struct {
	lin                 *problems.NonconvexLinear
	quad                *problems.NonconvexQuadratic
	linTrain, linTest   *mat.Dense
	quadTrain, quadTest *mat.Dense
}

// loadItemData builds the instances and inputs, with the input counts
// divided by scale.
func loadItemData(scale int) (itemData, error) {
	var d itemData
	var err error
	if d.lin, err = problems.NewNonconvexLinear(100, 50, problems.PaperSeed); err != nil {
		return d, err
	}
	if d.quad, err = problems.NewNonconvexQuadratic(100, 50, quadraticSeed); err != nil {
		return d, err
	}
	tr, _, te := d.lin.PaperData()
	d.linTrain, d.linTest = firstRows(tr.X, scale), firstRows(te.X, scale)
	nTrain, nTest := tr.X.RawMatrix().Rows, te.X.RawMatrix().Rows
	d.quadTrain, d.quadTest = d.quad.SampleX(nTrain/scale, trainSeed), d.quad.SampleX(nTest/scale, testSeed)
	return d, nil
}

// firstRows returns the first rows/scale rows of m.
func firstRows(m *mat.Dense, scale int) *mat.Dense {
	r, c := m.Dims()
	return mat.DenseCopyOf(m.Slice(0, max(r/scale, 1), 0, c))
}

// trainConfig is our model of the items, in mode for the constraint c
// with nx inputs and ny outputs, set up to do the work that the model
// reference/compare.py builds does (the reference's configuration for the
// nonconvex problems): 2×200 ReLU with PyTorch's initialisation, batch
// 200, Adam 1e-4, tolerances 1e-3, λ_D = 0.5, float32 arithmetic
// (backbone and AdaNP, training and prediction) and, as in the reference:
//   - inputs standardised with the training inputs' mean and population σ
//     (the items call FitStandardizers outside the timing, as the script
//     computes the reference's scaling outside its timing);
//   - no residual term in the loss (LambdaC < 0): the reference's
//     benchmark configuration has SOFT_CONSTRAINED = False;
//   - every batch projected (AlwaysProject): the reference's unsupervised
//     training applies its activation rule only when cfg.verbose is set,
//     which the benchmark configuration leaves off (VERBOSE = False).
//
// An earlier version left the inputs raw, kept the activation rule and
// λ_C = 1, and predicted with a float64 AdaNP. That made our side do more
// work than the reference's: the rule's preview step, the residual term
// and its gradient, and 3.65 instead of 3.03 NP steps per sample at
// inference, because raw inputs put the untrained network's outputs
// further from the constraint set (max|c| after two steps 7.6, against
// 0.10 in the reference and 0.16 with standardised inputs).
func trainConfig(c enforce.Constraint, nx, ny int, mode train.Mode) train.Config {
	trainSet := train.TrainSettings()
	trainSet.Tol = 1e-3
	return train.Config{
		Sizes: []int{nx, 200, 200, ny}, Hidden: layers.ReLU, PyTorchInit: true,
		Constraint: c, Mode: mode, LambdaC: -1, AlwaysProject: true, Standardize: true,
		Train: trainSet, Infer: enforce.Settings{Tol: 1e-3, Precision: enforce.Float32},
		LearnRate: 1e-4, BatchSize: 200, Epochs: 1, Seed: modelSeed, Quiet: true,
		Precision: enforce.Float32,
	}
}

// objective is the task loss of the nonconvex problems, the mean of
// ½yᵀQy + pᵀsin y.
func objective(o problems.SineQuadratic) train.Objective {
	return func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return o.ObjectiveNode(y) }
}

// epochItem times one training epoch of a fresh model (built outside the
// timing) on the item's 8334 inputs: the MLP on the linear instance's
// data, or ENFORCE on the linear or quadratic instance. The time includes
// building the two training graphs (full batches and the last one).
func epochItem(name string, scale int) (item, error) {
	d, err := loadItemData(scale)
	if err != nil {
		return item{}, err
	}
	c, x, o, mode := d.lin.Equalities(), d.linTrain, d.lin.SineQuadratic, train.ENFORCE
	switch name {
	case itemMLPEpoch:
		mode = train.MLP
	case itemEpochQua:
		c, x, o = d.quad.Equalities(), d.quadTrain, d.quad.SineQuadratic
	}
	nx, ny := d.lin.Dims() // the same for both instances
	return item{run: func() (float64, string, error) {
		m, err := train.New(trainConfig(c, nx, ny, mode))
		if err == nil {
			err = m.FitStandardizers(x, nil)
		}
		if err != nil {
			return 0, "", err
		}
		var h train.History
		sec, err := timed(func() error {
			var err error
			h, err = m.FitUnsupervised(x, objective(o))
			return err
		})
		if err != nil {
			return 0, "", err
		}
		note := fmt.Sprintf("%s, standardised inputs, fresh model, %d inputs, first epoch incl. graph build", backbonePrecision, x.RawMatrix().Rows)
		if mode == train.ENFORCE {
			note += fmt.Sprintf("; float32 AdaNP, no residual term, every batch projected (%.0f%%), mean depth %.2f", 100*h.Last().Projected, h.Last().Depth)
		}
		return sec, note, nil
	}}, nil
}

// forwardItem times the backbone's prediction (Model.Backbone: the
// forward pass with the input standardisation and output scaling, as the
// reference's model.forward; not Model.Predict, which also evaluates the
// constraint for its Stats) on the 833 test inputs of the linear
// instance, best of inner.
func forwardItem(scale, inner int) (item, error) {
	d, err := loadItemData(scale)
	if err != nil {
		return item{}, err
	}
	m, err := train.New(trainConfig(d.lin.Equalities(), d.lin.NC, d.lin.NO, train.MLP))
	if err == nil {
		err = m.FitStandardizers(d.linTrain, nil)
	}
	if err == nil {
		err = m.SetWeights(m.Weights()) // the initial weights, on purpose (train.ErrNotFitted)
	}
	if err != nil {
		return item{}, err
	}
	return item{run: func() (float64, string, error) {
		sec, err := bestOf(inner, func() error {
			_, err := m.Backbone(d.linTest)
			return err
		})
		return sec, fmt.Sprintf("%s, standardised inputs, Model.Backbone (input standardisation and output scaling included), best of %d", backbonePrecision, inner), err
	}}, nil
}

// inferItem times ENFORCE's prediction (backbone and AdaNP, both in
// float32, to max|c| ≤ 1e-3 in float64) of an untrained model on the
// quadratic instance's 833 test inputs, best of inner.
func inferItem(scale, inner int) (item, error) {
	d, err := loadItemData(scale)
	if err != nil {
		return item{}, err
	}
	m, err := train.New(trainConfig(d.quad.Equalities(), d.quad.NC, d.quad.NO, train.ENFORCE))
	if err == nil {
		err = m.FitStandardizers(d.quadTrain, nil)
	}
	if err == nil {
		err = m.SetWeights(m.Weights()) // the initial weights, on purpose (train.ErrNotFitted)
	}
	if err != nil {
		return item{}, err
	}
	return item{run: func() (float64, string, error) {
		var st enforce.Stats
		sec, err := bestOf(inner, func() error {
			var err error
			_, st, err = m.Predict(d.quadTest)
			if err == nil && !st.Converged() {
				err = fmt.Errorf("%s: %d samples not converged", itemInferQua, st.NotConverged)
			}
			return err
		})
		return sec, fmt.Sprintf("%s and AdaNP, standardised inputs, untrained model, Model.Predict, mean depth %.2f, best of %d", backbonePrecision, st.MeanDepth, inner), err
	}}, nil
}

// bestOf returns the shortest of n timed runs of f.
func bestOf(n int, f func() error) (float64, error) {
	t := math.Inf(1)
	for i := 0; i < max(n, 1); i++ {
		d, err := timed(f)
		if err != nil {
			return 0, err
		}
		t = min(t, d)
	}
	return t, nil
}

// arrayInfo describes one array of -instances: a file of little-endian
// float64 values in row-major order, and its shape.
type arrayInfo struct {
	File  string `json:"file"`
	Shape []int  `json:"shape"`
}

// writeInstances writes, into dir, the data the reference needs to time
// the items on our instances and inputs, and manifest.json, which maps
// each array's name to its file and shape:
//
//	lin.C, lin.Q, lin.P                 the linear instance (100, 50), DC3's
//	lin.train, lin.test                 its 8334 training and 833 test inputs
//	quad.A, quad.C, quad.D, quad.Q, quad.P   the quadratic instance (100, 50):
//	                                    c(x, y)_i = yᵀA_i y + C_i·y + D_i − x_i³
//	quad.train, quad.test               its inputs
//	step200.A, …, step200.x, step200.y  the quadratic (200, 150) instance of
//	step100.…                           the step items, the batch x and the
//	                                    point ŷ the step starts from
//	tableb.A, …, tableb.P               with tablebNTrain > 0 only: the
//	tableb.train, tableb.test           (200, 150) instance and inputs of
//	                                    examples/nonconvex-quadratic (below)
//
// Q and P are the objective's ½yᵀdiag(Q)y + pᵀsin y.
//
// With tablebNTrain > 0 it also writes what examples/nonconvex-quadratic
// -seed 1 -sizes 4 -ntrain tablebNTrain trains and tests on (optexp.Run
// draws the inputs with the instance's SampleX at the seeds -seed + 100
// and -seed + 200): the (200, 150) instance of seed tablebSeed, its
// tablebNTrain training inputs and tablebNTest test inputs, unscaled by
// -scale (reference/tableb.py trains the reference on them).
func writeInstances(dir string, scale, tablebNTrain int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	manifest := map[string]arrayInfo{}
	put := func(name string, shape []int, data []float64) error {
		file := name + ".f64"
		b := make([]byte, 8*len(data))
		for i, v := range data {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			return err
		}
		manifest[name] = arrayInfo{File: file, Shape: shape}
		return nil
	}
	putMat := func(name string, m *mat.Dense) error {
		r, c := m.Dims()
		return put(name, []int{r, c}, mat.DenseCopyOf(m).RawMatrix().Data)
	}
	putQuad := func(prefix string, q *problems.NonconvexQuadratic) error {
		a := make([]float64, 0, q.NC*q.NO*q.NO)
		for _, ai := range q.A {
			for r := range q.NO {
				for c := range q.NO {
					a = append(a, ai.At(r, c))
				}
			}
		}
		return firstErr(
			put(prefix+".A", []int{q.NC, q.NO, q.NO}, a),
			putMat(prefix+".C", q.C),
			put(prefix+".D", []int{q.NC}, q.D),
			put(prefix+".Q", []int{q.NO}, q.Q),
			put(prefix+".P", []int{q.NO}, q.P))
	}
	d, err := loadItemData(scale)
	if err != nil {
		return err
	}
	if err := firstErr(
		putMat("lin.C", d.lin.C), put("lin.Q", []int{d.lin.NO}, d.lin.Q), put("lin.P", []int{d.lin.NO}, d.lin.P),
		putMat("lin.train", d.linTrain), putMat("lin.test", d.linTest),
		putQuad("quad", d.quad), putMat("quad.train", d.quadTrain), putMat("quad.test", d.quadTest),
	); err != nil {
		return err
	}
	for _, s := range []struct {
		item, prefix string
		nO, nC       int
	}{{itemStep200, "step200", 200, 150}, {itemStep100, "step100", 100, 50}} {
		q, err := problems.NewNonconvexQuadratic(s.nO, s.nC, quadraticSeed)
		if err != nil {
			return err
		}
		tc, err := stepCase(s.item, scale)
		if err != nil {
			return err
		}
		if err := firstErr(putQuad(s.prefix, q), putMat(s.prefix+".x", tc.X), putMat(s.prefix+".y", tc.YHat)); err != nil {
			return err
		}
	}
	if tablebNTrain > 0 {
		q, err := problems.NewNonconvexQuadratic(200, 150, tablebSeed)
		if err != nil {
			return err
		}
		if err := firstErr(putQuad("tableb", q),
			putMat("tableb.train", q.SampleX(tablebNTrain, tablebSeed+100)),
			putMat("tableb.test", q.SampleX(tablebNTest, tablebSeed+200))); err != nil {
			return err
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range manifest {
			if !yield(k) {
				return
			}
		}
	})
	b, err := json.MarshalIndent(struct {
		Scale  int                  `json:"scale"`
		Names  []string             `json:"names"`
		Arrays map[string]arrayInfo `json:"arrays"`
	}{scale, names, manifest}, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644)
}
