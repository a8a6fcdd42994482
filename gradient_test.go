package enforce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// Constraints for the gradient tests, written with Func (exact second
// derivatives in y and x).

// gtCircle is y1² + y2² − x² = 0.
func gtCircle(t *testing.T) Constraint {
	c, err := Func(1, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Mul(x[0], x[0]))
	})
	require.NoError(t, err)
	return c
}

// gtTwo is a system of two nonlinear constraints in four outputs with a
// Jacobian whose columns differ in size (so AutoDiagonal's weights vary).
func gtTwo(t *testing.T) Constraint {
	c, err := Func(2, 4, 2, func(x, y, c []hyperdual.Number) {
		// c1 = 3·y1 + y2² + sin(y3) − x1
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Add(hyperdual.Scale(3, y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Sin(y[2])), x[0])
		// c2 = y1·y4 + 2·y3 − x2·y2
		c[1] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[3]), hyperdual.Scale(2, y[2])), hyperdual.Mul(x[1], y[1]))
	})
	require.NoError(t, err)
	return c
}

// gtAtan is atan(y1) + 0.1·y2 = 0, the far-from-manifold case of the
// globalisation tests.
func gtAtan(t *testing.T) Constraint {
	c, err := Func(0, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Add(hyperdual.Atan(y[0]), hyperdual.Scale(0.1, y[1]))
	})
	require.NoError(t, err)
	return c
}

// gtCircleIneq is the unit circle y1² + y2² = x2² with the inequality
// y1 ≤ x1.
func gtCircleIneq(t *testing.T) Constraint {
	eq, err := Func(2, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Mul(y[0], y[0]), hyperdual.Mul(y[1], y[1])), hyperdual.Mul(x[1], x[1]))
	})
	require.NoError(t, err)
	g, err := Func(2, 2, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(y[0], x[0])
	})
	require.NoError(t, err)
	c, err := WithInequalities(eq, g, 0)
	require.NoError(t, err)
	return c
}

// gtLoss is ℓ = Σ a ⊙ ỹ.
func gtLoss(t *testing.T, p *AdaNP, x, yhat, a *mat.Dense) float64 {
	y, _, err := p.Project(x, yhat)
	require.NoError(t, err)
	return mat.Sum(gtMulElem(a, y))
}

func gtMulElem(a, b *mat.Dense) *mat.Dense {
	var m mat.Dense
	m.MulElem(a, b)
	return &m
}

// gtFD returns the central finite-difference gradients of ℓ with respect to
// ŷ and x (x may be nil).
func gtFD(t *testing.T, p *AdaNP, x, yhat, a *mat.Dense) (gy, gx []float64) {
	rows, ny := yhat.Dims()
	settings := &fd.Settings{Formula: fd.Central, Step: 1e-6}
	gy = fd.Gradient(nil, func(v []float64) float64 {
		return gtLoss(t, p, x, mat.NewDense(rows, ny, v), a)
	}, append([]float64(nil), yhat.RawMatrix().Data...), settings)
	if x != nil {
		_, nx := x.Dims()
		gx = fd.Gradient(nil, func(v []float64) float64 {
			return gtLoss(t, p, mat.NewDense(rows, nx, v), yhat, a)
		}, append([]float64(nil), x.RawMatrix().Data...), settings)
	}
	return gy, gx
}

// gtVJP returns VJP's gradients and the pass's GradStats.
func gtVJP(t *testing.T, p *AdaNP, x, yhat, a *mat.Dense) (gy, gx []float64, gs GradStats) {
	rows, ny := yhat.Dims()
	var tr Trace
	_, err := p.ProjectTrace(mat.NewDense(rows, ny, nil), x, yhat, &tr)
	require.NoError(t, err)
	gym := mat.NewDense(rows, ny, nil)
	var gxm *mat.Dense
	if x != nil {
		_, nx := x.Dims()
		gxm = mat.NewDense(rows, nx, nil)
	}
	require.NoError(t, p.VJP(&tr, a, gym, gxm))
	gy = gym.RawMatrix().Data
	if gxm != nil {
		gx = gxm.RawMatrix().Data
	}
	return gy, gx, tr.GradStats()
}

