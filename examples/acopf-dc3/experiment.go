package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/dc3"
	"github.com/enforce-nn/enforce/examples/internal/acopfcost"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/train"
)

// dc3Table holds DC3's published ACOPF-57 numbers (Table 2 of the DC3
// paper): objective, max and mean equality violation, max and mean
// inequality violation, seconds per batch of 100 (the optimizer's: per
// instance).
var dc3Table = map[string][6]float64{
	"Optimizer": {3.8118, math.NaN(), math.NaN(), math.NaN(), math.NaN(), 0.949},
	"DC3":       {3.8160, 6.8e-5, math.NaN(), 2.0e-3, math.NaN(), 0.089},
}

// metrics are DC3's evaluation metrics of predictions on the test set:
// the mean objective, the means over samples of the per-sample max and
// mean |power-flow residual| (p.u.) and of the per-sample max and mean
// bound violation max(0, g) (p.u.), the worst sample's max residual and
// max violation, and the time to predict the test batch.
type metrics struct {
	Method string `json:"method"`
	Seed   int    `json:"seed"`
	Epochs int    `json:"epochs"`
	NTrain int    `json:"ntrain"`
	NTest  int    `json:"ntest"`

	Obj       float64 `json:"obj"`
	MaxEq     float64 `json:"max_eq"`
	MeanEq    float64 `json:"mean_eq"`
	MaxIneq   float64 `json:"max_ineq"`
	MeanIneq  float64 `json:"mean_ineq"`
	WorstEq   float64 `json:"worst_eq"`
	WorstIneq float64 `json:"worst_ineq"`
	Secs      float64 `json:"secs_per_batch"`
	TrainSecs float64 `json:"train_secs"`
	// Gap is the mean relative objective gap to the reference optima.
	Gap float64 `json:"gap"`
}

// evaluate computes the metrics of predictions y (rows as acopf.Model's
// y) for inputs x. The power-flow residual is taken over the 2·nb balance
// rows: the reference-angle row is left out, as DC3 fixes the angle
// outside its equalities (and the balances do not change when every
// angle moves by the same amount).
func evaluate(m *acopf.Model, x, y *mat.Dense, refObj []float64) metrics {
	pf, lim := m.PowerFlow(), m.Inequalities()
	_, _, nc := pf.Dims()
	_, _, ng := lim.Dims()
	nb := len(m.Case.Buses)
	c, g := make([]float64, nc), make([]float64, ng)
	n, _ := x.Dims()
	var r metrics
	for i := range n {
		xi, yi := x.RawRowView(i), y.RawRowView(i)
		pf.Eval(xi, yi, c, nil)
		lim.Eval(xi, yi, g, nil)
		var mx, sm float64
		for _, v := range c[:2*nb] {
			mx, sm = math.Max(mx, math.Abs(v)), sm+math.Abs(v)
		}
		r.MaxEq += mx / float64(n)
		r.MeanEq += sm / float64(2*nb) / float64(n)
		r.WorstEq = math.Max(r.WorstEq, mx)
		mx, sm = 0, 0
		for _, v := range g {
			v = math.Max(v, 0)
			mx, sm = math.Max(mx, v), sm+v
		}
		r.MaxIneq += mx / float64(n)
		r.MeanIneq += sm / float64(ng) / float64(n)
		r.WorstIneq = math.Max(r.WorstIneq, mx)
		f := m.Objective(yi) / objScale
		r.Obj += f / float64(n)
		r.Gap += (f - refObj[i]) / refObj[i] / float64(n)
	}
	return r
}

// objective returns DC3's scaled generation cost as a train.Objective:
// f(y) = Σ_j (a2_j·Pg_j² + a1_j·Pg_j + a0_j)/10⁴ with the costs in p.u.
func objective(m *acopf.Model) (train.Objective, error) {
	return acopfcost.Objective(m, objScale)
}

// softConstraint is DC3's soft penalty as one constraint without latent
// variables: its values are the power-flow balance c(x, y) followed by the
// bound violations max(0, g(x, y)), so that ‖·‖² is DC3's
// ‖eq‖² + ‖max(0, g)‖².
type softConstraint struct {
	pf, lim        enforce.Constraint
	nx, ny, nc, ng int
}

