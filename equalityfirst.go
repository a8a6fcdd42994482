package enforce

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/dense"
)

// This file holds Settings.EqualitySteps: for a system built by
// WithInequalities, a first stage of Gauss–Newton steps on the equalities
// alone, from ŷ, and then the projection of the whole system (with
// Smoothing's fallback where set) from that stage's point. The first stage
// is an AdaNP pass of its own over the equalities, with its own trace,
// always differentiated Unrolled; the second is this AdaNP's ordinary
// projection, recorded in the caller's trace.
//
// Why (docs/numerics.md, "Equalities first"): at a point far off the
// equalities, an inequality that ŷ violates has, at λ = 0, the linearised
// Fischer–Burmeister row 2g + 2∇g·δ − Δλ = 0, an equality in all but name,
// which fights the equalities' own step where g's linearisation is poor
// (a thermal row of a branch whose flow ŷ's angle errors inflate); a
// few steps on the equalities first bring ŷ near them, where the rows'
// linearisations agree.

// equalityFirst holds the first stage of Settings.EqualitySteps.
type equalityFirst struct {
	eq *AdaNP // the equalities alone: a's settings, at most EqualitySteps steps, Unrolled
}

// newEqualityStage builds a.eqf for Settings.EqualitySteps.
func (a *AdaNP) newEqualityStage() error {
	k := a.s.EqualitySteps
	if k == 0 {
		return nil
	}
	fb, ok := a.c.(*fbConstraint)
	switch {
	case !ok:
		return errors.New("enforce: Settings.EqualitySteps steps on the equalities of a constraint made by WithInequalities; this constraint is not one")
	case fb.eq == nil:
		return errors.New("enforce: Settings.EqualitySteps: the constraint made by WithInequalities has no equalities")
	case a.s.Weights == BatchDiagonal || a.s.Weights == TrainableDiagonal:
		return fmt.Errorf("enforce: Settings.EqualitySteps does not support %v weights", a.s.Weights)
	}
	s := a.s.withoutSmoothing()
	s.EqualitySteps, s.Chord, s.ChordCG, s.RequireTol = 0, 0, 0, false
	s.Grad = Unrolled
	s.StopWhenFeasible = false // the equalities alone: their residual is the measure
	s.MaxDepth = k
	s.MinDepth = min(s.MinDepth, k)
	eq, err := NewAdaNP(fb.eq.c, s)
	if err != nil {
		return fmt.Errorf("enforce: Settings.EqualitySteps' equality stage: %w", err)
	}
	a.eqf = &equalityFirst{eq: eq}
	return nil
}

// forwardEqualityFirst is forward (and ProjectLatent, with lat) for
// Settings.EqualitySteps: the equality stage from ŷ, then this AdaNP's
// projection from its point, recorded in tr (the stage's own trace hangs
// off tr). Stats describe the whole projection: depths add up, and Before
// and Displacement are measured from ŷ on the whole system.
func (a *AdaNP) forwardEqualityFirst(dst, x, yhat *mat.Dense, tr *Trace, dinv []float64, lat *mat.Dense) (Stats, error) {
	xr, _, rows, err := a.checkShapes(x, yhat, "ŷ")
	if err != nil {
		return Stats{}, err
	}
	// dst may be ŷ itself, and lat receives the final multipliers.
	yhat = mat.DenseCopyOf(yhat)
	var te *Trace
	if tr != nil {
		if tr.eqStage == nil {
			tr.eqStage = new(Trace)
		}
		te = tr.eqStage
	}
	r0 := newSampleResults(rows)
	y0 := mat.NewDense(rows, a.ny, nil)
	if _, err := a.eqf.eq.forwardPass(y0, x, yhat, te, false, dinv, &passIO{out: r0}); err != nil {
		return Stats{}, err
	}
	// After the stage, which rejects x and ŷ that are not finite, and
	// before the second, which overwrites lat.
	before := newSampleResults(rows)
	if err := a.measureBefore(xr, yhat, lat, before); err != nil {
		return Stats{}, err
	}
	res := newSampleResults(rows)
	if a.sm != nil {
		_, err = a.forwardSmoothed(dst, x, y0, tr, dinv, lat, res)
	} else {
		_, err = a.forwardPass(dst, x, y0, tr, false, dinv, &passIO{out: res, latent: lat})
	}
	var te2 *ToleranceError
	if err != nil && !errors.As(err, &te2) {
		return Stats{}, err
	}
	yr := yhat.RawMatrix()
	for s := range rows {
		res.depth[s] += r0.depth[s]
		res.flags[s] |= r0.flags[s] & flagClamped
		res.disp[s] = distance(dst.RawRowView(s), dense.Row(yr, s))
		res.beforeMax[s], res.beforeSum[s] = before.beforeMax[s], before.beforeSum[s]
	}
	return a.stagedStats(res, rows)
}

// measureBefore writes into res the residual of the whole system at ŷ,
// with the latent variables at their start (lat's rows, else zero), as a
// pass that started there would have measured it: one evaluation of the
// constraint per sample, as the pass evaluates it (eval), without the
// Jacobian. A panic in constraint code is an error naming the sample.
func (a *AdaNP) measureBefore(x blas64.General, yhat, lat *mat.Dense, res *sampleResults) (err error) {
	yext := make([]float64, a.n)
	c := make([]float64, a.nc)
	s := 0
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("enforce: sample %d: constraint code panicked: %v", s, r)
		}
	}()
	rows, _ := yhat.Dims()
	for s = range rows {
		copy(yext, yhat.RawRowView(s))
		if lat != nil {
			copy(yext[a.ny:], lat.RawRowView(s))
		} else {
			clear(yext[a.ny:])
		}
		a.eval(dense.Row(x, s), yext, c, nil)
		res.beforeMax[s], res.beforeSum[s] = absStats(c)
	}
	return nil
}

// vjpEqualityFirst is vjp for Settings.EqualitySteps: through this AdaNP's
// projection (its gradient mode, smoothed stages included) to the point
// the equality stage reached, then through the equality stage's steps
// (Unrolled).
func (a *AdaNP) vjpEqualityFirst(tr *Trace, grad, gyhat, gx *mat.Dense) error {
	if tr == nil || tr.a != a || tr.eqStage == nil || tr.eqStage.a != a.eqf.eq {
		return errors.New("enforce: trace was not recorded by this AdaNP")
	}
	rows := tr.rows
	if err := a.checkGrad(grad, rows); err != nil {
		return err
	}
	if gyhat == nil {
		gyhat = mat.NewDense(rows, a.ny, nil)
	}
	g1 := mat.NewDense(rows, a.ny, nil)
	var gx1 *mat.Dense
	if gx != nil {
		gx1 = mat.NewDense(rows, a.nx, nil)
	}
	if err := a.vjpStage(tr, grad, g1, gx1, nil); err != nil {
		return err
	}
	inexact := append([]bool(nil), tr.inexact...)
	if err := a.eqf.eq.vjpPass(tr.eqStage, g1, gyhat, gx, nil); err != nil {
		return err
	}
	if gx != nil {
		gx.Add(gx, gx1)
	}
	for s, v := range tr.eqStage.inexact {
		inexact[s] = inexact[s] || v
	}
	tr.setGradStats(grad, gyhat, inexact)
	return nil
}
