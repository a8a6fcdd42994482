package enforce

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/par"
)

// The projection driver. Each sample runs the same state machine:
//
//	start → evaluate → accept → [step → evaluate → accept]* → finish
//
// where step computes the NP direction and a trial point, evaluate computes
// c and B at the trial, and accept takes the trial, backtracks (line
// search), or stops the sample. The schedulers differ only in how the
// evaluations are grouped: one sample at a time inside a worker (the
// constraint evaluates rows one by one), or all pending samples of the
// batch in one EvalBatch call (Capabilities.EvalBatch). Both call the same step
// and accept functions, so they compute the same numbers. A third
// scheduler, for Linear constraints (linbatch.go), runs the same state
// machine per sample with each step's arithmetic grouped into matrix
// products over a block of samples, equal to these up to rounding.

// Per-sample outcome flags of a forward pass.
const (
	flagNotConverged uint8 = 1 << iota
	flagClamped
	flagStopped
	flagStalled
	flagBadInput
	flagBadConstraint
	flagPanic
)

// grain is the smallest number of samples worth a goroutine.
const grain = 16

// forSamples runs body over the rows samples of a forward or backward
// pass. Sparse samples are large and their depths differ (a fallback can
// take ten times the steps of the rest): they go one at a time to the
// first free worker, from two samples on; dense ones in equal shares of
// at least grain. Each sample's results are its own, so the schedule
// does not change them.
func (a *AdaNP) forSamples(rows int, body par.Body) {
	if a.sp != nil {
		par.ForBlocks(rows, 1, body)
		return
	}
	par.For(rows, grain, body)
}

// sampleState is the iteration state of one sample: views into a worker's
// workspace or into the lockstep arrays, and scalars.
type sampleState struct {
	y, c   []float64 // accepted iterate and its residual
	yT, cT []float64 // trial point and its residual
	J      []float64 // Jacobian at the last evaluated point
	J32    []float32 // the same, instead of J, if evaluated in single precision
	delta  []float64 // direction δ of the current step
	// swap makes accept swap (y, yT) and (c, cT) instead of copying:
	// the state lives in a workspace, not in per-sample arrays.
	swap bool
	scalars
}

// take makes the trial point yT, with residual cT, the iterate.
func (st *sampleState) take(cT []float64) {
	if st.swap {
		st.y, st.yT = st.yT, st.y
		st.c, st.cT = st.cT, st.c
		return
	}
	copy(st.y, st.yT)
	copy(st.c, cT)
}

// next is what a sample does next.
type next uint8

const (
	nextStep next = iota // compute a step from the accepted iterate
	nextEval             // evaluate the trial point
	nextDone             // finished
)

type scalars struct {
	depth     int
	alpha     float64
	alpha0    float64
	m0, slope float64 // merit at y and its decrease rate along δ
	measure   float64 // residual measure at y
	best      float64 // best residual measure so far
	since     int     // steps since the best improved by 1%
	bounded   bool
	init      bool // the pending evaluation is the first one
	jAtY      bool // J holds B at y
	// Float32 precision: lo while the sample is evaluated in single
	// precision (G is formed in single precision throughout); loEval when
	// its pending (then its last) evaluation is in single precision;
	// reeval when that evaluation is of y itself again, in float64.
	lo, loEval, reeval bool
	// aimTol (Float32): the size of the terms of c at the first iterate
	// (see floor32Bits) says that single-precision evaluations can reach
	// Tol, so its single-precision steps aim at Tol itself (see refine).
	aimTol bool
	// Settings.Damping: θ (per sample, adapted after each step), the ν
	// of the current step's G, and ‖Bδ‖² for the predicted decrease.
	theta, nu, quad float64
	// Settings.Chord: chord steps left with the stored factor, whether the
	// pending trial is one and ‖c‖₂ where it started, and whether a D is
	// stored with the factor.
	chordLeft     int
	chord, chordD bool
	chordFrom     float64
	// Settings.StopWhenFeasible: whether the sample stopped on its
	// feasibility residual, and that residual's max|·| and Σ|·|.
	feasible         bool
	feasMax, feasSum float64
	// Settings.Nonmonotone: the merits of the last accepted iterates
	// (a ring of hist[:nhist], newest at (head−1) mod len).
	hist        [maxNonmonotone]float64
	nhist, head int
}

// maxNonmonotone is the largest Settings.Nonmonotone.
const maxNonmonotone = 16

// refMerit returns the merit the line search's Armijo test compares a
// trial with: m0, or with Settings.Nonmonotone = M the largest merit of
// the current and the M−1 iterates before it.
func (st *sampleState) refMerit(m int) float64 {
	ref := st.m0
	for i := range min(st.nhist, m-1) {
		ref = math.Max(ref, st.hist[(st.head-1-i+2*maxNonmonotone)%maxNonmonotone])
	}
	return ref
}

// remember records the merit of an accepted iterate for refMerit.
func (st *sampleState) remember(m float64) {
	st.hist[st.head] = m
	st.head = (st.head + 1) % maxNonmonotone
	st.nhist = min(st.nhist+1, maxNonmonotone)
}

