package enforce

import (
	"errors"
	"gonum.org/v1/gonum/mat"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce/hd"
)

// chainEquations is the chain of chainFunc as a plain function (nc = ny −
// 4 equations, row k reading y_k … y_{k+3}: 4 nonzeros per row) with its
// pattern.
func chainEquations(ny int) (pattern [][]int, f func(x, y, c []hyperdual.Number)) {
	pattern = make([][]int, ny-4)
	for k := range pattern {
		pattern[k] = []int{k, k + 1, k + 2, k + 3}
	}
	return pattern, func(x, y, c []hd.Number) {
		for k := range c {
			l, u, r, f := y[k], y[k+1], y[k+2], y[k+3]
			s := hd.Sub(hd.Add(hd.Mul(u, u, u), hd.Scale(2, u)), hd.Add(hd.Scale(0.5, hd.Add(l, r)), x[0]))
			c[k] = hd.Add(s, hd.Scale(0.1, f))
		}
	}
}

// randomEquations returns nc equations in ny outputs whose row i reads
// rowLen(i) random outputs through products, squares, Abs and a
// cancelling difference, with their pattern.
func randomEquations(rnd *rand.Rand, ny, nc int, rowLen func(i int) int) (pattern [][]int, f func(x, y, c []hyperdual.Number)) {
	pattern = make([][]int, nc)
	for i := range pattern {
		for len(pattern[i]) < rowLen(i) {
			if j := rnd.IntN(ny); !slices.Contains(pattern[i], j) {
				pattern[i] = append(pattern[i], j)
			}
		}
	}
	return pattern, func(x, y, c []hd.Number) {
		for i, row := range pattern {
			s := hd.Const(0)
			for p, j := range row {
				switch p % 3 {
				case 0:
					s = hd.Add(s, hd.Mul(y[j], y[row[0]]))
				case 1:
					s = hd.Add(s, hd.SignedSquare(y[j]))
				default:
					s = hd.Sub(s, hd.Abs(y[j]))
				}
			}
			if len(row) > 1 { // y_a − y_a adds no dependence
				s = hd.Add(s, hd.Sub(y[row[1]], y[row[1]]))
			}
			c[i] = hd.Sub(s, x[0])
		}
	}
}

// TestFuncPatternDetected checks that the detected pattern of a Func is
// its true pattern: a chain, a mesh, random rows of 1 to 8 outputs, rows
// of 60, a row with no dependence on y, and a tiny ny that takes the
// column-by-column fallback; and that the group testing takes at most
// 150 evaluations of f per point for rows of at most 6 (8 for the random
// rows) entries, far fewer than Func's dense Jacobian (⌈ny/2⌉), and at
// most ny per point for rows of 60.
func TestFuncPatternDetected(t *testing.T) {
	rnd := rand.New(rand.NewPCG(56, 56))
	for _, tc := range []struct {
		name     string
		nx, ny   int
		pattern  [][]int
		f        func(x, y, c []hyperdual.Number)
		maxPassN int // at most this many evaluations of f in all, 0: no bound
	}{
		{"chain", 1, 2000, nil, nil, 2 * 150},
		{"mesh", 2, 2 * 30 * 30, nil, nil, 2 * 150},
		{"random rows of 1 to 8", 1, 3000, nil, nil, 2 * 150},
		{"rows of 60", 1, 400, nil, nil, 2 * 400},
		{"tiny", 1, 6, nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.name {
			case "chain", "tiny":
				tc.pattern, tc.f = chainEquations(tc.ny)
			case "mesh":
				tc.pattern, tc.f = meshEquations(30, nil)
			case "random rows of 1 to 8":
				tc.pattern, tc.f = randomEquations(rnd, tc.ny, 2500, func(int) int { return 1 + rnd.IntN(8) })
				tc.pattern[7] = nil // a row that does not depend on y (c_7 = −x₀)
			case "rows of 60":
				tc.pattern, tc.f = randomEquations(rnd, tc.ny, 50, func(int) int { return 60 })
			}
			c, err := Func(tc.nx, tc.ny, len(tc.pattern), tc.f)
			require.NoError(t, err)
			fc := c.(*funcConstraint)
			sf := fc.detectPattern()
			require.NotNil(t, sf)
			assert.True(t, sf.detected)
			for i, want := range tc.pattern {
				want = append([]int{}, want...)
				slices.Sort(want)
				assert.Equal(t, want, sf.col[sf.rowPtr[i]:sf.rowPtr[i+1]:sf.rowPtr[i+1]], "row %d", i)
			}
			if tc.maxPassN > 0 {
				assert.LessOrEqual(t, fc.detect.passes, tc.maxPassN, "group testing, not ⌈ny/2⌉ = %d per point", (tc.ny+1)/2)
			}
			t.Logf("%s: nc %d, ny %d: %d evaluations of f (dense Jacobian: %d per point)", tc.name, len(tc.pattern), tc.ny, fc.detect.passes, (tc.ny+1)/2)
		})
	}
}

