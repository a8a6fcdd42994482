package sparse

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// checkSolve factors G from b and compares Solve with gonum's dense
// Cholesky solve and with the residual ‖G·x − r‖.
func checkSolve(t *testing.T, rng *rand.Rand, b csr, opt Options, eps float64) {
	t.Helper()
	g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, opt)
	require.NoError(t, err)
	winv := randomVec(rng, b.cols, 0.5, 2)
	f := g.NewFactor()
	require.NoError(t, f.Factor(b.val, winv, eps))
	gd := denseGram(b, winv, eps)
	var ch mat.Cholesky
	require.True(t, ch.Factorize(gd), "dense Cholesky")
	for rhs := 0; rhs < 3; rhs++ {
		r := randomVec(rng, b.rows, -1, 1)
		x := append([]float64(nil), r...)
		f.Solve(x)
		var want mat.VecDense
		require.NoError(t, ch.SolveVecTo(&want, mat.NewVecDense(b.rows, r)))
		var res mat.VecDense
		res.MulVec(gd, mat.NewVecDense(b.rows, x))
		res.SubVec(&res, mat.NewVecDense(b.rows, r))
		scale := mat.Norm(gd, math.Inf(1))*mat.Norm(mat.NewVecDense(b.rows, x), math.Inf(1)) + 1
		assert.Less(t, mat.Norm(&res, math.Inf(1))/scale, 1e-13, "residual")
		for i := range x {
			assert.InDelta(t, want.AtVec(i), x[i], 1e-8*(1+math.Abs(want.AtVec(i))), "x[%d]", i)
		}
	}
}

// testOptions are the orderings and methods every numeric test runs with.
var testOptions = []Options{
	{Ordering: AMD, Method: Simplicial},
	{Ordering: Natural, Method: Simplicial},
	{Ordering: AMD, Method: Supernodal},
	{Ordering: Natural, Method: Supernodal},
}

func TestFactorMatchesDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		nc, ny, perRow int
		private        bool
		eps            float64
	}{
		{1, 1, 1, false, 0},
		{5, 8, 2, true, 0},
		{20, 40, 3, false, 0},
		{60, 100, 4, false, 0},
		{100, 150, 2, true, 0},
		{100, 300, 8, false, 0},
		{150, 160, 1, false, 1e-3},
		{200, 250, 3, true, 1e-6},
		{300, 200, 2, false, 0.5},
	} {
		for _, opt := range testOptions {
			t.Run(fmt.Sprintf("%dx%d/%d/%v/%v", tc.nc, tc.ny, tc.perRow, opt.Ordering, opt.Method), func(t *testing.T) {
				checkSolve(t, rng, randomB(rng, tc.nc, tc.ny, tc.perRow, tc.private), opt, tc.eps)
			})
		}
	}
	for _, sz := range [][2]int{{1, 7}, {6, 6}, {12, 17}} {
		for _, opt := range testOptions {
			t.Run(fmt.Sprintf("mesh%dx%d/%v/%v", sz[0], sz[1], opt.Ordering, opt.Method), func(t *testing.T) {
				checkSolve(t, rng, meshB(rng, sz[0], sz[1]), opt, 0)
			})
		}
	}
}

