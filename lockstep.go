package enforce

import (
	"fmt"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/par"
)

// evalBatchFunc is the type of Capabilities.EvalBatch.
type evalBatchFunc = func(rows int, x, y, c, jy []float64)

// lockstep schedules a forward pass for a constraint that evaluates many
// samples at once (Capabilities.EvalBatch): every round, each active sample that
// has an accepted iterate takes a step, then all pending trial points are
// evaluated by one EvalBatch call, then each sample accepts or rejects its
// trial. The per-sample arithmetic is that of batch.step and batch.accept,
// the same functions the one-sample-at-a-time scheduler calls.
type lockstep struct {
	b        *batch
	be       evalBatchFunc
	y, c, yT []float64 // rows×n, rows×nc, rows×n
	delta    []float64 // rows×n
	sc       []scalars
	next     []next
	pos      []int     // per sample: position in the last evaluation
	act      []int     // active samples, in order
	xa, ya   []float64 // gathered inputs and trial points of act
	ca, ja   []float64 // their residuals and Jacobians
	ja32     []float32 // Float32: the Jacobians of single-precision evaluations
	phase    int
}

const (
	phaseStep   = iota // samples with an accepted iterate take a step
	phaseAccept        // samples accept or reject their evaluated trial
)

func (l *lockstep) reset(b *batch, be evalBatchFunc, rows int) {
	a := b.a
	l.b, l.be = b, be
	l.y = resize(l.y, rows*a.n)
	l.yT = resize(l.yT, rows*a.n)
	l.delta = resize(l.delta, rows*a.n)
	l.c = resize(l.c, rows*a.nc)
	l.sc = resize(l.sc, rows)
	l.next = resize(l.next, rows)
	l.pos = resize(l.pos, rows)
	l.act = resize(l.act, rows)[:0]
	l.xa = resize(l.xa, rows*a.nx)
	l.ya = resize(l.ya, rows*a.n)
	l.ca = resize(l.ca, rows*a.nc)
	l.ja = resize(l.ja, rows*a.nc*a.n)
	if a.eval32 != nil {
		l.ja32 = resize(l.ja32, rows*a.nc*a.n)
	}
}

// state returns the state of sample s, with the Jacobian and residual of
// its last evaluation (the Jacobian in J32 if that evaluation was in
// single precision, else in J).
func (l *lockstep) state(s int) (sampleState, []float64) {
	a := l.b.a
	n, nc := a.n, a.nc
	p := l.pos[s]
	st := sampleState{
		y: l.y[s*n : (s+1)*n], c: l.c[s*nc : (s+1)*nc],
		yT: l.yT[s*n : (s+1)*n], cT: nil,
		delta:   l.delta[s*n : (s+1)*n],
		scalars: l.sc[s],
	}
	if st.loEval {
		st.J32 = l.ja32[p*nc*n : (p+1)*nc*n]
	} else {
		st.J = l.ja[p*nc*n : (p+1)*nc*n]
	}
	return st, l.ca[p*nc : (p+1)*nc]
}

// run projects the whole batch. It returns an error if EvalBatch panics.
func (l *lockstep) run(b *batch, be evalBatchFunc, rows int) error {
	l.reset(b, be, rows)
	for s := 0; s < rows; s++ {
		st, _ := l.state(s)
		ok := b.start(s, &st)
		l.sc[s] = st.scalars
		if ok {
			l.act = append(l.act, s)
			l.next[s] = nextEval
		}
	}
	for len(l.act) > 0 {
		l.phase = phaseStep
		par.For(len(l.act), grain, l)
		l.compact()
		if len(l.act) == 0 {
			break
		}
		if err := l.evaluate(); err != nil {
			return err
		}
		l.phase = phaseAccept
		par.For(len(l.act), grain, l)
		l.compact()
	}
	return nil
}

// evaluate gathers the trial points of act and evaluates them: with
// Float32, the samples still in single precision first, by one
// EvalBatch32 call, then the others by one EvalBatch call.
func (l *lockstep) evaluate() (err error) {
	a := l.b.a
	n, nx, nc := a.n, a.nx, a.nc
	p := 0
	// gather appends the samples with lo set as given, or all when the
	// constraint has no single-precision methods.
	gather := func(lo bool) {
		for _, s := range l.act {
			if a.eval32 != nil && l.sc[s].lo != lo {
				continue
			}
			copy(l.xa[p*nx:(p+1)*nx], dense.Row(l.b.x, s))
			copy(l.ya[p*n:(p+1)*n], l.yT[s*n:(s+1)*n])
			l.pos[s] = p
			l.sc[s].loEval = lo && a.eval32 != nil
			p++
		}
	}
	k32 := 0
	if a.eval32 != nil {
		gather(true)
		k32 = p
	}
	gather(false)
	k := len(l.act)
	what := "EvalBatch32"
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("enforce: %s panicked on a batch of %d samples: %v", what, k, r)
		}
	}()
	if k32 > 0 {
		a.eval32(k32, l.xa[:k32*nx], l.ya[:k32*n], l.ca[:k32*nc], l.ja32[:k32*nc*n])
	}
	if k > k32 {
		what = "EvalBatch"
		l.be(k-k32, l.xa[k32*nx:k*nx], l.ya[k32*n:k*n], l.ca[k32*nc:k*nc], l.ja[k32*nc*n:k*nc*n])
	}
	return nil
}

// compact keeps the samples of act that are not done, in order.
func (l *lockstep) compact() {
	k := 0
	for _, s := range l.act {
		if l.next[s] != nextDone {
			l.act[k] = s
			k++
		}
	}
	l.act = l.act[:k]
}

// Run processes positions [lo, hi) of act in the current phase.
func (l *lockstep) Run(lo, hi int) {
	b := l.b
	ws := b.a.pool.Get().(*workspace)
	for p := lo; p < hi; p++ {
		if !l.runSample(ws, l.act[p]) {
			ws = b.a.newWorkspace()
		}
	}
	b.a.pool.Put(ws)
}

// runSample advances sample s by one phase, and reports false if user
// code panicked.
func (l *lockstep) runSample(ws *workspace, s int) (ok bool) {
	b := l.b
	defer func() {
		if r := recover(); r != nil {
			b.fail(s, r)
			l.next[s] = nextDone
			ok = false
		}
	}()
	st, cT := l.state(s)
	switch {
	case l.phase == phaseStep && l.next[s] == nextStep:
		l.next[s] = b.step(ws, s, &st)
	case l.phase == phaseAccept:
		l.next[s] = b.accept(ws, s, &st, cT, st.J)
	}
	l.sc[s] = st.scalars
	return true
}
