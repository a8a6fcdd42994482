package enforce

import (
	"math/rand/v2"
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
// column-by-column fallback; and that the group testing takes far fewer
// evaluations of f than Func's dense Jacobian (⌈ny/2⌉ per point).
func TestFuncPatternDetected(t *testing.T) {
	rnd := rand.New(rand.NewPCG(56, 56))
	for _, tc := range []struct {
		name     string
		nx, ny   int
		pattern  [][]int
		f        func(x, y, c []hyperdual.Number)
		maxPassN int // at most this many evaluations of f in all, 0: no bound
	}{
		{"chain", 1, 2000, nil, nil, 400},
		{"mesh", 2, 2 * 30 * 30, nil, nil, 600},
		{"random rows of 1 to 8", 1, 3000, nil, nil, 1200},
		{"rows of 60", 1, 400, nil, nil, 0},
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