func isPerm(p []int) bool {
	seen := make([]bool, len(p))
	for _, i := range p {
		if i < 0 || i >= len(p) || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}

// isPostordered reports whether every subtree of the forest parent is a
// contiguous range of nodes ending at its root.
func isPostordered(parent []int) bool {
	size := make([]int, len(parent))
	for j, p := range parent {
		size[j]++
		if p != -1 {
			if p <= j {
				return false
			}
			size[p] += size[j]
		}
	}
	for j, p := range parent {
		if p != -1 && j < p-size[p]+1 {
			return false
		}
	}
	return true
}

// TestOrderingFill checks that every ordering is a permutation, that the
// elimination tree has parents after children, and that AMD's fill on 2-D
// meshes is far below the natural (banded) ordering's.
func TestOrderingFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{10, 40, 100} {
		b := meshB(rng, k, k)
		nat, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Ordering: Natural})
		require.NoError(t, err)
		amd, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{})
		require.NoError(t, err)
		for _, g := range []*Gram{nat, amd} {
			assert.True(t, isPerm(g.Perm()))
			for j, p := range g.Parent() {
				assert.True(t, p == -1 || p > j, "parent of %d is %d", j, p)
			}
		}
		assert.True(t, isPostordered(amd.Parent()), "AMD ordering is postordered")
		assert.Equal(t, amd.Parent(), etree(amd.N(), amd.sym.cp, amd.sym.ci), "etree by Liu's algorithm")
		t.Logf("mesh %d×%d: nnz(L) natural %d, AMD %d", k, k, nat.NNZL(), amd.NNZL())
		if k >= 40 {
			assert.Less(t, 2*amd.NNZL(), nat.NNZL(), "AMD fill on a %d×%d mesh", k, k)
		}
		assert.Equal(t, 2*k*(k-1)+k*k, amd.NNZG(), "nnz(G) of the 5-point stencil")
	}
	// Random patterns, with dense rows and empty rows.
	for _, tc := range []struct{ nc, ny, perRow int }{{50, 60, 1}, {300, 400, 2}, {200, 1000, 30}} {
		b := randomB(rng, tc.nc, tc.ny, tc.perRow, false)
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{})
		require.NoError(t, err)
		assert.True(t, isPerm(g.Perm()))
	}
}

func TestAnalyseErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		nc, ny int
		ptr    []int
		col    []int
	}{
		{"negative", -1, 2, []int{0}, nil},
		{"short rowPtr", 2, 2, []int{0, 1}, []int{0}},
		{"rowPtr end", 1, 2, []int{0, 1}, []int{0, 1}},
		{"rowPtr start", 1, 2, []int{1, 1}, []int{0}},
		{"decreasing", 2, 3, []int{0, 2, 1}, []int{0, 1}},
		{"column range", 1, 2, []int{0, 1}, []int{2}},
		{"negative column", 1, 2, []int{0, 1}, []int{-1}},
		{"unsorted", 1, 3, []int{0, 2}, []int{2, 1}},
		{"duplicate", 1, 3, []int{0, 2}, []int{1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AnalyseGram(tc.nc, tc.ny, tc.ptr, tc.col, Options{})
			assert.ErrorIs(t, err, ErrPattern)
		})
	}
	_, err := AnalyseGram(2, 2, []int{0, 1, 2}, []int{0, 1}, Options{Ordering: Given, Perm: []int{0, 0}})
	assert.ErrorIs(t, err, ErrPattern)
	_, err = AnalyseGram(2, 2, []int{0, 1, 2}, []int{0, 1}, Options{Ordering: Given, Perm: []int{1}})
	assert.ErrorIs(t, err, ErrPattern)
	_, err = AnalyseGram(2, 2, []int{0, 1, 2}, []int{0, 1}, Options{Ordering: Ordering(9)})
	assert.ErrorIs(t, err, ErrPattern)
	g, err := AnalyseGram(2, 2, []int{0, 1, 2}, []int{0, 1}, Options{Ordering: Given, Perm: []int{1, 0}})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 0}, g.Perm())
}

// TestRankDeficient: a repeated row of B makes G singular; without ε the
// factorisation reports the pivot, and with ε = 1e-8·MaxDiag it succeeds and
// matches the dense solve of the regularised G.
func TestRankDeficient(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, opt := range testOptions {
		b := randomB(rng, 40, 60, 3, false)
		// Row 7 := row 3.
		var nb csr
		nb.rows, nb.cols = b.rows, b.cols
		nb.ptr = []int{0}
		for i := 0; i < b.rows; i++ {
			src := i
			if i == 7 {
				src = 3
			}
			nb.col = append(nb.col, b.col[b.ptr[src]:b.ptr[src+1]]...)
			nb.val = append(nb.val, b.val[b.ptr[src]:b.ptr[src+1]]...)
			nb.ptr = append(nb.ptr, len(nb.col))
		}
		g, err := AnalyseGram(nb.rows, nb.cols, nb.ptr, nb.col, opt)
		require.NoError(t, err)
		f := g.NewFactor()
		winv := randomVec(rng, nb.cols, 0.5, 2)
		err = f.Factor(nb.val, winv, 0)
		require.ErrorIs(t, err, ErrNotPositive)
		var np *NotPositiveError
		require.True(t, errors.As(err, &np))
		assert.Contains(t, []int{3, 7}, np.Index)
		assert.Equal(t, g.Perm()[np.Step], np.Index)
		assert.Equal(t, f.MaxDiag(), np.MaxDiag)
		assert.Panics(t, func() { f.Solve(make([]float64, nb.rows)) })
		eps := 1e-8 * f.MaxDiag()
		require.NoError(t, f.Factor(nb.val, winv, eps))
		checkSolve(t, rng, nb, opt, eps)
	}
}

func TestFactorErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	b := randomB(rng, 10, 20, 3, true)
	g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{})
	require.NoError(t, err)
	f := g.NewFactor()
	winv := randomVec(rng, b.cols, 0.5, 2)
	bad := append([]float64(nil), b.val...)
	bad[3] = math.NaN()
	assert.ErrorIs(t, f.Factor(bad, winv, 0), ErrNonFinite)
	bad[3] = math.Inf(1)
	assert.ErrorIs(t, f.Factor(bad, winv, 0), ErrNonFinite)
	assert.ErrorIs(t, f.Factor(b.val, winv, -1), ErrNonFinite)
	assert.ErrorIs(t, f.Factor(b.val, winv, math.NaN()), ErrNonFinite)
	w0 := append([]float64(nil), winv...)
	w0[2] = 0
	assert.ErrorIs(t, f.Factor(b.val, w0, 0), ErrNonFinite)
	assert.Panics(t, func() { _ = f.Factor(b.val[1:], winv, 0) })
	assert.Panics(t, func() { _ = f.Factor(b.val, winv[1:], 0) })
	require.NoError(t, f.Factor(b.val, winv, 0))
	assert.Panics(t, func() { f.Solve(make([]float64, 3)) })
}

func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	b := meshB(rng, 20, 20)
	var opts []Options
	for _, opt := range testOptions {
		opts = append(opts, opt, eliminating(opt))
	}
	for _, opt := range opts {
		b := b
		if opt.EliminatePairs {
			b = withPairs(rng, b, []int{1, 2, 2, 1, 3, 4})
		}
		g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, opt)
		require.NoError(t, err)
		f := g.NewFactor()
		winv := randomVec(rng, b.cols, 0.5, 2)
		x := randomVec(rng, b.rows, -1, 1)
		allocs := testing.AllocsPerRun(10, func() {
			if err := f.Factor(b.val, winv, 1e-9); err != nil {
				panic(err)
			}
			f.Solve(x)
		})
		assert.Zero(t, allocs, "%v", opt.Method)
	}
}

// TestConcurrent shares one Gram among goroutines, each with its own
// Factor and values; run with -race.
func TestConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	b := meshB(rng, 15, 15)
	for _, method := range []Method{Simplicial, Supernodal} {
		concurrent(t, rng, b, method)
	}
}

func concurrent(t *testing.T, rng *rand.Rand, b csr, method Method) {
	g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Method: method})
	require.NoError(t, err)
	const workers = 4
	var wg sync.WaitGroup
	results := make([][]float64, workers)
	winv := randomVec(rng, b.cols, 0.5, 2)
	rhs := randomVec(rng, b.rows, -1, 1)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			f := g.NewFactor()
			for it := 0; it < 20; it++ {
				if err := f.Factor(b.val, winv, float64(it%3)*1e-3); err != nil {
					return
				}
				x := append([]float64(nil), rhs...)
				f.Solve(x)
				results[w] = x
			}
		}(w)
	}
	wg.Wait()
	for w := 1; w < workers; w++ {
		assert.Equal(t, results[0], results[w])
	}
}

