package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/internal/acopfcost"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/problems/acopf/dataset"
	"github.com/enforce-nn/enforce/train"
)

// recipe is the training of issue 53, item 3: a supervised warm start of
// an MLP on the loads (no projection), then the ENFORCE model with the
// warm-started weights trained on the generation cost of its projected
// predictions (FitUnsupervised), every batch projected onto PGLib's full
// constraint set.
type recipe struct {
	width             int
	supEpochs, epochs int
	supBatch, batch   int
	supLR, lr         float64
	lambdaD, lambdaC  float64
	trainTol          float64
	stdFloor          float64
	grad              string
	weights           string // "spread" or "unit" (projectionWeights)
	// ladder is enforce.Settings.SmoothingLadder of the models' own
	// projections (training and their saved inference settings):
	// -model-ladder, none by default so that earlier checkpoints resume.
	ladder []float64
	// path is enforce.Settings.Path of the models' own projections
	// (as ladder): -model-path, PathSparse by default so that earlier
	// checkpoints resume.
	path       enforce.Path
	ntrain     int
	checkpoint string
}

// seedList parses "1,2,3".
func seedList(s string) ([]uint64, error) {
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil || v == 0 {
			return nil, fmt.Errorf("-seeds %q: want positive integers separated by commas", s)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-seeds %q: no seed", s)
	}
	return out, nil
}

