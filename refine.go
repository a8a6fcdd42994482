package enforce

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// RefineStats describes a Refine call.
type RefineStats struct {
	// Stages holds the Stats of each stage that ran, in order, over the
	// rows it projected (its Samples is their number, its Missed indexes
	// them, not the batch). A stage runs only while rows are left above
	// the tolerance, so Stages may be shorter than the stages given.
	Stages []Stats
	// Missed lists, in increasing order, the rows of the batch still
	// above the tolerance: those the last stage that ran left above its
	// own, or the rows Refine was given if no stage ran. It is nil when
	// every row given was brought within a stage's tolerance.
	Missed []int
}

// Refine projects again the rows of y listed in missed, the rows an
// earlier projection of the batch (x, y) left above its tolerance
// (Stats.Missed), with each AdaNP of stages in turn: the first stage
// projects those rows from where they stopped, and each later stage the
// rows the stage before it left above its own tolerance. It writes the
// projected rows into y and leaves the other rows as they are, bit for
// bit. A stage whose constraint has latent variables (WithInequalities'
// multipliers) starts them afresh at zero, as every projection does.
//
// Its use is a continuation in a parameter of the constraint, most of
// all the smoothing ε of WithInequalities' Fischer–Burmeister rows: a
// large ε converges in few steps from far off but has no zero within
// the tolerance where the feasible set is thinner than the margin
// ε/(2λ) it imposes at the active inequalities, while a small ε
// converges from a nearby point but can stall from far off where the
// active set must change. Projecting with the large ε and refining the
// rows it missed with a small one (for example WithInequalities of the
// same eq and g with ε/100) gets both; docs/acopf-dc3.md measures it on
// a power grid. A stage may as well be the same constraint under other
// Settings (a larger MaxDepth, LineSearch).
//
// Every stage must have the dimensions (nx, ny) of the batch. Refine
// returns an error, before projecting anything, for no stages, a nil
// stage, a stage whose dimensions differ from x's or y's, missed rows
// that are out of range, repeated or not increasing, a stage other than
// the last with Settings.RequireTol (its misses go to the next stage, so
// the setting could not be honoured), or a stage with TrainableDiagonal
// weights (which need θ). It returns a stage's other errors as they
// are, with y holding the rows projected so far. With RequireTol on the
// last stage, rows it leaves above its tolerance are an error wrapping
// a *ToleranceError whose Samples are rows of the batch (y holds the
// projection, as for AdaNP.ProjectTo).
func Refine(x, y *mat.Dense, missed []int, stages ...*AdaNP) (RefineStats, error) {
	if y == nil || y.IsEmpty() {
		return RefineStats{}, errors.New("enforce: Refine: nil or empty y")
	}
	rows, ny := y.Dims()
	nx := 0
	if x != nil && !x.IsEmpty() {
		var xr int
		xr, nx = x.Dims()
		if xr != rows {
			return RefineStats{}, fmt.Errorf("enforce: Refine: x has %d rows, y has %d", xr, rows)
		}
	}
	if len(stages) == 0 {
		return RefineStats{}, errors.New("enforce: Refine: no stages")
	}
	for k, a := range stages {
		switch {
		case a == nil:
			return RefineStats{}, fmt.Errorf("enforce: Refine: stage %d is nil", k)
		case a.nx != nx || a.ny != ny:
			return RefineStats{}, fmt.Errorf("enforce: Refine: stage %d has (nx, ny) = (%d, %d), the batch (%d, %d)", k, a.nx, a.ny, nx, ny)
		case a.s.RequireTol && k < len(stages)-1:
			return RefineStats{}, fmt.Errorf("enforce: Refine: stage %d of %d sets RequireTol: only the last stage's can be honoured (the others pass their misses on)", k, len(stages))
		case a.s.Weights == TrainableDiagonal:
			return RefineStats{}, fmt.Errorf("enforce: Refine: stage %d has trainable-diagonal weights, which need θ", k)
		}
	}
	for i, r := range missed {
		if r < 0 || r >= rows || i > 0 && r <= missed[i-1] {
			return RefineStats{}, fmt.Errorf("enforce: Refine: missed[%d] = %d: want increasing rows in [0, %d)", i, r, rows)
		}
	}
	rs := RefineStats{Missed: append([]int(nil), missed...)}
	if len(missed) == 0 {
		rs.Missed = nil
	}
	for _, a := range stages {
		if len(rs.Missed) == 0 {
			break
		}
		var xs *mat.Dense
		if nx > 0 {
			xs = gatherRows(x, rs.Missed)
		}
		ys := gatherRows(y, rs.Missed)
		st, err := a.ProjectTo(ys, xs, ys)
		var te *ToleranceError
		if err != nil && !errors.As(err, &te) {
			return rs, err
		}
		rs.Stages = append(rs.Stages, st)
		for j, i := range rs.Missed {
			y.SetRow(i, ys.RawRowView(j))
		}
		left := make([]int, 0, len(st.Missed))
		for _, j := range st.Missed {
			left = append(left, rs.Missed[j])
		}
		if len(left) == 0 {
			left = nil
		}
		rs.Missed = left
		if te != nil {
			return rs, &ToleranceError{Samples: append([]int(nil), left...), Rows: rows, Tol: te.Tol, Measure: te.Measure}
		}
	}
	return rs, nil
}