// batch is the state of one forward pass, shared by its workers; each
// sample writes only its own entries.
type batch struct {
	a         *AdaNP
	x, yhat   blas64.General
	dst       blas64.General
	tr        *Trace
	noSteps   bool
	depth     []int
	beforeMax []float64
	beforeSum []float64
	afterMax  []float64
	afterSum  []float64
	disp      []float64
	flags     []uint8
	record    bool // the trace records every step
	final     bool // the trace records the final point

	panics panicLog

	// dcur, when set, is W⁻¹'s diagonal of the steps being taken:
	// TrainableDiagonal's exp(−θ) for the pass, or BatchDiagonal's for
	// the current depth (batchdiag.go).
	dcur []float64

	lock   lockstep
	linRun linForward

	// checkC, when checked is set, holds c of every sample of a Check
	// pass (rows×nc), evaluated by one EvalBatch call; checkX and checkY
	// gather x and y when their rows are not contiguous.
	checkC, checkX, checkY []float64
	checked                bool

	// io, when set, links this pass to another stage (passIO).
	io *passIO

	// lat, when it has rows, holds the latent variables' start of every
	// sample (ProjectLatent); finish writes their final values back.
	lat blas64.General
}

// panicLog records the panics of user code by sample, from any worker.
type panicLog struct {
	mu sync.Mutex
	m  map[int]string
}

// record records r as the panic of sample s.
func (p *panicLog) record(s int, r any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[int]string)
	}
	p.m[s] = fmt.Sprint(r)
}

// get returns the panic of sample s, if any. It must not race with record.
func (p *panicLog) get(s int) (string, bool) {
	msg, ok := p.m[s]
	return msg, ok
}

// reset forgets every panic.
func (p *panicLog) reset() { p.m = nil }