// readLabelled reads a data set of examples/acopf-data and returns its
// solved samples.
func readLabelled(path string) (*dataset.Dataset, []dataset.Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	d, err := dataset.Read(f)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	var out []dataset.Sample
	for _, s := range d.Samples {
		if s.Y != nil {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%s: no solved instance", path)
	}
	return d, out, nil
}

func sampleRows(s []dataset.Sample, y bool) *mat.Dense {
	v := s[0].X
	if y {
		v = s[0].Y
	}
	d := mat.NewDense(len(s), len(v), nil)
	for i := range s {
		if y {
			d.SetRow(i, s[i].Y)
		} else {
			d.SetRow(i, s[i].X)
		}
	}
	return d
}

// spreadFloor is the floor, relative to the median, on the training
// labels' standard deviations from which projectionWeights "spread"
// builds W.
const spreadFloor = 0.1

// projectionWeights returns W's diagonal for the trained models'
// projections: for "unit", W = I (the distance in p.u. and radians); for
// "spread", W_j = σ̃/max(σ_j, σ̃/10), with σ_j the standard deviation of
// output j over the training labels y and σ̃ their median, so that
// outputs that vary little between optima (voltage magnitudes) move
// little and those that vary much (generation) carry the correction
// (docs/acopf-learn.md measures both); "spread:F:P" is
// W_j = (σ̃/max(σ_j, F·σ̃))^P, so "spread" is "spread:0.1:1".
func projectionWeights(kind string, y *mat.Dense) ([]float64, error) {
	n, ny := y.Dims()
	w := make([]float64, ny)
	floor, power := spreadFloor, 1.0
	switch {
	case kind == "unit":
		for j := range w {
			w[j] = 1
		}
		return w, nil
	case kind == "spread":
	case strings.HasPrefix(kind, "spread:"):
		f := strings.Split(kind, ":")
		var err1, err2 error
		if len(f) == 3 {
			floor, err1 = strconv.ParseFloat(f[1], 64)
			power, err2 = strconv.ParseFloat(f[2], 64)
		}
		if len(f) != 3 || err1 != nil || err2 != nil || !(floor > 0 && floor <= 1) || !(power > 0 && power <= 4) {
			return nil, fmt.Errorf("-weights %q: want spread:F:P with 0 < F ≤ 1 and 0 < P ≤ 4", kind)
		}
	default:
		return nil, fmt.Errorf("-weights %q: want spread, spread:F:P or unit", kind)
	}
	sd := make([]float64, ny)
	for j := range sd {
		var mean, v float64
		for i := 0; i < n; i++ {
			mean += y.At(i, j)
		}
		mean /= float64(n)
		for i := 0; i < n; i++ {
			d := y.At(i, j) - mean
			v += d * d
		}
		sd[j] = math.Sqrt(v / float64(n))
	}
	sorted := append([]float64(nil), sd...)
	sort.Float64s(sorted)
	med := sorted[ny/2]
	if !(med > 0) {
		return nil, fmt.Errorf("-weights %s: the median spread of the %d training labels' outputs is %v: too few distinct labels", kind, n, med)
	}
	for j, s := range sd {
		w[j] = med / math.Max(s, floor*med)
		if power != 1 {
			w[j] = math.Pow(w[j], power)
		}
	}
	return w, nil
}

// projection returns the AdaNP settings of training (tol > 0: max|c| ≤
// tol; 0: train's default, mean|c| ≤ 1e-4) and inference (tol 0: max|c| ≤
// 1e-6, at most -maxdepth steps):
// the sparse path onto the full PGLib set with W = diag(diag) (W = I for
// a nil diag; -model-path), Smoothing (its first attempt's length and -model-ladder),
// Damping and EqualitySteps as the options say. The rows' projection adds -stop-feasible,
// -nonmonotone and -smoothing-ladder (rowProjection); the models' own settings, which their
// checkpoints record, do not, so that checkpoints written before those flags resume.
func projection(o options, diag []float64, tol float64, g enforce.GradMode) enforce.Settings {
	s := enforce.Settings{Path: o.recipe.path, Smoothing: o.smoothing, Damping: o.damping,
		Tol: tol, Grad: g, EqualitySteps: o.eqSteps, SmoothingFirstDepth: o.smFirst, SmoothingLadder: o.recipe.ladder}
	if diag != nil {
		s.Weights, s.Diag = enforce.Diagonal, diag
	}
	if tol > 0 {
		s.Measure = enforce.MaxAbs // as inference measures
	} else {
		s.MaxDepth = o.maxDepth
	}
	return s
}

// rowProjection returns the AdaNP that projects the predictions of a
// row (a trained model's, with its diag; the no-training baseline's, with
// a nil diag): the inference settings of projection with -stop-feasible,
// -nonmonotone, -smoothing-nonmonotone, -smoothing-patience,
// -smoothing-from-attempt, -smoothing-ladder and -path.
func rowProjection(o options, k enforce.Constraint, diag []float64) (*enforce.AdaNP, error) {
	return enforce.NewAdaNP(k, rowSettings(o, diag))
}

// rowSettings returns the settings of rowProjection.
func rowSettings(o options, diag []float64) enforce.Settings {
	s := projection(o, diag, 0, 0)
	s.StopWhenFeasible, s.Nonmonotone, s.SmoothingLadder, s.Path = o.stopFeasible, o.nonmonotone, o.ladder, o.rowPath
	s.SmoothingNonmonotone, s.SmoothingPatience, s.SmoothingFromAttempt = o.smNonmonotone, o.smPatience, o.smFromAttempt
	return s
}

// parseLadder parses the value of -smoothing-ladder and -model-ladder:
// numbers separated by commas, or "" for none.
func parseLadder(v string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		e, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, e)
	}
	return out, nil
}

// resume returns the model of cfg continued from its checkpoint folder
// when one is there, or a new one (resumed false).
func resume(cfg train.Config) (*train.Model, bool, error) {
	if cfg.Checkpoint.Dir == "" {
		tm, err := train.New(cfg)
		return tm, false, err
	}
	tm, err := train.Resume(cfg.Checkpoint.Dir, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		tm, err = train.New(cfg)
		return tm, false, err
	}
	return tm, err == nil, err
}

// logEpochs writes a History as one line per epoch.
func logEpochs(w io.Writer, prefix string, h train.History) {
	for _, e := range h {
		fmt.Fprintf(w, "%s epoch %d: loss %.6g task %.6g disp %.3g residual %.3g max|c| %.2g depth %.2f projected %.0f%% missed %d\n",
			prefix, e.Epoch, e.Loss, e.Task, e.Displacement, e.Residual, e.MaxResidual, e.Depth, 100*e.Projected, e.Missed)
	}
}

