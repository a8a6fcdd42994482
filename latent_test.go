package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/hd"
)

// smBoxCircleSparse is smBoxCircle as SparseFunc parts (the sparse path).
func smBoxCircleSparse(t *testing.T, eps float64) Constraint {
	eq, err := SparseFunc(1, 2, 1, [][]int{{0, 1}}, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(hd.Mul(y[0], y[0]), hd.Mul(y[1], y[1])), hd.Mul(x[0], x[0]))
	})
	require.NoError(t, err)
	g, err := SparseFunc(1, 2, 2, [][]int{{0}, {0}}, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(y[0], hd.Const(0.6))
		c[1] = hd.Sub(hd.Const(0.2), y[0])
	})
	require.NoError(t, err)
	c, err := WithInequalities(eq, g, eps)
	require.NoError(t, err)
	return c
}

// latentBatch is smBoxCircle's batch of TestSmoothingProjects: rows whose
// plain projections converge and rows that take the smoothed branch.
func latentBatch() (x, yhat *mat.Dense) {
	rnd := rand.New(rand.NewPCG(7, 8))
	const rows = 6
	x = mat.NewDense(rows, 1, nil)
	yhat = mat.NewDense(rows, 2, nil)
	for i := range rows {
		x.Set(i, 0, 1+rnd.Float64())
		yhat.SetRow(i, []float64{4 * (rnd.Float64() - 0.5), 4 * (rnd.Float64() - 0.5)})
	}
	return x, yhat
}

// extResidual returns max|c_ext| at (x_i, (y_i, λ_i)) over the rows.
func extResidual(c Constraint, x, y, lat *mat.Dense) float64 {
	_, n, nc := c.Dims()
	rows, ny := y.Dims()
	yext, cv := make([]float64, n), make([]float64, nc)
	var mx float64
	for i := range rows {
		copy(yext, y.RawRowView(i))
		copy(yext[ny:], lat.RawRowView(i))
		c.Eval(x.RawRowView(i), yext, cv, nil)
		for _, v := range cv {
			mx = math.Max(mx, math.Abs(v))
		}
	}
	return mx
}

// TestProjectLatentZeroStart checks that ProjectLatent from zero
// multipliers is ProjectTo bit for bit, on the dense and the sparse path,
// with and without Smoothing, and that the multipliers it returns
// are those of the projected point: (ỹ, λ) meets the extended system to
// the tolerance on every row, the smoothed branch's included.
func TestProjectLatentZeroStart(t *testing.T) {
	dense, sparse := smBoxCircle(t, 1e-8), smBoxCircleSparse(t, 1e-8)
	x, yhat := latentBatch()
	rows, _ := yhat.Dims()
	// With MaxDepth 6 the plain attempt misses rows, which take
	// Smoothing's fallback.
	first, err := NewAdaNP(dense, Settings{MaxDepth: 6})
	require.NoError(t, err)
	_, stFirst, err := first.Project(x, yhat)
	require.NoError(t, err)
	require.NotEmpty(t, stFirst.Missed, "no row takes Smoothing's fallback")
	for _, s := range []Settings{{}, {Path: PathSparse}, {Damping: DefaultDamping}, {Smoothing: 1e-2}, {Path: PathSparse, Smoothing: 1e-2, Damping: DefaultDamping},
		{Smoothing: 1e-2, MaxDepth: 6}, {Path: PathSparse, Smoothing: 1e-2, MaxDepth: 6}} {
		c := dense
		if s.Path == PathSparse {
			c = sparse
		}
		a, err := NewAdaNP(c, s)
		require.NoError(t, err)
		want := mat.NewDense(rows, 2, nil)
		st0, err := a.ProjectTo(want, x, yhat)
		require.NoError(t, err)
		got := mat.NewDense(rows, 2, nil)
		lat := mat.NewDense(rows, 2, nil)
		st, err := a.ProjectLatent(got, x, yhat, lat)
		require.NoError(t, err)
		require.True(t, st.Converged(), "%+v: %v", s, st)
		assert.Equal(t, want.RawMatrix().Data, got.RawMatrix().Data, "%+v", s)
		assert.Equal(t, st0, st, "%+v", s)
		assert.LessOrEqual(t, extResidual(c, x, got, lat), 1e-6, "%+v: (ỹ, λ) off the extended system", s)
		for _, v := range lat.RawMatrix().Data {
			assert.Greater(t, v, 0.0, "%+v: a Fischer–Burmeister multiplier at a zero is positive", s)
		}

		// Started from its own multipliers at ỹ, the projection has
		// nothing to do: MinDepth's one step, and ỹ moves by the order
		// of the residual it had.
		again := mat.NewDense(rows, 2, nil)
		lat2 := mat.DenseCopyOf(lat)
		st2, err := a.ProjectLatent(again, x, got, lat2)
		require.NoError(t, err)
		assert.Equal(t, 1, st2.Depth, "%+v", s)
		assert.Less(t, st2.Displacement.Max, 1e-5, "%+v", s)
	}
}