func (b *batch) reset(a *AdaNP, rows int) {
	b.a = a
	b.depth = resize(b.depth, rows)
	b.beforeMax = resize(b.beforeMax, rows)
	b.beforeSum = resize(b.beforeSum, rows)
	b.afterMax = resize(b.afterMax, rows)
	b.afterSum = resize(b.afterSum, rows)
	b.disp = resize(b.disp, rows)
	b.flags = resize(b.flags, rows)
	clear(b.flags)
	clear(b.depth)
	clear(b.beforeMax)
	clear(b.beforeSum)
	clear(b.afterMax)
	clear(b.afterSum)
	clear(b.disp)
	b.panics.reset()
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// checkShapes validates x (which may be nil when nx = 0) and a matrix
// with ny columns against a, and returns their raw views.
func (a *AdaNP) checkShapes(x, y *mat.Dense, what string) (xr, yr blas64.General, rows int, err error) {
	if y == nil {
		return xr, yr, 0, fmt.Errorf("enforce: nil %s", what)
	}
	if y.IsEmpty() {
		return xr, yr, 0, fmt.Errorf("enforce: %s is empty (a batch needs at least one row)", what)
	}
	rows, cols := y.Dims()
	if cols != a.ny {
		return xr, yr, 0, fmt.Errorf("enforce: %s has %d columns, want ny = %d", what, cols, a.ny)
	}
	yr = y.RawMatrix()
	switch {
	case x == nil && a.nx != 0:
		return xr, yr, 0, fmt.Errorf("enforce: nil x, want %d×%d", rows, a.nx)
	case x != nil && x.IsEmpty():
		return xr, yr, 0, errors.New("enforce: x is empty")
	case x != nil:
		xRows, xCols := x.Dims()
		if xRows != rows || xCols != a.nx {
			return xr, yr, 0, fmt.Errorf("enforce: x is %d×%d, want %d×%d to match %s", xRows, xCols, rows, a.nx, what)
		}
		xr = x.RawMatrix()
	}
	return xr, yr, rows, nil
}

// forward runs a pass. dinv is W⁻¹'s diagonal for TrainableDiagonal
// weights (length n), nil otherwise.
func (a *AdaNP) forward(dst, x, yhat *mat.Dense, tr *Trace, noSteps bool, dinv []float64) (st Stats, err error) {
	if a.eqf != nil && !noSteps {
		return a.forwardEqualityFirst(dst, x, yhat, tr, dinv, nil)
	}
	if a.sm != nil && !noSteps {
		return a.forwardSmoothed(dst, x, yhat, tr, dinv, nil, nil)
	}
	return a.forwardPass(dst, x, yhat, tr, noSteps, dinv, nil)
}

// passIO carries per-sample results between the stages of a smoothed
// projection (smoothing.go): depths and flags added to this pass's, and
// this pass's results written out. Any field may be nil.
type passIO struct {
	// latent, when set, starts the latent variables of every row and
	// receives their final values (ProjectLatent).
	latent   *mat.Dense
	addDepth []int
	addFlags []uint8
	out      *sampleResults
}

// forwardPass is forward for one stage.
func (a *AdaNP) forwardPass(dst, x, yhat *mat.Dense, tr *Trace, noSteps bool, dinv []float64, io *passIO) (st Stats, err error) {
	xr, yr, rows, err := a.checkShapes(x, yhat, "ŷ")
	if err != nil {
		return Stats{}, err
	}
	if a.s.Weights == TrainableDiagonal && dinv == nil && !noSteps {
		return Stats{}, errors.New("enforce: trainable-diagonal weights need θ: use ProjectTheta or ProjectTraceTheta")
	}
	if dst == nil || dst.IsEmpty() {
		return Stats{}, errors.New("enforce: nil or empty destination")
	}
	if r, c := dst.Dims(); r != rows || c != a.ny {
		return Stats{}, fmt.Errorf("enforce: destination is %d×%d, want %d×%d", r, c, rows, a.ny)
	}
	if a.sp != nil && a.sp.augmented && a.sp.aug.Load() == nil && !noSteps {
		y0 := make([]float64, a.n)
		copy(y0, yr.Data[:a.ny])
		if io != nil && io.latent != nil {
			copy(y0[a.ny:], io.latent.RawRowView(0))
		}
		var x0 []float64
		if a.nx > 0 {
			x0 = xr.Data[:a.nx]
		}
		if err := a.prepareAugmented(x0, y0); err != nil {
			return Stats{}, err
		}
	}
	b := a.lastBatch.Swap(nil)
	if b == nil {
		b = a.batches.Get().(*batch)
	}
	defer func() {
		b.tr, b.dcur, b.checked, b.io, b.lat = nil, nil, false, nil, blas64.General{}
		if !a.lastBatch.CompareAndSwap(nil, b) {
			a.batches.Put(b)
		}
	}()
	b.reset(a, rows)
	b.x, b.yhat, b.dst, b.tr, b.noSteps = xr, yr, dst.RawMatrix(), tr, noSteps
	b.dcur = dinv
	b.io = io
	b.lat = blas64.General{}
	if io != nil && io.latent != nil {
		b.lat = io.latent.RawMatrix()
	}
	b.record = tr != nil && !a.rec.finalOnly
	b.final = tr != nil && a.rec.finalOnly
	if tr != nil {
		tr.reset(a, xr, rows)
	}
	switch be := a.k.EvalBatch; {
	case a.s.Weights == BatchDiagonal && a.constB == nil && !noSteps:
		if err := b.lock.runBatchDiagonal(b, rows); err != nil {
			return Stats{}, err
		}
	case a.linForwardBatchable(noSteps):
		a.lin.prepare(a)
		b.linRun.b = b
		par.ForBlocks(rows, linRows, &b.linRun)
	case be != nil && a.constB == nil && !noSteps && a.sp == nil:
		if err := b.lock.run(b, be, rows); err != nil {
			return Stats{}, err
		}
	default:
		if noSteps && be != nil {
			b.evalCheck(be, rows)
		}
		if noSteps {
			par.For(rows, grain, b)
		} else {
			a.forSamples(rows, b)
		}
	}
	st, err = b.stats(rows)
	if err == nil && a.s.RequireTol && !noSteps && st.NotConverged > 0 {
		err = a.toleranceError(st)
	}
	return st, err
}

// toleranceError returns the *ToleranceError of the samples st.Missed.
func (a *AdaNP) toleranceError(st Stats) *ToleranceError {
	return &ToleranceError{Samples: append([]int(nil), st.Missed...), Rows: st.Samples, Tol: a.s.Tol, Measure: a.s.Measure}
}

// stats reduces the per-sample results in sample order, so that the
// result does not depend on how the batch was split.
func (b *batch) stats(rows int) (Stats, error) {
	a := b.a
	st := Stats{Samples: rows}
	if io := b.io; io != nil {
		for s := 0; s < rows; s++ {
			if io.addDepth != nil {
				b.depth[s] += io.addDepth[s]
			}
			if io.addFlags != nil {
				b.flags[s] |= io.addFlags[s] & flagClamped
			}
		}
		if o := io.out; o != nil {
			copy(o.depth, b.depth[:rows])
			copy(o.flags, b.flags[:rows])
			copy(o.beforeMax, b.beforeMax[:rows])
			copy(o.beforeSum, b.beforeSum[:rows])
			copy(o.afterMax, b.afterMax[:rows])
			copy(o.afterSum, b.afterSum[:rows])
			copy(o.disp, b.disp[:rows])
		}
	}
	for s := 0; s < rows; s++ {
		f := b.flags[s]
		switch {
		case f&flagPanic != 0:
			msg, _ := b.panics.get(s)
			return Stats{}, fmt.Errorf("enforce: sample %d: constraint code panicked: %s", s, msg)
		case f&flagBadInput != 0 && b.lat.Rows > 0:
			return Stats{}, fmt.Errorf("enforce: sample %d: x, ŷ or its latent start is not finite", s)
		case f&flagBadInput != 0:
			return Stats{}, fmt.Errorf("enforce: sample %d: x or ŷ is not finite", s)
		case f&flagBadConstraint != 0:
			return Stats{}, fmt.Errorf("enforce: sample %d: the constraint or its Jacobian is not finite at (x, ŷ)", s)
		}
		st.Depth = max(st.Depth, b.depth[s])
		st.MeanDepth += float64(b.depth[s])
		st.Before.Max = math.Max(st.Before.Max, b.beforeMax[s])
		st.Before.Mean += b.beforeSum[s]
		st.After.Max = math.Max(st.After.Max, b.afterMax[s])
		st.After.Mean += b.afterSum[s]
		st.Displacement.Max = math.Max(st.Displacement.Max, b.disp[s])
		st.Displacement.Mean += b.disp[s]
		if f&flagNotConverged != 0 {
			st.NotConverged++
		}
		if f&flagClamped != 0 {
			st.Clamped++
		}
		if f&flagStopped != 0 {
			st.Stopped++
		}
		if f&flagStalled != 0 {
			st.Stalled++
		}
	}
	if st.NotConverged > 0 {
		// One allocation, of the exact size: a pass that misses stays as
		// cheap in allocations as one that converges.
		st.Missed = make([]int, 0, st.NotConverged)
		for s, f := range b.flags[:rows] {
			if f&flagNotConverged != 0 {
				st.Missed = append(st.Missed, s)
			}
		}
	}
	st.MeanDepth /= float64(rows)
	st.Before.Mean /= float64(rows * a.nc)
	st.After.Mean /= float64(rows * a.nc)
	st.Displacement.Mean /= float64(rows)
	return st, nil
}

// fail records a panic of user code while processing sample s.
func (b *batch) fail(s int, r any) {
	b.panics.record(s, r)
	b.flags[s] |= flagPanic
}

// evalCheck evaluates c of every sample of a Check pass with one EvalBatch
// call (no Jacobians), which check then reads instead of calling Eval
// sample by sample: for Quadratic one matrix product over the batch
// instead of rows·nc dense quadratic forms. It leaves b.checked unset, and
// check evaluates sample by sample, where the constraint has a
// feasibility residual of its own, latent variables, or a sparse
// Jacobian, and where EvalBatch panics (so that the error names the
// sample, as without EvalBatch).
func (b *batch) evalCheck(be evalBatchFunc, rows int) {
	a := b.a
	if a.k.feasibility != nil || a.sp != nil || a.n != a.ny {
		return
	}
	nx, ny, nc := a.nx, a.ny, a.nc
	x, y := contiguous(b.x, rows, nx, &b.checkX), contiguous(b.yhat, rows, ny, &b.checkY)
	b.checkC = resize(b.checkC, rows*nc)
	defer func() {
		if r := recover(); r != nil {
			b.checked = false
		}
	}()
	be(rows, x, y, b.checkC, nil)
	b.checked = true
}

// contiguous returns the rows×cols matrix m as one row-major slice: its
// own data when the rows are contiguous, otherwise a copy in *buf.
func contiguous(m blas64.General, rows, cols int, buf *[]float64) []float64 {
	if m.Stride == cols || rows <= 1 {
		if rows == 0 || cols == 0 {
			return nil
		}
		return m.Data[:(rows-1)*m.Stride+cols]
	}
	*buf = resize(*buf, rows*cols)
	for s := range rows {
		copy((*buf)[s*cols:(s+1)*cols], m.Data[s*m.Stride:s*m.Stride+cols])
	}
	return *buf
}

// gatherRows returns the rows of m listed in rows, or nil for a nil m.
func gatherRows(m *mat.Dense, rows []int) *mat.Dense {
	if m == nil || m.IsEmpty() {
		return nil
	}
	_, c := m.Dims()
	out := mat.NewDense(len(rows), c, nil)
	for i, r := range rows {
		out.SetRow(i, m.RawRowView(r))
	}
	return out
}

// Run projects samples [lo, hi), one at a time.
func (b *batch) Run(lo, hi int) {
	ws := b.a.pool.Get().(*workspace)
	for s := lo; s < hi; s++ {
		if !b.runSample(ws, s) {
			// The workspace may be half-written: drop it.
			ws = b.a.newWorkspace()
		}
	}
	b.a.pool.Put(ws)
}

// runSample runs the state machine of sample s with its state in ws, and
// reports false if user code panicked.
func (b *batch) runSample(ws *workspace, s int) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			b.fail(s, r)
			ok = false
		}
	}()
	a := b.a
	st := &ws.st // its buffers were set by newWorkspace; accept swaps them
	if !b.start(s, st) {
		return true
	}
	if b.noSteps {
		b.check(ws, s, st)
		return true
	}
	xs := dense.Row(b.x, s)
	for n := nextEval; n != nextDone; {
		if n == nextStep {
			n = b.step(ws, s, st)
			continue
		}
		a.eval(xs, st.yT, st.cT, st.J)
		n = b.accept(ws, s, st, st.cT, st.J)
	}
	return true
}

