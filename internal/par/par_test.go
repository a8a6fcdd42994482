package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type counter struct{ hits []atomic.Int32 }

func (c *counter) Run(lo, hi int) {
	for i := lo; i < hi; i++ {
		c.hits[i].Add(1)
	}
}

func TestForCoversEveryIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 7} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 5, 16, 17, 100, 1001} {
			for _, grain := range []int{0, 1, 8, 64} {
				c := &counter{hits: make([]atomic.Int32, n)}
				For(n, grain, c)
				for i := range c.hits {
					assert.EqualValues(t, 1, c.hits[i].Load(), "procs %d n %d grain %d index %d", procs, n, grain, i)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// panicky panics in the chunk that holds index at.
type panicky struct{ at int }

func (p panicky) Run(lo, hi int) {
	if lo <= p.at && p.at < hi {
		panic("boom")
	}
}

// TestForReRaisesWorkerPanics: a panic in any chunk, the caller's or a
// worker's, reaches the caller after every chunk has returned, and the
// pool keeps working.
func TestForReRaisesWorkerPanics(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, at := range []int{0, 99} { // first chunk runs on the caller, the last on a worker
		assert.PanicsWithValue(t, "boom", func() { For(100, 1, panicky{at}) })
	}
	c := &counter{hits: make([]atomic.Int32, 100)}
	For(100, 1, c)
	for i := range c.hits {
		assert.Equal(t, int32(1), c.hits[i].Load())
	}
}

type recordBlocks struct {
	mu  sync.Mutex
	got [][2]int
}

func (r *recordBlocks) Run(lo, hi int) {
	r.mu.Lock()
	r.got = append(r.got, [2]int{lo, hi})
	r.mu.Unlock()
}

func TestForBlocksAligned(t *testing.T) {
	for _, n := range []int{1, 31, 32, 33, 100, 1000} {
		var r recordBlocks
		ForBlocks(n, 32, &r)
		covered := 0
		for _, g := range r.got {
			if g[0]%32 != 0 || g[1] > n || g[0] >= g[1] {
				t.Fatalf("n=%d: range %v", n, g)
			}
			covered += g[1] - g[0]
		}
		if covered != n {
			t.Fatalf("n=%d: covered %d", n, covered)
		}
	}
}

// TestForBlocksShares checks that ForBlocks hands out one block per call
// when it runs on more than one worker, covers every index once on 1, 2
// and 7 workers, and lets a worker that is held up take fewer blocks: with
// the first block's call held until every other block is done, the other
// workers take all of them.
func TestForBlocksShares(t *testing.T) {
	for _, procs := range []int{1, 2, 7} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{1, 5, 64, 65, 1000} {
			var c counter
			c.hits = make([]atomic.Int32, n)
			var r recordBlocks
			ForBlocks(n, 8, bodies{&c, &r})
			for i := range c.hits {
				assert.Equal(t, int32(1), c.hits[i].Load(), "procs=%d n=%d index %d", procs, n, i)
			}
			for _, g := range r.got {
				if procs > 1 && n > 8 {
					assert.LessOrEqual(t, g[1]-g[0], 8, "procs=%d n=%d: one block per call", procs, n)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}

	old := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(old)
	const blocks = 50
	s := &slowFirst{release: make(chan struct{})}
	s.left.Store(blocks - 1)
	ForBlocks(blocks, 1, s)
	assert.Equal(t, int32(blocks), s.done.Load())
}

// bodies runs several bodies on each range.
type bodies []Body

func (b bodies) Run(lo, hi int) {
	for _, x := range b {
		x.Run(lo, hi)
	}
}

// slowFirst holds the call of block 0 until every other block has run,
// which finishes only if the other worker takes them all.
type slowFirst struct {
	release    chan struct{}
	left, done atomic.Int32
}

func (s *slowFirst) Run(lo, hi int) {
	if lo == 0 {
		<-s.release
	} else if s.left.Add(-1) == 0 {
		close(s.release)
	}
	s.done.Add(int32(hi - lo))
}

// nested is a loop body that calls For (or ForBlocks) again on every chunk,
// depth levels deep, and counts the innermost indices it covers.
type nested struct {
	depth, n int
	blocks   bool
	leaves   *atomic.Int64
}

func (b nested) Run(lo, hi int) {
	for range hi - lo {
		if b.depth == 0 {
			b.leaves.Add(1)
			continue
		}
		inner := nested{depth: b.depth - 1, n: b.n, blocks: b.blocks, leaves: b.leaves}
		if b.blocks {
			ForBlocks(b.n, 2, inner)
		} else {
			For(b.n, 1, inner)
		}
	}
}

// finishes runs f on a goroutine and fails the test if it has not returned
// within the limit, instead of hanging the test binary.
func finishes(t *testing.T, limit time.Duration, f func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		t.Errorf("did not return within %v: deadlock", limit)
		return false
	}
}

// TestNestedForNeverDeadlocks: a body that calls For or ForBlocks itself,
// three levels deep, from one goroutine and from several at once, with
// GOMAXPROCS raised above the number of workers the pool had, covers every
// index once and returns (every worker busy in an outer chunk used to wait
// for inner chunks that no worker was free to take).
func TestNestedForNeverDeadlocks(t *testing.T) {
	if !finishes(t, 10*time.Second, func() { For(64, 1, &counter{hits: make([]atomic.Int32, 64)}) }) {
		return // the pool exists, or is stuck
	}
	procs := 4*max(runtime.NumCPU(), runtime.GOMAXPROCS(0)) + 8
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	const n, depth = 6, 3
	want := int64(n * n * n * n)
	for _, blocks := range []bool{false, true} {
		for _, callers := range []int{1, 8} {
			var leaves atomic.Int64
			ok := finishes(t, 10*time.Second, func() {
				var wg sync.WaitGroup
				for range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						b := nested{depth: depth, n: n, blocks: blocks, leaves: &leaves}
						if blocks {
							ForBlocks(n, 2, b)
						} else {
							For(n, 1, b)
						}
					}()
				}
				wg.Wait()
			})
			if !ok {
				return // the deadlocked goroutines stay blocked
			}
			assert.Equal(t, int64(callers)*want, leaves.Load(), "blocks %v, %d callers", blocks, callers)
		}
	}
}

// TestForGrowsWithGOMAXPROCS: after GOMAXPROCS is raised above the
// number of workers the pool had, a call covers every index once in
// GOMAXPROCS chunks, as the split promises, and the pool has grown to
// GOMAXPROCS workers.
func TestForGrowsWithGOMAXPROCS(t *testing.T) {
	if !finishes(t, 10*time.Second, func() { For(64, 1, &counter{hits: make([]atomic.Int32, 64)}) }) {
		return // the pool exists, or is stuck
	}
	procs := 2*max(runtime.NumCPU(), runtime.GOMAXPROCS(0)) + 3
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var c counter
	c.hits = make([]atomic.Int32, procs*5)
	var r recordBlocks
	finishes(t, 10*time.Second, func() { For(procs*5, 5, bodies{&c, &r}) })
	assert.Len(t, r.got, procs)
	assert.GreaterOrEqual(t, int(workers.Load()), procs, "the pool grew to GOMAXPROCS")
	for i := range c.hits {
		assert.Equal(t, int32(1), c.hits[i].Load(), "index %d", i)
	}
}

// sink is a loop body of a little arithmetic per index.
type sink struct{ out []float64 }

func (s *sink) Run(lo, hi int) {
	for i := lo; i < hi; i++ {
		s.out[i] = float64(i) * 1.5
	}
}

// BenchmarkFor measures a call's overhead: 2 chunks of 512 indices each
// on GOMAXPROCS 2 (the pool's hand-off and wait dominate).
func BenchmarkFor(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	s := &sink{out: make([]float64, 1024)}
	b.ReportAllocs()
	for b.Loop() {
		For(1024, 512, s)
	}
}

// rendezvous is a loop body whose chunks each wait, up to a deadline, for
// every other chunk to start: it finishes early only if the chunks run at
// the same time.
type rendezvous struct {
	started atomic.Int32
	n       int32
	missed  atomic.Bool
}

func (r *rendezvous) Run(int, int) {
	r.started.Add(1)
	deadline := time.Now().Add(5 * time.Second)
	for r.started.Load() < r.n {
		if time.Now().After(deadline) {
			r.missed.Store(true)
			return
		}
		runtime.Gosched()
	}
}

// TestForUsesWorkersBackToBack: calls made one right after another, the
// first of them as the pool starts, run their chunks on several
// goroutines at once. (A pool that offered chunks only to workers already
// waiting at that instant ran such calls on the caller alone: a batch of
// long samples then used one core of two.)
func TestForUsesWorkersBackToBack(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	// Offers left queued by the earlier tests' calls (their callers ran
	// the chunks before a worker came) are dropped by the workers as they
	// get to them; on a loaded machine hundreds can wait, and a full queue
	// makes a call run alone by design. Let them drain first.
	for deadline := time.Now().Add(10 * time.Second); len(wake) > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	for k := range 20 {
		r := &rendezvous{n: 2}
		queued := len(wake)
		For(2, 1, r)
		if r.missed.Load() {
			t.Fatalf("call %d: its two chunks never ran at the same time (%d offers queued before it)", k, queued)
		}
	}
}
