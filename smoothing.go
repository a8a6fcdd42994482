package enforce

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/dense"
)

// This file holds Settings.Smoothing: a projection that first tries the
// plain projection from ŷ (at most Settings.SmoothingFirstDepth steps) and, for the
// samples that miss the tolerance, projects again from ŷ in two stages:
// onto the constraint smoothed with ε_FB = Smoothing (or, with
// Settings.SmoothingLadder, with the first of the ladder's values and then
// Smoothing's that the sample meets), then onto the constraint itself from
// that stage's point. Every stage is a whole AdaNP pass with its own
// trace, so every path, scheduler and gradient mode composes as it is; a
// sample's result and gradient are those of the branch it took.

// smoothingTolRatio sets the smoothed stage's tolerance, relative to its
// ε_FB.
const smoothingTolRatio = 0.1

// DefaultSmoothingFirstDepth is the number of steps of Settings.Smoothing's
// plain attempt when Settings.SmoothingFirstDepth is zero.
const DefaultSmoothingFirstDepth = 15

// MaxSmoothingLadder is the largest number of values of
// Settings.SmoothingLadder.
const MaxSmoothingLadder = 8

// smoothing holds the stages of Settings.Smoothing.
type smoothing struct {
	first  *AdaNP   // the plain attempt: a's settings, at most SmoothingFirstDepth steps
	ladder []*AdaNP // SmoothingLadder's smoothed stages, each at most SmoothingFirstDepth steps
	pre    *AdaNP   // the smoothed stage with ε_FB = Smoothing
	second *AdaNP   // the constraint itself from the smoothed stage's point
}

// stages returns the smoothed stages in the order a sample tries them:
// the ladder's, then pre.
func (sm *smoothing) stages() []*AdaNP {
	return append(append([]*AdaNP(nil), sm.ladder...), sm.pre)
}

// stageTraces are the traces of a smoothed projection's stages, and the
// rows (missed) that took the smoothed branch.
type stageTraces struct {
	first, pre, second Trace
	missed             []int
	// ladder holds the traces of SmoothingLadder's stages; rows[i] the
	// rows (indices into missed) that smoothed stage i (the ladder's, then
	// pre) ran on in the last call, and rung[r] the stage whose point
	// missed row r's last stage started from.
	ladder []Trace
	rows   [][]int
	rung   []int
}

// smoothed returns the trace of smoothed stage i: the ladder's, then pre's.
func (ts *stageTraces) smoothed(i int) *Trace {
	if i < len(ts.ladder) {
		return &ts.ladder[i]
	}
	return &ts.pre
}

// newSmoothingStage builds a.sm for Settings.Smoothing.
func (a *AdaNP) newSmoothingStage() error {
	if a.s.Smoothing == 0 {
		return nil
	}
	fb, ok := a.c.(*fbConstraint)
	switch {
	case !ok:
		return errors.New("enforce: Settings.Smoothing continues the smoothing of a constraint made by WithInequalities; this constraint is not one")
	case a.s.Smoothing <= fb.eps:
		return fmt.Errorf("enforce: Settings.Smoothing = %v must be larger than the constraint's ε_FB = %v", a.s.Smoothing, fb.eps)
	case a.s.Weights == BatchDiagonal || a.s.Weights == TrainableDiagonal:
		return fmt.Errorf("enforce: Settings.Smoothing does not support %v weights", a.s.Weights)
	}
	var eq Constraint
	if fb.eq != nil {
		eq = fb.eq.c
	}
	c0, err := WithInequalities(eq, fb.g.c, a.s.Smoothing)
	if err != nil {
		return fmt.Errorf("enforce: Settings.Smoothing: %w", err)
	}
	base := a.s.withoutSmoothing()
	base.RequireTol, base.EqualitySteps = false, 0
	s1 := base
	first := a.s.SmoothingFirstDepth
	if first == 0 {
		first = DefaultSmoothingFirstDepth
	}
	s1.MaxDepth = min(base.MaxDepth, first)
	s1.MinDepth = min(base.MinDepth, s1.MaxDepth)
	s0 := base
	s0.MinDepth = 0
	s0.StopWhenFeasible = false
	s0.Tol = math.Max(base.Tol, smoothingTolRatio*a.s.Smoothing)
	sm := &smoothing{}
	if sm.first, err = newAdaNP(a.c, s1, a.sp); err != nil {
		return fmt.Errorf("enforce: Settings.Smoothing's plain attempt: %w", err)
	}
	sm.first.patience = a.s.SmoothingPatience
	if sm.pre, err = newAdaNP(c0, s0, a.sp); err != nil {
		return fmt.Errorf("enforce: Settings.Smoothing's smoothed stage: %w", err)
	}
	prev := fb.eps
	for i, e := range a.s.SmoothingLadder {
		if !(e > prev) || !(e < a.s.Smoothing) {
			return fmt.Errorf("enforce: Settings.SmoothingLadder[%d] = %v: the values must increase, from above the constraint's ε_FB = %v to below Smoothing = %v", i, e, fb.eps, a.s.Smoothing)
		}
		prev = e
		ci, err := WithInequalities(eq, fb.g.c, e)
		if err != nil {
			return fmt.Errorf("enforce: Settings.SmoothingLadder[%d]: %w", i, err)
		}
		si := s0
		si.Tol = math.Max(base.Tol, smoothingTolRatio*e)
		si.MaxDepth = s1.MaxDepth
		r, err := newAdaNP(ci, si, a.sp)
		if err != nil {
			return fmt.Errorf("enforce: Settings.SmoothingLadder[%d]'s stage: %w", i, err)
		}
		sm.ladder = append(sm.ladder, r)
	}
	last := base
	if a.s.SmoothingNonmonotone > 0 {
		last.Nonmonotone = a.s.SmoothingNonmonotone
	}
	if sm.second, err = newAdaNP(a.c, last, a.sp); err != nil {
		return fmt.Errorf("enforce: Settings.Smoothing's last stage: %w", err)
	}
	a.sm = sm
	return nil
}

