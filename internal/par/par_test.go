package par

import (
	"runtime"
	"sync/atomic"
	"testing"

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
