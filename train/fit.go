package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
)

// Epoch summarises one pass over the training data. Every field except
// Epoch is a mean over the epoch's batches weighted by their sizes,
// measured on each batch before its optimisation step.
type Epoch struct {
	// Epoch counts the passes made by this Fit call, from 1.
	Epoch int
	// Loss is the training loss ℓ and Task its task term ℓ_T (the squared
	// error (1/N)Σ‖y − ỹ‖² for Fit, in standardised units when the model
	// standardises; the mean objective for FitUnsupervised).
	Loss, Task float64
	// Displacement is (1/N)Σ‖ŷ − ỹ‖², in the units of Task (zero outside
	// ENFORCE mode). In ENFORCE mode Loss = Task + λ_D·Displacement +
	// λ_C·Residual.
	Displacement float64
	// Residual is (1/N)Σ‖c(x, y)‖₂ of the output the task loss sees (ỹ in
	// ENFORCE mode, ŷ otherwise), in original units, with latent variables
	// at zero (the loss's λ_C term).
	Residual float64
	// MaxResidual is the largest |c_k(x, y)| of that output over the
	// epoch's training samples, in original units. For a constraint with
	// latent variables it is the largest entry of enforce.CheckResidual
	// instead: for a WithInequalities system, the largest violation of the
	// equalities and of the inequalities (max(g, 0)), which is what a
	// caller can check on y, where Residual (the loss's term) evaluates
	// the Fischer–Burmeister rows with zero multipliers (√(g² + ε) + g,
	// about √ε at an active inequality that holds).
	MaxResidual float64
	// Missed is the number of the epoch's training samples whose
	// projection missed the training tolerance (Config.Train's Tol in its
	// Measure): those enforce.Stats.NotConverged counts in the batches
	// AdaNP projected (zero outside ENFORCE mode). When more than half the
	// samples projected in an epoch miss it, Fit writes a warning to
	// Config.Progress (unless Quiet), once per call: the projection is not
	// converging, often because the outputs differ in scale by orders of
	// magnitude (see Config.Standardize).
	Missed int
	// Depth is the mean number of NP steps per sample over the batches
	// AdaNP projected (zero if none was).
	Depth float64
	// Projected is the fraction of batches AdaNP projected: below 1 when
	// the activation rule skipped some, zero outside ENFORCE mode.
	Projected float64
	// ValLoss is the validation loss after the epoch's last step (see
	// Model.SetValidation); zero without a validation set.
	ValLoss float64
	// LearnRate is Adam's step size in the epoch (Config.LearnRate times
	// Config.Schedule's factor).
	LearnRate float64
}

// History is the per-epoch record of a Fit call.
type History []Epoch

// Last returns the last epoch, or the zero Epoch for an empty History.
func (h History) Last() Epoch {
	if len(h) == 0 {
		return Epoch{}
	}
	return h[len(h)-1]
}

// Fit trains the model by supervised regression on inputs x (n×nx) and
// labels y (n×ny), both in original units, for Config.Epochs epochs of
// mini-batches drawn in a shuffled order, with one Adam step per batch.
// On the first call of a model that standardises, it fits the
// standardisation on x and y (only that of y if FitUnsupervised or
// SetStandardizers already set that of x). Later calls continue training from the
// current weights and optimiser state.
//
// It returns the history of the epochs run and an error for invalid data,
// or when a batch fails, naming the epoch: when AdaNP meets a non-finite
// prediction, or the loss, a gradient or an updated weight is not finite
// (training diverged). The weights then hold the values reached before
// the failing batch, which are always finite: Fit never leaves NaN or
// infinite weights. It also stops with an error once the loss has risen
// by orders of magnitude (Config.DivergenceFactor): the weights are then
// those at the end of that epoch, and the History ends with it.
//
// Each epoch's step size is Config.LearnRate times Config.Schedule's
// factor, when set. With a validation set (SetValidation) every epoch
// records its validation loss, and Config.Patience stops Fit early and
// leaves the best epoch's weights. History.WriteCSV writes the History.
//
// With Config.Checkpoint set, Fit writes checkpoints as it trains (see
// Checkpoint). On a model returned by Resume, the first Fit call
// completes the interrupted call instead: it needs the same x and y,
// trains the remaining batches and returns the call's whole History.
func (m *Model) Fit(x, y *mat.Dense) (History, error) {
	if m == nil {
		return nil, errNilModel
	}
	if err := m.checkData(x, y, true); err != nil {
		return nil, err
	}
	if m.cfg.Standardize && m.sy == nil {
		sx := m.sx
		if err := m.FitStandardizers(x, y); err != nil {
			return nil, err
		}
		if sx != nil {
			// Trained before without labels: keep the input scaling the
			// weights were trained with.
			if err := m.setStandardization(sx, m.sy); err != nil {
				return nil, err
			}
		}
	}
	return m.fit(kindFit, x, y, nil)
}

