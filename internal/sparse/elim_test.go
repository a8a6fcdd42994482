package sparse

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// withPairs returns b with pair rows appended, as enforce.WithInequalities
// makes them for bounds on single variables: for each count in perCol, a
// random column k of b gets that many rows (k, j) with j a new column of
// their own. It also adds a pair row on a new column that no other row
// has, and a row whose two columns are both new (both private).
func withPairs(rng *rand.Rand, b csr, perCol []int) csr {
	out := csr{rows: b.rows, cols: b.cols, ptr: append([]int(nil), b.ptr...), col: append([]int(nil), b.col...), val: append([]float64(nil), b.val...)}
	add := func(c0, c1 int) {
		out.col = append(out.col, c0, c1)
		out.val = append(out.val, 2*rng.Float64()-1, 2*rng.Float64()-1)
		out.rows++
		out.ptr = append(out.ptr, len(out.col))
	}
	used := map[int]bool{}
	for _, m := range perCol {
		k := rng.IntN(b.cols)
		for used[k] {
			k = rng.IntN(b.cols)
		}
		used[k] = true
		for range m {
			add(k, out.cols)
			out.cols++
		}
	}
	k := out.cols // a variable with only a bound
	out.cols++
	add(k, out.cols)
	out.cols++
	add(out.cols, out.cols+1) // two private columns
	out.cols += 2
	return out
}

// eliminating returns opt with EliminatePairs set.
func eliminating(opt Options) Options {
	opt.EliminatePairs = true
	return opt
}

func TestEliminatePairsMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for _, tc := range []struct {
		nc, ny, perRow int
		perCol         []int
		eps            float64
	}{
		{1, 2, 1, []int{1}, 0},
		{10, 12, 2, []int{1, 2, 2, 1}, 0},
		{40, 60, 3, []int{1, 2, 3, 4, 5, 1, 2}, 0},
		{100, 150, 2, []int{2, 2, 2, 2, 1, 1, 1, 1, 2, 2}, 1e-6},
		{120, 200, 4, []int{1, 1, 2, 5, 6, 2, 1}, 0.5},
	} {
		for _, opt := range testOptions {
			t.Run(fmt.Sprintf("%dx%d/%v/%v/eps=%g", tc.nc, tc.ny, opt.Ordering, opt.Method, tc.eps), func(t *testing.T) {
				b := withPairs(rng, randomB(rng, tc.nc, tc.ny, tc.perRow, true), tc.perCol)
				g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, eliminating(opt))
				require.NoError(t, err)
				require.NotNil(t, g.el, "pair rows found")
				checkSolve(t, rng, b, eliminating(opt), tc.eps)
			})
		}
	}
	// A mesh (no pair rows): the usual analysis.
	b := meshB(rng, 6, 6)
	g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, eliminating(Options{}))
	require.NoError(t, err)
	assert.Nil(t, g.el)
}

// TestEliminatePairsBlocks checks which rows are eliminated: blocks of at
// most MaxPairBlock rows on one column, the rest kept.
func TestEliminatePairsBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	b := withPairs(rng, randomB(rng, 30, 40, 3, false), []int{1, MaxPairBlock, MaxPairBlock + 1})
	g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, eliminating(Options{}))
	require.NoError(t, err)
	require.NotNil(t, g.el)
	// 1 + MaxPairBlock, the bound-only row and the two-private row.
	assert.Equal(t, 1+MaxPairBlock+2, g.el.nF)
	assert.Equal(t, g.el.nF, g.PairRows())
	assert.Equal(t, b.rows-g.el.nF, len(g.el.pRows))
	for t0 := range g.el.bcol {
		assert.LessOrEqual(t, int(g.el.bp[t0+1]-g.el.bp[t0]), MaxPairBlock)
	}
}

// TestEliminatePairsStats checks the sizes, order and tree reported for
// the whole G against the usual analysis in the same order.
func TestEliminatePairsStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, opt := range testOptions {
		b := withPairs(rng, randomB(rng, 80, 120, 3, false), []int{1, 2, 3, 2, 1, 1, 2})
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, eliminating(opt))
		require.NoError(t, err)
		require.NotNil(t, g.el)
		perm := g.Perm()
		require.True(t, isPerm(perm))
		ref, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Ordering: Given, Perm: perm, Method: Simplicial})
		require.NoError(t, err)
		assert.Equal(t, ref.NNZG(), g.NNZG(), "%v: nnz(G)", opt)
		assert.Equal(t, ref.NNZL(), g.NNZL(), "%v: nnz(L)", opt)
		assert.Equal(t, ref.Flops(), g.Flops(), "%v: flops", opt)
		assert.Equal(t, ref.Parent(), g.Parent(), "%v: tree", opt)
		assert.Equal(t, ref.Stats(), g.Stats(), "%v", opt)
		st, err := CountGram(b.rows, b.cols, b.ptr, b.col, eliminating(opt))
		require.NoError(t, err)
		assert.Equal(t, g.Stats(), st, "%v: CountGram", opt)
		assert.Equal(t, g.el.inner.Method(), g.Method())
		// MaxNNZL bounds the whole factor.
		_, err = AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Method: opt.Method, Ordering: opt.Ordering, EliminatePairs: true, MaxNNZL: g.NNZL() - 1})
		var tl *TooLargeError
		require.ErrorAs(t, err, &tl, "%v", opt)
		assert.Greater(t, tl.NNZL, g.NNZL()-1)
		_, err = AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Method: opt.Method, Ordering: opt.Ordering, EliminatePairs: true, MaxNNZL: g.NNZL()})
		require.NoError(t, err)
	}
}

