package report

import (
	"fmt"
	"math"
)

// Stat is the mean and sample standard deviation of a quantity measured
// over N runs (seeds), as the paper reports "mean ± std".
type Stat struct {
	Mean, Std float64
	N         int
}

// Summarize returns the mean and the sample standard deviation (divisor
// N − 1; zero for a single value) of xs. NaN values propagate. The zero
// Stat (N = 0) is returned for an empty xs.
func Summarize(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if len(xs) == 1 {
		return Stat{Mean: mean, N: 1}
	}
	var sq float64
	for _, x := range xs {
		d := x - mean
		sq += d * d
	}
	return Stat{Mean: mean, Std: math.Sqrt(sq / float64(len(xs)-1)), N: len(xs)}
}

// Format formats the mean with the fmt verb format (for example "%.3g")
// and, when N > 1, appends " ± " and the standard deviation in the same
// format. An empty Stat formats as "–".
func (s Stat) Format(format string) string {
	switch s.N {
	case 0:
		return "–"
	case 1:
		return fmt.Sprintf(format, s.Mean)
	}
	return fmt.Sprintf(format+" ± "+format, s.Mean, s.Std)
}

// SummarizeFunc returns Summarize of f over rs: the mean and standard
// deviation of one quantity over the results of several seeds.
func SummarizeFunc[R any](rs []R, f func(R) float64) Stat {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return Summarize(xs)
}