// FitUnsupervised trains the model to solve a parametric optimisation
// problem: for each input x_i the network predicts a solution y_i, and
// the task loss is the mean objective (1/N)Σ f(x_i, ỹ_i) built by
// objective (see Objective and losses.Objective). In ENFORCE mode the
// loss adds λ_D·(1/N)Σ‖ŷ−ỹ‖² and λ_C·(1/N)Σ‖c(x, ỹ)‖, and the activation
// rule compares mean f + λ_C·mean‖c‖ before and after one NP step, as in
// the paper. A model that standardises fits only the input
// standardisation here (there are no labels); an output standardisation
// set before, by Fit or SetStandardizers, keeps scaling the network's
// output, and the objective is always evaluated in original units.
// Otherwise it behaves as Fit, checkpoints and Resume included.
func (m *Model) FitUnsupervised(x *mat.Dense, objective Objective) (History, error) {
	if m == nil {
		return nil, errNilModel
	}
	if objective == nil {
		return nil, errors.New("train: nil objective")
	}
	if err := m.checkData(x, nil, false); err != nil {
		return nil, err
	}
	if m.cfg.Standardize && m.sx == nil {
		if err := m.FitStandardizers(x, nil); err != nil {
			return nil, err
		}
	}
	return m.fit(kindUnsupervised, x, nil, objective)
}

// runner is a graph with its machine.
type runner struct {
	g  *Graph
	vm gorgonia.VM
}

