package enforce

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Box holds bounds Lo ≤ y ≤ Hi on the predicted outputs, for Interior.
// Both have length ny; −Inf in Lo and +Inf in Hi mark a side without a
// bound, and Lo[k] == Hi[k] pins y_k to that value.
type Box struct {
	Lo, Hi []float64
}

// DefaultInteriorMargin is the distance inside its bounds to which
// Interior moves a predicted value that lies on, beyond or nearer than it
// to its bounds (a quarter of the box's width where that is narrower).
const DefaultInteriorMargin = 1e-4

// interiorTau is the fraction of the step to the nearest bound that an
// Interior step may take at most: the iterates stay strictly inside.
const interiorTau = 0.99

// Interior projects onto equality constraints c(x, y) = 0 while keeping y
// strictly inside box bounds: an alternative to WithInequalities for
// bounds on the outputs, for the samples where its Fischer–Burmeister rows
// stall. It is a Newton iteration with affine scaling: each step is an
// AdaNP step
//
//	δ = −D·Bᵀ(B·D·Bᵀ + εI)⁻¹·c,   D_k = W⁻¹_k · min(d_k, 1)²,
//
// where d_k is the distance of y_k to the bound it moves toward: on the
// first step the nearer bound, on later ones the bound on the side the
// previous step moved y_k (the other bound once the step has turned), so
// that a variable close to a bound hardly moves toward it, moves freely
// away from it, and the others take up the residual; a variable without
// bounds has d_k = 1. The step is then shortened to at most 99 % of the
// way to the first bound it would cross, and halved (at most 30 times)
// until ‖c‖² decreases by the Armijo rule (σ = 1e-4): every step keeps y
// strictly inside and decreases ‖c‖. Before the first step every bounded
// value is moved inside its box by the margin of NewInterior (at most a
// quarter of the box's width), and every pinned one (Lo = Hi) onto its
// value, where it stays.
//
// Where WithInequalities' Fischer–Burmeister rows stall because the set
// of active bounds must change (their Gauss–Newton step near the corners
// of the complementarity rows: docs/acopf-dc3.md), Interior need not find
// the active set: a bound that the solution must approach is approached
// geometrically. What it gives up: its answer is a feasible point near the
// start, not the nearest one (on the power grids of docs/acopf.md it is
// several times farther from ŷ than the nearest point), and no gradient
// is defined through it: it is an inference-time projection, for the rows
// an AdaNP left above its tolerance (RefineRows) or for a whole batch.
// Convergence needs the Jacobian of c with respect to the variables away
// from their bounds to keep full row rank, and is not guaranteed: from
// large perturbations of a 10 000-bus grid it crawls (docs/acopf.md). A
// sample whose step cannot decrease ‖c‖ stops and is counted in
// Stats.Stalled; every sample left above Tol is in Stats.Missed.
//
// Interior uses these fields of its Settings: Tol, MaxDepth (steps per
// sample), Measure, Reg, Weights (Identity, or Diagonal with Diag, as W
// above), Precision, Path and RequireTol; the others must be zero (MinDepth
// may be 1: a sample already within Tol takes no step). An Interior is
// safe for concurrent use.
type Interior struct {
	c      Constraint
	nx, ny int
	nc     int
	lo, hi []float64
	margin float64
	s      Settings
	winv   []float64 // W⁻¹ of Settings.Diag (ones for Identity)
	// pool holds one AdaNP (Diagonal weights, one step) per worker: each
	// step overwrites its W⁻¹.
	pool sync.Pool
}

// pinnedWeight is the W⁻¹ factor of a pinned variable in Interior's steps:
// not zero, which could make G singular, and too small to matter (pinned
// variables are not moved).
const pinnedWeight = 1e-12