// eval evaluates c and, unless the Jacobian is constant, B at (x, y).
func (a *AdaNP) eval(x, y, c, jy []float64) {
	if a.sp != nil {
		a.sp.sj.Eval(x, y, c, jy) // jy: B's values in the pattern
		return
	}
	if a.constB != nil {
		jy = nil
	}
	a.c.Eval(x, y, c, jy)
}

// jacobian returns the Jacobian in use: the constant one or J.
func (a *AdaNP) jacobian(J []float64) []float64 {
	if a.constB != nil {
		return a.constB
	}
	return J
}

func absStats(c []float64) (mx, sum float64) {
	for _, v := range c {
		v = math.Abs(v)
		if v > mx || v != v {
			mx = v
		}
		sum += v
	}
	return mx, sum
}

// start loads sample s: yT = ŷ (with zero latent variables, or those of
// ProjectLatent), pending its first evaluation, which accept then takes
// as y. It reports false if x, ŷ or the latent start is not finite.
func (b *batch) start(s int, st *sampleState) bool {
	a := b.a
	xs, yhat := dense.Row(b.x, s), dense.Row(b.yhat, s)
	copy(st.yT, yhat)
	if b.lat.Rows > 0 {
		copy(st.yT[a.ny:], dense.Row(b.lat, s))
	} else {
		clear(st.yT[a.ny:])
	}
	st.scalars = scalars{init: true, lo: a.lo, theta: a.s.Damping}
	if !allFinite(xs) || !allFinite(yhat) || !allFinite(st.yT[a.ny:]) {
		b.flags[s] |= flagBadInput
		return false
	}
	return true
}