// fit trains on newGraph's graphs for objective (nil: the supervised
// task loss against y), the warm-up's (Config.Warmup) for the first Warmup
// epochs of the call. Fit and FitUnsupervised have set the Standardizers
// that NewGraph and NewObjectiveGraph require.
func (m *Model) fit(kind string, x, y *mat.Dense, objective Objective) (History, error) {
	n, _ := x.Dims()
	bs := m.cfg.BatchSize
	if bs == 0 || bs > n {
		bs = n
	}
	batches := (n + bs - 1) / bs
	run, err := m.startRun(kind, x, y, batches)
	if err != nil {
		return nil, err
	}
	hist := run.History
	if run.Epochs == m.cfg.Epochs || run.Stopped {
		return hist, nil // resumed after the end of the call
	}
	start := m.now()
	defer func() { m.trained += m.now().Sub(start) }()
	ck := m.newCheckpointer(run, start)
	type graphKey struct {
		size int
		warm bool
	}
	runners := map[graphKey]*runner{}
	defer func() {
		for _, r := range runners {
			r.vm.Close()
		}
	}()
	get := func(size int, warm bool) (*runner, error) {
		k := graphKey{size, warm}
		if r, ok := runners[k]; ok {
			return r, nil
		}
		g, err := m.newGraph(size, objective, warm)
		if err != nil {
			return nil, err
		}
		r := &runner{g: g, vm: gorgonia.NewTapeMachine(g.G, gorgonia.BindDualValues(g.Learnables...))}
		runners[k] = r
		return r, nil
	}
	var w io.Writer
	if !m.cfg.Quiet {
		w = m.cfg.Progress
		if w == nil {
			w = os.Stderr
		}
	}
	// Early stopping (Config.Patience) on the validation set, continuing
	// the count of the call a checkpoint recorded.
	validate := kind == kindFit && m.valX != nil
	stopping := validate && m.cfg.Patience > 0
	early := earlyState{BestVal: math.Inf(1)}
	if stopping && run.Early != nil {
		early = *run.Early
	}
	// ref is ℓ₀ of the divergence rule (Config.DivergenceFactor): the
	// mean loss of the call's first batch, taken afresh when the warm-up
	// (Config.Warmup), whose loss has fewer terms, ends. A checkpoint
	// records it, so that a call resumed in the middle of the epoch that
	// took it keeps it; older checkpoints lack it, and it is then found
	// from the History or, failing that, taken as the mean loss of the
	// epoch in progress when it ends.
	ref, haveRef := 0.0, false
	if k := len(hist); run.Ref != nil {
		ref, haveRef = *run.Ref, true
	} else {
		switch w := m.cfg.Warmup; {
		case w > 0 && k > w: // past the warm-up's end
			ref, haveRef = hist[w].Loss, true
		case k == 0, w > 0 && k == w && run.Batch > 0: // in the epoch that takes it
		default:
			ref, haveRef = hist[0].Loss, true
		}
	}
	// after writes a checkpoint, if the model writes them and one is due
	// (or final, stopped being the end of an early-stopped call), and runs
	// the test hook.
	after := func(final, stopped bool, epochs, batch int, rng []byte, acc *accumulator) error {
		if ck != nil && (final || ck.due()) {
			if rng == nil {
				var err error
				if rng, err = m.pcg.MarshalBinary(); err != nil {
					return err
				}
			}
			var es *earlyState
			if stopping && early.Best != nil {
				es = &early
			}
			var r *float64
			if haveRef {
				r = &ref
			}
			if err := ck.write(epochs, batch, rng, acc, hist, es, stopped, r); err != nil {
				return fmt.Errorf("train: %w", err)
			}
		}
		if m.afterBatch != nil {
			return m.afterBatch()
		}
		return nil
	}

	warned := false // the warning of Epoch.Missed, once per call
	hist = slices.Grow(hist, m.cfg.Epochs-len(hist))
	first, acc := run.Batch, run.Acc.accumulator()
	for e := run.Epochs + 1; e <= m.cfg.Epochs; e++ {
		warm := e <= m.cfg.Warmup
		if e == m.cfg.Warmup+1 && m.cfg.Warmup > 0 && first == 0 {
			haveRef = false
		}
		eta, err := m.rateAt(e, hist)
		if err != nil {
			return hist, err
		}
		m.solver.Eta = eta
		var epochRNG []byte // the shuffling stream before this epoch's order
		if ck != nil {
			if epochRNG, err = m.pcg.MarshalBinary(); err != nil {
				return hist, err
			}
		}
		perm := m.rng.Perm(n)
		for b := first; b < batches; b++ {
			idx := perm[b*bs : min((b+1)*bs, n)]
			r, err := get(len(idx), warm)
			if err != nil {
				return hist, err
			}
			r.g.setRows(x, y, idx)
			fresh := !haveRef && acc.rows == 0
			if err := m.step(r, &acc); err != nil {
				return hist, fmt.Errorf("train: epoch %d: %w", e, err)
			}
			if fresh {
				ref, haveRef = acc.loss/acc.rows, true
			}
			if b+1 < batches {
				if err := after(false, false, e-1, b+1, epochRNG, &acc); err != nil {
					return hist, err
				}
			}
		}
		ep := acc.epoch(e)
		ep.LearnRate = eta
		if w != nil && !warned && 2*ep.Missed > int(acc.depthRows) {
			warned = true
			m.warnMissed(w, ep, int(acc.depthRows))
		}
		if validate {
			if ep.ValLoss, err = m.valLoss(); err != nil {
				return hist, fmt.Errorf("train: epoch %d: %w", e, err)
			}
		}
		if !haveRef {
			// Resumed from an older checkpoint in the middle of the epoch
			// that would have taken ℓ₀ (see ref).
			ref, haveRef = ep.Loss, true
		}
		hist = append(hist, ep)
		if w != nil && (e%m.cfg.LogEvery == 0 || e == m.cfg.Epochs) {
			m.logEpoch(w, ep)
		}
		if f := m.cfg.DivergenceFactor; f > 0 && haveRef && ep.Loss > ref+f*max(math.Abs(ref), 1e-8) {
			return hist, fmt.Errorf("train: epoch %d: training diverged: the loss rose from %.4g (first batch) to %.4g, more than Config.DivergenceFactor = %g times; try a smaller LearnRate", e, ref, ep.Loss, f)
		}
		first, acc = 0, accumulator{}
		stop := false
		if stopping {
			if ep.ValLoss < early.BestVal {
				early = earlyState{BestVal: ep.ValLoss, Best: m.Weights()}
			} else if early.Since++; early.Since >= m.cfg.Patience {
				stop = true
			}
		}
		final := stop || e == m.cfg.Epochs
		if final && early.Best != nil {
			// The end of the call: the best epoch's weights, before the
			// final checkpoint records them.
			if err := m.SetWeights(early.Best); err != nil {
				return hist, err
			}
		}
		if err := after(final, stop, e, 0, nil, &acc); err != nil {
			return hist, err
		}
		if stop {
			break
		}
	}
	return hist, nil
}