// trainRows trains the recipe for each seed on train_ (the training set,
// already cut to -ntrain by run) and returns the summary rows of the
// supervised network and of the trained ENFORCE model, evaluated on the
// test set (x, test), each projected as keep (screenKeep) says.
func trainRows(o options, r recipe, seeds []uint64, m *acopf.Model, keep []bool, train_ []dataset.Sample, test []dataset.Sample, xTest *mat.Dense, stdout, progress io.Writer) ([]row, error) {
	grad, err := harness.ParseGrad(r.grad)
	if err != nil {
		return nil, err
	}
	k, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbeps, BranchLimits: true})
	if err != nil {
		return nil, err
	}
	nx, ny := m.Dims()
	xTr, yTr := sampleRows(train_, false), sampleRows(train_, true)
	diag, err := projectionWeights(r.weights, yTr)
	if err != nil {
		return nil, err
	}
	var optMean float64
	for _, s := range train_ {
		optMean += s.Objective
	}
	optMean /= float64(len(train_))
	obj, err := acopfcost.Objective(m, optMean)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "training set: %d labelled instances (objective scaled by their mean optimum %.6g)\n", len(train_), optMean)
	var rows []row
	for _, seed := range seeds {
		ckpt := func(phase string) train.Checkpoint {
			if r.checkpoint == "" {
				return train.Checkpoint{}
			}
			return train.Checkpoint{Dir: filepath.Join(r.checkpoint, fmt.Sprintf("%s-%s-seed%d", m.Case.Name, phase, seed))}
		}
		// Phase 1: the supervised warm start, no projection.
		sup := train.Config{Sizes: []int{nx, r.width, r.width, ny}, Hidden: layers.ReLU, Standardize: true,
			OutputStdFloor: r.stdFloor, Mode: train.MLP, Constraint: k, LearnRate: r.supLR, BatchSize: r.supBatch, Epochs: r.supEpochs,
			Seed: seed, Progress: progress, LogEvery: max(1, r.supEpochs/10), Checkpoint: ckpt("supervised")}
		if r.width == 0 {
			// The ridge regression in its dual form: a linear network
			// nx → n → ny (n training samples), no activation.
			n := len(train_)
			sup.Sizes, sup.Hidden = nil, 0
			sup.Backbone = func(g *gorgonia.ExprGraph) (train.Backbone, error) {
				return layers.NewMLP(g, []int{nx, n, ny}, layers.Identity, layers.Identity)
			}
		}
		var mlp *train.Model
		var supSecs float64
		if r.width == 0 {
			sup.Checkpoint = train.Checkpoint{}
			if mlp, err = train.New(sup); err != nil {
				return nil, err
			}
			start := time.Now()
			lambda, err := fitRidge(mlp, xTr, yTr)
			if err != nil {
				return nil, fmt.Errorf("seed %d, ridge warm start: %w", seed, err)
			}
			supSecs = time.Since(start).Seconds()
			w := mlp.Weights()
			fmt.Fprintf(stdout, "seed %d: ridge regression in standardised units, λ = %g chosen on a fifth of the training set held out, %.1f s; RMS weight %.3g\n", seed, lambda, supSecs, rms(w[0]))
		} else {
			if mlp, _, err = resume(sup); err != nil {
				return nil, err
			}
			if _, err := mlp.Fit(xTr, yTr); err != nil {
				return nil, fmt.Errorf("seed %d, supervised warm start: %w", seed, err)
			}
			supSecs = mlp.TrainingTime().Seconds()
		}
		// Phase 2: ENFORCE on the objective, every batch projected.
		enf := train.Config{Sizes: sup.Sizes, Hidden: sup.Hidden, Backbone: sup.Backbone, Standardize: true, OutputStdFloor: r.stdFloor,
			Mode: train.ENFORCE, Constraint: k, LearnRate: r.lr, BatchSize: r.batch, Epochs: r.epochs,
			Seed: seed, AlwaysProject: true, LambdaD: r.lambdaD, LambdaC: r.lambdaC,
			Train: projection(o, diag, r.trainTol, grad), Infer: projection(o, diag, 0, 0),
			Progress: progress, LogEvery: 1, Checkpoint: ckpt("enforce")}
		tm, resumed, err := resume(enf)
		if err != nil {
			return nil, err
		}
		if !resumed {
			sx, sy := mlp.Standardizers()
			if err := tm.SetStandardizers(sx, sy); err != nil {
				return nil, err
			}
			if err := tm.SetWeights(mlp.Weights()); err != nil {
				return nil, err
			}
		}
		// The supervised network's row, projected as the trained one is.
		warm := fmt.Sprintf("ridge (%d labels)", len(train_))
		if r.width > 0 {
			warm = fmt.Sprintf("MLP %d-%d (%d labels)", r.width, r.width, len(train_))
		}
		rp, err := newRowProjector(o, m, diag, keep)
		if err != nil {
			return nil, err
		}
		supRow, err := evaluateModel(o, m, mlp, rp, test, xTest, fmt.Sprintf("%s + AdaNP, seed %d", warm, seed), stdout)
		if err != nil {
			return nil, err
		}
		rows = append(rows, supRow)
		if r.epochs == 0 {
			continue
		}
		h, err := tm.FitUnsupervised(xTr, obj)
		logEpochs(stdout, fmt.Sprintf("seed %d, objective through AdaNP:", seed), h)
		if err != nil {
			return nil, fmt.Errorf("seed %d, training through the projection: %w", seed, err)
		}
		fmt.Fprintf(stdout, "seed %d: supervised %.0f s, objective through AdaNP %.0f s (%d epochs, grad %s)\n", seed, supSecs, tm.TrainingTime().Seconds(), len(h), grad)
		er, err := evaluateModel(o, m, tm, rp, test, xTest, fmt.Sprintf("ENFORCE: %s, then cost through AdaNP (%d epochs), seed %d", warm, r.epochs, seed), stdout)
		if err != nil {
			return nil, err
		}
		rows = append(rows, er)
	}
	return rows, nil
}

