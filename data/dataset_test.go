package data

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestRandomSplit(t *testing.T) {
	for _, tc := range []struct {
		n                   int
		train, val          float64
		nTrain, nVal, nTest int
	}{
		{4308, 0.7, 0.2, 3015, 861, 432},
		{2000, 0.8, 0, 1600, 0, 400},
		{10, 1, 0, 10, 0, 0},
		{0, 0.5, 0.5, 0, 0, 0},
	} {
		s := RandomSplit(tc.n, tc.train, tc.val, 3)
		assert.Equal(t, [3]int{tc.nTrain, tc.nVal, tc.nTest}, [3]int{len(s.Train), len(s.Val), len(s.Test)})
		seen := make(map[int]bool)
		for _, set := range [][]int{s.Train, s.Val, s.Test} {
			for _, i := range set {
				require.True(t, i >= 0 && i < tc.n && !seen[i])
				seen[i] = true
			}
		}
		assert.Len(t, seen, tc.n)
	}
	assert.Equal(t, RandomSplit(100, 0.5, 0.2, 9), RandomSplit(100, 0.5, 0.2, 9))
	assert.NotEqual(t, RandomSplit(100, 0.5, 0.2, 9), RandomSplit(100, 0.5, 0.2, 10))
	assert.Panics(t, func() { RandomSplit(10, 0.8, 0.3, 1) })
	assert.Panics(t, func() { RandomSplit(-1, 0.5, 0.5, 1) })
}

func TestDatasetRows(t *testing.T) {
	d := Dataset{
		X: mat.NewDense(4, 1, []float64{0, 1, 2, 3}),
		Y: mat.NewDense(4, 2, []float64{0, 0, 1, 1, 2, 2, 3, 3}),
	}
	r := d.Rows([]int{3, 1})
	assert.Equal(t, 2, r.Len())
	assert.Equal(t, []float64{3, 1}, r.X.RawMatrix().Data)
	assert.Equal(t, []float64{3, 3, 1, 1}, r.Y.RawMatrix().Data)
	r.X.Set(0, 0, 42)
	assert.Equal(t, 3.0, d.X.At(3, 0), "Rows copies")
	assert.Equal(t, 0, d.Rows(nil).Len())
	assert.Panics(t, func() { d.Rows([]int{4}) })

	unsup := Dataset{X: mat.NewDense(3, 2, nil)}
	assert.Nil(t, unsup.Rows([]int{0}).Y)

	train, val, test := d.Partition(Split{Train: []int{0, 1}, Test: []int{2, 3}})
	assert.Equal(t, [3]int{2, 0, 2}, [3]int{train.Len(), val.Len(), test.Len()})
}