func newSoftConstraint(m *acopf.Model) *softConstraint {
	nx, ny, nc := m.PowerFlow().Dims()
	_, _, ng := m.Inequalities().Dims()
	return &softConstraint{pf: m.PowerFlow(), lim: m.Inequalities(), nx: nx, ny: ny, nc: nc, ng: ng}
}

func (s *softConstraint) Dims() (nx, ny, nc int) { return s.nx, s.ny, s.nc + s.ng }

func (s *softConstraint) Eval(x, y, c, jy []float64) {
	var jc, jg []float64
	if jy != nil {
		jc, jg = jy[:s.nc*s.ny], jy[s.nc*s.ny:]
	}
	s.pf.Eval(x, y, c[:s.nc], jc)
	g := c[s.nc:]
	s.lim.Eval(x, y, g, jg)
	for i, v := range g {
		if v < 0 {
			g[i] = 0
			if jg != nil {
				clear(jg[i*s.ny : (i+1)*s.ny])
			}
		}
	}
}

// prior returns the output scaling of the networks: DC3's networks map
// their outputs into the bounds with a sigmoid, centred in the box; here a
// network's zero output is the middle of each bound interval (Va: 0) and
// a unit output half its width (Va: vaScale rad).
func prior(m *acopf.Model, vaScale float64) *layers.Standardizer {
	c := m.Case
	nb, ng := len(c.Buses), len(c.Gens)
	s := &layers.Standardizer{Mean: make([]float64, 2*nb+2*ng), Std: make([]float64, 2*nb+2*ng)}
	set := func(k int, lo, hi float64) {
		s.Mean[k], s.Std[k] = (lo+hi)/2, math.Max((hi-lo)/2, 1e-3)
	}
	for i, b := range c.Buses {
		set(i, b.Vmin, b.Vmax)
		s.Std[nb+i] = vaScale
	}
	for j, gen := range c.Gens {
		set(2*nb+j, gen.Pmin, gen.Pmax)
		set(2*nb+ng+j, gen.Qmin, gen.Qmax)
	}
	return s
}

func rows(v [][]float64) *mat.Dense {
	d := mat.NewDense(len(v), len(v[0]), nil)
	for i, r := range v {
		d.SetRow(i, r)
	}
	return d
}