// NewInterior returns an Interior projection onto c within b. margin is
// the distance inside the bounds at which it starts a value that lies on,
// beyond or closer than that to its bounds (0 for DefaultInteriorMargin).
// It returns an error for a constraint with latent variables
// (WithInequalities' systems: give the equalities, and the bounds in b),
// bounds of the wrong length, NaN, Lo > Hi, Lo = +Inf or Hi = −Inf, Lo < Hi
// with no float64 strictly between them, a
// negative or non-finite margin, and Settings that Interior does not use
// set to anything but zero (see Interior).
func NewInterior(c Constraint, b Box, margin float64, s Settings) (*Interior, error) {
	if c == nil {
		return nil, errors.New("enforce: NewInterior: nil constraint")
	}
	if err := CheckCapable(c); err != nil {
		return nil, fmt.Errorf("enforce: NewInterior: %w", err)
	}
	nx, ny, nc := c.Dims()
	k := CapabilitiesOf(c)
	if k.Latent != 0 {
		return nil, fmt.Errorf("enforce: NewInterior: the constraint has %d latent variables (a WithInequalities system?): give Interior the equalities, and the bounds as a Box", k.Latent)
	}
	if len(b.Lo) != ny || len(b.Hi) != ny {
		return nil, fmt.Errorf("enforce: NewInterior: Box has %d lower and %d upper bounds, want ny = %d", len(b.Lo), len(b.Hi), ny)
	}
	for i := range ny {
		lo, hi := b.Lo[i], b.Hi[i]
		switch {
		case math.IsNaN(lo) || math.IsNaN(hi):
			return nil, fmt.Errorf("enforce: NewInterior: NaN bound of y[%d]", i)
		case lo > hi:
			return nil, fmt.Errorf("enforce: NewInterior: y[%d] has Lo %v > Hi %v", i, lo, hi)
		case math.IsInf(lo, 1) || math.IsInf(hi, -1):
			return nil, fmt.Errorf("enforce: NewInterior: y[%d] has bounds [%v, %v]: no finite value fits", i, lo, hi)
		case lo < hi && !(math.Nextafter(lo, hi) < hi):
			return nil, fmt.Errorf("enforce: NewInterior: y[%d] has bounds [%v, %v]: no number lies strictly between them (pin it with Lo = Hi)", i, lo, hi)
		}
	}
	if margin < 0 || math.IsNaN(margin) || math.IsInf(margin, 0) {
		return nil, fmt.Errorf("enforce: NewInterior: margin %v, want non-negative and finite", margin)
	}
	if margin == 0 {
		margin = DefaultInteriorMargin
	}
	switch {
	case s.MinDepth > 1:
		return nil, fmt.Errorf("enforce: NewInterior: Settings.MinDepth %d: Interior stops as soon as a sample is within Tol (want 0 or 1)", s.MinDepth)
	case s.Grad != Unrolled || s.Recompute:
		return nil, errors.New("enforce: NewInterior: Settings.Grad and Recompute are for gradients, which Interior does not define: leave them zero")
	case s.MaxStep != 0 || s.LineSearch || s.Damping != 0:
		return nil, errors.New("enforce: NewInterior: Settings.MaxStep, LineSearch and Damping are not used (Interior shortens its steps itself): leave them zero")
	case s.Weights != Identity && s.Weights != Diagonal:
		return nil, fmt.Errorf("enforce: NewInterior: Settings.Weights %v: Interior takes Identity or Diagonal", s.Weights)
	}
	chk, err := s.withDefaults(ny)
	if err != nil {
		return nil, err
	}
	p := &Interior{
		c: c, nx: nx, ny: ny, nc: nc, margin: margin, s: chk,
		lo: append([]float64(nil), b.Lo...), hi: append([]float64(nil), b.Hi...),
		winv: make([]float64, ny),
	}
	for i := range p.winv {
		p.winv[i] = 1
		if chk.Weights == Diagonal {
			p.winv[i] = 1 / chk.Diag[i]
		}
	}
	// The step's AdaNP: Diagonal weights that every step overwrites, one
	// step per call. A constant Jacobian is hidden from it: AdaNP would
	// factor G once, with the weights of construction.
	k.ConstantJacobian, k.linear = nil, nil
	wc := &interiorConstraint{Constraint: c, k: k}
	step := Settings{
		Tol: chk.Tol, MinDepth: 1, MaxDepth: 1, Measure: chk.Measure, Reg: chk.Reg,
		Weights: Diagonal, Diag: make([]float64, ny), Precision: chk.Precision, Path: chk.Path,
	}
	for i := range step.Diag {
		step.Diag[i] = 1
	}
	first, err := NewAdaNP(wc, step)
	if err != nil {
		return nil, err
	}
	p.pool.New = func() any {
		a, err := NewAdaNP(wc, step)
		if err != nil {
			return err
		}
		return a
	}
	p.pool.Put(first)
	return p, nil
}

// interiorConstraint is a constraint with its capabilities replaced.
type interiorConstraint struct {
	Constraint
	k Capabilities
}

