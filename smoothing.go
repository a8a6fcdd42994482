package enforce

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/dense"
)

// This file holds the continuation of Settings.Smoothing: a projection
// made of two AdaNP stages, the first onto the constraint smoothed with a
// larger ε_FB, the second onto the constraint itself from the first's
// point. The stages are whole AdaNPs (each with its own trace), so every
// path, scheduler and gradient mode composes as it is.

// smoothingTolRatio sets the first stage's tolerance, relative to its ε_FB.
const smoothingTolRatio = 0.1

// newSmoothingStage builds a.pre for Settings.Smoothing.
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
	s0 := a.s
	s0.Smoothing, s0.RequireTol, s0.MinDepth = 0, false, 0
	s0.Tol = math.Max(a.s.Tol, smoothingTolRatio*a.s.Smoothing)
	pre, err := NewAdaNP(c0, s0)
	if err != nil {
		return fmt.Errorf("enforce: Settings.Smoothing's first stage: %w", err)
	}
	a.pre = pre
	return nil
}

// forwardSmoothed is forward for a smoothed projection: the first stage
// from ŷ into a temporary, the second from there into dst, with the
// per-sample depths added and Before and Displacement measured from ŷ.
func (a *AdaNP) forwardSmoothed(dst, x, yhat *mat.Dense, tr *Trace, dinv []float64) (Stats, error) {
	_, yr, rows, err := a.checkShapes(x, yhat, "ŷ")
	if err != nil {
		return Stats{}, err
	}
	y0 := mat.NewDense(rows, a.ny, nil)
	var tr0 *Trace
	if tr != nil {
		if tr.pre == nil {
			tr.pre = new(Trace)
		}
		tr0 = tr.pre
	}
	io := &passIO{outDepth: make([]int, rows), outFlags: make([]uint8, rows)}
	if _, err := a.pre.forwardPass(y0, x, yhat, tr0, false, dinv, io); err != nil {
		return Stats{}, err
	}
	io = &passIO{addDepth: io.outDepth, addFlags: io.outFlags}
	st, err := a.forwardPass(dst, x, y0, tr, false, dinv, io)
	if err != nil && !errors.As(err, new(*ToleranceError)) {
		return Stats{}, err
	}
	before, bErr := a.residualAt(x, yr, rows)
	if bErr != nil {
		return Stats{}, bErr
	}
	st.Before = before
	st.Displacement = Residual{}
	for s := range rows {
		d := floatsDistance(dst.RawRowView(s), dense.Row(yr, s))
		st.Displacement.Max = math.Max(st.Displacement.Max, d)
		st.Displacement.Mean += d
	}
	st.Displacement.Mean /= float64(rows)
	return st, err
}

// floatsDistance returns ‖u − v‖₂.
func floatsDistance(u, v []float64) float64 {
	var s float64
	for i, x := range u {
		d := x - v[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// residualAt returns the max and mean |c| over the rows of the batch at
// (x, ŷ) with zero latent variables: Stats.Before of a projection.
func (a *AdaNP) residualAt(x *mat.Dense, yr blas64.General, rows int) (Residual, error) {
	ws := a.pool.Get().(*workspace)
	defer a.pool.Put(ws)
	var r Residual
	y, c := ws.yNew, ws.cNew
	for s := range rows {
		var xs []float64
		if x != nil && a.nx > 0 {
			xs = x.RawRowView(s)
		}
		copy(y, dense.Row(yr, s))
		clear(y[a.ny:])
		a.eval(xs, y, c, ws.bEval)
		mx, sum := absStats(c)
		r.Max = math.Max(r.Max, mx)
		r.Mean += sum
	}
	r.Mean /= float64(rows * a.nc)
	return r, nil
}

// vjpSmoothed is vjp for a smoothed projection: through the second stage,
// then the first, with the x-gradients added and GradStats of the whole.
func (a *AdaNP) vjpSmoothed(tr *Trace, grad, gyhat, gx *mat.Dense) error {
	if tr == nil || tr.a != a || tr.pre == nil || tr.pre.a != a.pre {
		return errors.New("enforce: trace was not recorded by this AdaNP")
	}
	rows := tr.rows
	g1 := mat.NewDense(rows, a.ny, nil)
	var gx1 *mat.Dense
	if gx != nil {
		gx1 = mat.NewDense(rows, a.nx, nil)
	}
	if err := a.vjpPass(tr, grad, g1, gx1, nil); err != nil {
		return err
	}
	if gyhat == nil {
		gyhat = mat.NewDense(rows, a.ny, nil)
	}
	if err := a.pre.vjpPass(tr.pre, g1, gyhat, gx, nil); err != nil {
		return err
	}
	if gx != nil {
		gx.Add(gx, gx1)
	}
	gs := GradStats{Samples: rows}
	for s := range rows {
		if tr.inexact[s] || tr.pre.inexact[s] {
			gs.Inexact++
		}
		gain := 0.0
		if n := mat.Norm(grad.RowView(s), 2); n > 0 {
			gain = mat.Norm(gyhat.RowView(s), 2) / n
		}
		gs.MaxGain = math.Max(gs.MaxGain, gain)
		if gain > GainWarning {
			gs.Amplified++
		}
	}
	tr.grad = gs
	return nil
}
