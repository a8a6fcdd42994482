package enforce

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/hd"
)

// omitEntry returns sys with c_0 also reading an output outside its
// declared pattern (0.5·y_j², j the first output row 0 does not declare),
// and j.
func omitEntry(sys *spSystem) (*spSystem, int) {
	j := 0
	for slices.Contains(sys.col[sys.rowPtr[0]:sys.rowPtr[1]], j) {
		j++
	}
	sp := *sys.k.Sparse
	sp.Eval = func(x, y, c, vals []float64) {
		sys.k.Sparse.Eval(x, y, c, vals)
		c[0] += 0.5 * y[j] * y[j]
	}
	k := sys.k
	k.Sparse = &sp
	bad := *sys
	bad.k = k
	return &bad, j
}

// TestPatternCheckCatchesMissingDependence is the regression test of a
// declared pattern that leaves one dependence out: the projection used
// to converge to a wrong point with wrong gradients and no word; the
// first projection now returns a *PatternError naming the row, and so
// does every later one, by every projecting method, on both paths.
func TestPatternCheckCatchesMissingDependence(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	sys := newSPSystem(rnd, 2, 12, 7, 4, 3)
	hand, _ := omitEntry(sys)
	chain := chainFunc(t, 20, true)
	stacked, err := Stack(chain)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		c    Constraint
		row  int // the row whose pattern is short
	}{
		{"SparseFunc (hyperdual)", chain, 5},
		{"hand-written (finite differences)", hand, 0},
		{"Stack of a wrong SparseFunc (finite differences)", stacked, 5},
	} {
		for _, path := range []Path{PathSparse, PathDense} {
			t.Run(tc.name+", "+path.String(), func(t *testing.T) {
				a, err := NewAdaNP(tc.c, Settings{Path: path})
				require.NoError(t, err)
				nx, ny := a.Dims()
				x := randDense(rnd, 3, nx, 0.5)
				yhat := randDense(rnd, 3, ny, 0.5)
				_, st, err := a.Project(x, yhat)
				var pe *PatternError
				require.True(t, errors.As(err, &pe), "%v", err)
				assert.Contains(t, pe.Rows, tc.row)
				assert.Equal(t, 0, pe.Sample)
				assert.False(t, pe.Detected)
				assert.False(t, st.Converged())
				assert.Contains(t, err.Error(), "CheckSparse")

				_, err = a.ProjectTrace(mat.NewDense(3, ny, nil), x, yhat, &Trace{})
				assert.ErrorAs(t, err, &pe, "a later projection")
				_, err = a.ProjectTo(mat.NewDense(3, ny, nil), x, yhat)
				assert.ErrorAs(t, err, &pe, "a later projection")
			})
		}
	}
}

// TestPatternCheckPassesRightPatterns: right patterns pass the check and
// project as before, finite differences included, also through a
// Fischer–Burmeister system near its kink and a pipe law with hd.Abs.
func TestPatternCheckPassesRightPatterns(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	eq := chainFunc(t, 12, false)
	pattern := make([][]int, 3)
	for i := range pattern {
		pattern[i] = []int{i}
	}
	g, err := SparseFunc(1, 12, 3, pattern, func(_, y, c []hd.Number) {
		for i := range c {
			c[i] = hd.Sub(hd.Mul(y[i], y[i]), hd.Const(2))
		}
	})
	require.NoError(t, err)
	fb, err := WithInequalities(eq, g, 0)
	require.NoError(t, err)
	pipes := func(y, c []hd.Number) { // k·q|q| = Δp along a chain of pipes
		for i := range c {
			c[i] = hd.Sub(hd.Scale(2, hd.Mul(y[2*i], hd.Abs(y[2*i]))), hd.Sub(y[2*i+1], y[2*i+3]))
		}
	}
	pipePattern := make([][]int, 10)
	for i := range pipePattern {
		pipePattern[i] = []int{2 * i, 2*i + 1, 2*i + 3}
	}
	pipe, err := SparseFunc(0, 22, 10, pipePattern, func(_, y, c []hd.Number) { pipes(y, c) })
	require.NoError(t, err)
	pipeStack, err := Stack(pipe)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		c    Constraint
		y    func(r, ny int) *mat.Dense
	}{
		{"hand-written", newSPSystem(rnd, 2, 40, 25, 4, 3), nil},
		{"SparseFunc", chainFunc(t, 30, false), nil},
		{"WithInequalities", fb, nil},
		{"pipes with Abs, flows at 0", pipeStack, func(r, ny int) *mat.Dense {
			y := randDense(rnd, r, ny, 1)
			for s := range r {
				y.Set(s, 0, 0)
				y.Set(s, 2, 1e-7)
			}
			return y
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAdaNP(tc.c, Settings{Path: PathSparse})
			require.NoError(t, err)
			nx, ny := a.Dims()
			var x *mat.Dense
			if nx > 0 {
				x = randDense(rnd, 4, nx, 0.5)
			}
			yhat := randDense(rnd, 4, ny, 0.5)
			if tc.y != nil {
				yhat = tc.y(4, ny)
			}
			_, _, err = a.Project(x, yhat)
			require.NoError(t, err)
			assert.True(t, a.pattern.done.Load(), "the check reached a verdict")
		})
	}
}

