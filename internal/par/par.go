// Package par runs loops over a batch in parallel on a shared pool of
// long-lived worker goroutines, without allocating per call.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Body is a loop body over the half-open index range [lo, hi).
type Body interface {
	Run(lo, hi int)
}

type chunk struct {
	body   Body
	lo, hi int
	g      *group
}

// group is the state of one For call, pooled.
type group struct {
	wg  sync.WaitGroup
	pan panicked
}

// panicked holds the first panic of a worker, re-raised by For on the
// calling goroutine so that a recover there sees it.
type panicked struct {
	mu  sync.Mutex
	val any
	set bool
}

func (p *panicked) store(v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.set {
		p.val, p.set = v, true
	}
}

var (
	start   sync.Once
	jobs    chan chunk
	wgPool  = sync.Pool{New: func() any { return new(group) }}
	workers int
)

func startWorkers() {
	workers = max(runtime.NumCPU(), runtime.GOMAXPROCS(0))
	jobs = make(chan chunk, workers)
	for range workers {
		go func() {
			for c := range jobs {
				run(c)
			}
		}()
	}
}

// run runs one chunk, catching its panic.
func run(c chunk) {
	defer c.g.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			c.g.pan.store(r)
		}
	}()
	c.body.Run(c.lo, c.hi)
}

// For calls body.Run over [0, n) split into at most GOMAXPROCS contiguous
// chunks of at least grain indices each, and returns when all are done.
// The split depends on GOMAXPROCS, so a body whose result must not depend
// on it has to treat every index independently.
func For(n, grain int, body Body) {
	if n <= 0 {
		return
	}
	p := min(runtime.GOMAXPROCS(0), (n+grain-1)/max(grain, 1))
	if p <= 1 {
		body.Run(0, n)
		return
	}
	start.Do(startWorkers)
	p = min(p, workers+1)
	g := wgPool.Get().(*group)
	g.pan = panicked{}
	g.wg.Add(p - 1)
	size := (n + p - 1) / p
	for i := 1; i < p; i++ {
		lo := i * size
		hi := min(lo+size, n)
		if lo >= hi {
			g.wg.Done()
			continue
		}
		jobs <- chunk{body: body, lo: lo, hi: hi, g: g}
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				g.pan.store(r)
			}
		}()
		body.Run(0, min(size, n))
	}()
	g.wg.Wait()
	set, val := g.pan.set, g.pan.val
	g.pan = panicked{}
	wgPool.Put(g)
	if set {
		panic(val)
	}
}

// ForBlocks is For over the blocks [k·block, (k+1)·block) ∩ [0, n): every
// call body.Run(lo, hi) gets lo a multiple of block, so that a body that
// processes its range block by block sees the same blocks whatever the
// number of workers (for kernels whose rounding depends on the shape of
// the call, such as an optimised BLAS's matrix product).
//
// The blocks are handed out one at a time, each to the first worker free
// to take it (an atomic counter), not in equal shares fixed in advance: a
// worker that starts late, on a core that was idle or is busy with another
// process, takes fewer blocks instead of holding up the call. (On this
// project's 2-core virtual machine, after a one-second pause the second
// core made the float32 MLP's forward pass slower than one core alone
// with equal shares.) Each call of body.Run then covers one block.
func ForBlocks(n, block int, body Body) {
	if n <= 0 {
		return
	}
	block = max(block, 1)
	nb := (n + block - 1) / block
	if nb == 1 || runtime.GOMAXPROCS(0) == 1 {
		body.Run(0, n) // one worker: the blocks in order, in one call as before
		return
	}
	b := blocksPool.Get().(*blocks)
	b.body, b.block, b.n, b.nb = body, block, n, nb
	b.next.Store(0)
	defer func() {
		b.body = nil
		blocksPool.Put(b)
	}()
	For(min(nb, runtime.GOMAXPROCS(0)), 1, b)
}

var blocksPool = sync.Pool{New: func() any { return new(blocks) }}

// blocks is the state of one ForBlocks call: each worker For starts claims
// blocks from next until none is left.
type blocks struct {
	body         Body
	block, n, nb int
	next         atomic.Int64
}

func (b *blocks) Run(int, int) {
	for {
		k := int(b.next.Add(1) - 1)
		if k >= b.nb {
			return
		}
		b.body.Run(k*b.block, min((k+1)*b.block, b.n))
	}
}