// TestUnrolledIsExactEverywhere checks that Unrolled gradients match finite
// differences of the computed map for every weighting, with and without
// globalisation and recomputation, for ŷ and x, on nonlinear systems with
// and without inequalities, near and far from the manifold.
func TestUnrolledIsExactEverywhere(t *testing.T) {
	type system struct {
		name   string
		c      Constraint
		nx, ny int
		diag   []float64
		yScale float64
	}
	systems := []system{
		{"circle", gtCircle(t), 1, 2, []float64{1, 3}, 1},
		{"two", gtTwo(t), 2, 4, []float64{1, 2, 0.5, 3}, 0.5},
		{"two/far", gtTwo(t), 2, 4, []float64{1, 2, 0.5, 3}, 3},
		{"circle+ineq", gtCircleIneq(t), 2, 2, []float64{1, 2}, 1},
	}
	weights := []Weighting{Identity, Diagonal, AutoDiagonal}
	globals := []struct {
		name string
		set  func(*Settings)
	}{
		{"full", func(*Settings) {}},
		{"linesearch", func(s *Settings) { s.LineSearch = true }},
		{"maxstep", func(s *Settings) { s.MaxStep = 0.3 }},
		{"both+recompute", func(s *Settings) { s.LineSearch, s.MaxStep, s.Recompute = true, 0.5, true }},
		{"damping", func(s *Settings) { s.Damping = 0.3 }},
		{"damping+maxstep+recompute", func(s *Settings) { s.Damping, s.MaxStep, s.Recompute = 0.1, 0.5, true }},
	}
	for _, sys := range systems {
		for _, w := range weights {
			for _, g := range globals {
				t.Run(fmt.Sprintf("%s/%v/%s", sys.name, w, g.name), func(t *testing.T) {
					rnd := rand.New(rand.NewPCG(101, uint64(len(sys.name)*7+int(w))))
					s := Settings{Weights: w, MinDepth: 3, MaxDepth: 3}
					if w == Diagonal {
						s.Diag = sys.diag
					}
					g.set(&s)
					p, err := NewAdaNP(sys.c, s)
					require.NoError(t, err)
					assert.True(t, p.ExactGradient())
					const rows = 3
					x := randDense(rnd, rows, sys.nx, 0.5)
					for i := 0; i < rows; i++ {
						x.Set(i, sys.nx-1, 1+math.Abs(x.At(i, sys.nx-1))) // a radius away from 0
					}
					yhat := randDense(rnd, rows, sys.ny, sys.yScale)
					a := randDense(rnd, rows, sys.ny, 1)
					gy, gx, gs := gtVJP(t, p, x, yhat, a)
					wy, wx := gtFD(t, p, x, yhat, a)
					assert.Less(t, relErr(gy, wy), 2e-5, "ŷ-gradient\n got %v\nwant %v", gy, wy)
					assert.Less(t, relErr(gx, wx), 2e-5, "x-gradient\n got %v\nwant %v", gx, wx)
					assert.True(t, gs.Exact(), "%+v", gs)
				})
			}
		}
	}
}

// TestAutoDiagonalReviewCase is the case from the review: Unrolled with
// AutoDiagonal weights, three steps; the gradient used to hold W constant.
// (ŷ avoids AutoDiagonal's kink mean_i |B_ik| = 1, where W is not
// differentiable and finite differences average the two sides.)
func TestAutoDiagonalReviewCase(t *testing.T) {
	p, err := NewAdaNP(gtTwo(t), Settings{Weights: AutoDiagonal, MinDepth: 3, MaxDepth: 3})
	require.NoError(t, err)
	x := mat.NewDense(1, 2, []float64{0.3, -0.7})
	yhat := mat.NewDense(1, 4, []float64{2.2, -1.5, 0.4, 1.2})
	a := mat.NewDense(1, 4, []float64{1, -0.5, 0.25, 2})
	gy, gx, _ := gtVJP(t, p, x, yhat, a)
	wy, wx := gtFD(t, p, x, yhat, a)
	assert.Less(t, relErr(gy, wy), 1e-6, "got %v want %v", gy, wy)
	assert.Less(t, relErr(gx, wx), 1e-6, "got %v want %v", gx, wx)
}