// TestPatternCheckCost checks the documented cost of the first
// projection's check of a SparseFunc: one Sparse.Eval with values (⌈K/2⌉
// evaluations of f) and one hyperdual evaluation, whatever ny, at the
// batch's first sample; and none at later projections.
func TestPatternCheckCost(t *testing.T) {
	const g = 12
	var calls atomic.Int64
	pattern, f := meshEquations(g, &calls)
	c, err := SparseFunc(2, 2*g*g, g*g, pattern, f)
	require.NoError(t, err)
	k := c.(interface{ Colours() int }).Colours()
	rnd := rand.New(rand.NewPCG(9, 9))
	x, yhat := randDense(rnd, 5, 2, 0.3), randDense(rnd, 5, 2*g*g, 0.3)
	run := func() int64 {
		a, err := NewAdaNP(c, Settings{Path: PathSparse})
		require.NoError(t, err)
		calls.Store(0)
		_, _, err = a.Project(x, yhat)
		require.NoError(t, err)
		first := calls.Load()
		calls.Store(0)
		_, _, err = a.Project(x, yhat)
		require.NoError(t, err)
		return first - calls.Load()
	}
	assert.Equal(t, int64((k+1)/2+1), run(), "one sample, ⌈K/2⌉ + 1 evaluations")
}

// TestPatternCheckNoVerdictOnBadInput: a batch whose checked samples are
// not finite leaves the check to the next projection, and the error is
// the projection's own.
func TestPatternCheckNoVerdictOnBadInput(t *testing.T) {
	c := chainFunc(t, 12, true)
	a, err := NewAdaNP(c, Settings{Path: PathSparse})
	require.NoError(t, err)
	y := mat.NewDense(1, 12, nil)
	y.Set(0, 3, nan())
	_, _, err = a.Project(mat.NewDense(1, 1, []float64{0.1}), y)
	require.Error(t, err)
	var pe *PatternError
	assert.False(t, errors.As(err, &pe))
	assert.False(t, a.pattern.done.Load())
	y.Set(0, 3, 0.2)
	_, _, err = a.Project(mat.NewDense(1, 1, []float64{0.1}), y)
	assert.ErrorAs(t, err, &pe)
}

// TestPatternCheckCostFD checks the cost of the check by finite
// differences for a hand-written pattern that is right: one Sparse.Eval
// with values and two without (a second step only for a row that
// disagrees), whatever ny.
func TestPatternCheckCostFD(t *testing.T) {
	rnd := rand.New(rand.NewPCG(10, 10))
	sys := newSPSystem(rnd, 2, 300, 200, 4, 3)
	var withVals, without atomic.Int64
	sp := *sys.k.Sparse
	sp.Eval = func(x, y, c, vals []float64) {
		if vals != nil {
			withVals.Add(1)
		} else {
			without.Add(1)
		}
		sys.k.Sparse.Eval(x, y, c, vals)
	}
	counted := *sys
	counted.k.Sparse = &sp
	a, err := NewAdaNP(&counted, Settings{Path: PathSparse})
	require.NoError(t, err)
	x, yhat := randDense(rnd, 4, 2, 0.5), randDense(rnd, 4, 300, 0.5)
	count := func() (int64, int64) {
		withVals.Store(0)
		without.Store(0)
		_, _, err := a.Project(x, yhat)
		require.NoError(t, err)
		return withVals.Load(), without.Load()
	}
	v1, n1 := count()
	v2, n2 := count()
	assert.Equal(t, int64(1), v1-v2, "Sparse.Eval with values")
	assert.Equal(t, int64(2), n1-n2, "Sparse.Eval without")
}