// accumulator sums the statistics of an epoch's batches.
type accumulator struct {
	rows                  float64
	loss, task, disp, res float64 // Σ rows·value
	depth, depthRows      float64 // over projected batches
	batches, projected    int
	maxRes                float64 // the largest |c_k| so far
	missed                int     // Σ Stats.NotConverged over projected batches
}

func (a *accumulator) epoch(e int) Epoch {
	ep := Epoch{
		Epoch:        e,
		Loss:         a.loss / a.rows,
		Task:         a.task / a.rows,
		Displacement: a.disp / a.rows,
		Residual:     a.res / a.rows,
		MaxResidual:  a.maxRes,
		Missed:       a.missed,
		Projected:    float64(a.projected) / float64(a.batches),
	}
	if a.depthRows > 0 {
		ep.Depth = a.depth / a.depthRows
	}
	return ep
}

// step runs the batch bound to r's graph forward and backward, records
// its statistics in acc and takes one solver step.
func (m *Model) step(r *runner, acc *accumulator) error {
	g := r.g
	defer r.vm.Reset()
	if err := runAll(r.vm); err != nil {
		return err
	}
	if err := g.err(); err != nil {
		return err
	}
	loss, err1 := scalarValue(g.Loss)
	task, err2 := scalarValue(g.Task)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return fmt.Errorf("the training loss is %v (diverged; try a smaller LearnRate)", loss)
	}
	rows := float64(g.batch)
	acc.rows += rows
	acc.batches++
	acc.loss += rows * loss
	acc.task += rows * task
	yhat, yt := g.yhatV, g.ytildeV
	res, maxRes, err := m.view.norms(g.cur, yt)
	if err == nil && m.view.cn != m.view.ny {
		maxRes, err = m.view.maxViolation(g.cur, yt)
	}
	if err != nil {
		return fmt.Errorf("the constraint residual: %w", err)
	}
	acc.res += rows * res
	if maxRes > acc.maxRes || maxRes != maxRes {
		acc.maxRes = maxRes
	}
	if g.Op != nil {
		acc.disp += rows * g.displacement(yhat, yt)
		if g.Op.Projected() {
			st := g.Op.Stats()
			acc.projected++
			acc.depth += rows * st.MeanDepth
			acc.depthRows += rows
			acc.missed += st.NotConverged
		}
	}
	grads := make([]any, len(g.Learnables))
	for i, n := range g.Learnables {
		gv, err := n.Grad()
		if err != nil {
			return fmt.Errorf("the gradient of %q: %w", n.Name(), err)
		}
		if grads[i] = gv.Data(); !finiteValues(grads[i]) {
			return fmt.Errorf("the gradient of %q is not finite (diverged; try a smaller LearnRate); the weights are those before this batch", m.names[i])
		}
	}
	if c := m.cfg.ClipNorm; c > 0 {
		clipNorm(grads, c)
	}
	if m.backup == nil {
		m.backup = make([]any, len(m.params))
		for i, p := range m.params {
			m.backup[i] = cloneValues(p.Data())
		}
	} else {
		for i, p := range m.params {
			copyValues(m.backup[i], p.Data())
		}
	}
	weights := make([]any, len(m.params))
	for i, p := range m.params {
		weights[i] = p.Data()
	}
	if err := m.solver.Step(weights, grads); err != nil {
		return fmt.Errorf("solver step: %w", err)
	}
	for i, p := range m.params {
		if !finiteValues(p.Data()) {
			for j, q := range m.params {
				copyValues(q.Data(), m.backup[j])
			}
			return fmt.Errorf("the optimiser step made weight %q non-finite (diverged; try a smaller LearnRate); the weights are those before this batch", m.names[i])
		}
	}
	return nil
}