// TestCountGram: CountGram agrees with AnalyseGram, and MaxNNZL stops an
// analysis whose factor would be larger.
func TestCountGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, m := range []csr{meshB(rng, 40, 40), randomB(rng, 500, 1000, 3, true)} {
		g, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{})
		require.NoError(t, err)
		st, err := CountGram(m.rows, m.cols, m.ptr, m.col, Options{})
		require.NoError(t, err)
		assert.Equal(t, g.Stats(), st)
		assert.Equal(t, Stats{N: g.N(), NNZA: g.NNZG(), NNZL: g.NNZL(), Flops: g.Flops()}, st)

		_, err = AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{MaxNNZL: st.NNZL})
		require.NoError(t, err)
		_, err = AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{MaxNNZL: st.NNZL - 1})
		require.ErrorIs(t, err, ErrTooLarge)
		var tl *TooLargeError
		require.True(t, errors.As(err, &tl))
		assert.Equal(t, st.NNZL-1, tl.Limit)
		assert.Greater(t, tl.NNZL, tl.Limit)
		assert.LessOrEqual(t, tl.NNZL, st.NNZL)
		assert.Equal(t, m.rows, tl.N)
		_, err = CountGram(m.rows, m.cols, m.ptr, m.col, Options{MaxNNZL: st.NNZL / 10})
		require.ErrorIs(t, err, ErrTooLarge)
		require.True(t, errors.As(err, &tl))
		assert.Less(t, tl.Rows, tl.N, "stops early")
	}
	// One column of B in every row: G is dense, caught before the ordering.
	n := 300
	ptr, col := []int{0}, []int{}
	for i := 0; i < n; i++ {
		col = append(col, 0)
		ptr = append(ptr, len(col))
	}
	_, err := CountGram(n, 1, ptr, col, Options{MaxNNZL: 1000})
	var tl *TooLargeError
	require.True(t, errors.As(err, &tl))
	assert.Equal(t, TooLargeError{NNZL: n * (n - 1) / 2, Rows: 0, N: n, Limit: 1000}, *tl)
}

// TestAutoMethod: Auto resolves to Supernodal exactly when
// Flops/NNZL ≥ AutoSupernodal, and an unknown method is an error.
func TestAutoMethod(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	seen := map[Method]bool{}
	for _, m := range []csr{meshB(rng, 10, 10), meshB(rng, 60, 60), randomB(rng, 600, 1200, 3, true)} {
		g, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{})
		require.NoError(t, err)
		want := Simplicial
		if g.Flops() >= AutoSupernodal*float64(g.NNZL()) {
			want = Supernodal
		}
		assert.Equal(t, want, g.Method())
		assert.Equal(t, want == Supernodal, g.sym.sn != nil)
		seen[want] = true
		ex, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{Method: Simplicial})
		require.NoError(t, err)
		assert.Equal(t, Simplicial, ex.Method())
	}
	assert.Equal(t, map[Method]bool{Simplicial: true, Supernodal: true}, seen, "both methods chosen")
	g, err := AnalyseGram(10, 10, make([]int, 11), nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, Simplicial, g.Method(), "empty B")
	_, err = AnalyseGram(10, 10, make([]int, 11), nil, Options{Method: Method(7)})
	assert.ErrorIs(t, err, ErrPattern)
	for _, m := range []Method{Auto, Simplicial, Supernodal, Method(7)} {
		assert.NotEmpty(t, m.String())
	}
}

// TestEdgeCases: an empty G, a B without entries (G = εI) and one column
// touching every row (G dense) with both methods.
func TestEdgeCases(t *testing.T) {
	for _, method := range []Method{Simplicial, Supernodal} {
		g, err := AnalyseGram(0, 3, []int{0}, nil, Options{Method: method})
		require.NoError(t, err)
		f := g.NewFactor()
		require.NoError(t, f.Factor(nil, []float64{1, 1, 1}, 0))
		f.Solve(nil)

		fs := g.NewFactorSingle()
		require.NoError(t, fs.Factor(nil, []float64{1, 1, 1}, 0))
		fs.Solve(nil)

		g, err = AnalyseGram(3, 2, []int{0, 0, 0, 0}, nil, Options{Method: method})
		require.NoError(t, err)
		for _, f := range []*Factor{g.NewFactor(), g.NewFactorSingle()} {
			assert.ErrorIs(t, f.Factor(nil, []float64{1, 1}, 0), ErrNotPositive)
			require.NoError(t, f.Factor(nil, []float64{1, 1}, 2))
			x := []float64{2, 4, 6}
			f.Solve(x)
			tol := 1e-15
			if f.Single() {
				tol = 1e-6 // √2 rounded to float32
			}
			assert.InDeltaSlice(t, []float64{1, 2, 3}, x, tol)
		}

		// Column 0 in every row: G = 11ᵀ + diag(1,…,1)·2 (a private column each).
		rng := rand.New(rand.NewPCG(19, 20))
		n := 30
		var b csr
		b.rows, b.cols, b.ptr = n, n+1, []int{0}
		for i := 0; i < n; i++ {
			b.col = append(b.col, 0, i+1)
			b.val = append(b.val, 1, math.Sqrt2)
			b.ptr = append(b.ptr, len(b.col))
		}
		checkSolve(t, rng, b, Options{Method: method}, 0)
	}
}