// evaluateModel predicts with tm's backbone and projects with a (the
// trained model's inference projection with -stop-feasible and -nonmonotone:
// rowProjection), both timed together.
func evaluateModel(o options, m *acopf.Model, tm *train.Model, p *rowProjector, test []dataset.Sample, x *mat.Dense, method string, stdout io.Writer) (row, error) {
	start := time.Now()
	yhat, err := tm.Backbone(x)
	if err != nil {
		return row{}, err
	}
	y, st, note, err := p.project(x, yhat)
	wall := time.Since(start)
	if err != nil {
		return row{}, err
	}
	printProjection(stdout, method, st, note)
	return measure(m, test, y, method, wall), nil
}

// measure is the summary row of projected predictions y.
func measure(m *acopf.Model, test []dataset.Sample, y *mat.Dense, method string, wall time.Duration) row {
	r := row{method: method, n: len(test), msPerInstance: 1e3 * wall.Seconds() / float64(len(test)), ipoptSeconds: math.NaN()}
	var obj, opt float64
	for i, s := range test {
		yi := y.RawRowView(i)
		obj += m.Objective(yi)
		opt += s.Objective
		v := m.Violations(s.X, yi)
		r.maxEq = math.Max(r.maxEq, v.Eq())
		r.maxIneq = math.Max(r.maxIneq, v.Ineq())
		if !(v.Eq() <= 1e-6 && v.Ineq() <= 1e-6) {
			r.infeasible++
		}
	}
	r.gap = 100 * (obj/opt - 1)
	return r
}

