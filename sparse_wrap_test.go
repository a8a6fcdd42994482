package enforce

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/num/hyperdual"
)

// ctCheckSparse checks c's Capabilities.Sparse against its dense Eval and
// JacobianX at a random point: the same c, the pattern's values equal to
// the dense Jacobian's entries, zeros outside the pattern, and
// JacobianXTVec equal to (∂c/∂x)ᵀw.
func ctCheckSparse(t *testing.T, c Constraint, seed uint64) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(seed, 9))
	nx, ny, nc := c.Dims()
	k := CapabilitiesOf(c)
	sj := k.Sparse
	require.NotNil(t, sj)
	require.NoError(t, k.check(nx, ny, nc))
	x, y := ctRandVec(rnd, nx, -1, 1), ctRandVec(rnd, ny, -1, 1)
	cv, jy := ctEval(t, c, x, y)
	cs := make([]float64, nc)
	vals := make([]float64, sj.nnz())
	sj.Eval(x, y, cs, vals)
	ctAssertClose(t, cv, cs, 1e-14, "c")
	want := append([]float64(nil), jy...)
	for i := range nc {
		for q := sj.RowPtr[i]; q < sj.RowPtr[i+1]; q++ {
			assert.InDelta(t, jy[i*ny+sj.Col[q]], vals[q], 1e-14)
			want[i*ny+sj.Col[q]] = 0
		}
	}
	assert.True(t, allZero(want), "a Jacobian entry outside the pattern is not zero")
	sj.Eval(x, y, cs, nil)
	ctAssertClose(t, cv, cs, 1e-14, "c without values")
	if sj.JacobianXTVec != nil && k.JacobianX != nil {
		jx := make([]float64, nc*nx)
		k.JacobianX(x, y, jx)
		w := ctRandVec(rnd, nc, -1, 1)
		got := make([]float64, nx)
		sj.JacobianXTVec(x, y, w, got)
		wantX := make([]float64, nx)
		for i := range nc {
			for m := range nx {
				wantX[m] += jx[i*nx+m] * w[i]
			}
		}
		ctAssertClose(t, wantX, got, 1e-13, "(∂c/∂x)ᵀw")
	}
}

// spWrapped returns wrapped sparse systems on nx = 2, ny = 14: stacks of
// sparse parts, with a small dense part, and Fischer–Burmeister systems.
func spWrapped(t *testing.T) []struct {
	name string
	c    Constraint
} {
	rnd := rand.New(rand.NewPCG(71, 1))
	const nx, ny = 2, 14
	s1 := newSPSystem(rnd, nx, ny, 5, 4, 4)
	s2 := newSPSystemAt(rnd, 5, nx, ny, 3, 3, 2)
	g := newSPSystemAt(rnd, 8, nx, ny, 4, 3, 2)
	for i := range g.beta {
		g.beta[i] *= 0.2 // mildly curved inequalities
	}
	sum, err := Func(nx, ny, 1, func(x, y, c []hyperdual.Number) {
		// Σ_j y_j² / 10 − x₁: one dense coupling row.
		for _, v := range y {
			c[0] = hyperdual.Add(c[0], hyperdual.Scale(0.1, hyperdual.Mul(v, v)))
		}
		c[0] = hyperdual.Sub(c[0], x[0])
	})
	require.NoError(t, err)
	must := func(c Constraint, err error) Constraint {
		require.NoError(t, err)
		return c
	}
	st := must(Stack(s1, s2))
	return []struct {
		name string
		c    Constraint
	}{
		{"stack", st},
		{"stack+dense", must(Stack(s1, sum))},
		{"ineq", must(WithInequalities(s1, g, 0))},
		{"ineq-only", must(WithInequalities(nil, g, 0))},
		{"ineq(stack)", must(WithInequalities(st, g, 0))},
	}
}

// TestSparseWrappers: Stack and WithInequalities of sparse parts declare
// Capabilities.Sparse, consistent with their dense Jacobians, with exact
// derivatives, and a Stack with a large dense part does not.
func TestSparseWrappers(t *testing.T) {
	for i, w := range spWrapped(t) {
		t.Run(w.name, func(t *testing.T) {
			ctCheckSparse(t, w.c, uint64(i))
			ctCheckDerivatives(t, w.c, uint64(i), -1, 1, -1, 1)
		})
	}
	rnd := rand.New(rand.NewPCG(72, 1))
	big := newSPSystem(rnd, 1, 300, 10, 3, 2)
	d, err := Func(1, 300, 300, func(x, y, c []hyperdual.Number) {
		for j := range c {
			c[j] = y[j]
		}
	})
	require.NoError(t, err)
	st, err := Stack(big, d)
	require.NoError(t, err)
	assert.Nil(t, CapabilitiesOf(st).Sparse, "300×300 dense rows exceed maxDenseRows")
}