// experiment trains the methods of -methods for -seeds seeds each and
// prints DC3's table.
func experiment(o options, m *acopf.Model, d *dataset, stdout, progress io.Writer) error {
	nTr, nVa := split(len(d.X))
	nTe := len(d.X) - nTr - nVa
	if o.ntrain > 0 {
		nTr = min(nTr, o.ntrain)
	}
	if o.ntest > 0 {
		nTe = min(nTe, o.ntest)
	}
	xTrain, xTest := rows(d.X[:nTr]), rows(d.X[len(d.X)-nTe:])
	refObj := d.Obj[len(d.X)-nTe:]
	enf, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbEps})
	if err != nil {
		return err
	}
	if o.pfOnly {
		// ENFORCE projects onto the power flow only; the limits are
		// measured, not enforced.
		enf = m.PowerFlow()
	}
	refineEps, err := parseEpsList(o.refineFBEps)
	if err != nil {
		return err
	}
	if o.inferMaxDepth < 0 {
		return fmt.Errorf("-infer-maxdepth %d: want a number of steps, or 0", o.inferMaxDepth)
	}
	if o.refineAll && o.restarts == 0 && len(refineEps) == 0 && o.interior == 0 {
		return errors.New("-refine-all: without -restarts, -refine-fbeps or -interior there is nothing to refine with")
	}
	if o.interior < 0 {
		return fmt.Errorf("-interior %d: want a number of steps, or 0 for none", o.interior)
	}
	if o.pfOnly && len(refineEps) > 0 {
		return fmt.Errorf("-refine-fbeps %q with -pf-only: the power flow alone has no smoothing to refine", o.refineFBEps)
	}
	grad, err := harness.ParseGrad(o.grad)
	if err != nil {
		return err
	}
	soft := newSoftConstraint(m)
	_, ny := m.Dims()
	nx := xTrain.RawMatrix().Cols
	xs, err := layers.FitStandardizer(xTrain)
	if err != nil {
		return err
	}
	// DC3's ACOPF correction (default_args.py, method_default_args).
	corr := dc3.Correction{Ineq: m.Inequalities(), LearnRate: dc3.ACOPFCorrLearnRate, Momentum: dc3.ACOPFCorrMomentum,
		Steps: dc3.ACOPFCorrSteps, Eps: dc3.ACOPFCorrEps}
	if o.corr != "train+test" && o.corr != "test" && o.corr != "none" {
		return fmt.Errorf("-corr %q: train+test, test or none", o.corr)
	}
	switch o.corrGrad {
	case "identity":
	case "exact":
		if o.corr != "train+test" {
			return fmt.Errorf("-corr-grad exact: the gradient of the training-time correction, which -corr %s does not take", o.corr)
		}
		corr.ExactGradient = true
	default:
		return fmt.Errorf("-corr-grad %q: identity or exact", o.corrGrad)
	}
	if o.supervised && strings.Contains(o.methods, "DC3") {
		return errors.New("-supervised: DC3's methods train on the objective only")
	}
	var all []metrics
	for _, name := range strings.Split(o.methods, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue // -methods "" with -runs: the table of earlier runs only
		}
		cfg := train.Config{
			Sizes: []int{nx, o.width, o.width, ny}, Hidden: layers.ReLU, PyTorchInit: true,
			Standardize: true, LearnRate: o.lr, BatchSize: o.batch, Epochs: o.epochs,
			LogEvery: max(1, o.epochs/5),
		}
		if o.cosine {
			// Cosine decay of the rate over the run, to 1 % of -lr.
			cfg.Schedule = train.CosineDecay(o.epochs, 0.01)
		}
		cfg.ClipNorm = o.clipNorm
		switch name {
		case "MLP":
			cfg.Mode, cfg.Constraint = train.MLP, enf
		case "Soft":
			// DC3's soft loss: 100·(0.5‖eq‖² + 0.5‖max(0, g)‖²).
			cfg.Mode, cfg.Constraint, cfg.PenaltyConstraint, cfg.LambdaC = train.Soft, enf, soft, 50
		case "ENFORCE", "ENFORCE+DC3":
			cfg.Mode, cfg.Constraint = train.ENFORCE, enf
			if name == "ENFORCE+DC3" {
				// ENFORCE on DC3's backbone: the completed point already
				// satisfies the power flow; AdaNP adds the limits.
				cfg.Sizes, cfg.Hidden, cfg.PyTorchInit, cfg.Standardize = nil, 0, false, false
			}
			if o.weights != "" {
				cfg.Train, cfg.Infer, err = harness.AdaNPSettings(o.weights)
				if err != nil {
					return err
				}
			}
			if err := setPath(&cfg.Train, o.path); err != nil {
				return err
			}
			cfg.Train.Grad = grad
			if err := setPath(&cfg.Infer, o.path); err != nil {
				return err
			}
		case nnsolverMethod:
			// DC3's own model (dc3.NewACOPF): not a train.Config.
		case "DC3":
			// DC3's completion with DC3's soft loss on the completed
			// (and, with -corr train+test, corrected) point,
			// 10·(0.5‖eq‖² + 0.5‖max(0, g)‖²).
			cfg.Mode, cfg.Constraint, cfg.PenaltyConstraint, cfg.LambdaC = train.Soft, enf, soft, 5
			cfg.Sizes, cfg.Hidden, cfg.PyTorchInit, cfg.Standardize = nil, 0, false, false
		default:
			return fmt.Errorf("-methods: unknown method %q (MLP, Soft, ENFORCE, DC3, DC3-NNSolver, ENFORCE+DC3)", name)
		}
		for s := o.firstSeed; s < o.seeds; s++ {
			if name == nnsolverMethod {
				met, err := runNNSolver(m, o, s, xTrain, xTest, refObj, corr, progress)
				if err != nil {
					return err
				}
				all = append(all, met)
				if o.runs != "" {
					if err := appendRun(o.runs, met); err != nil {
						return err
					}
				}
				continue
			}
			cfg.Seed = uint64(s + 1)
			cfg.Progress = prefixed{progress, fmt.Sprintf("[%s seed %d] ", name, s+1)}
			var comp *dc3.ACOPFCompletion
			if name == "DC3" || name == "ENFORCE+DC3" {
				var trainCorr *dc3.Correction
				if name == "DC3" && o.corr == "train+test" {
					trainCorr = &corr
				}
				if cfg.Backbone, comp, err = newDC3Backbone(m, o.width, cfg.Seed, trainCorr); err != nil {
					return err
				}
			}
			testCorr := name == "DC3" && o.corr != "none"
			corrSteps, restarted := 0, 0
			tm, resumed, err := newModel(cfg, o, name)
			if err != nil {
				return err
			}
			refines := (o.restarts > 0 || len(refineEps) > 0 || o.interior > 0) && (name == "ENFORCE" || name == "ENFORCE+DC3")
			var stages []*enforce.AdaNP
			var in *enforce.Interior // -interior
			var first *enforce.AdaNP // -infer-maxdepth's first projection
			if cfg.Standardize && !resumed && !o.supervised {
				if err := tm.SetStandardizers(xs, prior(m, o.vaScale)); err != nil {
					return err
				}
			}
			if o.supervised {
				// Regression on the reference optima (train.Fit fits the
				// standardisation of x and y on the training set).
				_, err = tm.Fit(xTrain, rows(d.Y[:nTr]))
			} else {
				var obj train.Objective
				if obj, err = objective(m); err == nil {
					_, err = tm.FitUnsupervised(xTrain, obj)
				}
			}
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", name, s+1, err)
			}
			trainSecs := tm.TrainingTime().Seconds() // resumed runs included
			if o.predictions != "" {
				if err := writePredictions(o, name, s+1, tm, xTest); err != nil {
					return err
				}
			}
			if refines {
				if stages, err = refineStages(m, tm.InferAdaNP(), o.restarts, refineEps); err != nil {
					return err
				}
				if in, err = newInterior(m, tm.InferAdaNP().Settings(), o.interior); err != nil {
					return err
				}
			}
			if (o.inferMaxDepth > 0 || o.inferLineSearch) && (name == "ENFORCE" || name == "ENFORCE+DC3") {
				s := tm.InferAdaNP().Settings()
				if o.inferMaxDepth > 0 {
					s.MaxDepth = o.inferMaxDepth
				}
				s.LineSearch = s.LineSearch || o.inferLineSearch
				if first, err = enforce.NewAdaNP(enf, s); err != nil {
					return err
				}
			}
			var y *mat.Dense
			var st enforce.Stats
			dur, err := report.MedianTime(3, func() (err error) {
				if y, st, err = predict(tm, first, xTest); err != nil {
					return err
				}
				if refines {
					restarted, err = refine(xTest, y, &st, stages, in, o.refineAll, o.refineAll || o.pfOnly)
					if err != nil {
						return err
					}
				}
				if !testCorr {
					return nil
				}
				corrSteps, err = comp.Correct(xTest, y, corr) // DC3's test-time correction
				return err
			})
			if err != nil {
				return err
			}
			if testCorr {
				fmt.Fprintf(progress, "[%s seed %d] test-time correction: %d steps\n", name, s+1, corrSteps)
			}
			if refines {
				fmt.Fprintf(progress, "[%s seed %d] restarts and refinement: %d projections of unconverged samples, %d still not converged\n", name, s+1, restarted, st.NotConverged)
			}
			met := evaluate(m, xTest, y, refObj)
			met.Secs = dur.Seconds()
			fmt.Fprintf(progress, "[%s seed %d] trained in %.0f s; test: obj %.4f, max eq %.1e, max ineq %.1e, %.1f ms per batch of %d (depth %v, not converged %d)\n",
				name, s+1, trainSecs, met.Obj, met.MaxEq, met.MaxIneq, 1e3*met.Secs, xTest.RawMatrix().Rows, st.Depth, st.NotConverged)
			met.Method, met.Seed, met.Epochs, met.NTrain, met.NTest, met.TrainSecs = name, s+1, o.epochs, nTr, nTe, trainSecs
			if name == "DC3" {
				met.Method = dc3Label(name, o.corr, corr.ExactGradient)
			}
			if o.supervised {
				met.Method += ", supervised"
			}
			if first != nil && o.inferLineSearch {
				met.Method += ", first projection line-searched"
			}
			if first != nil && o.inferMaxDepth > 0 {
				met.Method += fmt.Sprintf(", first projection at most %d steps", o.inferMaxDepth)
			}
			if refines && o.restarts > 0 {
				met.Method += fmt.Sprintf(", %d restarts", o.restarts)
			}
			if refines && o.refineAll {
				met.Method += ", every sample"
			}
			if refines && len(refineEps) > 0 {
				met.Method += ", refined with ε_FB " + strings.Join(strings.Fields(strings.ReplaceAll(o.refineFBEps, ",", " ")), ", ")
			}
			if in != nil {
				met.Method += fmt.Sprintf(", then Interior (%d steps)", o.interior)
			}
			if o.pfOnly {
				met.Method += ", power flow only"
			}
			if o.fbEps > 0 && name != "DC3" {
				// Runs with another smoothing are another row of the table.
				met.Method = fmt.Sprintf("%s, ε_FB %g", met.Method, o.fbEps)
			}
			if o.clipNorm > 0 {
				met.Method += fmt.Sprintf(", gradients clipped to norm %g", o.clipNorm)
			}
			if o.cosine {
				met.Method += ", cosine-decayed rate"
			}
			if grad != enforce.Unrolled && (name == "ENFORCE" || name == "ENFORCE+DC3") {
				met.Method += ", " + grad.String() + " gradient"
			}
			runs := []metrics{met}
			if name == "Soft" && o.softProject {
				// The Soft network's predictions projected by AdaNP at
				// inference only (the network is not trained with it).
				_, inf, err := harness.AdaNPSettings(harness.WeightsAuto)
				if err != nil {
					return err
				}
				a, err := enforce.NewAdaNP(enf, inf)
				if err != nil {
					return err
				}
				var yp *mat.Dense
				var pst enforce.Stats
				dur, err := report.MedianTime(3, func() (err error) {
					if y, _, err = tm.Predict(xTest); err != nil {
						return err
					}
					yp, pst, err = a.Project(xTest, y)
					return err
				})
				if err != nil {
					return err
				}
				pm := evaluate(m, xTest, yp, refObj)
				pm.Secs = dur.Seconds()
				pm.Method, pm.Seed, pm.Epochs, pm.NTrain, pm.NTest, pm.TrainSecs = "Soft + AdaNP at inference", s+1, o.epochs, nTr, nTe, trainSecs
				fmt.Fprintf(progress, "[%s seed %d] + AdaNP: obj %.4f, max eq %.1e, max ineq %.1e, %.1f ms (depth %v, not converged %d)\n",
					name, s+1, pm.Obj, pm.MaxEq, pm.MaxIneq, 1e3*pm.Secs, pst.Depth, pst.NotConverged)
				runs = append(runs, pm)
			}
			all = append(all, runs...)
			for _, r := range runs {
				if o.runs == "" {
					break
				}
				if err := appendRun(o.runs, r); err != nil {
					return err
				}
			}
		}
	}
	if o.runs != "" {
		var err error
		if all, err = readRuns(o.runs); err != nil {
			return err
		}
	}
	type row struct {
		name string
		runs []metrics
	}
	var table []row
	for _, r := range all {
		name := fmt.Sprintf("%s, %d epochs, %d training samples", r.Method, r.Epochs, r.NTrain)
		k := slices.IndexFunc(table, func(t row) bool { return t.name == name })
		if k < 0 {
			table, k = append(table, row{name: name}), len(table)
		}
		table[k].runs = append(table[k].runs, r)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "| method | objective | gap to optimum | max eq. | mean eq. | max ineq. | mean ineq. | worst eq. | worst ineq. | time (s) per batch of %d |\n", xTest.RawMatrix().Rows)
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range []string{"Optimizer", "DC3"} {
		p := dc3Table[k]
		fmt.Fprintf(&sb, "| %s (DC3 paper) | %.4f | | %s | %s | %s | %s | | | %.3f%s |\n", k, p[0], sci(p[1]), sci(p[2]), sci(p[3]), sci(p[4]), p[5], map[bool]string{true: " per instance"}[k == "Optimizer"])
	}
	fmt.Fprintf(&sb, "| Optimizer (%s, here) | %.4f | 0 | %.1e | | | | | | %.3f per instance |\n", d.Solver, mean(refObj), refMaxEq(m, xTest, d.Y[len(d.X)-nTe:]), mean(d.Secs[len(d.X)-nTe:]))
	for _, r := range table {
		col := func(f func(metrics) float64, format string) string {
			v := make([]float64, len(r.runs))
			for i, mt := range r.runs {
				v[i] = f(mt)
			}
			mu, sd := meanStd(v)
			if len(v) == 1 {
				return fmt.Sprintf(format, mu)
			}
			return fmt.Sprintf(format+" ± "+format, mu, sd)
		}
		fmt.Fprintf(&sb, "| %s (%d seeds) | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name, len(r.runs),
			col(func(m metrics) float64 { return m.Obj }, "%.4f"),
			col(func(m metrics) float64 { return 100 * m.Gap }, "%.2f %%"),
			col(func(m metrics) float64 { return m.MaxEq }, "%.1e"),
			col(func(m metrics) float64 { return m.MeanEq }, "%.1e"),
			col(func(m metrics) float64 { return m.MaxIneq }, "%.1e"),
			col(func(m metrics) float64 { return m.MeanIneq }, "%.1e"),
			col(func(m metrics) float64 { return m.WorstEq }, "%.1e"),
			col(func(m metrics) float64 { return m.WorstIneq }, "%.1e"),
			col(func(m metrics) float64 { return m.Secs }, "%.4f"))
	}
	fmt.Fprint(stdout, "\n"+sb.String())
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(o.out, "acopf-dc3.md"), []byte(sb.String()), 0o644)
	}
	return nil
}