// forwardSmoothed is forward for Settings.Smoothing.
//
// With lat (ProjectLatent), the plain attempt starts the latent variables
// from lat, the smoothed stages from zero as without it (multipliers
// carried into them made case1354's fallback slower and worse: 13.1 →
// 30.4 steps, 1 → 19 of 103 unconverged), and lat receives each row's
// final values.
func (a *AdaNP) forwardSmoothed(dst, x, yhat *mat.Dense, tr *Trace, dinv []float64, lat *mat.Dense, out *sampleResults) (Stats, error) {
	xr, _, rows, err := a.checkShapes(x, yhat, "ŷ")
	if err != nil {
		return Stats{}, err
	}
	// ŷ is read again after the first attempt has written dst, which
	// may be ŷ itself (ProjectTo(y, x, y), as Refine calls it).
	yhat = mat.DenseCopyOf(yhat)
	yr := yhat.RawMatrix()
	sm := a.sm
	var tf, t1 *Trace
	if tr != nil {
		tr.reset(a, xr, rows)
		if tr.stages == nil {
			tr.stages = new(stageTraces)
		}
		tf, t1 = &tr.stages.first, &tr.stages.second
	}
	res := newSampleResults(rows)
	if _, err := sm.first.forwardPass(dst, x, yhat, tf, false, dinv, &passIO{out: res, latent: lat}); err != nil {
		return Stats{}, err
	}
	var missed []int
	for s, f := range res.flags {
		if f&flagNotConverged != 0 {
			missed = append(missed, s)
		}
	}
	if tr != nil {
		tr.stages.missed = missed
	}
	if len(missed) > 0 {
		m := len(missed)
		// The fallback's stages start from ŷ, or, with
		// SmoothingFromAttempt, where the attempt left each sample (dst
		// is not ŷ: ŷ was copied above).
		start := yhat
		if a.s.SmoothingFromAttempt {
			start = dst
		}
		xs, ys := gatherRows(x, missed), gatherRows(start, missed)
		depth := make([]int, m)
		for i, s := range missed {
			depth[i] = res.depth[s]
		}
		var ls *mat.Dense
		if lat != nil {
			ls = mat.NewDense(m, a.latent, nil)
		}
		// Each smoothed stage in turn, from ŷ, on the rows that missed
		// the ones before; the last (Smoothing's) keeps every row it ran
		// on. y0 collects each row's point, flags0 its flags (the
		// clamped flags of the stages it missed included).
		stages := sm.stages()
		if tr != nil {
			ts := tr.stages
			if len(ts.ladder) != len(sm.ladder) {
				ts.ladder = make([]Trace, len(sm.ladder))
			}
			ts.rows = make([][]int, len(stages))
			ts.rung = make([]int, m)
		}
		y0 := mat.NewDense(m, a.ny, nil)
		flags0 := make([]uint8, m)
		pending := make([]int, m)
		for i := range pending {
			pending[i] = i
		}
		for i, st := range stages {
			if len(pending) == 0 {
				break
			}
			last := i == len(stages)-1
			xi, yi := xs, ys
			if len(pending) < m {
				xi, yi = gatherRows(xs, pending), gatherRows(ys, pending)
			}
			add, addf := make([]int, len(pending)), make([]uint8, len(pending))
			for j, r := range pending {
				add[j], addf[j] = depth[r], flags0[r]
			}
			ri := newSampleResults(len(pending))
			yo := mat.NewDense(len(pending), a.ny, nil)
			var ti *Trace
			if tr != nil {
				ti = tr.stages.smoothed(i)
				tr.stages.rows[i] = pending
			}
			if _, err := st.forwardPass(yo, xi, yi, ti, false, dinv, &passIO{addDepth: add, addFlags: addf, out: ri}); err != nil {
				return Stats{}, err
			}
			var next []int
			for j, r := range pending {
				depth[r], flags0[r] = ri.depth[j], ri.flags[j]
				if !last && ri.flags[j]&flagNotConverged != 0 {
					flags0[r] &= flagClamped
					next = append(next, r)
					continue
				}
				y0.SetRow(r, yo.RawRowView(j))
				if tr != nil {
					tr.stages.rung[r] = i
				}
			}
			pending = next
		}
		r1 := newSampleResults(m)
		y1 := mat.NewDense(m, a.ny, nil)
		if _, err := sm.second.forwardPass(y1, xs, y0, t1, false, dinv, &passIO{addDepth: depth, addFlags: flags0, out: r1, latent: ls}); err != nil {
			return Stats{}, err
		}
		for i, s := range missed {
			dst.SetRow(s, y1.RawRowView(i))
			if lat != nil {
				lat.SetRow(s, ls.RawRowView(i))
			}
			res.depth[s] = r1.depth[i]
			res.flags[s] = r1.flags[i] | res.flags[s]&flagClamped
			res.afterMax[s], res.afterSum[s] = r1.afterMax[i], r1.afterSum[i]
			res.disp[s] = distance(dst.RawRowView(s), dense.Row(yr, s))
		}
	}
	if tr != nil {
		copy(tr.depth, res.depth)
	}
	if out != nil {
		*out = *res
	}
	return a.stagedStats(res, rows)
}