// TestSparseWrappersMatchDense projects the wrapped systems with both
// paths (Unrolled with AutoDiagonal weights, Implicit, and line search)
// and compares outputs and gradients to 1e-10; and FD-checks the sparse
// path's Unrolled gradient of the inequality systems.
func TestSparseWrappersMatchDense(t *testing.T) {
	modes := []Settings{
		{Grad: Unrolled, Weights: AutoDiagonal},
		{Grad: Implicit},
		{Grad: Projector, LineSearch: true},
	}
	for i, w := range spWrapped(t) {
		for _, s0 := range modes {
			t.Run(fmt.Sprintf("%s/%v/%v", w.name, s0.Grad, s0.Weights), func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(81, uint64(i)))
				nx, _, _ := w.c.Dims()
				a0, err := NewAdaNP(w.c, Settings{})
				require.NoError(t, err)
				_, ny := a0.Dims()
				const rows = 3
				x := randDense(rnd, rows, nx, 0.3)
				for r := range rows {
					x.Set(r, 0, 1+x.At(r, 0)) // the dense row's radius
				}
				// ŷ near the constraint set: a random start projected,
				// then perturbed, so that a few Gauss–Newton steps
				// converge (a long, erratic iteration amplifies the
				// paths' different rounding beyond 1e-10).
				near, _, err := a0.Project(x, randDense(rnd, rows, ny, 0.5))
				require.NoError(t, err)
				yhat := randDense(rnd, rows, ny, 0.1)
				yhat.Add(yhat, near)
				g := randDense(rnd, rows, ny, 1)
				var ys [2][]float64
				var sts [2]Stats
				var gys, gxs [2][]float64
				for p, path := range []Path{PathDense, PathSparse} {
					s := s0
					s.Path, s.Tol = path, 1e-9
					a, err := NewAdaNP(w.c, s)
					require.NoError(t, err)
					y, st, err := a.Project(x, yhat)
					require.NoError(t, err)
					ys[p], sts[p] = y.RawMatrix().Data, st
					gys[p], gxs[p], _ = gtVJP(t, a, x, yhat, g)
				}
				// Some random systems have no point within the line
				// search's reach; both paths then stop alike.
				assert.Equal(t, sts[0].NotConverged, sts[1].NotConverged)
				assert.Equal(t, sts[0].Depth, sts[1].Depth)
				assert.LessOrEqual(t, sts[1].Depth, 12, "a well-conditioned instance")
				ctAssertClose(t, ys[0], ys[1], 1e-10, "ỹ")
				ctAssertClose(t, gys[0], gys[1], 1e-10, "∂ℓ/∂ŷ")
				ctAssertClose(t, gxs[0], gxs[1], 1e-10, "∂ℓ/∂x")
			})
		}
	}
}

// TestSparseInequalitiesFD checks the sparse path's Unrolled gradients of
// Fischer–Burmeister systems against finite differences.
func TestSparseInequalitiesFD(t *testing.T) {
	for i, w := range spWrapped(t)[2:] {
		for _, wt := range []Weighting{Identity, AutoDiagonal} {
			t.Run(fmt.Sprintf("%s/%v", w.name, wt), func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(91, uint64(i)))
				a, err := NewAdaNP(w.c, Settings{Path: PathSparse, Weights: wt, MinDepth: 3, MaxDepth: 3})
				require.NoError(t, err)
				assert.True(t, a.ExactGradient())
				nx, ny := a.Dims()
				const rows = 2
				x := randDense(rnd, rows, nx, 0.3)
				yhat := randDense(rnd, rows, ny, 0.5)
				g := randDense(rnd, rows, ny, 1)
				gy, gx, gs := gtVJP(t, a, x, yhat, g)
				wy, wx := gtFD(t, a, x, yhat, g)
				assert.Less(t, relErr(gy, wy), 2e-5, "ŷ-gradient\n got %v\nwant %v", gy, wy)
				assert.Less(t, relErr(gx, wx), 2e-5, "x-gradient\n got %v\nwant %v", gx, wx)
				assert.True(t, gs.Exact(), "%+v", gs)
			})
		}
	}
}