// setPath sets s.Path from -path: auto (s's own), dense or sparse.
func setPath(s *enforce.Settings, path string) error {
	switch path {
	case "auto":
	case "dense":
		s.Path = enforce.PathDense
	case "sparse":
		s.Path = enforce.PathSparse
	default:
		return fmt.Errorf("-path %q: auto, dense or sparse", path)
	}
	return nil
}

// predict is tm.Predict, or with first the backbone's prediction
// projected by first (the same projection with other settings).
func predict(tm *train.Model, first *enforce.AdaNP, x *mat.Dense) (*mat.Dense, enforce.Stats, error) {
	if first == nil {
		return tm.Predict(x)
	}
	yhat, err := tm.Backbone(x)
	if err != nil {
		return nil, enforce.Stats{}, err
	}
	return first.Project(x, yhat)
}

// parseEpsList parses -refine-fbeps: positive finite smoothing values.
func parseEpsList(list string) ([]float64, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var eps []float64
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("-refine-fbeps %q: want positive finite ε_FB values, comma-separated", list)
		}
		eps = append(eps, v)
	}
	return eps, nil
}

// refineStages returns the stages -restarts and -refine-fbeps add after
// the projection a: a itself k times, then AdaNP with a's settings onto
// the power flow and the limits smoothed with each ε of eps in turn.
func refineStages(m *acopf.Model, a *enforce.AdaNP, k int, eps []float64) ([]*enforce.AdaNP, error) {
	var stages []*enforce.AdaNP
	for range k {
		stages = append(stages, a)
	}
	for _, e := range eps {
		c, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: e})
		if err != nil {
			return nil, err
		}
		s, err := enforce.NewAdaNP(c, a.Settings())
		if err != nil {
			return nil, err
		}
		stages = append(stages, s)
	}
	return stages, nil
}