// funcTarget is issue 56's Func: nc = n − 4 ≈ 10⁴ equations of 4
// nonzeros per row, written with Func and hd.
func funcTarget(t testing.TB, n int) Constraint {
	_, f := chainEquations(n)
	c, err := Func(1, n, n-4, f)
	require.NoError(t, err)
	return c
}

// BenchmarkFuncSparseProject measures issue 56's target, a Func of 10⁴
// equations with 4 nonzeros per row, batch 8: the pattern's detection
// alone, NewAdaNP (the detection, once per constraint, and the symbolic
// analysis) and the projection on the sparse path that PathAuto takes.
func BenchmarkFuncSparseProject(b *testing.B) {
	const n, rows = 10004, 8
	rnd := rand.New(rand.NewPCG(1, 1))
	x := randDense(rnd, rows, 1, 0.5)
	yhat := randDense(rnd, rows, n, 0.5)
	b.Run("detect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			require.NotNil(b, funcTarget(b, n).(*funcConstraint).detectPattern())
		}
	})
	b.Run("NewAdaNP", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := funcTarget(b, n)
			a, err := NewAdaNP(c, Settings{})
			require.NoError(b, err)
			require.Equal(b, PathSparse, a.Path())
		}
	})
	a, err := NewAdaNP(funcTarget(b, n), Settings{})
	require.NoError(b, err)
	b.Run("Project", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, st, err := a.Project(x, yhat)
			require.NoError(b, err)
			require.True(b, st.Converged())
		}
	})
}

// TestPathAutoPicksSparseForFunc: PathAuto takes the sparse path for
// issue 56's Func (10⁴ equations, 4 nonzeros per row) through its
// detected pattern, keeps the dense path for a small Func and with
// PathDense, and Constraint returns the Func itself.
func TestPathAutoPicksSparseForFunc(t *testing.T) {
	big := funcTarget(t, 10004)
	a, err := NewAdaNP(big, Settings{})
	require.NoError(t, err)
	assert.Equal(t, PathSparse, a.Path())
	assert.Same(t, big, a.Constraint())
	info, ok := a.SparseInfo()
	require.True(t, ok)
	assert.Equal(t, 4*10000, info.NNZB)

	dense, err := NewAdaNP(big, Settings{Path: PathDense})
	require.NoError(t, err)
	assert.Equal(t, PathDense, dense.Path())

	small := funcTarget(t, 4+15)
	s, err := NewAdaNP(small, Settings{})
	require.NoError(t, err)
	assert.Equal(t, PathDense, s.Path(), "below 16 equations")
	s, err = NewAdaNP(small, Settings{Path: PathSparse})
	require.NoError(t, err)
	assert.Equal(t, PathSparse, s.Path(), "PathSparse detects at any size")
	s, err = NewAdaNP(funcTarget(t, 4+16), Settings{})
	require.NoError(t, err)
	assert.Equal(t, PathSparse, s.Path(), "16 equations")
}

