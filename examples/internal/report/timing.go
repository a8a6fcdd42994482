package report

import (
	"errors"
	"slices"
	"time"
)

// MedianTime calls f once to warm up and then reps more times, and
// returns the median wall time of those reps calls. It returns f's first
// error, or an error if reps < 1.
func MedianTime(reps int, f func() error) (time.Duration, error) {
	if reps < 1 {
		return 0, errors.New("report: MedianTime needs reps ≥ 1")
	}
	if err := f(); err != nil {
		return 0, err
	}
	times := make([]time.Duration, reps)
	for i := range times {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	return times[reps/2], nil
}
