package enforce

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// nmCubic is y1³ + 0.1·y2 = x: from y1 ≈ −3, Newton's steps shrink the
// residual, then overshoot past the root (the merit rises), which a
// monotone line search cuts back and a nonmonotone one takes.
func nmCubic(t *testing.T) Constraint {
	c, err := Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(hyperdual.Mul(y[0], y[0]), y[0]), hyperdual.Scale(0.1, y[1])), x[0])
	})
	require.NoError(t, err)
	return c
}

func nmStarts() (x, yhat *mat.Dense) {
	return mat.NewDense(4, 1, []float64{1, 1.2, 0.9, 1.1}),
		mat.NewDense(4, 2, []float64{-3, 0, -2.5, 0.3, -4, -0.2, -3.3, 0.1})
}

func TestNonmonotoneValidation(t *testing.T) {
	c := nmCubic(t)
	for _, s := range []Settings{
		{LineSearch: true, Nonmonotone: -1},
		{LineSearch: true, Nonmonotone: maxNonmonotone + 1},
		{Nonmonotone: 5},
	} {
		_, err := NewAdaNP(c, s)
		require.Error(t, err, "%+v", s)
		assert.Contains(t, err.Error(), "Nonmonotone")
	}
	for _, s := range []Settings{
		{Nonmonotone: 1}, // monotone: nothing to relax, nothing to reject
		{LineSearch: true, Nonmonotone: maxNonmonotone},
		{Damping: DefaultDamping, Nonmonotone: 5},
	} {
		_, err := NewAdaNP(c, s)
		assert.NoError(t, err, "%+v", s)
	}
}

// TestNonmonotoneProjects: every sample converges; Nonmonotone 0 and 1
// are the monotone search bit for bit; larger values take other paths on
// nmCubic (trials the monotone rule cut back are taken), with LineSearch
// and with Damping.
func TestNonmonotoneProjects(t *testing.T) {
	c := nmCubic(t)
	x, yhat := nmStarts()
	for _, base := range []Settings{{LineSearch: true}, {Damping: DefaultDamping}, {Damping: 0.1, Path: PathSparse}} {
		var ys []*mat.Dense
		for _, m := range []int{0, 1, 3, 5} {
			s := base
			s.Nonmonotone = m
			if s.Path == PathSparse {
				c = nmCubicSparse(t)
			}
			p, err := NewAdaNP(c, s)
			require.NoError(t, err)
			y, st, err := p.Project(x, yhat)
			require.NoError(t, err)
			require.True(t, st.Converged(), "%+v: %v", s, st)
			ys = append(ys, y)
		}
		assert.True(t, mat.Equal(ys[0], ys[1]), "%+v: Nonmonotone 1 is the monotone search", base)
		assert.False(t, mat.Equal(ys[0], ys[2]), "%+v: Nonmonotone 3 takes another path", base)
		assert.False(t, mat.Equal(ys[0], ys[3]), "%+v: Nonmonotone 5 takes another path", base)
	}
}

func nmCubicSparse(t *testing.T) Constraint {
	c, err := SparseFunc(1, 2, 1, [][]int{{0, 1}}, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(hyperdual.Mul(y[0], y[0]), y[0]), hyperdual.Scale(0.1, y[1])), x[0])
	})
	require.NoError(t, err)
	return c
}

// TestNonmonotoneGradients: Unrolled is exact through nonmonotone
// searches (FD in ŷ and x), dense and sparse, backtracked and damped; the
// other modes are finite.
func TestNonmonotoneGradients(t *testing.T) {
	x, yhat := nmStarts()
	a := randDense(rand.New(rand.NewPCG(9, 2)), 4, 2, 1)
	sys := func(s Settings) Constraint {
		if s.Path == PathSparse {
			return nmCubicSparse(t)
		}
		return nmCubic(t)
	}
	assertStagedGradients(t, sys, []Settings{
		{LineSearch: true, Nonmonotone: 3},
		{LineSearch: true, Nonmonotone: 5, Path: PathSparse},
		{Damping: DefaultDamping, Nonmonotone: 5},
		{Damping: 0.1, Nonmonotone: 3, Recompute: true},
	}, Settings{Damping: DefaultDamping, Nonmonotone: 5}, x, yhat, a)
}

// TestRefMerit pins the reference merit: the current one and the M−1
// accepted iterates before it, from a ring of maxNonmonotone.
func TestRefMerit(t *testing.T) {
	var st sampleState
	st.m0 = 1
	assert.Equal(t, 1.0, st.refMerit(5), "no history")
	for _, m := range []float64{9, 2, 3, 4} {
		st.remember(m)
	}
	assert.Equal(t, 9.0, st.refMerit(5))
	assert.Equal(t, 4.0, st.refMerit(4), "9 is the fourth before")
	assert.Equal(t, 4.0, st.refMerit(2))
	for range maxNonmonotone {
		st.remember(0.5)
	}
	assert.Equal(t, 1.0, st.refMerit(maxNonmonotone), "the ring forgot 9")
}