// TestFuncSparseMatchesDense: a Func projected on the sparse path of its
// detected pattern gives the dense path's outputs and gradients (Unrolled,
// exact: HessVec and MixedHessVec by the compressed evaluations) to
// rounding.
func TestFuncSparseMatchesDense(t *testing.T) {
	const n, rows = 120, 3
	c := funcTarget(t, n)
	rnd := rand.New(rand.NewPCG(4, 4))
	x, yhat := randDense(rnd, rows, 1, 0.5), randDense(rnd, rows, n, 0.5)
	g := randDense(rnd, rows, n, 1)
	var out [2]struct{ y, gy, gx *mat.Dense }
	for k, path := range []Path{PathAuto, PathDense} {
		a, err := NewAdaNP(c, Settings{Path: path, Grad: Unrolled, Tol: 1e-12})
		require.NoError(t, err)
		require.Equal(t, []Path{PathSparse, PathDense}[k], a.Path())
		require.True(t, a.ExactGradient())
		var tr Trace
		y := mat.NewDense(rows, n, nil)
		st, err := a.ProjectTrace(y, x, yhat, &tr)
		require.NoError(t, err)
		require.True(t, st.Converged())
		gy, gx := mat.NewDense(rows, n, nil), mat.NewDense(rows, 1, nil)
		require.NoError(t, a.VJP(&tr, g, gy, gx))
		out[k].y, out[k].gy, out[k].gx = y, gy, gx
	}
	assert.True(t, mat.EqualApprox(out[0].y, out[1].y, 1e-12), "ỹ")
	assert.True(t, mat.EqualApprox(out[0].gy, out[1].gy, 1e-9), "∂ℓ/∂ŷ")
	assert.True(t, mat.EqualApprox(out[0].gx, out[1].gx, 1e-9), "∂ℓ/∂x")
}

// TestFuncDetectionMemory bounds the memory that the detection allocates
// for issue 56's Func at 10⁴ equations: its entries and vectors, O(nnz +
// nc + ny), far below the 800 MB of one dense nc×ny Jacobian.
func TestFuncDetectionMemory(t *testing.T) {
	c := funcTarget(t, 10004).(*funcConstraint)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sf := c.detectPattern()
	runtime.ReadMemStats(&after)
	require.NotNil(t, sf)
	alloc := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, alloc, uint64(40<<20), "bytes allocated by the detection")
	assert.Less(t, c.detect.passes, 600, "evaluations of f (a dense Jacobian takes 5002 per point)")
	t.Logf("detection: %d evaluations of f, %.1f MB allocated", c.detect.passes, float64(alloc)/(1<<20))
}

// TestFuncDetectionMissIsCaught: an equation that reads an output only in
// a branch the probe points (y in [0.5, 1.5]) do not take is missed by
// the detection, as documented; the first projection at a sample that
// takes the branch then returns a *PatternError marked Detected, not a
// silently wrong projection.
func TestFuncDetectionMissIsCaught(t *testing.T) {
	const n = 40
	_, chain := chainEquations(n)
	c, err := Func(1, n, n-4, func(x, y, c []hd.Number) {
		chain(x, y, c)
		if y[0].Real > 3 { // a branch the probes never take
			c[2] = hd.Add(c[2], hd.Scale(0.5, y[30]))
		}
	})
	require.NoError(t, err)
	a, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	require.Equal(t, PathSparse, a.Path())
	yhat := mat.NewDense(1, n, nil)
	for j := range n {
		yhat.Set(0, j, 1)
	}
	yhat.Set(0, 0, 4)
	_, _, err = a.Project(mat.NewDense(1, 1, []float64{0.2}), yhat)
	var pe *PatternError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.True(t, pe.Detected)
	assert.Equal(t, []int{2}, pe.Rows)
	assert.Contains(t, err.Error(), "PathDense")

	d, err := NewAdaNP(c, Settings{Path: PathDense})
	require.NoError(t, err)
	_, st, err := d.Project(mat.NewDense(1, 1, []float64{0.2}), yhat)
	require.NoError(t, err, "the dense path needs no pattern")
	assert.True(t, st.Converged())
}

// TestFuncDetectionFails: a Func that is not finite at every probe point,
// or panics there, keeps the dense path under PathAuto, and PathSparse
// says why it cannot be taken.
func TestFuncDetectionFails(t *testing.T) {
	for name, f := range map[string]func(x, y, c []hd.Number){
		"not finite": func(_, y, c []hd.Number) {
			for i := range c {
				c[i] = hd.Sub(hd.Log(hd.Sub(y[i], hd.Const(10))), y[i+1]) // log(y − 10): y > 10 only
			}
		},
		"panics": func(_, y, c []hd.Number) {
			if y[0].Real < 2 {
				panic("outside the model's range")
			}
			for i := range c {
				c[i] = hd.Sub(y[i], y[i+1])
			}
		},
	} {
		c, err := Func(0, 40, 20, f)
		require.NoError(t, err)
		a, err := NewAdaNP(c, Settings{})
		require.NoError(t, err, name)
		assert.Equal(t, PathDense, a.Path(), name)
		_, err = NewAdaNP(c, Settings{Path: PathSparse})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "SparseFunc", name)
	}
}