// TestEliminatePairsPinned: a pair row with b = 0 and ε = 0 has ρ = 0 and
// pins its variable (d′ = 0); G stays positive definite and the solve
// exact.
func TestEliminatePairsPinned(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	b := withPairs(rng, randomB(rng, 30, 40, 3, true), []int{1, 2, 1})
	g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, eliminating(Options{}))
	require.NoError(t, err)
	require.NotNil(t, g.el)
	// Zero every pair row's private entry but one row of each block.
	for t0 := range g.el.bcol {
		u := g.el.bp[t0]
		b.val[g.el.posB[u]] = 0
	}
	checkSolve(t, rng, b, eliminating(Options{}), 0)
}

func TestEliminatePairsNotPositive(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, opt := range testOptions {
		b := withPairs(rng, randomB(rng, 30, 40, 3, true), []int{1, 2})
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, eliminating(opt))
		require.NoError(t, err)
		require.NotNil(t, g.el)
		winv := randomVec(rng, b.cols, 0.5, 2)
		// A zero pair row.
		u := g.el.bp[1]
		r := int(g.el.fr[u])
		v := slices.Clone(b.val)
		v[g.el.posA[u]], v[g.el.posB[u]] = 0, 0
		f := g.NewFactor()
		err = f.Factor(v, winv, 0)
		var np *NotPositiveError
		require.ErrorAs(t, err, &np, "%v", opt)
		assert.Equal(t, r, np.Index)
		assert.Equal(t, r, g.Perm()[np.Step])
		assert.Panics(t, func() { f.Solve(make([]float64, b.rows)) })
		// A zero row among the others (row 3 has its private column).
		v = slices.Clone(b.val)
		for p := b.ptr[3]; p < b.ptr[4]; p++ {
			v[p] = 0
		}
		err = f.Factor(v, winv, 0)
		require.ErrorAs(t, err, &np, "%v", opt)
		assert.Equal(t, 3, np.Index)
		assert.Equal(t, 3, g.Perm()[np.Step])
		// ε makes it positive definite again; non-finite values fail.
		require.NoError(t, f.Factor(v, winv, 1e-3))
		v[g.el.posB[0]] = math.NaN()
		assert.ErrorIs(t, f.Factor(v, winv, 0), ErrNonFinite)
		v[g.el.posB[0]] = 1
		w := slices.Clone(winv)
		w[g.el.pj[0]] = 0
		assert.ErrorIs(t, f.Factor(v, w, 0), ErrNonFinite)
		assert.ErrorIs(t, f.Factor(v, winv, math.Inf(1)), ErrNonFinite)
	}
}

func TestEliminatePairsSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	b := withPairs(rng, meshB(rng, 12, 12), []int{1, 2, 2, 1, 1, 2, 1, 1})
	g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Method: Supernodal, EliminatePairs: true})
	require.NoError(t, err)
	require.NotNil(t, g.el)
	f := g.NewFactorSingle()
	assert.True(t, f.Single())
	assert.False(t, g.NewFactor().Single())
	winv := randomVec(rng, b.cols, 0.5, 2)
	require.NoError(t, f.Factor(b.val, winv, 0))
	gd := denseGram(b, winv, 0)
	var ch mat.Cholesky
	require.True(t, ch.Factorize(gd))
	r := randomVec(rng, b.rows, -1, 1)
	x := slices.Clone(r)
	f.Solve(x)
	var want mat.VecDense
	require.NoError(t, ch.SolveVecTo(&want, mat.NewVecDense(b.rows, r)))
	for i := range x {
		assert.InDelta(t, want.AtVec(i), x[i], 1e-4*(1+math.Abs(want.AtVec(i))), "x[%d]", i)
	}
}