// TestPatternErrorRows: with many wrong rows the error lists the first
// 10, in increasing order, and counts them all.
func TestPatternErrorRows(t *testing.T) {
	const n = 30
	pattern, f := chainEquations(n)
	for k := range pattern {
		pattern[k] = pattern[k][:2] // every row misses y_{k+2} and y_{k+3}
	}
	c, err := SparseFunc(1, n, n-4, pattern, f)
	require.NoError(t, err)
	a, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(11, 11))
	_, _, err = a.Project(randDense(rnd, 2, 1, 0.5), randDense(rnd, 2, n, 0.5))
	var pe *PatternError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, n-4, pe.Count)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, pe.Rows)
	assert.Nil(t, pe.Entries)
}

// TestPatternCheckSteepKink: a right pattern whose Fischer–Burmeister row
// has a steep inequality (∂g/∂y = 7000, as a thermal limit of a 1354-bus
// grid scaled by 1/(2·rate)) with g within a finite-difference step of its
// kink at the sample: both of the check's first two steps cross the
// smoothed kink (width √ε_FB = 1e-3 in g), and their differences agree
// although the declared Jacobian is right. The check must shrink the step
// until it resolves the kink instead of reporting a missing dependence
// (it did, on acopf's branch limits at a trained network's predictions).
func TestPatternCheckSteepKink(t *testing.T) {
	fb := steepKink(t)
	a, err := NewAdaNP(fb, Settings{Path: PathSparse})
	require.NoError(t, err)
	for _, off := range []float64{0, 1e-9, -1e-9, 3e-8, -3e-8, 1e-7} {
		yhat := mat.NewDense(1, 3, []float64{steepLimit + off, 1.5, 0.5})
		_, _, err := a.Project(nil, yhat)
		require.NoError(t, err, "y0 = limit%+g", off)
		a.pattern = patternCheck{} // check again at the next point
	}
}

// TestCheckSparseSteepKink: CheckSparse accepts the right pattern of
// TestPatternCheckSteepKink's constraint near its kink, and still names a
// wrong declared value there.
func TestCheckSparseSteepKink(t *testing.T) {
	fb := steepKink(t)
	for _, off := range []float64{1e-9, -1e-9, 3e-8, -3e-8, 1e-7} {
		y := []float64{steepLimit + off, 1.5, 0.5, 0}
		require.NoError(t, CheckSparse(fb, nil, y, 0), "y0 = limit%+g", off)
	}
	// A wrong value in the steep row is still found.
	k := CapabilitiesOf(fb)
	sj := *k.Sparse
	inner := sj.Eval
	sj.Eval = func(x, y, c, vals []float64) {
		inner(x, y, c, vals)
		if vals != nil {
			vals[sj.RowPtr[1]] *= 1.5
		}
	}
	wrong := &capWrap{Constraint: fb, k: Capabilities{Sparse: &sj, Latent: k.Latent}}
	var pe *PatternError
	require.ErrorAs(t, CheckSparse(wrong, nil, []float64{steepLimit + 0.01, 1.5, 0.5, 0}, 0), &pe)
}

// capWrap presents a constraint with the given capabilities.
type capWrap struct {
	Constraint
	k Capabilities
}

func (w *capWrap) Capabilities() Capabilities { return w.k }

// steepLimit is the limit of steepKink's inequality.
const steepLimit = 0.1

// steepKink is y1·y2 = 1 with the inequality 7000·(y0 − steepLimit) ≤ 0
// in Fischer–Burmeister form (ε_FB 1e-6): a steep row whose kink a
// finite-difference step crosses near y0 = steepLimit.
func steepKink(t *testing.T) Constraint {
	t.Helper()
	eq, err := SparseFunc(0, 3, 1, [][]int{{1, 2}}, func(_, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Mul(y[1], y[2]), hd.Const(1))
	})
	require.NoError(t, err)
	g, err := SparseFunc(0, 3, 1, [][]int{{0}}, func(_, y, c []hd.Number) {
		c[0] = hd.Scale(7000, hd.Sub(y[0], hd.Const(steepLimit)))
	})
	require.NoError(t, err)
	fb, err := WithInequalities(eq, g, 1e-6)
	require.NoError(t, err)
	return fb
}
