package enforce

import (
	"github.com/enforce-nn/enforce/internal/par"
)

// lockstep holds the state of a forward pass that evaluates the constraint
// for all unconverged samples at once (see BatchEvaluator). The samples
// still advance independently: each one stops on its own criterion, and
// its arithmetic is the same as in the per-sample loop.
type lockstep struct {
	b      *batch
	be     BatchEvaluator
	y, c   []float64 // rows×n iterates and rows×nc residuals
	yPrev  []float64 // rows×n previous iterates, to undo a failed step
	cPrev  []float64 // rows×nc
	act    []int     // samples evaluated by the last EvalBatch, in order
	moved  []bool    // per position in act: took a step
	xa, ya []float64 // gathered inputs and iterates of act
	ca, ja []float64 // their residuals and Jacobians
	depth  []int
	phase  int
}

const (
	phaseStep  = iota // decide, then step or finish
	phaseCheck        // accept a new evaluation or undo the step
)

func (l *lockstep) reset(b *batch, be BatchEvaluator, rows int) {
	a := b.a
	l.b, l.be = b, be
	l.y = resize(l.y, rows*a.n)
	l.yPrev = resize(l.yPrev, rows*a.n)
	l.c = resize(l.c, rows*a.nc)
	l.cPrev = resize(l.cPrev, rows*a.nc)
	l.act = resize(l.act, rows)[:0]
	l.moved = resize(l.moved, rows)
	l.xa = resize(l.xa, rows*a.nx)
	l.ya = resize(l.ya, rows*a.n)
	l.ca = resize(l.ca, rows*a.nc)
	l.ja = resize(l.ja, rows*a.nc*a.n)
	l.depth = resize(l.depth, rows)
	clear(l.depth)
}

// evaluate gathers the samples in act and evaluates them.
func (l *lockstep) evaluate() {
	a := l.b.a
	n, nx := a.n, a.nx
	for p, s := range l.act {
		copy(l.xa[p*nx:(p+1)*nx], row(l.b.x, s))
		copy(l.ya[p*n:(p+1)*n], l.y[s*n:(s+1)*n])
	}
	k := len(l.act)
	l.be.EvalBatch(k, l.xa[:k*nx], l.ya[:k*n], l.ca[:k*a.nc], l.ja[:k*a.nc*n])
}

// run projects the whole batch.
func (l *lockstep) run(rows int) {
	b, a := l.b, l.b.a
	n, nc := a.n, a.nc
	for s := 0; s < rows; s++ {
		if b.start(s, l.y[s*n:(s+1)*n]) {
			l.act = append(l.act, s)
		}
	}
	l.evaluate()
	for p, s := range l.act {
		c, B := l.ca[p*nc:(p+1)*nc], l.ja[p*nc*n:(p+1)*nc*n]
		if !allFinite(c) || !allFinite(B) {
			b.flags[s] |= flagBadConstraint
			copy(row(b.dst, s), row(b.yhat, s))
			l.moved[p] = false
			continue
		}
		copy(l.c[s*nc:(s+1)*nc], c)
		b.beforeMax[s], b.beforeSum[s] = absStats(c)
		l.moved[p] = true
	}
	l.compact()
	for len(l.act) > 0 {
		l.phase = phaseStep
		par.For(len(l.act), grain, l)
		l.compact()
		if len(l.act) == 0 {
			break
		}
		l.evaluate()
		l.phase = phaseCheck
		par.For(len(l.act), grain, l)
		l.compact()
	}
}

// compact keeps the samples of act that moved, in order.
func (l *lockstep) compact() {
	k := 0
	for p, s := range l.act {
		if l.moved[p] {
			l.act[k] = s
			k++
		}
	}
	l.act = l.act[:k]
	for i := range l.moved[:k] {
		l.moved[i] = true
	}
}

// Run processes positions [lo, hi) of act in the current phase.
func (l *lockstep) Run(lo, hi int) {
	b, a := l.b, l.b.a
	n, nc := a.n, a.nc
	ws := a.pool.Get().(*workspace)
	defer a.pool.Put(ws)
	record := b.tr != nil && a.s.Grad != Implicit
	for p := lo; p < hi; p++ {
		s := l.act[p]
		xs := row(b.x, s)
		y, c := l.y[s*n:(s+1)*n], l.c[s*nc:(s+1)*nc]
		B := l.ja[p*nc*n : (p+1)*nc*n]
		if l.phase == phaseCheck {
			// Only c is checked here: a non-finite Jacobian makes G
			// non-finite, and the next factorisation stops the sample.
			cNew := l.ca[p*nc : (p+1)*nc]
			if allFinite(cNew) {
				copy(c, cNew)
				continue
			}
			// Undo the step: its result cannot be evaluated.
			copy(y, l.yPrev[s*n:(s+1)*n])
			copy(c, l.cPrev[s*nc:(s+1)*nc])
			l.depth[s]--
			if record {
				b.tr.pop(s)
			}
			b.flags[s] |= flagStopped
			if b.tr != nil && !record {
				a.eval(xs, y, ws.cNew, ws.b)
				a.recordFinal(ws, b.tr, s, y, ws.b)
			}
			b.finish(s, y, c, l.depth[s])
			l.moved[p] = false
			continue
		}
		if b.continues(l.depth[s], c) {
			d, f, ok := a.step(ws, y, c, B)
			if ok {
				if f.eig {
					b.flags[s] |= flagClamped
				}
				if record {
					b.tr.push(s, y, ws.mu, d, B, f)
				}
				copy(l.yPrev[s*n:(s+1)*n], y)
				copy(l.cPrev[s*nc:(s+1)*nc], c)
				copy(y, ws.yNew)
				l.depth[s]++
				continue
			}
			b.flags[s] |= flagStopped
		}
		if b.tr != nil && !record {
			a.recordFinal(ws, b.tr, s, y, B)
		}
		b.finish(s, y, c, l.depth[s])
		l.moved[p] = false
	}
}