// TestFactorSingle checks NewFactorSingle: a supernodal analysis gets a
// float32 factor whose solves match the float64 factor's to single
// precision's accuracy (relative residual ‖G·x − b‖/‖b‖ below 1e-5 on
// these well-conditioned matrices), a simplicial one a float64 factor
// with the same bits as NewFactor's, and neither allocates.
func TestFactorSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name string
		b    csr
	}{
		{"mesh", meshB(rng, 20, 21)},
		{"spmesh", spMeshB(rng, 24)},
		{"random", randomB(rng, 300, 600, 3, true)},
	} {
		for _, method := range []Method{Simplicial, Supernodal} {
			t.Run(tc.name+"/"+method.String(), func(t *testing.T) {
				m := tc.b
				g, err := AnalyseGram(m.rows, m.cols, m.ptr, m.col, Options{Method: method})
				require.NoError(t, err)
				winv := randomVec(rng, m.cols, 0.5, 2)
				f64, fs := g.NewFactor(), g.NewFactorSingle()
				assert.False(t, f64.Single())
				assert.Equal(t, method == Supernodal, fs.Single())
				require.NoError(t, f64.Factor(m.val, winv, 0.01))
				require.NoError(t, fs.Factor(m.val, winv, 0.01))
				rhs := randomVec(rng, m.rows, -1, 1)
				x64 := append([]float64(nil), rhs...)
				xs := append([]float64(nil), rhs...)
				f64.Solve(x64)
				fs.Solve(xs)
				if !fs.Single() {
					assert.Equal(t, x64, xs)
					return
				}
				G := denseGram(m, winv, 0.01)
				var r mat.VecDense
				r.MulVec(G, mat.NewVecDense(len(xs), xs))
				r.SubVec(&r, mat.NewVecDense(len(rhs), rhs))
				rel := mat.Norm(&r, 2) / floats.Norm(rhs, 2)
				assert.Less(t, rel, 1e-5, "relative residual of the single-precision solve")
				assert.Greater(t, rel, 1e-12, "the solve carries float32 rounding")
				allocs := testing.AllocsPerRun(3, func() {
					if err := fs.Factor(m.val, winv, 0.01); err != nil {
						t.Fatal(err)
					}
					fs.Solve(xs)
				})
				assert.Zero(t, allocs)
				assert.Less(t, fs.bytes(), f64.bytes(), "float32 blocks take less memory")
			})
		}
	}
}

// TestFactorSinglePrecisionError: a positive definite G whose elimination
// cancels almost all of a pivot (B with two nearly parallel rows) factors
// in float64 but returns ErrPrecision in single precision.
func TestFactorSinglePrecisionError(t *testing.T) {
	// Rows 0 and 1 of B differ by 1e-4 in one entry: G = B·Bᵀ has a
	// Schur complement of about 1e-8 relative to its diagonal.
	b := csr{rows: 2, cols: 40, ptr: []int{0, 40, 80}}
	for i := range 2 {
		for j := range 40 {
			b.col = append(b.col, j)
			v := 1.0
			if i == 1 && j == 0 {
				v += 1e-4
			}
			b.val = append(b.val, v)
		}
	}
	// Supernodal is forced: this matrix is small.
	g, err := AnalyseGram(b.rows, b.cols, b.ptr, b.col, Options{Method: Supernodal})
	require.NoError(t, err)
	winv := make([]float64, b.cols)
	for i := range winv {
		winv[i] = 1
	}
	require.NoError(t, g.NewFactor().Factor(b.val, winv, 0))
	fs := g.NewFactorSingle()
	require.True(t, fs.Single())
	err = fs.Factor(b.val, winv, 0)
	require.ErrorIs(t, err, ErrPrecision)
	assert.Panics(t, func() { fs.Solve(make([]float64, 2)) }, "no solve after a failed Factor")
}