// check writes the residual of sample s at ŷ without projecting: for
// systems with inequalities, the equality residual and the inequality
// violations max(g, 0).
func (b *batch) check(ws *workspace, s int, st *sampleState) {
	a := b.a
	xs := dense.Row(b.x, s)
	copy(st.y, st.yT)
	if b.checked {
		copy(st.c, b.checkC[s*a.nc:(s+1)*a.nc])
	} else if f := a.k.feasibility; f != nil {
		f(xs, st.y[:a.ny], st.c)
	} else {
		a.eval(xs, st.y, st.c, nil)
	}
	if !allFinite(st.c) {
		b.flags[s] |= flagBadConstraint
		return
	}
	b.beforeMax[s], b.beforeSum[s] = absStats(st.c)
	st.measure = a.s.Measure.reduce(st.c)
	b.finish(ws, s, st)
}

// accept processes the evaluation (cT, JT) of the trial point of sample s:
// the first evaluation, an accepted step, or a rejected one, after which
// the line search tries a shorter step or the sample stops. It returns
// what the sample does next.
func (b *batch) accept(ws *workspace, s int, st *sampleState, cT, JT []float64) next {
	a := b.a
	finite := allFinite(cT) && (a.constB != nil || a.finiteJ || allFinite(JT) && allFinite(st.J32))
	if st.init {
		if !finite && st.loEval {
			// Single precision overflowed (or y does not fit float32):
			// evaluate ŷ again in float64.
			st.lo = false
			return nextEval
		}
		if !finite {
			b.flags[s] |= flagBadConstraint
			return nextDone
		}
		st.take(cT)
		st.init, st.jAtY = false, true
		b.beforeMax[s], b.beforeSum[s] = absStats(st.c)
		st.measure = a.s.Measure.reduce(st.c)
		st.best = st.measure
		// The terms of c are at least its value and about Σ_j|∂c_i/∂y_j·y_j|
		// (which a value near zero does not show: a start close to the
		// set); the second is computed only where the first allows aiming.
		st.aimTol = st.lo && math.Ldexp(st.measure, -floor32Bits) <= a.s.Tol
		if st.aimTol {
			var terms float64
			if st.J32 != nil {
				terms = jyScale(st.J32, st.y, a.nc, a.n)
			} else if JT != nil {
				terms = jyScale(JT, st.y, a.nc, a.n)
			}
			st.aimTol = math.Ldexp(terms, -floor32Bits) <= a.s.Tol
		}
		return b.refine(st, math.Inf(1))
	}
	if st.reeval {
		// y evaluated again in float64: its residual replaces the
		// single-precision one; the depth does not change.
		st.reeval = false
		if !finite {
			b.flags[s] |= flagBadConstraint
			return nextDone
		}
		st.take(cT)
		st.J, st.jAtY = JT, true
		st.measure = a.s.Measure.reduce(st.c)
		return nextStep
	}
	chordTrial := st.chord
	if chordTrial {
		st.chord = false
		if !(finite && norm2(cT) <= chordRate*st.chordFrom) {
			// A chord step that does not halve ‖c‖: start again from y
			// with a fresh factorisation.
			st.chordLeft = 0
			return b.reevaluate(st)
		}
	}
	ok := finite
	var mT float64
	if ok && a.search() && !chordTrial {
		mT = merit(cT)
		ref := st.m0
		if a.s.Nonmonotone > 1 {
			ref = st.refMerit(a.s.Nonmonotone)
		}
		ok = armijo(mT, ref, st.slope, st.alpha)
	}
	if !ok && st.lo {
		// A rejected single-precision trial: start the step again from y,
		// in float64.
		if b.record {
			b.tr.pop(s)
		}
		st.lo = false
		return b.reevaluate(st)
	}
	if !ok {
		st.jAtY = false
		if a.search() && st.alpha > st.alpha0*math.Ldexp(1, -maxHalvings) {
			st.alpha /= 2
			trial(st.yT, st.y, st.delta, st.alpha)
			return nextEval
		}
		if b.record {
			b.tr.pop(s)
		}
		if a.search() {
			b.flags[s] |= flagStalled
		} else {
			b.flags[s] |= flagStopped
		}
		b.finish(ws, s, st)
		return nextDone
	}
	if a.s.Damping > 0 && !chordTrial && !(a.s.Nonmonotone > 1 && mT >= st.m0) {
		// (A step the nonmonotone rule accepted although it raised the
		// merit leaves θ as it is: its ρ is negative, and raising θ for
		// it, as a monotone search's rejected step would, brings the
		// crawl back.)
		st.adaptDamping(mT)
	}
	if a.s.Nonmonotone > 1 && a.search() && !chordTrial {
		st.remember(st.m0)
	}
	st.take(cT)
	st.J = JT
	st.jAtY = true
	st.depth++
	if b.record {
		b.tr.setAlpha(s, st.alpha)
	}
	prev := st.measure
	st.measure = a.s.Measure.reduce(st.c)
	if m := st.measure; m < 0.99*st.best {
		st.best, st.since = m, 0
	} else if st.since++; st.depth >= a.s.MinDepth && m > a.s.Tol && !st.loEval {
		// Without a line search: ten steps without 1 % progress stall.
		// Settings.SmoothingPatience's plain attempt: patience steps
		// without it hand the sample to the fallback, unless it meets
		// the constraint here (StopWhenFeasible), where it stops as it
		// would have.
		if !a.search() && st.since >= stallSteps ||
			a.patience > 0 && st.since >= a.patience && !(a.s.StopWhenFeasible && b.feasibleAt(ws, s, st)) {
			b.flags[s] |= flagStalled
			b.finish(ws, s, st)
			return nextDone
		}
	}
	if a.s.StopWhenFeasible && st.measure > a.s.Tol && st.depth >= a.s.MinDepth && b.feasibleAt(ws, s, st) {
		return nextStep // continues now reports false: the sample finishes
	}
	return b.refine(st, prev)
}

