package enforce

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// ctStackParts returns a Linear, a Quadratic and a Func system, all with
// nx = 2 and ny = 3, and 2, 3 and 3 rows.
func ctStackParts(t *testing.T, seed uint64) []Constraint {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 11))
	l, err := Linear(2, ctRandDense(rnd, 2, 3), ctSinRHS)
	require.NoError(t, err)
	A := []*mat.SymDense{ctRandSym(rnd, 3), nil, ctRandSym(rnd, 3)}
	q, err := Quadratic(2, A, ctRandDense(rnd, 3, 3), ctRandVec(rnd, 3, -1, 1), ctSinRHS)
	require.NoError(t, err)
	f, err := Func(2, 3, 3, ctNonlinearFunc)
	require.NoError(t, err)
	return []Constraint{l, q, f}
}

func TestStack(t *testing.T) {
	t.Parallel()
	parts := ctStackParts(t, 1)
	s, err := Stack(parts...)
	require.NoError(t, err)
	nx, ny, nc := s.Dims()
	require.Equal(t, []int{2, 3, 8}, []int{nx, ny, nc})
	// Linear, Quadratic and Func: the derivatives all three have, and the
	// Quadratic's batched methods.
	assert.Equal(t, []string{"JacobianX", "HessVec", "MixedHessVec",
		"EvalBatch", "HessVecBatch", "EvalBatch32", "HessVecBatch32"}, ctCaps(s))

	rnd := rand.New(rand.NewPCG(2, 2))
	for range 3 {
		x, y := ctRandVec(rnd, nx, -1, 1), ctRandVec(rnd, ny, -1, 1)
		w, v := ctRandVec(rnd, nc, -1, 1), ctRandVec(rnd, ny, -1, 1)
		var wantC, wantJy, wantJx []float64
		wantH, wantM := make([]float64, ny), make([]float64, nx)
		off := 0
		for _, p := range parts {
			_, _, pnc := p.Dims()
			cv, jy := ctEval(t, p, x, y)
			jx := make([]float64, pnc*nx)
			CapabilitiesOf(p).JacobianX(x, y, jx)
			wantC = append(wantC, cv...)
			wantJy = append(wantJy, jy...)
			wantJx = append(wantJx, jx...)
			h, m := make([]float64, ny), make([]float64, nx)
			CapabilitiesOf(p).HessVec(x, y, w[off:off+pnc], v, h)
			CapabilitiesOf(p).MixedHessVec(x, y, w[off:off+pnc], v, m)
			for k := range h {
				wantH[k] += h[k]
			}
			for k := range m {
				wantM[k] += m[k]
			}
			off += pnc
		}
		cv, jy := ctEval(t, s, x, y)
		assert.Equal(t, wantC, cv)
		assert.Equal(t, wantJy, jy)
		jx := make([]float64, nc*nx)
		CapabilitiesOf(s).JacobianX(x, y, jx)
		assert.Equal(t, wantJx, jx)
		h, m := make([]float64, ny), make([]float64, nx)
		CapabilitiesOf(s).HessVec(x, y, w, v, h)
		CapabilitiesOf(s).MixedHessVec(x, y, w, v, m)
		ctAssertClose(t, wantH, h, 1e-15, "HessVec")
		ctAssertClose(t, wantM, m, 1e-15, "MixedHessVec")
	}
	for seed := range uint64(3) {
		ctCheckDerivatives(t, s, seed, -1, 1, -1, 1)
	}
}