// vjpSmoothed is vjp for Settings.Smoothing: every row through the plain
// attempt's trace, then the rows that took the smoothed branch through
// its last stage and its smoothed stage, whose gradients replace theirs.
func (a *AdaNP) vjpSmoothed(tr *Trace, grad, gyhat, gx *mat.Dense) error {
	if tr == nil || tr.a != a || tr.stages == nil {
		return errors.New("enforce: trace was not recorded by this AdaNP")
	}
	// The first attempt's vjpPass validates grad against the trace
	// (with SmoothingFromAttempt, after the fallback's: grad is checked
	// here first).
	sm, ts := a.sm, tr.stages
	rows := tr.rows
	if gyhat == nil {
		gyhat = mat.NewDense(rows, a.ny, nil)
	}
	fromAttempt := a.s.SmoothingFromAttempt && len(ts.missed) > 0
	var inexact []bool
	if fromAttempt {
		if err := a.checkGrad(grad, rows); err != nil {
			return err
		}
		inexact = make([]bool, rows)
	} else {
		if err := sm.first.vjpPass(&ts.first, grad, gyhat, gx, nil); err != nil {
			return err
		}
		inexact = append([]bool(nil), ts.first.inexact...)
	}
	if m := len(ts.missed); m > 0 {
		g := gatherRows(grad, ts.missed)
		g1 := mat.NewDense(m, a.ny, nil)
		g0 := mat.NewDense(m, a.ny, nil)
		var gx1, gx0 *mat.Dense
		if gx != nil {
			gx1, gx0 = mat.NewDense(m, a.nx, nil), mat.NewDense(m, a.nx, nil)
		}
		if err := sm.second.vjpPass(&ts.second, g, g1, gx1, nil); err != nil {
			return err
		}
		// Through the smoothed stage each row's last stage started from;
		// the rows a stage ran on but missed get no gradient from it.
		stages := sm.stages()
		for i, rows := range ts.rows {
			if len(rows) == 0 {
				continue
			}
			whole := len(rows) == m // every missed row, each from this stage
			for _, r := range rows {
				whole = whole && ts.rung[r] == i
			}
			gi, go0, gxo := g1, g0, gx0
			if !whole {
				gi, go0 = mat.NewDense(len(rows), a.ny, nil), mat.NewDense(len(rows), a.ny, nil)
				for j, r := range rows {
					if ts.rung[r] == i {
						gi.SetRow(j, g1.RawRowView(r))
					}
				}
				if gx != nil {
					gxo = mat.NewDense(len(rows), a.nx, nil)
				}
			}
			si := ts.smoothed(i)
			if err := stages[i].vjpPass(si, gi, go0, gxo, nil); err != nil {
				return err
			}
			for j, r := range rows {
				if ts.rung[r] != i {
					continue
				}
				if !whole {
					g0.SetRow(r, go0.RawRowView(j))
					if gx != nil {
						gx0.SetRow(r, gxo.RawRowView(j))
					}
				}
				inexact[ts.missed[r]] = ts.second.inexact[r] || si.inexact[j]
			}
		}
		if fromAttempt {
			// Each missed row's fallback started from the attempt's last
			// iterate: its gradient there goes on through the attempt's
			// trace, the other rows' gradients as they are.
			gf := mat.DenseCopyOf(grad)
			for i, s := range ts.missed {
				gf.SetRow(s, g0.RawRowView(i))
			}
			if err := sm.first.vjpPass(&ts.first, gf, gyhat, gx, nil); err != nil {
				return err
			}
			for s, v := range ts.first.inexact {
				inexact[s] = inexact[s] || v
			}
			if gx != nil {
				for i, s := range ts.missed {
					v := gx.RawRowView(s)
					for k, w := range gx1.RawRowView(i) {
						v[k] += w + gx0.At(i, k)
					}
				}
			}
		} else {
			for i, s := range ts.missed {
				gyhat.SetRow(s, g0.RawRowView(i))
				if gx != nil {
					v := gx0.RawRowView(i)
					for k, w := range gx1.RawRowView(i) {
						v[k] += w
					}
					gx.SetRow(s, v)
				}
			}
		}
	}
	tr.setGradStats(grad, gyhat, inexact)
	return nil
}

