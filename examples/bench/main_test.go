package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/benchcases"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		assert.Equal(t, tc.want, median(tc.xs), "%v", tc.xs)
	}
}

func TestRaiseCeiling(t *testing.T) {
	c, i := raiseCeiling(10, []float64{3, 0, 9})
	assert.Equal(t, 10.0, c)
	assert.Equal(t, -1, i)
	c, i = raiseCeiling(2.6, []float64{3, 7.2, 0, 5})
	assert.Equal(t, 7.2, c, "the ceiling never falls below an achieved rate")
	assert.Equal(t, 1, i)
}

func TestLoad(t *testing.T) {
	l, err := parseLoadAvg("1.17 0.40 0.14 1/234 5678\n")
	require.NoError(t, err)
	assert.Equal(t, [3]float64{1.17, 0.40, 0.14}, l)
	_, err = parseLoadAvg("1.0 2.0")
	assert.Error(t, err)
	_, err = parseLoadAvg("a b c")
	assert.Error(t, err)

	for _, tc := range []struct {
		before, after float64
		cpus          int
		want          bool
	}{
		{0.2, 2.1, 2, false}, // quiet: the bench's own two threads
		{1.5, 2.5, 2, true},  // others running before
		{0.1, 3.5, 2, true},  // others started during the run
		{3, 10, 16, false},
	} {
		assert.Equal(t, tc.want, busy([3]float64{tc.before}, [3]float64{tc.after}, tc.cpus), "%+v", tc)
	}
}

// TestMeasureCase runs one small case end to end.
func TestMeasureCase(t *testing.T) {
	cases, err := benchcases.Cases(100)
	require.NoError(t, err)
	for _, c := range []benchcases.Case{cases[0], cases[1]} {
		for _, p := range []enforce.Precision{enforce.Float64, enforce.Float32} {
			r, err := measureCase(c, 3, p)
			require.NoError(t, err)
			assert.Len(t, r.steps, 3)
			for _, v := range append([]float64{r.step, r.fwd1, r.train}, r.steps...) {
				assert.GreaterOrEqual(t, v, 0.0)
			}
			assert.Positive(t, r.fwd1)
			assert.Positive(t, r.train)
			assert.Positive(t, r.full)
			assert.GreaterOrEqual(t, r.fullDepth, 1.0)
			assert.Equal(t, p, r.prec)
		}
	}
	var d dgemm
	assert.Positive(t, d.rate())
}
