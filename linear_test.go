package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// ctSinRHS is r_i(x) = sin(x_{i mod nx}) + i for nx ≥ 1 inputs.
func ctSinRHS(x, r, jx []float64) {
	nx := len(x)
	for i := range r {
		r[i] = math.Sin(x[i%nx]) + float64(i)
	}
	if jx == nil {
		return
	}
	clear(jx)
	for i := range r {
		jx[i*nx+i%nx] = math.Cos(x[i%nx])
	}
}

func TestLinear(t *testing.T) {
	t.Parallel()
	for _, test := range []struct {
		name       string
		nx, ny, nc int
		r          RHS
	}{
		{name: "r = 0", nx: 2, ny: 5, nc: 3},
		{name: "r = x", nx: 3, ny: 4, nc: 3, r: func(x, r, jx []float64) {
			copy(r, x)
			if jx != nil {
				clear(jx)
				for i := range x {
					jx[i*len(x)+i] = 1
				}
			}
		}},
		{name: "r = sin x", nx: 2, ny: 6, nc: 4, r: ctSinRHS},
		{name: "no x", nx: 0, ny: 3, nc: 1},
	} {
		t.Run(test.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(uint64(test.nc), uint64(test.ny)))
			C := ctRandDense(rnd, test.nc, test.ny)
			l, err := Linear(test.nx, C, test.r)
			require.NoError(t, err)
			nx, ny, nc := l.Dims()
			require.Equal(t, []int{test.nx, test.ny, test.nc}, []int{nx, ny, nc})
			assert.Equal(t, []string{"JacobianX", "HessVec", "MixedHessVec", "ConstantJacobian"}, ctCaps(l))
			assert.Equal(t, C.RawMatrix().Data, CapabilitiesOf(l).ConstantJacobian)

			x := ctRandVec(rnd, nx, -2, 2)
			y := ctRandVec(rnd, ny, -2, 2)
			cv, jy := ctEval(t, l, x, y)
			want := mat.NewVecDense(nc, nil)
			want.MulVec(C, mat.NewVecDense(ny, y))
			if test.r != nil {
				r := make([]float64, nc)
				test.r(x, r, nil)
				want.SubVec(want, mat.NewVecDense(nc, r))
			}
			ctAssertClose(t, want.RawVector().Data, cv, 1e-14, "c")
			assert.Equal(t, C.RawMatrix().Data, jy)

			ctCheckDerivatives(t, l, 1, -2, 2, -2, 2)
			w, v := ctRandVec(rnd, nc, -1, 1), ctRandVec(rnd, ny, -1, 1)
			hv, mv := ctRandVec(rnd, ny, 1, 2), ctRandVec(rnd, nx, 1, 2)
			CapabilitiesOf(l).HessVec(x, y, w, v, hv)
			CapabilitiesOf(l).MixedHessVec(x, y, w, v, mv)
			assert.Equal(t, make([]float64, ny), hv)
			assert.Equal(t, make([]float64, nx), mv)
		})
	}
}

func TestLinearCopiesC(t *testing.T) {
	t.Parallel()
	C := mat.NewDense(1, 2, []float64{1, 2})
	l, err := Linear(0, C, nil)
	require.NoError(t, err)
	C.Set(0, 0, 100)
	c := make([]float64, 1)
	l.Eval(nil, []float64{1, 1}, c, nil)
	assert.Equal(t, []float64{3}, c)
}

func TestLinearErrors(t *testing.T) {
	t.Parallel()
	for _, test := range []struct {
		name string
		nx   int
		C    *mat.Dense
	}{
		{name: "negative nx", nx: -1, C: mat.NewDense(1, 1, []float64{1})},
		{name: "nil C", nx: 1},
		{name: "empty C", nx: 1, C: &mat.Dense{}},
		{name: "NaN in C", nx: 1, C: mat.NewDense(1, 2, []float64{1, math.NaN()})},
		{name: "Inf in C", nx: 1, C: mat.NewDense(2, 1, []float64{math.Inf(-1), 0})},
	} {
		var (
			c   Constraint
			err error
		)
		require.NotPanics(t, func() { c, err = Linear(test.nx, test.C, nil) }, test.name)
		assert.Error(t, err, test.name)
		assert.Nil(t, c, test.name)
	}
}

func TestLinearZeroAllocs(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 5))
	l, err := Linear(2, ctRandDense(rnd, 4, 6), ctSinRHS)
	require.NoError(t, err)
	x, y := ctRandVec(rnd, 2, -1, 1), ctRandVec(rnd, 6, -1, 1)
	cv, jy, jx := make([]float64, 4), make([]float64, 24), make([]float64, 8)
	ctAssertZeroAllocs(t, "Eval", func() { l.Eval(x, y, cv, jy) })
	ctAssertZeroAllocs(t, "JacobianX", func() { CapabilitiesOf(l).JacobianX(x, y, jx) })
}