// newInterior returns -interior's projection onto the power flow within
// the limits, with the path, precision and tolerance of s and at most
// steps steps, or nil for steps 0.
func newInterior(m *acopf.Model, s enforce.Settings, steps int) (*enforce.Interior, error) {
	if steps == 0 {
		return nil, nil
	}
	return enforce.NewInterior(m.PowerFlow(), m.Box(), 0, enforce.Settings{
		Tol: s.Tol, Measure: s.Measure, MaxDepth: steps, Path: s.Path, Precision: s.Precision})
}

// refine projects the samples of y that st.Missed lists again with the
// stages (enforce.Refine), then those still above the tolerance with in
// (if not nil), updates y and st's NotConverged and Missed in place, and
// returns the number of projections of single samples it made. With all,
// every sample goes through the stages, and with inAll through in, not
// only the missed (-pf-only: the first projection's misses say nothing of
// the limits).
func refine(x, y *mat.Dense, st *enforce.Stats, stages []*enforce.AdaNP, in *enforce.Interior, all, inAll bool) (int, error) {
	rows := st.Missed
	if all {
		rows = allRows(x.RawMatrix().Rows)
	}
	n := 0
	if len(stages) > 0 && len(rows) > 0 {
		rs, err := enforce.Refine(x, y, rows, stages...)
		if err != nil {
			return 0, err
		}
		for _, s := range rs.Stages {
			n += s.Samples
		}
		st.Missed, st.NotConverged = rs.Missed, len(rs.Missed)
		if !all {
			rows = rs.Missed
		}
	}
	if inAll {
		rows = allRows(x.RawMatrix().Rows)
	}
	if in != nil && len(rows) > 0 {
		ist, err := in.RefineRows(x, y, rows)
		if err != nil {
			return n, err
		}
		n += ist.Samples
		st.Missed, st.NotConverged = ist.Missed, ist.NotConverged
	}
	return n, nil
}

