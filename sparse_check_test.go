package enforce

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/hd"
)

// chainFunc is ExampleSparseFunc's chain, u_k³ + 2u_k − ½(u_{k−1} +
// u_{k+1}) − x = 0, with one more term 0.1·u_{k+3} that pattern rows
// first…first+len−1 omit when omit is set.
func chainFunc(t *testing.T, n int, omit bool) Constraint {
	t.Helper()
	pattern := make([][]int, n-4)
	for k := range pattern {
		pattern[k] = []int{k, k + 1, k + 2, k + 3}
	}
	if omit {
		pattern[5] = pattern[5][:3] // row 5 reads y[8] but does not say so
	}
	c, err := SparseFunc(1, n, n-4, pattern, func(x, y, c []hd.Number) {
		for k := range c {
			l, u, r, f := y[k], y[k+1], y[k+2], y[k+3]
			s := hd.Sub(hd.Add(hd.Mul(u, u, u), hd.Scale(2, u)), hd.Add(hd.Scale(0.5, hd.Add(l, r)), x[0]))
			c[k] = hd.Add(s, hd.Scale(0.1, f))
		}
	})
	require.NoError(t, err)
	return c
}

// TestCheckSparseFunc: a SparseFunc whose pattern is right passes; one
// whose row 5 omits an output it reads is reported at that entry, exactly
// (the hyperdual reference), and also where the missing derivative landed
// on another output of its colour.
func TestCheckSparseFunc(t *testing.T) {
	const n = 20
	rnd := rand.New(rand.NewPCG(1, 2))
	x := []float64{0.3}
	y := make([]float64, n)
	for j := range y {
		y[j] = rnd.NormFloat64()
	}
	require.NoError(t, CheckSparse(chainFunc(t, n, false), x, y, 0))

	err := CheckSparse(chainFunc(t, n, true), x, y, 0)
	var pe *PatternError
	require.True(t, errors.As(err, &pe), "%v", err)
	var missing bool
	for _, e := range pe.Entries {
		if e.Row == 5 && e.Col == 8 && !e.Declared {
			missing = true
			assert.InDelta(t, 0.1, e.Want, 1e-15)
		}
	}
	assert.True(t, missing, "the undeclared (5, 8) is reported: %v", err)
	assert.Contains(t, err.Error(), "(5, 8) = 0.1 is not in the pattern")
}

// TestCheckSparseHandWritten checks a hand-written sparse constraint (the
// random test system) by finite differences: it passes as written, and a
// wrong declared value or a missing dependence is reported.
func TestCheckSparseHandWritten(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	sys := newSPSystem(rnd, 2, 12, 7, 4, 5)
	x := randDense(rnd, 1, 2, 0.5).RawRowView(0)
	y := randDense(rnd, 1, 12, 0.5).RawRowView(0)
	require.NoError(t, CheckSparse(sys, x, y, 0))

	// A wrong value: entry 3 of the declared Jacobian off by 1e-3.
	bad := *sys
	k := sys.k
	sp := *k.Sparse
	sp.Eval = func(x, y, c, vals []float64) {
		sys.k.Sparse.Eval(x, y, c, vals)
		if vals != nil {
			vals[3] += 1e-3
		}
	}
	k.Sparse = &sp
	bad.k = k
	err := CheckSparse(&bad, x, y, 0)
	var pe *PatternError
	require.True(t, errors.As(err, &pe), "%v", err)
	require.Equal(t, 1, pe.Count)
	row := 0
	for sys.rowPtr[row+1] <= 3 {
		row++
	}
	assert.Equal(t, PatternEntry{Row: row, Col: sys.col[3], Declared: true, Got: pe.Entries[0].Got, Want: pe.Entries[0].Want}, pe.Entries[0])
	assert.InDelta(t, 1e-3, pe.Entries[0].Got-pe.Entries[0].Want, 1e-7)

	// A missing dependence: c_0 also reads an output outside its pattern.
	j := 0
	for slices.Contains(sys.col[sys.rowPtr[0]:sys.rowPtr[1]], j) {
		j++
	}
	sp2 := *sys.k.Sparse
	sp2.Eval = func(x, y, c, vals []float64) {
		sys.k.Sparse.Eval(x, y, c, vals)
		c[0] += 0.5 * y[j] * y[j]
	}
	k2 := sys.k
	k2.Sparse = &sp2
	bad2 := *sys
	bad2.k = k2
	err = CheckSparse(&bad2, x, y, 0)
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, 0, pe.Entries[0].Row)
	assert.Equal(t, j, pe.Entries[0].Col)
	assert.False(t, pe.Entries[0].Declared)
	assert.InDelta(t, y[j], pe.Entries[0].Want, 1e-6)
}

// TestCheckSparseInequalities checks the Fischer–Burmeister system built
// from sparse parts, latent columns included.
func TestCheckSparseInequalities(t *testing.T) {
	const n = 12
	eq := chainFunc(t, n, false)
	pattern := make([][]int, 3)
	for i := range pattern {
		pattern[i] = []int{i}
	}
	g, err := SparseFunc(1, n, 3, pattern, func(x, y, c []hd.Number) {
		for i := range c {
			c[i] = hd.Sub(hd.Mul(y[i], y[i]), hd.Const(2))
		}
	})
	require.NoError(t, err)
	fb, err := WithInequalities(eq, g, 0)
	require.NoError(t, err)
	_, nyExt, _ := fb.Dims()
	y := make([]float64, nyExt)
	for j := range y {
		y[j] = 0.3 + 0.1*float64(j%5)
	}
	require.NoError(t, CheckSparse(fb, []float64{0.2}, y, 0))
}

// TestCheckSparseErrors: clear errors for a dense constraint, wrong
// lengths, a panic and a non-finite value in the constraint's code.
func TestCheckSparseErrors(t *testing.T) {
	dense, err := Func(1, 2, 1, func(x, y, c []hd.Number) { c[0] = hd.Add(y[0], y[1]) })
	require.NoError(t, err)
	assert.ErrorContains(t, CheckSparse(dense, []float64{0}, []float64{0, 0}, 0), "no Capabilities.Sparse")
	c := chainFunc(t, 10, false)
	assert.ErrorContains(t, CheckSparse(c, []float64{0}, make([]float64, 9), 0), "len(x), len(y)")
	boom, err := SparseFunc(0, 2, 1, [][]int{{0, 1}}, func(x, y, c []hd.Number) {
		if y[0].Real > 1 {
			panic("boom")
		}
		c[0] = hd.Add(y[0], y[1])
	})
	require.NoError(t, err)
	assert.ErrorContains(t, CheckSparse(boom, nil, []float64{2, 0}, 0), "panicked: boom")
	nan, err := SparseFunc(0, 2, 1, [][]int{{0, 1}}, func(x, y, c []hd.Number) {
		c[0] = hd.Add(hd.Sqrt(y[0]), y[1])
	})
	require.NoError(t, err)
	assert.ErrorContains(t, CheckSparse(nan, nil, []float64{-1, 0}, 0), "not finite")
}