func (c *interiorConstraint) Capabilities() Capabilities { return c.k }

// Dims returns the constraint's (nx, ny).
func (p *Interior) Dims() (nx, ny int) { return p.nx, p.ny }

// Settings returns the settings in use, defaults filled in.
func (p *Interior) Settings() Settings {
	s := p.s
	s.Diag = append([]float64(nil), s.Diag...)
	return s
}

// Project returns the projection of the rows of yhat for inputs x (nil
// when nx = 0), with Stats as AdaNP.Project's: Depth and MeanDepth count
// Interior's steps, Missed lists the rows above Tol after MaxDepth steps,
// or stopped early (Stalled: no step length decreased ‖c‖; Stopped: a
// step that was not finite). Every output lies within its bounds:
// strictly inside where Lo < Hi, on the value where Lo = Hi. It returns an
// error for mismatched shapes or non-finite inputs, and, with RequireTol,
// nil ỹ and a *ToleranceError listing the rows that missed.
func (p *Interior) Project(x, yhat *mat.Dense) (*mat.Dense, Stats, error) {
	if yhat == nil || yhat.IsEmpty() {
		return nil, Stats{}, errors.New("enforce: Interior.Project: nil or empty ŷ")
	}
	r, _ := yhat.Dims()
	dst := mat.NewDense(r, p.ny, nil)
	st, err := p.ProjectTo(dst, x, yhat)
	if err != nil {
		return nil, st, err
	}
	return dst, st, nil
}

// ProjectTo is Project writing into dst (rows×ny; it may be yhat). With
// RequireTol, dst holds the projection when the error is a
// *ToleranceError.
func (p *Interior) ProjectTo(dst, x, yhat *mat.Dense) (Stats, error) {
	if yhat == nil || yhat.IsEmpty() {
		return Stats{}, errors.New("enforce: Interior.ProjectTo: nil or empty ŷ")
	}
	rows, ny := yhat.Dims()
	if ny != p.ny {
		return Stats{}, fmt.Errorf("enforce: Interior.ProjectTo: ŷ has %d columns, want ny = %d", ny, p.ny)
	}
	if dst == nil {
		return Stats{}, errors.New("enforce: Interior.ProjectTo: nil dst")
	}
	if r, c := dst.Dims(); r != rows || c != ny {
		return Stats{}, fmt.Errorf("enforce: Interior.ProjectTo: dst is %d×%d, want %d×%d", r, c, rows, ny)
	}
	if err := p.checkRows(x, yhat, nil); err != nil {
		return Stats{}, err
	}
	if dst != yhat {
		dst.Copy(yhat)
	}
	all := make([]int, rows)
	for i := range all {
		all[i] = i
	}
	return p.RefineRows(x, dst, all)
}

// checkRows validates x and the listed rows of y (every row when rows is
// nil).
func (p *Interior) checkRows(x, y *mat.Dense, rows []int) error {
	n, ny := y.Dims()
	if ny != p.ny {
		return fmt.Errorf("enforce: Interior: y has %d columns, want ny = %d", ny, p.ny)
	}
	if p.nx > 0 {
		if x == nil || x.IsEmpty() {
			return fmt.Errorf("enforce: Interior: nil x for a constraint with nx = %d", p.nx)
		}
		if xr, xc := x.Dims(); xr != n || xc != p.nx {
			return fmt.Errorf("enforce: Interior: x is %d×%d, want %d×%d", xr, xc, n, p.nx)
		}
	}
	check := func(r int) error {
		if !allFinite(y.RawRowView(r)) || p.nx > 0 && !allFinite(x.RawRowView(r)) {
			return fmt.Errorf("enforce: Interior: row %d of x or y is not finite", r)
		}
		return nil
	}
	if rows == nil {
		for r := range n {
			if err := check(r); err != nil {
				return err
			}
		}
		return nil
	}
	for i, r := range rows {
		if r < 0 || r >= n || i > 0 && r <= rows[i-1] {
			return fmt.Errorf("enforce: Interior: rows[%d] = %d: want increasing rows in [0, %d)", i, r, n)
		}
		if err := check(r); err != nil {
			return err
		}
	}
	return nil
}