// TestProjectLatentSavesSteps checks that a warm start pays where it
// should: a prediction near the set with the multipliers of a nearby
// point converges in fewer steps than from zero multipliers.
func TestProjectLatentSavesSteps(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	a, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	// Points on the circle of radius 1 beyond the box's upper face
	// y1 = 0.6: the face is active.
	x := mat.NewDense(1, 1, []float64{1})
	yhat := mat.NewDense(1, 2, []float64{0.8, 0.6})
	y := mat.NewDense(1, 2, nil)
	lat := mat.NewDense(1, 2, nil)
	cold, err := a.ProjectLatent(y, x, yhat, lat)
	require.NoError(t, err)
	require.True(t, cold.Converged())
	// A prediction near ỹ, warm from its multipliers.
	yhat2 := mat.NewDense(1, 2, []float64{y.At(0, 0) + 1e-3, y.At(0, 1) - 1e-3})
	warm, err := a.ProjectLatent(y, x, yhat2, mat.DenseCopyOf(lat))
	require.NoError(t, err)
	require.True(t, warm.Converged())
	cold2, err := a.ProjectTo(mat.NewDense(1, 2, nil), x, yhat2)
	require.NoError(t, err)
	assert.Less(t, warm.Depth, cold2.Depth, "warm %v, cold %v", warm, cold2)
}

// TestProjectLatentErrors checks the errors: no latent variables, a
// latent of the wrong shape, a start that is not finite; and that nil
// latent is ProjectTo.
func TestProjectLatentErrors(t *testing.T) {
	c := smBoxCircle(t, 1e-8)
	a, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	x, yhat := latentBatch()
	rows, _ := yhat.Dims()
	dst := mat.NewDense(rows, 2, nil)
	_, err = a.ProjectLatent(dst, x, yhat, mat.NewDense(rows, 3, nil))
	assert.ErrorContains(t, err, "latent is 6×3, want 6×2")
	_, err = a.ProjectLatent(dst, x, yhat, mat.NewDense(rows-1, 2, nil))
	assert.ErrorContains(t, err, "want 6×2")
	bad := mat.NewDense(rows, 2, nil)
	bad.Set(2, 1, math.NaN())
	_, err = a.ProjectLatent(dst, x, yhat, bad)
	assert.ErrorContains(t, err, "sample 2: x, ŷ or its latent start is not finite")
	_, err = a.ProjectLatent(dst, x, nil, bad)
	assert.Error(t, err)
	_, err = a.ProjectLatent(dst, x, yhat, &mat.Dense{})
	assert.ErrorContains(t, err, "latent is 0×0, want 6×2")

	st, err := a.ProjectLatent(dst, x, yhat, nil)
	require.NoError(t, err)
	want, st0, err := a.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, st0, st)
	assert.Equal(t, want.RawMatrix().Data, dst.RawMatrix().Data)

	plain, err := NewAdaNP(gtCircle(t), Settings{})
	require.NoError(t, err)
	_, err = plain.ProjectLatent(mat.NewDense(1, 2, nil), mat.NewDense(1, 1, []float64{1}), mat.NewDense(1, 2, []float64{1, 1}), mat.NewDense(1, 1, nil))
	assert.ErrorContains(t, err, "no latent variables")

	sm, err := NewAdaNP(c, Settings{Smoothing: 1e-2})
	require.NoError(t, err)
	_, err = sm.ProjectLatent(mat.NewDense(rows, 3, nil), x, yhat, mat.NewDense(rows, 2, nil))
	assert.ErrorContains(t, err, "destination is 6×3")
}