// allRows returns 0, 1, …, n−1: every row of a batch of n.
func allRows(n int) []int {
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	return rows
}

// newModel returns a new model for cfg, or, with -checkpoint, the one
// whose interrupted training run has its checkpoint in the method's and
// seed's subfolder (resumed true), which then goes on checkpointing there.
func newModel(cfg train.Config, o options, method string) (tm *train.Model, resumed bool, err error) {
	if o.checkpoint == "" {
		tm, err = train.New(cfg)
		return tm, false, err
	}
	variant := fmt.Sprintf("fbeps%g", o.fbEps)
	if method == "DC3" {
		variant = "corr-" + strings.ReplaceAll(o.corr, "+", "-")
		if o.corrGrad == "exact" {
			variant += "-exact"
		}
	}
	if o.supervised {
		variant += "-supervised"
	}
	if o.pfOnly {
		variant += "-pfonly"
	}
	if o.cosine {
		variant += "-cosine"
	}
	if o.clipNorm > 0 {
		variant += fmt.Sprintf("-clip%g", o.clipNorm)
	}
	if g := cfg.Train.Grad; g != enforce.Unrolled {
		variant += "-grad-" + g.String() // set for the ENFORCE methods only
	}
	dir := filepath.Join(o.checkpoint, fmt.Sprintf("%s-%s-%s-seed%d", dataName(o.caseName), strings.ReplaceAll(method, "+", "-"), variant, cfg.Seed))
	cfg.Checkpoint = train.Checkpoint{Dir: dir}
	tm, err = train.Resume(dir, cfg)
	if errors.Is(err, fs.ErrNotExist) {
		tm, err = train.New(cfg)
		return tm, false, err
	}
	return tm, err == nil, err
}