// feasibleAt reports whether sample s's iterate meets the constraint's
// own residual (the equalities and max(g, 0): what Check measures) to Tol
// in Settings.Measure, for Settings.StopWhenFeasible; if it does, that
// residual becomes the sample's measure and its residual after projection.
func (b *batch) feasibleAt(ws *workspace, s int, st *sampleState) bool {
	a := b.a
	if ne := a.k.feasEq; ne > 0 && feasShortcut && !st.lo && feasLowerBound(a.s.Measure, st.c[:ne], a.nc) > 2*a.s.Tol {
		// c's leading rows are the equalities, evaluated in float64 at
		// this iterate with its Jacobian: where they alone put the
		// residual above twice Tol, the check cannot pass (unless the
		// constraint's evaluations without and with a Jacobian differ by
		// that much), and its evaluation is saved.
		return false
	}
	feasibilityEvals.Add(1)
	ws.feas = resize(ws.feas, a.nc)
	r := ws.feas
	a.k.feasibility(dense.Row(b.x, s), st.y[:a.ny], r)
	if !allFinite(r) {
		return false
	}
	m := a.s.Measure.reduce(r)
	if m > a.s.Tol {
		return false
	}
	st.feasible, st.measure = true, m
	st.feasMax, st.feasSum = absStats(r)
	return true
}

// feasShortcut lets feasibleAt skip the evaluation where c's equality rows
// already exceed twice Tol (off in tests that compare with the full
// check); feasibilityEvals counts the evaluations, for tests.
var (
	feasShortcut     = true
	feasibilityEvals atomic.Int64
)

// feasLowerBound returns a lower bound of m's reduction of a residual of
// length n whose leading entries are eq: max|eq_i|, or Σ|eq_i|/n.
func feasLowerBound(m Measure, eq []float64, n int) float64 {
	var v float64
	for _, e := range eq {
		e = math.Abs(e)
		if m == MeanAbs {
			v += e
		} else if e > v {
			v = e
		}
	}
	if m == MeanAbs {
		v /= float64(n)
	}
	return v
}

// floor32Bits sets the estimate of the residual measure below which
// single-precision evaluations stop being accurate enough to steer a
// sample: 2⁻¹⁸ = 64·2⁻²⁴ (64 float32 ulps) of the size of the terms of c
// at the first iterate, estimated as the larger of its residual measure
// and max_i Σ_j|∂c_i/∂y_j·y_j| over up to 16 of the rows i (jyScale).
// Measured on the quadratic benchmark instance (100, 50), whose far starts
// have max|c| ≈ 200 and Σ_j|∂c_i/∂y_j·y_j| ≈ 60, float32 Newton steps
// stall at about 6e-7 of the first max|c| (10 ulps), in the reference's
// torch code as in ours.
const floor32Bits = 18

// jyScale returns max_i Σ_j |J_ij·y_j| over at most jyRows rows i of the
// nc×n Jacobian J, evenly spaced (all of them when nc ≤ jyRows): an
// estimate of the size of the terms of c that costs at most jyRows·n
// operations per sample.
func jyScale[T float32 | float64](J []T, y []float64, nc, n int) float64 {
	var m float64
	for i := 0; i < nc; i += (nc + jyRows - 1) / jyRows {
		var s float64
		for j, v := range J[i*n : (i+1)*n] {
			s += math.Abs(float64(v) * y[j])
		}
		m = max(m, s)
	}
	return m
}

// jyRows bounds the rows jyScale reads.
const jyRows = 16

