// Package par runs loops over a batch in parallel on a shared pool of
// long-lived worker goroutines, without allocating per call.
//
// A call never waits for a worker to become free: it splits its range into
// chunks, offers them to the workers (a buffered queue that it never blocks
// on), and then claims
// chunks itself, one at a time, alongside the workers it woke, until none is
// left; it then waits only for chunks that some goroutine is already
// running. So a loop body may itself call For or ForBlocks (a constraint
// whose Eval runs a matrix product inside a parallel projection, say), from
// any number of goroutines at once, without deadlock: when every worker is
// busy, the nested call runs all its chunks on its own goroutine. The pool
// grows when GOMAXPROCS is raised at run time.
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

// group is the state of one For call, pooled: its chunks [i·size,
// (i+1)·size) ∩ [0, n) for i < p, handed out by the counter next to the
// caller and to the workers it woke.
type group struct {
	body       Body
	n, size, p int
	next       atomic.Int64
	wg         sync.WaitGroup // chunks not yet done
	// refs counts the holders of the group: the caller and each offer of
	// it in wake (taken over by the worker that receives it). A worker may
	// reach it only after every chunk is done and the call has returned;
	// the group goes back to the pool when the last holder lets it go,
	// never while a worker can still read its counter.
	refs atomic.Int32
	pan  panicked
}

// panicked holds the first panic of a chunk, re-raised by For on the
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
	groups = sync.Pool{New: func() any { return new(group) }}
	// wake holds the groups a call offers to the workers, one entry per
	// worker it asks for help. It is buffered, so that a worker that is
	// not yet waiting (just started, or finishing another call's chunk)
	// still takes the offer when it gets there, and For never blocks on
	// it: when the buffer is full the caller runs the chunks itself. Each
	// entry holds a reference to its group (group.refs), so a group is
	// never reused while an offer of it is still queued; a worker that
	// takes an offer after every chunk was claimed only lets it go.
	wake    = make(chan *group, 256)
	spawn   sync.Mutex
	workers atomic.Int32
)

// ensureWorkers starts workers until there are at least n.
func ensureWorkers(n int) {
	if int(workers.Load()) >= n {
		return
	}
	spawn.Lock()
	defer spawn.Unlock()
	for int(workers.Load()) < n {
		go func() {
			for g := range wake {
				g.work()
				g.release()
			}
		}()
		workers.Add(1)
	}
}

// work runs chunks of g until none is left to claim.
func (g *group) work() {
	for {
		i := int(g.next.Add(1) - 1)
		if i >= g.p {
			return
		}
		lo := i * g.size
		g.run(lo, min(lo+g.size, g.n))
	}
}

// run runs one chunk, catching its panic.
func (g *group) run(lo, hi int) {
	defer g.wg.Done()
	defer func() {
		if r := recover(); r != nil {
			g.pan.store(r)
		}
	}()
	if lo < hi {
		g.body.Run(lo, hi)
	}
}

// release lets g go; the last holder puts it back in the pool.
func (g *group) release() {
	if g.refs.Add(-1) == 0 {
		g.body = nil
		groups.Put(g)
	}
}

// For calls body.Run over [0, n) split into at most GOMAXPROCS contiguous
// chunks of at least grain indices each, and returns when all are done.
// The split depends on GOMAXPROCS (not on which goroutine runs a chunk), so
// a body whose result must not depend on it has to treat every index
// independently. A panic in any chunk is re-raised on the caller after
// every chunk has returned. body.Run may call For or ForBlocks itself.
func For(n, grain int, body Body) {
	if n <= 0 {
		return
	}
	procs := runtime.GOMAXPROCS(0)
	p := min(procs, (n+grain-1)/max(grain, 1))
	if p <= 1 {
		body.Run(0, n)
		return
	}
	ensureWorkers(max(runtime.NumCPU(), procs))
	g := groups.Get().(*group)
	g.body, g.n, g.size, g.p = body, n, (n+p-1)/p, p
	g.pan = panicked{}
	g.next.Store(0)
	g.wg.Add(p)
	g.refs.Store(1)
	for range p - 1 {
		g.refs.Add(1)
		select {
		case wake <- g:
			continue
		default:
			g.refs.Add(-1)
		}
		break // the queue is full: the caller runs what is left
	}
	g.work()
	g.wg.Wait()
	set, val := g.pan.set, g.pan.val
	g.release()
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
