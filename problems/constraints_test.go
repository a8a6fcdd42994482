package problems

import (
	"testing"

	"github.com/enforce-nn/enforce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// derivativeCases returns every analytic constraint of the package, the
// combined (Fischer–Burmeister) systems and small instances of the
// generated optimisation benchmarks.
func derivativeCases(t *testing.T) []struct {
	name string
	c    enforce.Constraint
} {
	t.Helper()
	lin, err := NewNonconvexLinear(7, 3, 1)
	require.NoError(t, err)
	quad, err := NewNonconvexQuadratic(7, 3, 1)
	require.NoError(t, err)
	distFunc, err := DistillationFunc()
	require.NoError(t, err)
	poolAll, err := Pooling{}.Constraint()
	require.NoError(t, err)
	ineqAll, err := FittingInequality{}.Constraint()
	require.NoError(t, err)
	return []struct {
		name string
		c    enforce.Constraint
	}{
		{"fitting-equality", FittingEquality{}.Equalities()},
		{"cusp", Cusp{}.Equalities()},
		{"fitting-inequality/g", FittingInequality{}.Inequalities()},
		{"fitting-inequality/fb", ineqAll},
		{"distillation", Distillation{}.Equalities()},
		{"distillation/func", distFunc},
		{"pooling/h", Pooling{}.Equalities()},
		{"pooling/g", Pooling{}.Inequalities()},
		{"pooling/fb", poolAll},
		{"nonconvex-linear", lin.Equalities()},
		{"nonconvex-quadratic", quad.Equalities()},
	}
}

func TestConstraintDerivatives(t *testing.T) {
	for _, tc := range derivativeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			assert.NotNil(t, enforce.CapabilitiesOf(tc.c).JacobianX, "JacobianX")
			assert.NotNil(t, enforce.CapabilitiesOf(tc.c).HessVec, "HessVec")
			assert.NotNil(t, enforce.CapabilitiesOf(tc.c).MixedHessVec, "MixedHessVec")
			nx, ny, nc := tc.c.Dims()
			rnd := newRand(11, 0)
			normals := func(n int) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = rnd.NormFloat64()
				}
				return v
			}
			for range 5 {
				checkDerivatives(t, tc.c, normals(nx), normals(ny), normals(nc), normals(ny), 1e-6)
			}
		})
	}
}

func TestConstantJacobian(t *testing.T) {
	c := FittingInequality{}.Inequalities()
	require.NotNil(t, enforce.CapabilitiesOf(c).ConstantJacobian)
	jy := make([]float64, 2)
	c.Eval([]float64{1.3}, []float64{-0.4}, make([]float64, 2), jy)
	assert.Equal(t, jy, enforce.CapabilitiesOf(c).ConstantJacobian)
}

func TestEvalPanicsOnBadLengths(t *testing.T) {
	for _, p := range []Problem{FittingEquality{}, Cusp{}, Distillation{}, Pooling{}} {
		c := p.Equalities()
		nx, ny, nc := c.Dims()
		assert.Panics(t, func() { c.Eval(make([]float64, nx+1), make([]float64, ny), make([]float64, nc), nil) }, p.Name())
		assert.Panics(t, func() { c.Eval(make([]float64, nx), make([]float64, ny), make([]float64, nc), make([]float64, 1)) }, p.Name())
	}
}

func TestProblemDims(t *testing.T) {
	lin, err := NewNonconvexLinear(10, 4, 2)
	require.NoError(t, err)
	quad, err := NewNonconvexQuadratic(10, 4, 2)
	require.NoError(t, err)
	for _, tc := range []struct {
		p              Problem
		nx, ny, nc, ng int
	}{
		{FittingEquality{}, 1, 2, 1, 0},
		{Cusp{}, 1, 2, 1, 0},
		{FittingInequality{}, 1, 1, 0, 2},
		{Distillation{}, 3, 9, 6, 0},
		{Pooling{}, 4, 5, 4, 2},
		{lin, 4, 10, 4, 0},
		{quad, 4, 10, 4, 0},
	} {
		t.Run(tc.p.Name(), func(t *testing.T) {
			nx, ny := tc.p.Dims()
			assert.Equal(t, [2]int{tc.nx, tc.ny}, [2]int{nx, ny})
			if eq := tc.p.Equalities(); tc.nc == 0 {
				assert.Nil(t, eq)
			} else {
				ex, ey, ec := eq.Dims()
				assert.Equal(t, [3]int{tc.nx, tc.ny, tc.nc}, [3]int{ex, ey, ec})
			}
			if g := tc.p.Inequalities(); tc.ng == 0 {
				assert.Nil(t, g)
			} else {
				gx, gy, gc := g.Dims()
				assert.Equal(t, [3]int{tc.nx, tc.ny, tc.ng}, [3]int{gx, gy, gc})
			}
			all, err := tc.p.Constraint()
			require.NoError(t, err)
			ax, ay, ac := all.Dims()
			assert.Equal(t, [3]int{tc.nx, tc.ny + tc.ng, tc.nc + tc.ng}, [3]int{ax, ay, ac})
		})
	}
}