// refine decides, for a sample evaluated in single precision (Float32)
// whose iterate y was just evaluated, whether it goes on in float64: once
// the measure has not halved since the previous iterate's (prev), or the
// sample would stop, or, unless aimTol, once its residual measure or the
// measure Newton's rate predicts after the next step is at most
// AdaNP.refineAt. A sample with aimTol takes single-precision steps until
// its single-precision measure meets the tolerance (or stops halving).
// If y was evaluated in single precision it is evaluated again in float64
// first, so that the sample neither stops on a single-precision residual
// nor takes its float64 steps from one (whose rounding, about 1e-7 of the
// terms of c, can exceed the tolerance): an aimTol sample whose float64
// measure is still above Tol goes on in float64 from that evaluation.
func (b *batch) refine(st *sampleState, prev float64) next {
	if !st.lo {
		return nextStep
	}
	m := st.measure
	// Newton's rate predicts the next measure m³/prev² from the last two:
	// a step that should land near the tolerance is taken in float64.
	pred := m
	if !math.IsInf(prev, 1) && prev > 0 {
		pred = m * (m / prev) * (m / prev)
	}
	if b.continues(st) && m <= 0.5*prev && (st.aimTol || m > b.a.refineAt && pred > b.a.refineAt) {
		return nextStep
	}
	st.lo = false
	if st.loEval {
		return b.reevaluate(st)
	}
	return nextStep
}

// reevaluate makes the pending evaluation that of y itself, in float64.
func (b *batch) reevaluate(st *sampleState) next {
	copy(st.yT, st.y)
	st.reeval, st.jAtY = true, false
	return nextEval
}

// step decides whether sample s takes another step and, if so, computes
// its direction and first trial point, recording the step in the trace.
// It reports whether the trial needs an evaluation; if not, the sample
// has finished. The decisions are the same on every path (dense, float32,
// sparse); stepDirection holds what differs: how G is formed and factored.
func (b *batch) step(ws *workspace, s int, st *sampleState) next {
	a := b.a
	if !b.continues(st) {
		b.finish(ws, s, st)
		return nextDone
	}
	if a.sp != nil && st.chordLeft > 0 && ws.sp.cur != nil && b.chordStep(ws, st) {
		return nextEval
	}
	dir := b.stepDirection(ws, st)
	switch {
	case dir.retry:
		// G could not be factored in single precision (ill-conditioned
		// beyond float32, or not finite): y is evaluated again in float64
		// and the sample goes on in float64.
		st.lo = false
		return b.reevaluate(st)
	case !dir.ok:
		b.flags[s] |= flagStopped
		b.finish(ws, s, st)
		return nextDone
	}
	if dir.clamped {
		b.flags[s] |= flagClamped
	}
	st.alpha0, st.bounded = a.initialStep(st.delta)
	st.alpha = st.alpha0
	if a.search() {
		dir.mulB(a, ws.tmpN[:a.nc], st.delta)
		st.prepareSearch(ws.tmpN[:a.nc])
	}
	if b.record {
		dir.push(b.tr, s, st.alpha, st.bounded, st.theta, st.y, ws.mu)
	}
	trial(st.yT, st.y, st.delta, st.alpha)
	return nextEval
}

// stepDir is the direction of a step, st.delta, as one path computed it:
// what step needs of the path besides the direction itself.
type stepDir struct {
	// ok reports that G was factored and δ is finite; retry, that G could
	// not be factored in single precision and the sample is to go on in
	// float64; clamped, that the factorisation raised ε or clamped G's
	// eigenvalues.
	ok, retry, clamped bool
	d                  []float64 // D (nil for W = I)
	// The dense path: B (float64 or float32), G's factor and the
	// regularisation (with the damping) it was factored with.
	B   jmat
	f   *factor
	reg float64
	// The sparse path: B's values and the ε G was factored with.
	vals []float64
	eps  float64
}

// stepDirection computes the direction of sample s's next step into
// st.delta and μ into ws.mu on a's path.
func (b *batch) stepDirection(ws *workspace, st *sampleState) stepDir {
	a := b.a
	if a.sp != nil {
		dir := stepDir{vals: st.J}
		dir.d, dir.eps, dir.clamped, dir.ok = a.sparseDirection(ws, st.c, st.J, st.delta, st.damp(a))
		if dir.ok && a.s.Chord > 0 {
			b.keepFactor(ws, st, st.J, dir.d)
		}
		return dir
	}
	dir := stepDir{B: jmat{b: a.jacobian(st.J), b32: st.J32}}
	if b.dcur != nil {
		copy(ws.d, b.dcur) // see weights
	}
	dir.reg = st.damp(a)
	if st.J32 != nil {
		dir.d, dir.f, dir.ok = a.direction32(ws, st.c, st.J32, st.delta)
		dir.retry = !dir.ok
	} else {
		dir.d, dir.f, dir.ok = a.direction(ws, st.c, dir.B.b, st.delta, dir.reg)
	}
	dir.clamped = dir.ok && dir.f.eig
	return dir
}

// mulB writes dst = B·v.
func (dir *stepDir) mulB(a *AdaNP, dst, v []float64) {
	if a.sp != nil {
		a.sp.mulVec(dst, dir.vals, v)
		return
	}
	dir.B.mulVec(dst, a.nc, a.n, v)
}

