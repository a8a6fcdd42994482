package enforce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
)

// patternCheck is the check of a declared sparse pattern that AdaNP runs
// at its first projection (checkPattern). Once it has reached a verdict
// on a sample, every later projection returns that verdict (nil or the
// *PatternError) without checking again.
type patternCheck struct {
	done atomic.Bool
	mu   sync.Mutex
	err  error
}

// Tolerances of the first projection's pattern check, relative to the
// row's scale Σ_q |B_q·u_Col(q)| + |c_i|: the exact hyperdual product
// (SparseFunc, Func) differs from the compressed one by rounding only;
// finite differences by their truncation and rounding errors, which the
// check tells from a missing entry by shorter steps (fdRows).
const (
	patternTolExact = 1e-8
	patternTolFD    = 1e-6
)

// patternStepsFD are the finite-difference steps of the check, relative to
// max(1, |y_j|): each after the first is taken only for the rows still in
// doubt (see fdRows).
var patternStepsFD = [...]float64{1e-5, 1e-5 / 4, 1e-5 / 64, 1e-5 / 1024, 1e-5 / 16384}

// checkPattern runs, at the first projection of an AdaNP whose
// constraint declares Capabilities.Sparse, the default check of the
// declared pattern: at the first sample of the batch (or the last, when
// the first gives no verdict), the product ∂c/∂y·u with random vectors u computed without the pattern is
// compared, row by row, with the product of the declared values (the
// compressed Jacobian of a SparseFunc). A dependence that the pattern
// misses, or a wrong declared value, makes a row's products differ
// (unless the missing entry is zero at that point), and checkPattern
// returns a *PatternError naming the rows; CheckSparse locates the
// entries. For a SparseFunc (and a Func whose pattern NewAdaNP detected)
// the uncompressed product is one hyperdual evaluation of its function
// carrying two directions; for any other constraint it is a central
// finite difference of Sparse.Eval's c along u, confirmed by steps down
// to 1/16384 as long while a row is in doubt (fdRows). A sample costs
// one Sparse.Eval with values and one hyperdual evaluation, or two to ten
// evaluations of c: O(nnz + nc + ny) memory
// and time for a constraint whose evaluation is, never nc·ny.
//
// A sample whose x, ŷ, c or declared values are not finite gives no
// verdict (the projection reports it); nor do shapes that forward
// rejects. Those calls leave the check for the next projection.
func (a *AdaNP) checkPattern(x, yhat *mat.Dense) error {
	sj := a.k.Sparse
	if sj == nil {
		return nil
	}
	pc := &a.pattern
	if pc.done.Load() {
		return pc.err
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.done.Load() {
		return pc.err
	}
	xr, yr, rows, err := a.checkShapes(x, yhat, "ŷ")
	if err != nil {
		return nil
	}
	p := newPatternProbe(a, sj)
	samples := []int{0}
	if rows > 1 {
		samples = append(samples, rows-1)
	}
	for _, s := range samples {
		xs := xr.Data[s*xr.Stride : s*xr.Stride+a.nx]
		copy(p.y, yr.Data[s*yr.Stride:s*yr.Stride+a.ny])
		clear(p.y[a.ny:])
		verdict, err := p.run(xs, s)
		if !verdict {
			continue
		}
		pc.err = err
		pc.done.Store(true)
		return err
	}
	return nil
}

// patternProbe holds one check's vectors: O(nnz + nc + n).
type patternProbe struct {
	a        *AdaNP
	sj       *SparseJacobian
	exact    *funcConstraint // the uncompressed hyperdual function, if any
	detected bool            // the pattern was detected (Func), not declared
	rng      *rand.Rand
	y, u, u2 []float64 // n
	yp, ym   []float64 // n
	c, cp    []float64 // nc
	cm       []float64 // nc
	vals     []float64 // nnz
	bu, bu2  []float64 // nc: the declared values times u and u2
	scale    []float64 // nc
}

func newPatternProbe(a *AdaNP, sj *SparseJacobian) *patternProbe {
	n, nc := a.n, a.nc
	p := &patternProbe{
		a: a, sj: sj, rng: rand.New(rand.NewPCG(56, 1)),
		y: make([]float64, n), u: make([]float64, n), u2: make([]float64, n),
		yp: make([]float64, n), ym: make([]float64, n),
		c: make([]float64, nc), cp: make([]float64, nc), cm: make([]float64, nc),
		vals: make([]float64, sj.nnz()), bu: make([]float64, nc), bu2: make([]float64, nc),
		scale: make([]float64, nc),
	}
	switch c := a.c.(type) {
	case *sparseFunc:
		p.exact = &c.funcConstraint
		p.detected = c.detected
	}
	return p
}

// run checks the pattern at (x, p.y), sample s of the batch. It reports
// whether it reached a verdict, and the *PatternError if the verdict is
// that the pattern is wrong.
func (p *patternProbe) run(x []float64, s int) (verdict bool, err error) {
	defer func() {
		if recover() != nil { // the projection reports the panic
			verdict, err = false, nil
		}
	}()
	if !allFinite(x) || !allFinite(p.y) {
		return false, nil
	}
	p.sj.Eval(x, p.y, p.c, p.vals)
	if !allFinite(p.c) || !allFinite(p.vals) {
		return false, nil
	}
	// Directions of random signs and magnitudes in [0.5, 1], scaled by
	// max(1, |y_j|) so that a finite-difference step is relative.
	for j := range p.u {
		w := max(1, math.Abs(p.y[j]))
		p.u[j] = w * (0.5 + 0.5*p.rng.Float64()) * float64(1-2*p.rng.IntN(2))
		p.u2[j] = w * (0.5 + 0.5*p.rng.Float64()) * float64(1-2*p.rng.IntN(2))
	}
	p.declaredProducts()
	var bad []int
	if p.exact != nil {
		bad = p.exactRows(x)
	} else {
		bad = p.fdRows(x)
	}
	if bad == nil {
		return false, nil // a non-finite product: no verdict
	}
	if len(bad) == 0 {
		return true, nil
	}
	return true, &PatternError{Rows: bad[:min(len(bad), maxPatternEntries)], Count: len(bad), Sample: s, Detected: p.detected}
}

// declaredProducts writes bu = B·u, bu2 = B·u2 from the declared values
// and scale_i = Σ_q |B_q|·(|u_Col(q)| + |u2_Col(q)|) + |c_i|.
func (p *patternProbe) declaredProducts() {
	rp, col := p.sj.RowPtr, p.sj.Col
	for i := range p.c {
		var s1, s2, sc float64
		for q := rp[i]; q < rp[i+1]; q++ {
			v, j := p.vals[q], col[q]
			s1 += v * p.u[j]
			s2 += v * p.u2[j]
			sc += math.Abs(v) * (math.Abs(p.u[j]) + math.Abs(p.u2[j]))
		}
		p.bu[i], p.bu2[i], p.scale[i] = s1, s2, sc+math.Abs(p.c[i])
	}
}

// exactRows returns the rows whose uncompressed hyperdual products
// ∂c/∂y·u and ∂c/∂y·u2 (one evaluation, ϵ₁ = u, ϵ₂ = u2) differ from the
// declared ones, an empty slice if none, nil if a product is not finite.
func (p *patternProbe) exactRows(x []float64) []int {
	fc := p.exact
	sc := fc.get(x, p.y)
	defer fc.pool.Put(sc)
	for j := range p.u {
		sc.y[j].E1mag, sc.y[j].E2mag = p.u[j], p.u2[j]
	}
	fc.call(sc)
	bad := []int{}
	for i, ci := range sc.c {
		d1, d2 := ci.E1mag-p.bu[i], ci.E2mag-p.bu2[i]
		if math.IsNaN(d1+d2) || math.IsInf(d1+d2, 0) {
			return nil
		}
		if math.Max(math.Abs(d1), math.Abs(d2)) > patternTolExact*p.scale[i] {
			bad = append(bad, i)
		}
	}
	return bad
}

// fdRows returns the rows whose central finite difference of c along u
// differs from B·u at every step of patternStepsFD, by about the same
// amount at the last two (a missing entry's J_ij·u_j does not depend on h;
// truncation and rounding errors do), an empty slice if none, nil if c is
// not finite at a step. A row whose difference falls within the tolerance
// at any step is right. The steps shrink to 1/16384 of the first because a
// steep smoothed kink (a Fischer–Burmeister row of a limit with a large
// gradient, g within a step of 0) is crossed by the first steps, where the
// differences of h and h/4 can agree although the Jacobian is right; only
// the rows still in doubt cost the further evaluations.
func (p *patternProbe) fdRows(x []float64) []int {
	bad := []int{}
	var cand []int
	var last []float64
	for level, h := range patternStepsFD {
		d := p.fdDiff(x, h)
		if d == nil {
			return nil
		}
		if level == 0 {
			for i, di := range d {
				if math.Abs(di) > patternTolFD*p.scale[i] {
					cand = append(cand, i)
					last = append(last, di)
				}
			}
			if len(cand) == 0 {
				return bad
			}
			continue
		}
		final := level == len(patternStepsFD)-1
		keep := cand[:0]
		kept := last[:0]
		for k, i := range cand {
			if math.Abs(d[i]) <= patternTolFD*p.scale[i] {
				continue // resolved: truncation or rounding at the longer step
			}
			if final && math.Abs(d[i]-last[k]) > 0.1*math.Abs(last[k]) {
				continue // still changing with h: not a missing entry
			}
			keep, kept = append(keep, i), append(kept, d[i])
		}
		cand, last = keep, kept
		if len(cand) == 0 {
			return bad
		}
	}
	return append(bad, cand...)
}

// fdDiff returns (c(y + h·u) − c(y − h·u))/(2h) − B·u in p.cp, nil if c
// is not finite at a step.
func (p *patternProbe) fdDiff(x []float64, h float64) []float64 {
	for j, yj := range p.y {
		p.yp[j] = yj + h*p.u[j]
		p.ym[j] = yj - h*p.u[j]
	}
	p.sj.Eval(x, p.yp, p.cp, nil)
	p.sj.Eval(x, p.ym, p.cm, nil)
	if !allFinite(p.cp) || !allFinite(p.cm) {
		return nil
	}
	for i := range p.cp {
		p.cp[i] = (p.cp[i]-p.cm[i])/(2*h) - p.bu[i]
	}
	return p.cp
}

// firstProjectionMessage is PatternError.Error for the first
// projection's check.
func (e *PatternError) firstProjectionMessage() string {
	what := "the declared sparse pattern of ∂c/∂y (Capabilities.Sparse)"
	fix := "declare every output each equation reads; CheckSparse(c, x, y, 0) names the entries"
	if e.Detected {
		what = "the sparse pattern of ∂c/∂y that NewAdaNP detected for the Func constraint"
		fix = "an equation depends on an output only in places the detection's probe points did not reach: " +
			"declare the pattern with SparseFunc, or take the dense path (Settings.Path = PathDense)"
	}
	return fmt.Sprintf("enforce: %s is wrong at sample %d: %d rows of ∂c/∂y·u for a random u disagree with the declared Jacobian's (a dependence missing from the pattern or a wrong value), rows %v; %s",
		what, e.Sample, e.Count, e.Rows, fix)
}