// fitRidge sets the weights of tm, a linear network nx → n → ny (n the
// number of samples) that standardises, to the ridge regression of y on x
// in standardised units, fitting the standardisation first, in its dual
// form: W0 = Xsᵀ, W1 = (XsXsᵀ + λI)⁻¹Ys, zero biases, so that ŷs = xs·W0·W1
// with an n×n system (n ≪ nx on big grids) and nx·n + n·ny weights
// instead of nx·ny. λ is
// chosen among λ₀·{1e-4, …, 10} (λ₀ = tr(XsXsᵀ)/n) by the squared error
// on the last fifth of the samples fitted on the rest, then W is refitted
// on all. It returns λ.
func fitRidge(tm *train.Model, x, y *mat.Dense) (float64, error) {
	if err := tm.FitStandardizers(x, y); err != nil {
		return 0, err
	}
	sx, sy := tm.Standardizers()
	n, nx := x.Dims()
	_, ny := y.Dims()
	if n < 5 {
		return 0, fmt.Errorf("%d training samples: ridge's held-out choice of λ needs at least 5", n)
	}
	xs, ys := mat.NewDense(n, nx, nil), mat.NewDense(n, ny, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < nx; j++ {
			xs.Set(i, j, (x.At(i, j)-sx.Mean[j])/sx.Std[j])
		}
		for j := 0; j < ny; j++ {
			ys.Set(i, j, (y.At(i, j)-sy.Mean[j])/sy.Std[j])
		}
	}
	// dual returns A = (XaXaᵀ + λI)⁻¹Ya, so that W = XaᵀA.
	dual := func(xa, ya *mat.Dense, lambda float64) (*mat.Dense, error) {
		m, _ := xa.Dims()
		var k mat.SymDense
		k.SymOuterK(1, xa)
		for i := 0; i < m; i++ {
			k.SetSym(i, i, k.At(i, i)+lambda)
		}
		var ch mat.Cholesky
		if !ch.Factorize(&k) {
			return nil, errors.New("ridge: the Gram matrix is not positive definite")
		}
		var a mat.Dense
		if err := ch.SolveTo(&a, ya); err != nil {
			return nil, err
		}
		return &a, nil
	}
	var k0 float64
	for i := 0; i < n; i++ {
		r := xs.RawRowView(i)
		k0 += mat.Dot(mat.NewVecDense(nx, r), mat.NewVecDense(nx, r))
	}
	k0 /= float64(n)
	nt := n - n/5
	best, bestErr := 0.0, math.Inf(1)
	for _, f := range []float64{1e-4, 1e-3, 1e-2, 1e-1, 1, 10} {
		lambda := f * k0
		xa := xs.Slice(0, nt, 0, nx).(*mat.Dense)
		a, err := dual(xa, ys.Slice(0, nt, 0, ny).(*mat.Dense), lambda)
		if err != nil {
			continue
		}
		var kv, p mat.Dense
		kv.Mul(xs.Slice(nt, n, 0, nx), xa.T())
		p.Mul(&kv, a)
		p.Sub(&p, ys.Slice(nt, n, 0, ny))
		e := mat.Norm(&p, 2)
		if e < bestErr {
			best, bestErr = lambda, e
		}
	}
	if math.IsInf(bestErr, 1) {
		return 0, errors.New("ridge: no λ gave a positive definite system")
	}
	a, err := dual(xs, ys, best)
	if err != nil {
		return 0, err
	}
	// Balance the two factors (W0·s, W1/s with equal RMS entries): Adam
	// moves every weight by about its step size, so a factor of tiny
	// entries would be destroyed by steps the other tolerates.
	var w0 mat.Dense
	w0.CloneFrom(xs.T())
	r0, r1 := rms(w0.RawMatrix().Data), rms(a.RawMatrix().Data)
	if r0 > 0 && r1 > 0 {
		s := math.Sqrt(r1 / r0)
		w0.Scale(s, &w0)
		a.Scale(1/s, a)
	}
	return best, tm.SetWeights([][]float64{w0.RawMatrix().Data, make([]float64, n), a.RawMatrix().Data, make([]float64, ny)})
}

// rms is the root mean square of v.
func rms(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s / float64(max(1, len(v))))
}
