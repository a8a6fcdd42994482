package data

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Dataset is a set of n samples: inputs X (n×nx) and targets Y (n×ny), one
// sample per row. Y is nil for unsupervised data (inputs only). The zero
// value is the empty dataset; gonum matrices cannot have zero rows, so an
// empty Dataset always has nil X and Y.
type Dataset struct {
	X, Y *mat.Dense
}

// Len returns the number of samples n.
func (d Dataset) Len() int {
	if d.X == nil {
		return 0
	}
	r, _ := d.X.Dims()
	return r
}

// Rows returns a new Dataset holding copies of the samples with the given
// row indices, in that order. It panics if an index is out of range. It
// returns the empty Dataset when idx is empty.
func (d Dataset) Rows(idx []int) Dataset {
	if len(idx) == 0 {
		return Dataset{}
	}
	return Dataset{X: takeRows(d.X, idx), Y: takeRows(d.Y, idx)}
}

// Partition returns the training, validation and test subsets of d
// selected by s.
func (d Dataset) Partition(s Split) (train, val, test Dataset) {
	return d.Rows(s.Train), d.Rows(s.Val), d.Rows(s.Test)
}

// takeRows copies the rows idx of m into a new len(idx)×c matrix; it
// returns nil for a nil m.
func takeRows(m *mat.Dense, idx []int) *mat.Dense {
	if m == nil {
		return nil
	}
	r, c := m.Dims()
	dst := mat.NewDense(len(idx), c, nil)
	for k, i := range idx {
		if i < 0 || i >= r {
			panic(fmt.Sprintf("data: row index %d out of range [0, %d)", i, r))
		}
		dst.SetRow(k, m.RawRowView(i))
	}
	return dst
}

// Split is a partition of the row indices 0..n−1 of a Dataset into
// training, validation and test sets. Any of them may be empty.
type Split struct {
	Train, Val, Test []int
}

// RandomSplit partitions 0..n−1 at random, deterministically for a given
// seed: it draws a uniform random permutation and assigns its first
// ⌊trainFrac·n⌋ entries to Train, the next ⌊valFrac·n⌋ to Val and the rest
// to Test. These are the sizes of the KKT-HardNet reference split (ED:
// 4308 rows, fractions 0.7/0.2 give 3015/861/432). It panics unless n ≥ 0,
// the fractions are in [0, 1] and trainFrac+valFrac ≤ 1.
func RandomSplit(n int, trainFrac, valFrac float64, seed uint64) Split {
	if n < 0 || !(trainFrac >= 0 && valFrac >= 0 && trainFrac+valFrac <= 1) {
		panic(fmt.Sprintf("data: bad RandomSplit(n=%d, train=%v, val=%v)", n, trainFrac, valFrac))
	}
	perm := rand.New(rand.NewPCG(seed, streamSplit)).Perm(n)
	nTrain := int(trainFrac * float64(n))
	nVal := int(valFrac * float64(n))
	return Split{
		Train: perm[:nTrain:nTrain],
		Val:   perm[nTrain : nTrain+nVal : nTrain+nVal],
		Test:  perm[nTrain+nVal:],
	}
}

// streamSplit is the second PCG seed of RandomSplit's stream (the value
// problems.RandomSplit used, so that a seed gives the split it gave).
const streamSplit uint64 = 0x5e11_0000
