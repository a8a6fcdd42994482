package solvers

import (
	"runtime"
	"sync"
)

// Method solves one NLP from a starting point. SQP implements it, and so
// does the IPOPT binding in solvers/ipopt (build tag ipopt).
type Method interface {
	Solve(p NLP, init []float64) (*Result, error)
}

// SQP is the Method of Solve with the given Settings (the zero value
// means the defaults).
type SQP struct {
	Settings Settings
}

// Solve calls Solve(p, init, &s.Settings).
func (s SQP) Solve(p NLP, init []float64) (*Result, error) { return Solve(p, init, &s.Settings) }

// SolveAll solves the n instances that instance(i) returns (an NLP and
// its starting point) with method, concurrently on up to workers
// goroutines (GOMAXPROCS when workers ≤ 0), and returns the results in
// order. It stops at the first error. The Method must be safe for
// concurrent use; SQP is.
func SolveAll(method Method, n, workers int, instance func(i int) (NLP, []float64, error)) ([]*Result, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]*Result, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p, init, err := instance(i)
				if err == nil {
					results[i], err = method.Solve(p, init)
				}
				errs[i] = err
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}