// appendRun appends a run's metrics to the JSON-lines file name.
func appendRun(name string, m metrics) error {
	js, err := json.Marshal(m)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(js, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readRuns reads the runs appendRun wrote.
func readRuns(name string) ([]metrics, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []metrics
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m metrics
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", name, i+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// refMaxEq is the mean over samples of the reference optima's max
// |power-flow residual|.
func refMaxEq(m *acopf.Model, x *mat.Dense, ys [][]float64) float64 {
	return evaluate(m, x, rows(ys), make([]float64, len(ys))).MaxEq
}

// sci formats v as %.1e, NaN (not reported) as "".
func sci(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return fmt.Sprintf("%.1e", v)
}

func meanStd(v []float64) (mu, sd float64) {
	mu = mean(v)
	for _, x := range v {
		sd += (x - mu) * (x - mu)
	}
	if len(v) > 1 {
		sd = math.Sqrt(sd / float64(len(v)-1))
	}
	return mu, sd
}

// prefixed writes each line with a prefix.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	s := strings.TrimSuffix(string(b), "\n")
	s = p.prefix + strings.ReplaceAll(s, "\n", "\n"+p.prefix) + "\n"
	if _, err := io.WriteString(p.w, s); err != nil {
		return 0, err
	}
	return len(b), nil
}

// writePredictions writes the test inputs and the network's predictions ŷ
// (the backbone's output, before any projection) of seed seed of method
// to -predictions/CASE-METHOD-seedSEED.csv, one sample per row (x, then
// ŷ), for examples/acopf -points.
func writePredictions(o options, method string, seed int, tm *train.Model, x *mat.Dense) error {
	yhat, err := tm.Backbone(x)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.predictions, 0o755); err != nil {
		return err
	}
	name := filepath.Join(o.predictions, fmt.Sprintf("%s-%s-seed%d.csv", dataName(o.caseName), strings.ReplaceAll(method, "+", "-"), seed))
	var b strings.Builder
	n, _ := x.Dims()
	for i := range n {
		for j, v := range append(append([]float64(nil), x.RawRowView(i)...), yhat.RawRowView(i)...) {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(name, []byte(b.String()), 0o644)
}