// RefineRows projects the listed rows of y in place, for instance
// Stats.Missed of an AdaNP's projection of the batch, and leaves the other
// rows as they are, bit for bit. rows must be increasing and within the
// batch. Its Stats cover the listed rows (Samples is their number), but
// Missed holds rows of the batch. It returns the errors of Project, before
// projecting anything (with RequireTol, after: y then holds the
// projection).
func (p *Interior) RefineRows(x, y *mat.Dense, rows []int) (Stats, error) {
	if y == nil || y.IsEmpty() {
		return Stats{}, errors.New("enforce: Interior.RefineRows: nil or empty y")
	}
	if rows == nil {
		rows = []int{}
	}
	if err := p.checkRows(x, y, rows); err != nil {
		return Stats{}, err
	}
	n, _ := y.Dims()
	res := make([]interiorResult, len(rows))
	workers := min(runtime.GOMAXPROCS(0), len(rows))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := p.pool.Get()
			a, ok := v.(*AdaNP)
			if !ok {
				err := v.(error)
				for j := range next {
					res[j].err = err
				}
				return
			}
			defer p.pool.Put(a)
			w := p.newWork()
			for j := range next {
				var xi []float64
				if p.nx > 0 {
					xi = x.RawRowView(rows[j])
				}
				res[j] = p.one(a, w, xi, y.RawRowView(rows[j]))
			}
		}()
	}
	for j := range rows {
		next <- j
	}
	close(next)
	wg.Wait()
	st := Stats{Samples: len(rows)}
	var sumDepth, sumDisp, sumB, sumA float64
	for j, r := range res {
		if r.err != nil {
			return st, r.err
		}
		st.Depth = max(st.Depth, r.depth)
		sumDepth += float64(r.depth)
		sumDisp += r.disp
		st.Displacement.Max = math.Max(st.Displacement.Max, r.disp)
		st.Before.Max = math.Max(st.Before.Max, r.beforeMax)
		st.After.Max = math.Max(st.After.Max, r.afterMax)
		sumB += r.beforeSum
		sumA += r.afterSum
		if r.stopped {
			st.Stopped++
		}
		if r.stalled {
			st.Stalled++
		}
		if r.clamped {
			st.Clamped++
		}
		if !r.ok {
			st.NotConverged++
			st.Missed = append(st.Missed, rows[j])
		}
	}
	if m := len(rows); m > 0 {
		st.MeanDepth = sumDepth / float64(m)
		st.Displacement.Mean = sumDisp / float64(m)
		if p.nc > 0 {
			st.Before.Mean = sumB / float64(m*p.nc)
			st.After.Mean = sumA / float64(m*p.nc)
		}
	}
	if len(st.Missed) > 0 && p.s.RequireTol {
		return st, &ToleranceError{Samples: append([]int(nil), st.Missed...), Rows: n, Tol: p.s.Tol, Measure: p.s.Measure}
	}
	return st, nil
}

// interiorResult is what the projection of one sample gives.
type interiorResult struct {
	depth                         int
	beforeMax, beforeSum          float64 // of |c| before projecting
	afterMax, afterSum            float64 // and after
	disp                          float64 // ‖ỹ − ŷ‖
	ok, stopped, stalled, clamped bool
	err                           error
}

// interiorWork is one worker's scratch.
type interiorWork struct {
	c, c2      []float64 // c at y and at a trial point
	y0, yt     []float64 // ŷ, the trial point
	dir        []float64 // the last step
	xm, ym, yn *mat.Dense
}

func (p *Interior) newWork() *interiorWork {
	w := &interiorWork{
		c: make([]float64, p.nc), c2: make([]float64, p.nc),
		y0: make([]float64, p.ny), yt: make([]float64, p.ny), dir: make([]float64, p.ny),
		ym: mat.NewDense(1, p.ny, nil), yn: mat.NewDense(1, p.ny, nil),
	}
	if p.nx > 0 {
		w.xm = mat.NewDense(1, p.nx, nil)
	}
	return w
}

// inside moves y into its box: a pinned value onto its bound, a bounded
// one at least the margin inside (at most a quarter of the width).
func (p *Interior) inside(y []float64) {
	for k, v := range y {
		lo, hi := p.lo[k], p.hi[k]
		switch {
		case lo == hi:
			y[k] = lo
			continue
		case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			continue
		}
		m := p.margin
		if w := hi - lo; !math.IsInf(w, 1) {
			m = math.Min(m, w/4)
		}
		y[k] = strictlyInside(math.Min(math.Max(v, lo+m), hi-m), lo, hi)
	}
}

