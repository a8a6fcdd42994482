package enforce

import (
	"math"
	"sync"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/par"
)

// Batched forms of a wrapper's parts. A wrapper (Stack, WithInequalities)
// whose parts include one with batched methods offers batched methods
// itself; for the parts without them, part builds the batched method from
// the per-sample one (Eval, HessVec), one sample at a time in parallel, or
// the single-precision method from the float64 one, with its Jacobians
// rounded to float32.

// part is one constraint inside a wrapper, with its capabilities read once.
type part struct {
	c          Constraint
	k          Capabilities
	nx, ny, nc int
	loops      sync.Pool // *partLoop
	buf        sync.Pool // *[]float64, evalBatch32's float64 Jacobians
}

func newPart(c Constraint, k Capabilities) *part {
	p := &part{c: c, k: k}
	p.nx, p.ny, p.nc = c.Dims()
	p.loops.New = func() any { return new(partLoop) }
	p.buf.New = func() any { return new([]float64) }
	return p
}

// partLoop is the loop body of the per-sample fallbacks.
type partLoop struct {
	p                      *part
	hv                     bool
	x, y, c, jy, w, v, out []float64
}

// Run handles samples [lo, hi).
func (l *partLoop) Run(lo, hi int) {
	p := l.p
	nx, ny, nc := p.nx, p.ny, p.nc
	for s := lo; s < hi; s++ {
		xs, ys := l.x[s*nx:(s+1)*nx], l.y[s*ny:(s+1)*ny]
		if l.hv {
			p.k.HessVec(xs, ys, l.w[s*nc:(s+1)*nc], l.v[s*ny:(s+1)*ny], l.out[s*ny:(s+1)*ny])
			continue
		}
		var js []float64
		if l.jy != nil {
			js = l.jy[s*nc*ny : (s+1)*nc*ny]
		}
		p.c.Eval(xs, ys, l.c[s*nc:(s+1)*nc], js)
	}
}

// loop runs l over rows samples in parallel.
func (p *part) loop(rows int, l partLoop) {
	j := p.loops.Get().(*partLoop)
	*j = l
	j.p = p
	par.For(rows, 8, j)
	*j = partLoop{}
	p.loops.Put(j)
}

// hasBatch reports whether the part has a batched method of its own.
func (p *part) hasBatch() bool { return p.k.EvalBatch != nil || p.k.EvalBatch32 != nil }

// hasHessVecBatch reports whether the part has a batched curvature product
// of its own.
func (p *part) hasHessVecBatch() bool { return p.k.HessVecBatch != nil || p.k.HessVecBatch32 != nil }

// evalBatch is the part's EvalBatch, or Eval sample by sample.
func (p *part) evalBatch(rows int, x, y, c, jy []float64) {
	if p.k.EvalBatch != nil {
		p.k.EvalBatch(rows, x, y, c, jy)
		return
	}
	p.loop(rows, partLoop{x: x, y: y, c: c, jy: jy})
}

// evalBatch32 is the part's EvalBatch32, or evalBatch with the Jacobians
// rounded to float32; a sample whose Jacobian does not fit float32 gets
// c = +Inf, as EvalBatch32 promises.
func (p *part) evalBatch32(rows int, x, y, c []float64, jy []float32) {
	if p.k.EvalBatch32 != nil {
		p.k.EvalBatch32(rows, x, y, c, jy)
		return
	}
	m := p.nc * p.ny
	b := p.buf.Get().(*[]float64)
	defer p.buf.Put(b)
	j64 := grow(b, rows*m)
	p.evalBatch(rows, x, y, c, j64)
	for s := range rows {
		if !dense.Round32(jy[s*m:(s+1)*m], j64[s*m:(s+1)*m]) {
			for i := range p.nc {
				c[s*p.nc+i] = math.Inf(1)
			}
		}
	}
}

// hessVecBatch is the part's HessVecBatch, or HessVec sample by sample.
func (p *part) hessVecBatch(rows int, x, y, w, v, out []float64) {
	if p.k.HessVecBatch != nil {
		p.k.HessVecBatch(rows, x, y, w, v, out)
		return
	}
	p.loop(rows, partLoop{hv: true, x: x, y: y, w: w, v: v, out: out})
}

// hessVecBatch32 is the part's HessVecBatch32, or hessVecBatch.
func (p *part) hessVecBatch32(rows int, x, y, w, v, out []float64) {
	if p.k.HessVecBatch32 != nil {
		p.k.HessVecBatch32(rows, x, y, w, v, out)
		return
	}
	p.hessVecBatch(rows, x, y, w, v, out)
}

// grow returns (*b)[:n], reallocating *b if it is too short.
func grow[T any](b *[]T, n int) []T {
	if cap(*b) < n {
		*b = make([]T, n)
	}
	return (*b)[:n]
}