// push records in t a step of sample s from y of length alpha (bounded by
// MaxStep or not), damping θ and multipliers mu (for a final-point record,
// alpha is the record's header).
func (dir *stepDir) push(t *Trace, s int, alpha float64, bounded bool, theta float64, y, mu []float64) {
	if t.a.sp != nil {
		t.pushSparse(s, alpha, bounded, dir.eps, theta, dir.clamped, y, mu, dir.d, dir.vals)
		return
	}
	t.push(s, alpha, bounded, dir.reg, theta, y, mu, dir.d, dir.B, dir.f)
}

// values returns B's float64 values: the dense matrix or the nonzeros in
// the sparse pattern.
func (dir *stepDir) values() []float64 {
	if dir.vals != nil {
		return dir.vals
	}
	return dir.B.b
}

// continues reports whether a sample takes another step.
func (b *batch) continues(st *sampleState) bool {
	s := &b.a.s
	return st.depth < s.MaxDepth && (st.depth < s.MinDepth || st.measure > s.Tol)
}

// finish writes the result of sample s: its output, depth, residual and
// displacement, and the final-point record of Implicit and FinalProjector
// traces.
func (b *batch) finish(ws *workspace, s int, st *sampleState) {
	a := b.a
	yhat := dense.Row(b.yhat, s)
	b.disp[s] = distance(st.y[:a.ny], yhat)
	if b.final {
		b.recordFinal(ws, s, st, yhat)
	}
	copy(dense.Row(b.dst, s), st.y[:a.ny])
	if b.lat.Rows > 0 {
		copy(dense.Row(b.lat, s), st.y[a.ny:])
	}
	b.depth[s] = st.depth
	if st.feasible {
		b.afterMax[s], b.afterSum[s] = st.feasMax, st.feasSum
	} else {
		b.afterMax[s], b.afterSum[s] = absStats(st.c)
	}
	if st.measure > a.s.Tol {
		b.flags[s] |= flagNotConverged
	}
}

// distance returns ‖u − v‖₂ (summed in order, without scaling: the
// Stats.Displacement of every pass).
func distance(u, v []float64) float64 {
	var d2 float64
	for j, x := range u {
		t := x - v[j]
		d2 += t * t
	}
	return math.Sqrt(d2)
}

// recordFinal records, for Implicit and FinalProjector gradients, the
// final point of sample s: y*, and λ (Implicit) or 0, with the Jacobian,
// weights and G's factor there. The header's first entry holds, for
// Implicit, the KKT residual of y* (see kktMultipliers), and 1 otherwise.
// A sample whose G cannot be factored at y* gets no record: its gradient
// passes through unchanged.
func (b *batch) recordFinal(ws *workspace, s int, st *sampleState, yhat []float64) {
	a := b.a
	dir, ok := b.finalFactor(ws, s, st)
	if !ok {
		return
	}
	header := 1.0
	lam := ws.mu
	clear(lam)
	if a.s.Grad == Implicit || a.s.Weights == TrainableDiagonal {
		// λ: Implicit's multipliers, and for TrainableDiagonal the
		// displacement y* − ŷ = −D·Bᵀλ that ∂ℓ/∂θ needs (VJPTheta).
		copy(ws.yhatExt, yhat)
		clear(ws.yhatExt[a.ny:])
		kkt := a.kktMultipliers(ws, st.y, ws.yhatExt, dir.values(), dir.d, dir.f, lam)
		if a.s.Grad == Implicit {
			header = kkt
		}
	}
	dir.push(b.tr, s, header, false, 0, st.y, lam)
}

// finalFactor returns B, D and G's factor at sample s's final point y*
// (with the regularisation Settings.Reg, no damping), B evaluated again
// in float64 where the last evaluation was not at y* or was in single
// precision. It reports false if B is not finite or G cannot be factored.
func (b *batch) finalFactor(ws *workspace, s int, st *sampleState) (stepDir, bool) {
	a := b.a
	if a.sp != nil {
		dir := stepDir{vals: st.J}
		if !st.jAtY {
			a.eval(dense.Row(b.x, s), st.y, ws.cEval, ws.bEval)
			dir.vals = ws.bEval
		}
		if !allFinite(dir.vals) {
			return dir, false
		}
		dir.d = a.sparseWeights(ws, dir.vals)
		dir.eps, dir.clamped, dir.ok = a.sparseFactor(ws, dir.vals, dir.d, a.s.Reg)
		return dir, dir.ok
	}
	B := a.jacobian(st.J)
	if (!st.jAtY || st.J32 != nil) && a.constB == nil {
		// No Jacobian at y, or one in single precision: the record's is
		// evaluated in float64.
		a.eval(dense.Row(b.x, s), st.y, ws.cEval, ws.bEval)
		B = ws.bEval
	}
	dir := stepDir{B: jmat{b: B}, d: a.constD, f: &a.constG, reg: a.s.Reg, ok: true}
	if a.constB == nil {
		if b.dcur != nil {
			copy(ws.d, b.dcur) // see weights
		}
		dir.d, dir.f = weights(a, ws, B), &ws.g
		if !a.factorize(dir.f, B, dir.d, ws, false, a.s.Reg) || !allFinite(B) {
			return dir, false
		}
	}
	return dir, true
}
