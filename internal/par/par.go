// Package par runs loops over a batch in parallel on a shared pool of
// long-lived worker goroutines, without allocating per call.
package par

import (
	"runtime"
	"sync"
)

// Body is a loop body over the half-open index range [lo, hi).
type Body interface {
	Run(lo, hi int)
}

type chunk struct {
	body   Body
	lo, hi int
	wg     *sync.WaitGroup
}

var (
	start   sync.Once
	jobs    chan chunk
	wgPool  = sync.Pool{New: func() any { return new(sync.WaitGroup) }}
	workers int
)

func startWorkers() {
	workers = max(runtime.NumCPU(), runtime.GOMAXPROCS(0))
	jobs = make(chan chunk, workers)
	for range workers {
		go func() {
			for c := range jobs {
				c.body.Run(c.lo, c.hi)
				c.wg.Done()
			}
		}()
	}
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
	wg := wgPool.Get().(*sync.WaitGroup)
	wg.Add(p - 1)
	size := (n + p - 1) / p
	for i := 1; i < p; i++ {
		lo := i * size
		hi := min(lo+size, n)
		if lo >= hi {
			wg.Done()
			continue
		}
		jobs <- chunk{body: body, lo: lo, hi: hi, wg: wg}
	}
	body.Run(0, min(size, n))
	wg.Wait()
	wgPool.Put(wg)
}