// TestImplicitIsTheNearestPointDerivative checks the implicit-function
// gradient against the analytic derivative of the nearest point on a circle
// of radius x: y* = x·ŷ/‖ŷ‖, ∂y*/∂ŷ = x(I − uuᵀ)/‖ŷ‖ with u = ŷ/‖ŷ‖, and
// ∂y*/∂x = u. AdaNP's path from ŷ is radial, so the computed map is the
// nearest point and finite differences agree too.
func TestImplicitIsTheNearestPointDerivative(t *testing.T) {
	p, err := NewAdaNP(gtCircle(t), Settings{Grad: Implicit, Tol: 1e-12})
	require.NoError(t, err)
	assert.True(t, p.ExactGradient())
	x := mat.NewDense(1, 1, []float64{1})
	yhat := mat.NewDense(1, 2, []float64{1.6, 1.2}) // ‖ŷ‖ = 2, y* = (0.8, 0.6)
	a := mat.NewDense(1, 2, []float64{-0.6, 0.8})   // tangent at y*
	gy, gx, gs := gtVJP(t, p, x, yhat, a)
	assert.InDeltaSlice(t, []float64{-0.3, 0.4}, gy, 1e-9)
	assert.InDelta(t, 0, gx[0], 1e-9) // a ⟂ u
	assert.True(t, gs.Exact())
	wy, wx := gtFD(t, p, x, yhat, a)
	assert.Less(t, relErr(gy, wy), 1e-6)
	assert.Less(t, relErr(gx, wx), 1e-6)

	// The curvature-free variant, under its own name, gives the projector.
	pf, err := NewAdaNP(gtCircle(t), Settings{Grad: FinalProjector, Tol: 1e-12})
	require.NoError(t, err)
	assert.False(t, pf.ExactGradient())
	gy, _, _ = gtVJP(t, pf, x, yhat, a)
	assert.InDeltaSlice(t, []float64{-0.6, 0.8}, gy, 1e-9)
}

// TestImplicitRandomSpheres compares Implicit with finite differences on
// spheres of radius x in 5 dimensions, for every weighting that keeps the
// path radial (W = I) and random starts, including far ones.
func TestImplicitRandomSpheres(t *testing.T) {
	c, err := Func(1, 5, 1, func(x, y, c []hyperdual.Number) {
		var s hyperdual.Number
		for _, v := range y {
			s = hyperdual.Add(s, hyperdual.Mul(v, v))
		}
		c[0] = hyperdual.Sub(s, hyperdual.Mul(x[0], x[0]))
	})
	require.NoError(t, err)
	p, err := NewAdaNP(c, Settings{Grad: Implicit, Tol: 1e-13})
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, scale := range []float64{0.3, 1, 10} {
		x := mat.NewDense(4, 1, []float64{1, 2, 0.5, 1.5})
		yhat := randDense(rnd, 4, 5, scale)
		a := randDense(rnd, 4, 5, 1)
		gy, gx, gs := gtVJP(t, p, x, yhat, a)
		wy, wx := gtFD(t, p, x, yhat, a)
		assert.Less(t, relErr(gy, wy), 1e-5, "scale %v", scale)
		assert.Less(t, relErr(gx, wx), 1e-5, "scale %v", scale)
		assert.True(t, gs.Exact())
	}
}

// TestImplicitManyConstraints: with 20 constraints on 30 variables most
// of ḡ lies in range(Bᵀ), where the conjugate gradients of Implicit used
// to stall on the rounding of the projection (cond(G)·1e-16 of ‖ḡ‖) and
// fall back to the projector gradient on every sample. From ŷ within 1e-5
// of the set the computed point is the nearest one to within the KKT
// tolerance, so Implicit must be exact and match finite differences.
func TestImplicitManyConstraints(t *testing.T) {
	rnd := rand.New(rand.NewPCG(63, 64))
	q := f32Quadratic(t, rnd, 30, 20, 0.3)
	rows := 6
	x := randDense(rnd, rows, 20, 0.5)
	a64, err := NewAdaNP(q, Settings{Tol: 1e-13})
	require.NoError(t, err)
	yhat, _, err := a64.Project(x, randDense(rnd, rows, 30, 0.5))
	require.NoError(t, err)
	yhat.Add(yhat, randDense(rnd, rows, 30, 1e-5))
	p, err := NewAdaNP(q, Settings{Grad: Implicit, Tol: 1e-13})
	require.NoError(t, err)
	a := randDense(rnd, rows, 30, 1)
	gy, gx, gs := gtVJP(t, p, x, yhat, a)
	require.True(t, gs.Exact(), "%+v", gs)
	wy, wx := gtFD(t, p, x, yhat, a)
	assert.Less(t, relErr(gy, wy), 1e-4)
	assert.Less(t, relErr(gx, wx), 1e-4)
}