// strictlyInside returns v if lo < v < hi, and otherwise a value that is:
// the midpoint, or the number next to lo where rounding (bounds far larger
// than the margin, or a box a few ulps wide) leaves no other.
func strictlyInside(v, lo, hi float64) float64 {
	if lo < v && v < hi {
		return v
	}
	if mid := lo/2 + hi/2; lo < mid && mid < hi {
		return mid
	}
	return math.Nextafter(lo, hi)
}

// trial writes y + α·dir into w.yt and reports whether every bounded
// value stays strictly inside (rounding can put a value that close to its
// bound onto it).
func (p *Interior) trial(w *interiorWork, y []float64, alpha float64) bool {
	for k, v := range y {
		t := v + alpha*w.dir[k]
		if lo, hi := p.lo[k], p.hi[k]; lo != hi && (t <= lo || t >= hi) {
			return false
		}
		w.yt[k] = t
	}
	return true
}

// one projects one sample y in place.
func (p *Interior) one(a *AdaNP, w *interiorWork, x, y []float64) (r interiorResult) {
	copy(w.y0, y)
	p.c.Eval(x, y, w.c, nil)
	r.beforeMax, r.beforeSum = absStats(w.c)
	p.inside(y)
	if w.xm != nil {
		copy(w.xm.RawRowView(0), x)
	}
	clear(w.dir)
	for {
		p.c.Eval(x, y, w.c, nil)
		res := p.s.Measure.reduce(w.c)
		if math.IsNaN(res) || math.IsInf(res, 0) {
			// Only at the start: a step to a non-finite residual is
			// rejected by the line search below.
			r.stopped = true
			break
		}
		if res <= p.s.Tol {
			r.ok = true
			break
		}
		if r.depth == p.s.MaxDepth {
			break
		}
		// D_k: the distance to the bound y_k moves toward (the nearer
		// one before the first step), capped at 1.
		for k, v := range y {
			lo, hi := p.lo[k], p.hi[k]
			d := 1.0
			switch {
			case lo == hi:
				a.diagInv[k] = p.winv[k] * pinnedWeight
				continue
			case math.IsInf(lo, -1) && math.IsInf(hi, 1):
			case w.dir[k] < 0:
				d = math.Min(v-lo, 1)
			case w.dir[k] > 0:
				d = math.Min(hi-v, 1)
			default:
				d = math.Min(math.Min(v-lo, hi-v), 1)
			}
			a.diagInv[k] = p.winv[k] * d * d
		}
		copy(w.ym.RawRowView(0), y)
		st, err := a.ProjectTo(w.yn, w.xm, w.ym)
		if err != nil {
			r.err = err
			return r
		}
		r.clamped = r.clamped || st.Clamped > 0
		yn := w.yn.RawRowView(0)
		if st.Stopped > 0 || !allFinite(yn) {
			r.stopped = true
			break
		}
		// The fraction to the boundary, then Armijo's rule on ‖c‖²
		// (the Gauss–Newton step's slope is −2‖c‖²).
		alpha := 1.0
		for k, v := range y {
			lo, hi := p.lo[k], p.hi[k]
			w.dir[k] = yn[k] - v
			switch dk := w.dir[k]; {
			case lo == hi:
				w.dir[k] = 0
			case dk < 0 && !math.IsInf(lo, -1):
				alpha = math.Min(alpha, interiorTau*(v-lo)/-dk)
			case dk > 0 && !math.IsInf(hi, 1):
				alpha = math.Min(alpha, interiorTau*(hi-v)/dk)
			}
		}
		m0, accepted := merit(w.c), false
		for range 30 {
			if !p.trial(w, y, alpha) {
				// Rounded onto a bound: shorter.
				alpha /= 2
				continue
			}
			p.c.Eval(x, w.yt, w.c2, nil)
			// Bδ = −c, so the merit ½‖c‖² falls at rate ‖c‖² = 2·m0.
			if armijo(merit(w.c2), m0, 2*m0, alpha) {
				accepted = true
				break
			}
			alpha /= 2
		}
		if !accepted {
			r.stalled = true
			break
		}
		copy(y, w.yt)
		r.depth++
	}
	p.c.Eval(x, y, w.c, nil)
	r.afterMax, r.afterSum = absStats(w.c)
	for k, v := range y {
		d := v - w.y0[k]
		r.disp += d * d
	}
	r.disp = math.Sqrt(r.disp)
	return r
}