func TestStackConstantJacobian(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(3, 1))
	C1, C2 := ctRandDense(rnd, 2, 4), ctRandDense(rnd, 1, 4)
	l1, err := Linear(1, C1, nil)
	require.NoError(t, err)
	l2, err := Linear(1, C2, nil)
	require.NoError(t, err)
	inner, err := Stack(l1, l2)
	require.NoError(t, err)
	s, err := Stack(inner, l1)
	require.NoError(t, err)
	require.NotNil(t, CapabilitiesOf(s).ConstantJacobian)
	var want []float64
	want = append(want, C1.RawMatrix().Data...)
	want = append(want, C2.RawMatrix().Data...)
	want = append(want, C1.RawMatrix().Data...)
	assert.Equal(t, want, CapabilitiesOf(s).ConstantJacobian)
	_, jy := ctEval(t, s, []float64{0.5}, ctRandVec(rnd, 4, -1, 1))
	assert.Equal(t, want, jy)
}

func TestStackCapabilities(t *testing.T) {
	t.Parallel()
	parts := ctStackParts(t, 4)
	bare := ctEvalOnly{nx: 2, ny: 3}
	s, err := Stack(parts[0], bare, parts[2])
	require.NoError(t, err)
	// A part with Eval alone: no derivative survives.
	assert.Empty(t, ctCaps(s))
	// But a Quadratic's batched evaluation does (the other parts evaluated
	// sample by sample); its batched curvature needs HessVec of every part.
	outer, err := Stack(s, parts[1])
	require.NoError(t, err)
	assert.Equal(t, []string{"EvalBatch", "EvalBatch32"}, ctCaps(outer), "nested Stack")

	x, y := []float64{0.1, 0.2}, []float64{0.3, 0.4, 0.5}
	ctCheckJacobian(t, s, x, y, ctFDTol)
}

func TestStackErrors(t *testing.T) {
	t.Parallel()
	parts := ctStackParts(t, 5)
	otherNX, err := Func(1, 3, 1, func(x, y, c []hyperdual.Number) { c[0] = hyperdual.Mul(x[0], y[0]) })
	require.NoError(t, err)
	otherNY, err := Func(2, 4, 1, func(x, y, c []hyperdual.Number) { c[0] = hyperdual.Mul(x[0], y[0]) })
	require.NoError(t, err)
	latent, err := WithInequalities(nil, parts[2], 0)
	require.NoError(t, err)
	var nilFunc *funcConstraint
	for _, test := range []struct {
		name string
		cs   []Constraint
	}{
		{name: "none"},
		{name: "nil part", cs: []Constraint{parts[0], nil}},
		{name: "nil pointer part", cs: []Constraint{parts[0], nilFunc}},
		{name: "nx differs", cs: []Constraint{parts[0], otherNX}},
		{name: "ny differs", cs: []Constraint{otherNY, parts[1]}},
		{name: "latent part", cs: []Constraint{parts[0], latent}},
		{name: "bad dims", cs: []Constraint{ctEvalOnly{nx: 2, ny: 0}}},
	} {
		var (
			c   Constraint
			err error
		)
		require.NotPanics(t, func() { c, err = Stack(test.cs...) }, test.name)
		assert.Error(t, err, test.name)
		assert.Nil(t, c, test.name)
	}
}

func TestStackZeroAllocs(t *testing.T) {
	s, err := Stack(ctStackParts(t, 6)...)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(6, 6))
	x, y := ctRandVec(rnd, 2, -1, 1), ctRandVec(rnd, 3, -1, 1)
	w, v := ctRandVec(rnd, 8, -1, 1), ctRandVec(rnd, 3, -1, 1)
	cv, jy, jx := make([]float64, 8), make([]float64, 24), make([]float64, 16)
	hv, mv := make([]float64, 3), make([]float64, 2)
	ctAssertZeroAllocs(t, "Eval", func() { s.Eval(x, y, cv, jy) })
	ctAssertZeroAllocs(t, "JacobianX", func() { CapabilitiesOf(s).JacobianX(x, y, jx) })
	ctAssertZeroAllocs(t, "HessVec", func() { CapabilitiesOf(s).HessVec(x, y, w, v, hv) })
	ctAssertZeroAllocs(t, "MixedHessVec", func() { CapabilitiesOf(s).MixedHessVec(x, y, w, v, mv) })
}