// TestImplicitReportsNonNearestPoints: from a start whose Gauss–Newton
// path is not the nearest-point path, Implicit is the nearest point's
// derivative, not the computed map's, and GradStats says so.
func TestImplicitReportsNonNearestPoints(t *testing.T) {
	p, err := NewAdaNP(gtTwo(t), Settings{Grad: Implicit, Tol: 1e-12})
	require.NoError(t, err)
	x := mat.NewDense(1, 2, []float64{0.3, -0.7})
	yhat := mat.NewDense(1, 4, []float64{2, -1.5, 0.4, 1.2})
	a := mat.NewDense(1, 4, []float64{1, -0.5, 0.25, 2})
	_, _, gs := gtVJP(t, p, x, yhat, a)
	assert.Equal(t, 1, gs.Inexact)
	assert.False(t, gs.Exact())
}

// TestProjectorModesExactForAffine: Projector, FinalProjector and Implicit
// are exact for affine constraints, with every fixed weighting.
func TestProjectorModesExactForAffine(t *testing.T) {
	rnd := rand.New(rand.NewPCG(21, 22))
	aff := newNPAffine(rnd, 2, 5, 2)
	for _, mode := range []GradMode{Projector, FinalProjector, Implicit, Unrolled} {
		for _, w := range []Weighting{Identity, Diagonal} {
			s := Settings{Grad: mode, Weights: w}
			if w == Diagonal {
				s.Diag = []float64{1, 2, 3, 0.5, 1}
			}
			p, err := NewAdaNP(aff, s)
			require.NoError(t, err)
			x := randDense(rnd, 3, 2, 1)
			yhat := randDense(rnd, 3, 5, 1)
			a := randDense(rnd, 3, 5, 1)
			gy, gx, _ := gtVJP(t, p, x, yhat, a)
			wy, wx := gtFD(t, p, x, yhat, a)
			assert.Less(t, relErr(gy, wy), 1e-6, "%v %v", mode, w)
			assert.Less(t, relErr(gx, wx), 1e-6, "%v %v", mode, w)
		}
	}
}

// TestClampedStepsAreReportedInexact: a rank-deficient Jacobian takes the
// clamped eigen-solve, whose clamp is not differentiated.
func TestClampedStepsAreReportedInexact(t *testing.T) {
	rnd := rand.New(rand.NewPCG(23, 24))
	for _, mode := range []GradMode{Unrolled, Projector, Implicit, FinalProjector} {
		p, err := NewAdaNP(npDuplicate{}, Settings{Grad: mode})
		require.NoError(t, err)
		x := randDense(rnd, 5, 1, 1)
		yhat := randDense(rnd, 5, 3, 1)
		_, _, gs := gtVJP(t, p, x, yhat, randDense(rnd, 5, 3, 1))
		assert.Equal(t, 5, gs.Inexact, "%v", mode)
	}
}

// TestInequalityAutoDiagonalNoNaN is the review's case: a circle with
// y1 ≤ x, x = 59, ŷ = (0, 0), AutoDiagonal: VJP used to return NaN with a
// nil error. Now it returns a finite gradient or an error.
func TestInequalityAutoDiagonalNoNaN(t *testing.T) {
	for _, mode := range []GradMode{Unrolled, Projector, Implicit, FinalProjector} {
		p, err := NewAdaNP(gtCircleIneq(t), Settings{Weights: AutoDiagonal, Grad: mode})
		require.NoError(t, err)
		x := mat.NewDense(1, 2, []float64{59, 1})
		yhat := mat.NewDense(1, 2, []float64{0, 0})
		var tr Trace
		_, err = p.ProjectTrace(mat.NewDense(1, 2, nil), x, yhat, &tr)
		if err != nil {
			continue
		}
		gy, gx := mat.NewDense(1, 2, nil), mat.NewDense(1, 2, nil)
		if err := p.VJP(&tr, mat.NewDense(1, 2, []float64{1, 1}), gy, gx); err == nil {
			assert.True(t, allFinite(gy.RawMatrix().Data), "%v: %v", mode, gy.RawMatrix().Data)
			assert.True(t, allFinite(gx.RawMatrix().Data), "%v: %v", mode, gx.RawMatrix().Data)
		}
	}
}
