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
	for _, opt := range testOptions {
		b := meshB(rng, 9, 11)
		gd := denseGram(b, randomVec(rng, b.cols, 0.5, 2), 0)
		ptr, idx, val := lowerCSC(gd)
		s, err := AnalyseSym(b.rows, ptr, idx, opt)
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
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, opt)
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
	for _, method := range []Method{Simplicial, Supernodal} {
		s, err := AnalyseSym(2, []int{0, 2, 3}, []int{0, 1, 1}, Options{Method: method})
		require.NoError(t, err)
		assert.Equal(t, method, s.Method())
		f := s.NewFactor()
		assert.ErrorIs(t, f.Factor([]float64{1, 2, 1}), ErrNotPositive)
		assert.ErrorIs(t, f.Factor([]float64{1, math.NaN(), 1}), ErrNonFinite)
		assert.Panics(t, func() { _ = f.Factor([]float64{1}) })
		require.NoError(t, f.Factor([]float64{2, 1, 1}))
		assert.Equal(t, 2.0, f.MaxDiag())
		x := []float64{3, 2}
		f.Solve(x)
		assert.InDeltaSlice(t, []float64{1, 1}, x, 1e-15)
		s, err = AnalyseSym(2, []int{0, 1, 1}, []int{1}, Options{Method: method})
		require.NoError(t, err)
		assert.ErrorIs(t, s.NewFactor().Factor([]float64{1}), ErrNotPositive)
	}
}

// TestAMDDenseRow: a node joined to every other (node 0, a hub, beside a
// 40×40 grid) is a dense row, ordered last, so it adds one row to L
// instead of spoiling the mesh ordering; with Dense < 0 it is ordered by
// degree like the rest.
func TestAMDDenseRow(t *testing.T) {
	k := 40
	n := k*k + 1
	id := func(x, y int) int { return 1 + x*k + y }
	ptr := []int{0}
	var idx []int
	for j := 0; j < n; j++ {
		if j == 0 {
			for i := 0; i < n; i++ {
				idx = append(idx, i)
			}
		} else {
			x, y := (j-1)/k, (j-1)%k
			idx = append(idx, j)
			if y+1 < k {
				idx = append(idx, id(x, y+1))
			}
			if x+1 < k {
				idx = append(idx, id(x+1, y))
			}
		}
		ptr = append(ptr, len(idx))
	}
	s, err := AnalyseSym(n, ptr, idx, Options{})
	require.NoError(t, err)
	perm := s.Perm()
	assert.Equal(t, 0, perm[n-1], "the dense row is eliminated last")
	rng := rand.New(rand.NewPCG(21, 22))
	m := meshB(rng, k, k)
	g, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{})
	require.NoError(t, err)
	// The hub's row (n−1 entries) on top of a mesh fill within 25 % of the
	// mesh alone (tie-breaking differs: the hub counts in the initial
	// degrees).
	assert.LessOrEqual(t, float64(s.NNZL()), 1.25*float64(g.NNZL())+float64(n-1), "mesh fill plus the hub's row")
	nd, err := AnalyseSym(n, ptr, idx, Options{Dense: -1})
	require.NoError(t, err)
	assert.True(t, isPerm(nd.Perm()))
}
