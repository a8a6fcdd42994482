package enforce

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/par"
)

// Per-sample outcome flags of a forward pass.
const (
	flagNotConverged uint8 = 1 << iota
	flagClamped
	flagStopped
	flagBadInput
	flagBadConstraint
)

// grain is the smallest number of samples worth a goroutine.
const grain = 16

// batch is the state of one forward pass, shared by its workers; each
// sample writes only its own entries.
type batch struct {
	a         *AdaNP
	x, yhat   blas64.General
	dst       blas64.General
	tr        *Trace
	maxDepth  int
	depth     []int
	beforeMax []float64
	beforeSum []float64
	afterMax  []float64
	afterSum  []float64
	flags     []uint8
	lock      lockstep
}

func (b *batch) reset(a *AdaNP, rows int) {
	b.a = a
	b.depth = resize(b.depth, rows)
	b.beforeMax = resize(b.beforeMax, rows)
	b.beforeSum = resize(b.beforeSum, rows)
	b.afterMax = resize(b.afterMax, rows)
	b.afterSum = resize(b.afterSum, rows)
	b.flags = resize(b.flags, rows)
	clear(b.flags)
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// row returns row i of m, or nil for an empty matrix.
func row(m blas64.General, i int) []float64 {
	if m.Cols == 0 {
		return nil
	}
	return m.Data[i*m.Stride : i*m.Stride+m.Cols]
}

// checkShapes validates x (which may be nil when nx = 0) and a matrix
// with ny columns against a, and returns their raw views.
func (a *AdaNP) checkShapes(x, y *mat.Dense, what string) (xr, yr blas64.General, rows int, err error) {
	if y == nil {
		return xr, yr, 0, fmt.Errorf("enforce: nil %s", what)
	}
	rows, cols := y.Dims()
	if cols != a.ny {
		return xr, yr, 0, fmt.Errorf("enforce: %s has %d columns, want ny = %d", what, cols, a.ny)
	}
	yr = y.RawMatrix()
	switch {
	case x == nil && a.nx != 0:
		return xr, yr, 0, fmt.Errorf("enforce: nil x, want %d×%d", rows, a.nx)
	case x != nil:
		xRows, xCols := x.Dims()
		if xRows != rows || xCols != a.nx {
			return xr, yr, 0, fmt.Errorf("enforce: x is %d×%d, want %d×%d to match %s", xRows, xCols, rows, a.nx, what)
		}
		xr = x.RawMatrix()
	}
	return xr, yr, rows, nil
}

func (a *AdaNP) forward(dst, x, yhat *mat.Dense, tr *Trace, noSteps bool) (Stats, error) {
	xr, yr, rows, err := a.checkShapes(x, yhat, "ŷ")
	if err != nil {
		return Stats{}, err
	}
	if dst == nil {
		return Stats{}, errors.New("enforce: nil destination")
	}
	if r, c := dst.Dims(); r != rows || c != a.ny {
		return Stats{}, fmt.Errorf("enforce: destination is %d×%d, want %d×%d", r, c, rows, a.ny)
	}
	b := a.lastBatch.Swap(nil)
	if b == nil {
		b = a.batches.Get().(*batch)
	}
	defer func() {
		if !a.lastBatch.CompareAndSwap(nil, b) {
			a.batches.Put(b)
		}
	}()
	b.reset(a, rows)
	b.x, b.yhat, b.dst, b.tr, b.maxDepth = xr, yr, dst.RawMatrix(), tr, a.s.MaxDepth
	if noSteps {
		b.maxDepth = 0
	}
	if tr != nil {
		tr.reset(a, xr, rows)
	}
	if be, ok := a.c.(BatchEvaluator); ok && a.constB == nil {
		b.lock.reset(b, be, rows)
		b.lock.run(rows)
	} else {
		par.For(rows, grain, b)
	}
	b.tr = nil
	return b.stats(rows)
}

// stats reduces the per-sample results in sample order, so that the
// result does not depend on how the batch was split.
func (b *batch) stats(rows int) (Stats, error) {
	a := b.a
	st := Stats{Samples: rows}
	for s := 0; s < rows; s++ {
		f := b.flags[s]
		switch {
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
		if f&flagNotConverged != 0 {
			st.NotConverged++
		}
		if f&flagClamped != 0 {
			st.Clamped++
		}
		if f&flagStopped != 0 {
			st.Stopped++
		}
	}
	if rows > 0 {
		st.MeanDepth /= float64(rows)
		st.Before.Mean /= float64(rows * a.nc)
		st.After.Mean /= float64(rows * a.nc)
	}
	return st, nil
}

// Run projects samples [lo, hi).
func (b *batch) Run(lo, hi int) {
	ws := b.a.pool.Get().(*workspace)
	for s := lo; s < hi; s++ {
		b.sample(ws, s)
	}
	b.a.pool.Put(ws)
}

// eval evaluates c and, unless the Jacobian is constant, B at (x, y).
func (a *AdaNP) eval(x, y, c, jy []float64) {
	if a.constB != nil {
		jy = nil
	}
	a.c.Eval(x, y, c, jy)
}

// jacobian returns the Jacobian in use: the constant one or ws's.
func (a *AdaNP) jacobian(b []float64) []float64 {
	if a.constB != nil {
		return a.constB
	}
	return b
}

func absStats(c []float64) (mx, sum float64) {
	for _, v := range c {
		v = math.Abs(v)
		mx = math.Max(mx, v)
		sum += v
	}
	return mx, sum
}

// step computes one NP step from the iterate y with residual c and
// Jacobian B: it leaves μ = G⁻¹c in ws.mu, W⁻¹Bᵀμ in ws.delta and the new
// iterate in ws.yNew, and returns W⁻¹'s diagonal (nil for W = I) and G's
// factor. It reports false if G cannot be factored or the new iterate is
// not finite.
func (a *AdaNP) step(ws *workspace, y, c, B []float64) (d []float64, f *factor, ok bool) {
	n, nc := a.n, a.nc
	d, f = a.constD, &a.constG
	solved := false
	if a.constB == nil {
		d, f = a.weights(ws, B), &ws.g
		if nc == 1 && a.scalarFactor(f, B, d) {
			ws.mu[0] = c[0] / (f.m[0] * f.m[0])
			solved = true
		} else if !a.factorize(f, B, d, ws) {
			return nil, nil, false
		}
	}
	if !solved {
		copy(ws.mu, c)
		f.solve(nc, ws.mu, ws.tmp)
	}
	dense.MulTransVec(ws.delta, B, nc, n, ws.mu)
	for j, v := range ws.delta {
		if d != nil {
			v *= d[j]
			ws.delta[j] = v
		}
		ws.yNew[j] = y[j] - v
	}
	return d, f, allFinite(ws.yNew)
}

// scalarFactor is factorize for a single constraint, where G is the
// number ‖B‖²_W⁻¹ + ε and its Cholesky factor is √G. It reports false,
// leaving the general path to handle the case, unless G is positive and
// finite.
func (a *AdaNP) scalarFactor(f *factor, B, d []float64) bool {
	g := a.s.Reg
	if d == nil {
		for _, v := range B {
			g += v * v
		}
	} else {
		for k, v := range B {
			g += v * d[k] * v
		}
	}
	if !(g > 0) || g > math.MaxFloat64 {
		return false
	}
	f.m[0], f.eig = math.Sqrt(g), false
	return true
}

// recordFinal records, for Implicit gradients, the projector at the final
// point y with Jacobian B.
func (a *AdaNP) recordFinal(ws *workspace, tr *Trace, s int, y, B []float64) {
	d, f := a.constD, &a.constG
	if a.constB == nil {
		d, f = a.weights(ws, B), &ws.g
		if !a.factorize(f, B, d, ws) {
			return // no projector: the gradient passes through unchanged
		}
	}
	clear(ws.mu)
	tr.push(s, y, ws.mu, d, B, f)
}

// finish writes the result of sample s: its output, depth and residual.
func (b *batch) finish(s int, y, c []float64, depth int) {
	a := b.a
	copy(row(b.dst, s), y[:a.ny])
	b.depth[s] = depth
	b.afterMax[s], b.afterSum[s] = absStats(c)
	if a.s.Measure.reduce(c) > a.s.Tol {
		b.flags[s] |= flagNotConverged
	}
}

// start loads sample s into y and reports whether its inputs are finite.
func (b *batch) start(s int, y []float64) bool {
	xs, yhat := row(b.x, s), row(b.yhat, s)
	copy(y, yhat)
	clear(y[b.a.ny:])
	if b.tr != nil {
		b.tr.steps[s] = b.tr.steps[s][:0]
		b.tr.eig[s] = b.tr.eig[s][:0]
	}
	if !allFinite(xs) || !allFinite(yhat) {
		b.flags[s] |= flagBadInput
		copy(row(b.dst, s), yhat)
		return false
	}
	return true
}

// continues reports whether a sample at the given depth with residual c
// takes another step.
func (b *batch) continues(depth int, c []float64) bool {
	return depth < b.maxDepth && (depth < b.a.s.MinDepth || b.a.s.Measure.reduce(c) > b.a.s.Tol)
}

// sample runs AdaNP on sample s.
func (b *batch) sample(ws *workspace, s int) {
	a := b.a
	xs := row(b.x, s)
	if !b.start(s, ws.y) {
		return
	}
	a.eval(xs, ws.y, ws.c, ws.b)
	if !allFinite(ws.c) || (a.constB == nil && !allFinite(ws.b)) {
		b.flags[s] |= flagBadConstraint
		copy(row(b.dst, s), row(b.yhat, s))
		return
	}
	b.beforeMax[s], b.beforeSum[s] = absStats(ws.c)
	record := b.tr != nil && a.s.Grad != Implicit
	k := 0
	for b.continues(k, ws.c) {
		B := a.jacobian(ws.b)
		d, f, ok := a.step(ws, ws.y, ws.c, B)
		if !ok {
			b.flags[s] |= flagStopped
			break
		}
		if f.eig {
			b.flags[s] |= flagClamped
		}
		a.eval(xs, ws.yNew, ws.cNew, ws.bNew)
		if !allFinite(ws.cNew) || (a.constB == nil && !allFinite(ws.bNew)) {
			b.flags[s] |= flagStopped
			break
		}
		if record {
			b.tr.push(s, ws.y, ws.mu, d, B, f)
		}
		ws.y, ws.yNew = ws.yNew, ws.y
		ws.c, ws.cNew = ws.cNew, ws.c
		ws.b, ws.bNew = ws.bNew, ws.b
		k++
	}
	if b.tr != nil && !record {
		a.recordFinal(ws, b.tr, s, ws.y, a.jacobian(ws.b))
	}
	b.finish(s, ws.y, ws.c, k)
}
