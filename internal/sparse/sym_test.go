package sparse

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// lowerCSC returns the lower triangle of the symmetric s in CSC form,
// keeping the entries with |s_ij| > 0.
func lowerCSC(s *mat.SymDense) (ptr, idx []int, val []float64) {
	n := s.SymmetricDim()
	ptr = []int{0}
	for j := 0; j < n; j++ {
		for i := j; i < n; i++ {
			if v := s.At(i, j); v != 0 {
				idx = append(idx, i)
				val = append(val, v)
			}
		}
		ptr = append(ptr, len(idx))
	}
	return ptr, idx, val
}

func TestSymMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, ord := range []Ordering{AMD, Natural} {
		b := meshB(rng, 9, 11)
		gd := denseGram(b, randomVec(rng, b.cols, 0.5, 2), 0)
		ptr, idx, val := lowerCSC(gd)
		s, err := AnalyseSym(b.rows, ptr, idx, Options{Ordering: ord})
		require.NoError(t, err)
		assert.Equal(t, len(idx), s.NNZA())
		assert.True(t, isPerm(s.Perm()))
		f := s.NewFactor()
		require.NoError(t, f.Factor(val))
		r := randomVec(rng, b.rows, -1, 1)
		x := append([]float64(nil), r...)
		f.Solve(x)
		var res mat.VecDense
		res.MulVec(gd, mat.NewVecDense(b.rows, x))
		res.SubVec(&res, mat.NewVecDense(b.rows, r))
		assert.Less(t, mat.Norm(&res, math.Inf(1)), 1e-12)
		// The same pattern analysed through AnalyseGram gives the same fill.
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Ordering: ord})
		require.NoError(t, err)
		assert.Equal(t, g.NNZL(), s.NNZL())
		assert.Equal(t, g.Flops(), s.Flops())
	}
}

func TestSymErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		ptr  []int
		idx  []int
	}{
		{"upper entry", 2, []int{0, 1, 2}, []int{0, 0}},
		{"range", 2, []int{0, 1, 2}, []int{0, 2}},
		{"unsorted", 3, []int{0, 2, 2, 2}, []int{2, 1}},
		{"short", 2, []int{0, 1}, []int{0}},
		{"end", 2, []int{0, 1, 1}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AnalyseSym(tc.n, tc.ptr, tc.idx, Options{})
			assert.ErrorIs(t, err, ErrPattern)
		})
	}
	// An indefinite matrix reports its pivot; a missing diagonal is zero.
	s, err := AnalyseSym(2, []int{0, 2, 3}, []int{0, 1, 1}, Options{})
	require.NoError(t, err)
	f := s.NewFactor()
	assert.ErrorIs(t, f.Factor([]float64{1, 2, 1}), ErrNotPositive)
	require.NoError(t, f.Factor([]float64{2, 1, 1}))
	x := []float64{3, 2}
	f.Solve(x)
	assert.InDeltaSlice(t, []float64{1, 1}, x, 1e-15)
	s, err = AnalyseSym(2, []int{0, 1, 1}, []int{1}, Options{})
	require.NoError(t, err)
	assert.ErrorIs(t, s.NewFactor().Factor([]float64{1}), ErrNotPositive)
}