// displacement returns (1/N)Σ‖ŷ−ỹ‖² in the units of the task loss.
func (g *Graph) displacement(yhat, yt *mat.Dense) float64 {
	r, c := yhat.Dims()
	var s float64
	for i := range r {
		a, b := yhat.RawRowView(i), yt.RawRowView(i)
		for j := range c {
			d := a[j] - b[j]
			d *= d
			if g.invVar != nil {
				d *= g.invVar[j]
			}
			s += d
		}
	}
	return s / float64(r)
}

// runAll runs a machine, turning a panic inside gorgonia into an error.
func runAll(vm gorgonia.VM) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia panicked: %v", r)
		}
	}()
	return vm.RunAll()
}

// scalarValue returns the value of a float64 or float32 scalar node, as a
// float64.
func scalarValue(n *gorgonia.Node) (float64, error) {
	if n.Value() == nil {
		return 0, fmt.Errorf("node %q has no value", n.Name())
	}
	switch v := n.Value().Data().(type) {
	case float64:
		return v, nil
	case float32:
		return float64(v), nil
	}
	return 0, fmt.Errorf("node %q holds a %T, want float64 or float32", n.Name(), n.Value().Data())
}

// warnMissed writes the warning of Epoch.Missed for epoch ep, in which
// AdaNP projected projected samples.
func (m *Model) warnMissed(w io.Writer, ep Epoch, projected int) {
	s := m.train.Settings()
	fmt.Fprintf(w, "%-7s epoch %d: warning: %d of the %d training samples AdaNP projected missed the training tolerance %v ≤ %g "+
		"(largest |c| %.3g): the projection is not converging; if the outputs differ in scale by orders of magnitude, "+
		"set Config.Standardize, else raise Config.Train.MaxDepth or Tol\n",
		m.cfg.Mode, ep.Epoch, ep.Missed, projected, s.Measure, s.Tol, ep.MaxResidual)
}

// logEpoch writes one progress line.
func (m *Model) logEpoch(w io.Writer, ep Epoch) {
	fmt.Fprintf(w, "%-7s epoch %*d/%d  loss %.4e  task %.4e  disp %.3e  res %.3e  max|c| %.3e  depth %5.2f  projected %3.0f%%  missed %d\n",
		m.cfg.Mode, len(fmt.Sprint(m.cfg.Epochs)), ep.Epoch, m.cfg.Epochs,
		ep.Loss, ep.Task, ep.Displacement, ep.Residual, ep.MaxResidual, ep.Depth, 100*ep.Projected, ep.Missed)
	if m.valX != nil && ep.ValLoss != 0 {
		fmt.Fprintf(w, "%-7s epoch %*d/%d  validation loss %.4e\n", m.cfg.Mode, len(fmt.Sprint(m.cfg.Epochs)), ep.Epoch, m.cfg.Epochs, ep.ValLoss)
	}
}