// setGradStats records, for a projection of several stages, which rows'
// gradients were inexact and the GradStats of the whole: the gain of each
// row is ‖gyhat‖/‖grad‖.
func (tr *Trace) setGradStats(grad, gyhat *mat.Dense, inexact []bool) {
	rows := tr.rows
	gs := GradStats{Samples: rows}
	tr.inexact = resize(tr.inexact, rows)
	for s := range rows {
		tr.inexact[s] = inexact[s]
		if inexact[s] {
			gs.Inexact++
		}
		gain := 0.0
		if n := norm2(grad.RawRowView(s)); n > 0 {
			gain = norm2(gyhat.RawRowView(s)) / n
		}
		gs.MaxGain = math.Max(gs.MaxGain, gain)
		if gain > GainWarning {
			gs.Amplified++
		}
	}
	tr.grad = gs
}

// stagedStats returns the Stats of a projection of several stages from
// its per-sample results, with Settings.RequireTol's error where a sample
// missed Tol.
func (a *AdaNP) stagedStats(res *sampleResults, rows int) (Stats, error) {
	b := &batch{a: a, depth: res.depth, flags: res.flags, beforeMax: res.beforeMax, beforeSum: res.beforeSum,
		afterMax: res.afterMax, afterSum: res.afterSum, disp: res.disp}
	st, err := b.stats(rows)
	if err == nil && a.s.RequireTol && st.NotConverged > 0 {
		err = a.toleranceError(st)
	}
	return st, err
}

// sampleResults are a pass's per-sample results (passIO.out).
type sampleResults struct {
	depth                                    []int
	flags                                    []uint8
	beforeMax, beforeSum, afterMax, afterSum []float64
	disp                                     []float64
}

func newSampleResults(rows int) *sampleResults {
	return &sampleResults{
		depth: make([]int, rows), flags: make([]uint8, rows),
		beforeMax: make([]float64, rows), beforeSum: make([]float64, rows),
		afterMax: make([]float64, rows), afterSum: make([]float64, rows), disp: make([]float64, rows),
	}
}

// withoutSmoothing returns s without Settings.Smoothing and the settings
// that only shape it (its plain attempt's length and patience, its ladder,
// its last stage's nonmonotone search, the fallback's start): the
// settings of one of its stages, or of a stage before it. A new
// Smoothing setting belongs here, so that no stage inherits it.
func (s Settings) withoutSmoothing() Settings {
	s.Smoothing, s.SmoothingFirstDepth, s.SmoothingLadder, s.SmoothingNonmonotone = 0, 0, nil, 0
	s.SmoothingPatience, s.SmoothingFromAttempt = 0, false
	return s
}