// TestEliminatePairsSameSolution compares the solves with and without
// elimination on a larger system, as enforce's steps use them.
func TestEliminatePairsSameSolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	base := meshB(rng, 30, 30)
	per := make([]int, 300)
	for i := range per {
		per[i] = 1 + rng.IntN(2)
	}
	b := withPairs(rng, base, per)
	winv := randomVec(rng, b.cols, 0.5, 2)
	r := randomVec(rng, b.rows, -1, 1)
	var sol [2][]float64
	for i, el := range []bool{false, true} {
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{EliminatePairs: el})
		require.NoError(t, err)
		assert.Equal(t, el, g.el != nil)
		f := g.NewFactor()
		require.NoError(t, f.Factor(b.val, winv, 0))
		sol[i] = slices.Clone(r)
		f.Solve(sol[i])
		if el {
			assert.Less(t, g.el.inner.NNZL(), g.NNZL())
		}
	}
	for i := range r {
		if d := math.Abs(sol[0][i] - sol[1][i]); d > 1e-9*(1+math.Abs(sol[0][i])) {
			t.Fatalf("x[%d]: %v without elimination, %v with", i, sol[0][i], sol[1][i])
		}
	}
}

// TestEliminatePairsOnly: a B made of pair rows alone leaves an empty
// Schur complement.
func TestEliminatePairsOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	b := withPairs(rng, csr{rows: 0, cols: 6, ptr: []int{0}}, []int{1, 2, 3})
	for _, opt := range testOptions {
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, eliminating(opt))
		require.NoError(t, err)
		require.NotNil(t, g.el)
		assert.Equal(t, b.rows, g.PairRows())
		assert.Empty(t, g.el.pRows)
		checkSolve(t, rng, b, eliminating(opt), 0)
	}
}

// FuzzEliminatePairs factors random patterns with pair rows (blocks of one
// to MaxPairBlock+1 rows, rows of a variable with a bound only, rows of
// two private columns, zero values that pin a variable) with and without
// the elimination: a failure is one of the documented errors, and where
// both succeed both solves are backward stable.
//
//	go test -run '^$' -fuzz FuzzEliminatePairs -fuzztime 60s ./internal/sparse
func FuzzEliminatePairs(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint8(12), uint8(3), uint8(5), false, 0.0)
	f.Add(uint64(2), uint8(0), uint8(4), uint8(1), uint8(3), true, 1e-6)
	f.Add(uint64(3), uint8(30), uint8(20), uint8(4), uint8(9), true, 0.0)
	f.Fuzz(func(t *testing.T, seed uint64, nc, ny, perRow, nPairs uint8, zeros bool, eps float64) {
		if ny == 0 || !(eps >= 0) || eps > 10 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 17))
		base := randomB(rng, int(nc%40), int(ny%40)+1, int(perRow%5)+1, rng.IntN(2) == 0)
		per := make([]int, min(int(nPairs%12), base.cols))
		for i := range per {
			per[i] = 1 + rng.IntN(MaxPairBlock+1)
		}
		b := withPairs(rng, base, per)
		if zeros {
			for range 3 {
				b.val[rng.IntN(len(b.val))] = 0
			}
		}
		winv := randomVec(rng, b.cols, 0.1, 10)
		r := randomVec(rng, b.rows, -1, 1)
		var errs [2]error
		var sol [2][]float64
		for i, el := range []bool{false, true} {
			g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{EliminatePairs: el})
			require.NoError(t, err)
			fa := g.NewFactor()
			errs[i] = fa.Factor(b.val, winv, eps)
			if errs[i] == nil {
				sol[i] = slices.Clone(r)
				fa.Solve(sol[i])
			}
		}
		if errs[0] != nil || errs[1] != nil {
			// Rounding decides near the pivot tolerance: only require
			// that a failure is one of the documented errors.
			for _, err := range errs {
				if err != nil && !errors.Is(err, ErrNotPositive) && !errors.Is(err, ErrNonFinite) {
					t.Fatalf("unexpected error %v", err)
				}
			}
			return
		}
		// Both are backward stable: a small residual relative to ‖G‖·‖x‖.
		gd := denseGram(b, winv, eps)
		rv := mat.NewVecDense(b.rows, r)
		for i, x := range sol {
			xv := mat.NewVecDense(b.rows, x)
			var res mat.VecDense
			res.MulVec(gd, xv)
			res.SubVec(&res, rv)
			scale := mat.Norm(gd, math.Inf(1))*mat.Norm(xv, math.Inf(1)) + mat.Norm(rv, math.Inf(1))
			if rel := mat.Norm(&res, math.Inf(1)) / scale; !(rel < 1e-12) {
				t.Fatalf("elimination %v: relative residual %g", i == 1, rel)
			}
		}
	})
}
