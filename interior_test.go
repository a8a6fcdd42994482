package enforce

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// itSystem is two equations in five outputs with one input:
//
//	c₀ = y₀² + y₁² + y₂² − x²,   c₁ = y₀ + y₁ + y₃ + y₄ − 1,
//
// projected by the tests within itSystemBox: y₀ ∈ [0.2, 2], y₁ ≤ 1, y₂
// free, y₃ ∈ [−1, 1] and y₄ pinned to 0.5. Its Jacobian with respect to
// (y₀, y₁, y₂, y₃) has full row rank wherever y₀ > 0, and it has solutions
// within the box for x ≥ 0.2 or so (x ∈ [1, 2] in the tests).
type itSystem struct{}

func (itSystem) Dims() (int, int, int) { return 1, 5, 2 }

func (itSystem) Eval(x, y, c, jy []float64) {
	c[0] = y[0]*y[0] + y[1]*y[1] + y[2]*y[2] - x[0]*x[0]
	c[1] = y[0] + y[1] + y[3] + y[4] - 1
	if jy != nil {
		copy(jy, []float64{
			2 * y[0], 2 * y[1], 2 * y[2], 0, 0,
			1, 1, 0, 1, 1,
		})
	}
}

func itSystemBox() Box {
	inf := math.Inf(1)
	return Box{
		Lo: []float64{0.2, -inf, -inf, -1, 0.5},
		Hi: []float64{2, 1, inf, 1, 0.5},
	}
}

// itSum is y₀ + y₁ = rhs (no inputs).
type itSum struct{ rhs float64 }

func (itSum) Dims() (int, int, int) { return 0, 2, 1 }

func (s itSum) Eval(x, y, c, jy []float64) {
	c[0] = y[0] + y[1] - s.rhs
	if jy != nil {
		jy[0], jy[1] = 1, 1
	}
}

// itCircle is y₀² + y₁² = 1 (no inputs).
type itCircle struct{}

func (itCircle) Dims() (int, int, int) { return 0, 2, 1 }

func (itCircle) Eval(x, y, c, jy []float64) {
	c[0] = y[0]*y[0] + y[1]*y[1] - 1
	if jy != nil {
		jy[0], jy[1] = 2*y[0], 2*y[1]
	}
}

// itLinearHand is c = C·y − (x, 0) for the C of itLinear, written by hand:
// the same constraint without a declared constant Jacobian.
type itLinearHand struct{}

var itLinearC = []float64{
	1, 1, 0, 0,
	0, 1, -1, 1,
}

func (itLinearHand) Dims() (int, int, int) { return 1, 4, 2 }

func (itLinearHand) Eval(x, y, c, jy []float64) {
	c[0] = y[0] + y[1] - x[0]
	c[1] = y[1] - y[2] + y[3]
	if jy != nil {
		copy(jy, itLinearC)
	}
}

// itLinear is itLinearHand made with Linear: c = C·y − r(x), r(x) = (x, 0).
func itLinear(t *testing.T) Constraint {
	t.Helper()
	l, err := Linear(1, mat.NewDense(2, 4, append([]float64(nil), itLinearC...)), func(x, r, jx []float64) {
		r[0], r[1] = x[0], 0
		if jx != nil {
			jx[0], jx[1] = 1, 0
		}
	})
	require.NoError(t, err)
	require.NotNil(t, CapabilitiesOf(l).ConstantJacobian, "the test needs a constant Jacobian")
	return l
}

// itRowResidual returns max|c| of row r of y, evaluated here.
func itRowResidual(c Constraint, x, y *mat.Dense, r int) float64 {
	_, _, nc := c.Dims()
	cv := make([]float64, nc)
	var xr []float64
	if x != nil {
		xr = x.RawRowView(r)
	}
	c.Eval(xr, y.RawRowView(r), cv, nil)
	var m float64
	for _, v := range cv {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// itAssertInBox checks every row of y against b: finite, equal to the
// value where Lo == Hi, strictly inside where Lo < Hi.
func itAssertInBox(t *testing.T, b Box, y *mat.Dense, name string) {
	t.Helper()
	rows, ny := y.Dims()
	for r := range rows {
		for k := range ny {
			v, lo, hi := y.At(r, k), b.Lo[k], b.Hi[k]
			if !assert.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s: row %d y[%d] = %v not finite", name, r, k, v) {
				continue
			}
			if lo == hi {
				assert.Equal(t, lo, v, "%s: row %d: pinned y[%d]", name, r, k)
				continue
			}
			if !math.IsInf(lo, -1) {
				assert.Greater(t, v, lo, "%s: row %d: y[%d] strictly above Lo", name, r, k)
			}
			if !math.IsInf(hi, 1) {
				assert.Less(t, v, hi, "%s: row %d: y[%d] strictly below Hi", name, r, k)
			}
		}
	}
}

func itNew(t *testing.T, c Constraint, b Box, s Settings) *Interior {
	t.Helper()
	p, err := NewInterior(c, b, 0, s)
	require.NoError(t, err)
	return p
}

// TestInteriorConverges projects itSystem from starts inside and outside
// the box (bounded variables beyond their bounds, the pinned one off its
// value, unbounded ones far away): every sample meets the tolerance on c
// evaluated here, every bounded output is strictly inside, the pinned one
// equals its value, and the Stats say so. A start that is feasible and
// inside the box by more than the margin takes no step and is returned
// bit for bit.
func TestInteriorConverges(t *testing.T) {
	b := itSystemBox()
	tests := []struct {
		name  string
		x     []float64
		yhat  [][]float64
		steps bool // every row needs a step
	}{
		{"inside", []float64{1, 1.5, 2},
			[][]float64{{0.5, 0.3, 0.1, 0.2, 0.5}, {1.9, -2, 0.4, 0.9, 0.5}, {0.3, 0.9, -3, -0.9, 0.5}}, true},
		{"outside", []float64{1, 1.5, 2},
			[][]float64{{-1, 3, 0, 2, 0}, {5, -4, 6, -7, 10}, {0.2, 1, 0.1, -1, 0.5}}, true},
		{"on the bounds", []float64{1.2},
			[][]float64{{2, 1, 0, 1, 0.5}}, true},
		{"far unbounded", []float64{1.7},
			[][]float64{{1, -50, 100, 0, 0.5}}, true},
	}
	for _, test := range tests {
		for _, s := range []Settings{{}, {Tol: 1e-10}, {Measure: MeanAbs, Reg: 1e-10}} {
			p := itNew(t, itSystem{}, b, s)
			tol := p.Settings().Tol
			rows := len(test.yhat)
			x := mat.NewDense(rows, 1, append([]float64(nil), test.x...))
			yhat := mat.NewDense(rows, 5, nil)
			for r, row := range test.yhat {
				yhat.SetRow(r, row)
			}
			keep := mat.DenseCopyOf(yhat)
			y, st, err := p.Project(x, yhat)
			require.NoError(t, err, test.name)
			assert.Equal(t, keep, yhat, "%s: ŷ is not modified", test.name)
			for r := range rows {
				assert.LessOrEqual(t, itRowResidual(itSystem{}, x, y, r), tol, "%s: row %d", test.name, r)
			}
			itAssertInBox(t, b, y, test.name)
			assert.Equal(t, rows, st.Samples, test.name)
			assert.Zero(t, st.NotConverged, test.name)
			assert.Nil(t, st.Missed, test.name)
			assert.Zero(t, st.Stalled, test.name)
			assert.Zero(t, st.Stopped, test.name)
			assert.True(t, st.Converged(), test.name)
			if test.steps {
				assert.GreaterOrEqual(t, st.Depth, 1, test.name)
				assert.GreaterOrEqual(t, st.MeanDepth, 1.0, test.name)
			}
			assert.LessOrEqual(t, st.Depth, p.Settings().MaxDepth, test.name)
			if s.Measure != MeanAbs {
				assert.LessOrEqual(t, st.After.Max, tol, test.name)
			}
			assert.InDelta(t, maxResidual(itSystem{}, x, yhat), st.Before.Max, 1e-12, "%s: Before is at ŷ", test.name)
			assert.InDelta(t, maxResidual(itSystem{}, x, y), st.After.Max, 1e-15, test.name)
			var dmax float64
			for r := range rows {
				d := mat.NewVecDense(5, nil)
				d.SubVec(y.RowView(r), yhat.RowView(r))
				dmax = math.Max(dmax, mat.Norm(d, 2))
			}
			assert.InDelta(t, dmax, st.Displacement.Max, 1e-12, test.name)
		}
	}

	// Feasible and well inside: no step, ỹ = ŷ bit for bit.
	p := itNew(t, itSystem{}, b, Settings{})
	x := mat.NewDense(1, 1, []float64{1})
	yhat := mat.NewDense(1, 5, []float64{0.6, 0.8, 0, -0.9, 0.5})
	y, st, err := p.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, yhat.RawRowView(0), y.RawRowView(0))
	assert.Zero(t, st.Depth)
	assert.Zero(t, st.Displacement.Max)
	assert.Nil(t, st.Missed)

	// Random starts, half of them outside the box.
	rnd := rand.New(rand.NewPCG(11, 12))
	const rows = 40
	x = mat.NewDense(rows, 1, ctRandVec(rnd, rows, 1, 2))
	yhat = randDense(rnd, rows, 5, 1.5)
	y, st, err = p.Project(x, yhat)
	require.NoError(t, err)
	assert.Nil(t, st.Missed)
	assert.LessOrEqual(t, maxResidual(itSystem{}, x, y), DefaultTol)
	itAssertInBox(t, b, y, "random")
}

// TestInteriorApproachesBound projects onto y₀ + y₁ = 2 with y₀, y₁ ≤ 1,
// whose only solution in the closed box, (1, 1), lies on both bounds: the
// iterates approach it geometrically, strictly inside, to Tol.
func TestInteriorApproachesBound(t *testing.T) {
	inf := math.Inf(1)
	b := Box{Lo: []float64{-inf, -inf}, Hi: []float64{1, 1}}
	starts := [][]float64{{0, 0}, {0.5, -3}, {5, 5}, {0.999, 0.2}, {-10, 1}}
	for _, tol := range []float64{1e-6, 1e-10} {
		p := itNew(t, itSum{2}, b, Settings{Tol: tol})
		for _, s := range starts {
			yhat := mat.NewDense(1, 2, append([]float64(nil), s...))
			y, st, err := p.Project(nil, yhat)
			require.NoError(t, err, "start %v", s)
			assert.Nil(t, st.Missed, "start %v", s)
			assert.LessOrEqual(t, itRowResidual(itSum{2}, nil, y, 0), tol, "start %v", s)
			assert.GreaterOrEqual(t, st.Depth, 2, "start %v: a bound is approached in several steps", s)
			itAssertInBox(t, b, y, "approach")
		}
	}
}

// TestInteriorInfeasible projects onto y₀ + y₁ = 3 with y₀, y₁ ≤ 1, which
// has no solution in the box: the sample is reported, not an error, and
// its output is finite and within the bounds.
func TestInteriorInfeasible(t *testing.T) {
	inf := math.Inf(1)
	b := Box{Lo: []float64{-inf, -inf}, Hi: []float64{1, 1}}
	for _, s := range [][]float64{{0, 0}, {0.5, -3}, {5, 5}, {0.999, 0.2}} {
		p := itNew(t, itSum{3}, b, Settings{})
		var (
			y   *mat.Dense
			st  Stats
			err error
		)
		require.NotPanics(t, func() { y, st, err = p.Project(nil, mat.NewDense(1, 2, append([]float64(nil), s...))) })
		require.NoError(t, err)
		assert.Equal(t, 1, st.NotConverged, "start %v", s)
		assert.Equal(t, []int{0}, st.Missed, "start %v", s)
		assert.False(t, st.Converged())
		assert.GreaterOrEqual(t, st.After.Max, 1.0-1e-6, "start %v: |c| ≥ 1 in the box", s)
		for k := range 2 {
			v := y.At(0, k)
			assert.False(t, math.IsNaN(v) || math.IsInf(v, 0), "start %v: y[%d] = %v", s, k, v)
			assert.LessOrEqual(t, v, 1.0, "start %v: y[%d] within its bound", s, k)
		}
	}
}

// TestInteriorStalls starts itSystem at y₂ = 0, where ∂c₀/∂y₂ = 0, with
// y₀, y₁ and y₃ on their bounds and x = 2: the iteration reaches a point
// where the variables away from their bounds cannot decrease ‖c‖ (a local
// minimum of ‖c‖² in the box, y₂ still 0) and the sample is counted in
// Stalled and Missed, its output inside the box.
func TestInteriorStalls(t *testing.T) {
	b := itSystemBox()
	p := itNew(t, itSystem{}, b, Settings{})
	x := mat.NewDense(2, 1, []float64{1, 2})
	yhat := mat.NewDense(2, 5, []float64{
		0.5, 0.3, 0.1, 0.2, 0.5,
		0.2, 1, 0, -1, 0.5,
	})
	y, st, err := p.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Stalled)
	assert.Equal(t, 1, st.NotConverged)
	assert.Equal(t, []int{1}, st.Missed)
	assert.Zero(t, y.At(1, 2), "y₂ cannot leave 0")
	assert.Greater(t, st.After.Max, 0.1)
	assert.LessOrEqual(t, itRowResidual(itSystem{}, x, y, 0), DefaultTol)
	itAssertInBox(t, b, y, "stalls")
}

// TestInteriorInfeasibleStaysStrictlyInside checks what Interior's
// documentation promises of the infeasible sample of TestInteriorInfeasible:
// the output strictly inside the box (Project: "strictly inside where Lo <
// Hi"), and a sample whose step cannot decrease ‖c‖ counted in Stalled (or
// stopped by MaxDepth).
//
// It fails: the fraction-to-boundary rule keeps 1 % of the gap h − y, but
// once that gap is below half an ulp of y, y + α·δ rounds onto the bound
// (here after 9 steps from (0, 0): (1, 1) = Hi, exactly), the Armijo test
// accepts it, and the next step's scaling D = min(h − y, 1)² is zero for
// both variables: G = B·D·Bᵀ = 0, the step is not finite and the sample
// is counted in Stopped, not Stalled.
func TestInteriorInfeasibleStaysStrictlyInside(t *testing.T) {
	inf := math.Inf(1)
	b := Box{Lo: []float64{-inf, -inf}, Hi: []float64{1, 1}}
	p := itNew(t, itSum{3}, b, Settings{})
	y, st, err := p.Project(nil, mat.NewDense(1, 2, []float64{0, 0}))
	require.NoError(t, err)
	itAssertInBox(t, b, y, "infeasible")
	assert.True(t, st.Stalled == 1 || st.Depth == p.Settings().MaxDepth,
		"the sample should stall or use MaxDepth steps, got %+v (Stopped %d)", st, st.Stopped)
}

// itMeshBox bounds the mesh's u ≥ 0 and v ∈ [−0.25, 0.25], and pins the
// last v to 0.
func itMeshBox(ny int) Box {
	b := Box{Lo: make([]float64, ny), Hi: make([]float64, ny)}
	for j := 0; j < ny; j += 2 {
		b.Lo[j], b.Hi[j] = 0, math.Inf(1)
		b.Lo[j+1], b.Hi[j+1] = -0.25, 0.25
	}
	b.Lo[ny-1], b.Hi[ny-1] = 0, 0
	return b
}

// TestInteriorSparse projects the mesh (which declares a sparse Jacobian)
// within bounds on the sparse and the dense path: both converge, inside
// the box, to the same points.
func TestInteriorSparse(t *testing.T) {
	m := newSPMesh(3)
	require.NotNil(t, CapabilitiesOf(m).Sparse)
	_, ny, _ := m.Dims()
	b := itMeshBox(ny)
	rnd := rand.New(rand.NewPCG(21, 22))
	x, yhat := spMeshBatch(rnd, m, 12)
	// Some starts beyond the bounds.
	yhat.Set(0, 1, 3)
	yhat.Set(1, 0, -2)
	yhat.Set(2, 3, -1)

	var ys [2]*mat.Dense
	var sts [2]Stats
	for i, path := range []Path{PathSparse, PathDense} {
		p := itNew(t, m, b, Settings{Path: path, Tol: 1e-10})
		y, st, err := p.Project(x, yhat)
		require.NoError(t, err, "%v", path)
		assert.Nil(t, st.Missed, "%v", path)
		assert.GreaterOrEqual(t, st.Depth, 1, "%v", path)
		assert.LessOrEqual(t, maxResidual(m, x, y), 1e-10, "%v", path)
		itAssertInBox(t, b, y, path.String())
		ys[i], sts[i] = y, st
	}
	rows, _ := yhat.Dims()
	for r := range rows {
		for k := range ny {
			assert.InDelta(t, ys[1].At(r, k), ys[0].At(r, k), 1e-9, "row %d y[%d]", r, k)
		}
	}
	assert.Equal(t, sts[1].Depth, sts[0].Depth)

	// PathSparse needs the capability.
	_, err := NewInterior(itSystem{}, itSystemBox(), 0, Settings{Path: PathSparse})
	assert.Error(t, err)
}

// TestInteriorRefineRows refines two rows of a batch, one of which cannot
// be made feasible in the box: the other rows are left bit for bit, the
// refined one equals its projection alone, and Missed names the batch's
// row. Bad rows lists are errors that leave y as it was; an empty one does
// nothing.
func TestInteriorRefineRows(t *testing.T) {
	b := itSystemBox()
	p := itNew(t, itSystem{}, b, Settings{MaxDepth: 30})
	x := mat.NewDense(5, 1, []float64{1, 1.5, 2, 0.1, 1})
	yhat := mat.NewDense(5, 5, []float64{
		-1, 3, 0, 2, 0, // outside the box, infeasible: not listed
		5, -4, 6, -7, 10,
		0.5, 0.3, 0.1, 0.2, 0.5,
		1, 1, 1, 1, 1, // x = 0.1 < Lo of y₀: no solution in the box
		math.NaN(), 0, 0, 0, 0, // not finite, not listed
	})
	y := mat.DenseCopyOf(yhat)
	st, err := p.RefineRows(x, y, []int{1, 3})
	require.NoError(t, err)
	assert.Equal(t, 2, st.Samples)
	assert.Equal(t, 1, st.NotConverged)
	assert.Equal(t, []int{3}, st.Missed, "Missed holds rows of the batch")
	for _, r := range []int{0, 2, 4} {
		for k := range 5 {
			assert.Equal(t, math.Float64bits(yhat.At(r, k)), math.Float64bits(y.At(r, k)), "row %d y[%d] is not listed", r, k)
		}
	}
	assert.LessOrEqual(t, itRowResidual(itSystem{}, x, y, 1), DefaultTol)
	for _, r := range []int{1, 3} {
		alone, _, err := p.Project(mat.NewDense(1, 1, []float64{x.At(r, 0)}), mat.NewDense(1, 5, append([]float64(nil), yhat.RawRowView(r)...)))
		require.NoError(t, err)
		assert.Equal(t, alone.RawRowView(0), y.RawRowView(r), "row %d: its projection alone", r)
		for k := range 5 {
			v := y.At(r, k)
			assert.False(t, math.IsNaN(v) || math.IsInf(v, 0))
			assert.GreaterOrEqual(t, v, b.Lo[k])
			assert.LessOrEqual(t, v, b.Hi[k])
		}
	}

	// Errors, before anything is projected.
	for _, rows := range [][]int{{5}, {-1}, {2, 1}, {1, 1}, {0, 2, 2}, {4}, {1, 7}} {
		y := mat.DenseCopyOf(yhat)
		var err error
		require.NotPanics(t, func() { _, err = p.RefineRows(x, y, rows) }, "rows %v", rows)
		assert.Error(t, err, "rows %v", rows)
		for r := range 5 {
			for k := range 5 {
				assert.Equal(t, math.Float64bits(yhat.At(r, k)), math.Float64bits(y.At(r, k)), "rows %v: y unchanged", rows)
			}
		}
	}
	_, err = p.RefineRows(x, nil, []int{0})
	assert.Error(t, err, "nil y")
	_, err = p.RefineRows(nil, mat.DenseCopyOf(yhat), []int{0})
	assert.Error(t, err, "nil x")
	_, err = p.RefineRows(mat.NewDense(4, 1, nil), mat.DenseCopyOf(yhat), []int{0})
	assert.Error(t, err, "x rows")

	// Nothing to do.
	for _, rows := range [][]int{nil, {}} {
		y := mat.DenseCopyOf(yhat)
		st, err := p.RefineRows(x, y, rows)
		require.NoError(t, err, "rows %v", rows)
		assert.Equal(t, Stats{}, st, "rows %v", rows)
		for r := range 5 {
			for k := range 5 {
				assert.Equal(t, math.Float64bits(yhat.At(r, k)), math.Float64bits(y.At(r, k)))
			}
		}
	}
}

// TestInteriorRequireTol: with RequireTol and one step, a sample that needs
// more is a *ToleranceError naming its row; Project returns no ỹ, ProjectTo
// and RefineRows leave the projection in place.
func TestInteriorRequireTol(t *testing.T) {
	b := Box{Lo: []float64{0.8, math.Inf(-1)}, Hi: []float64{2, math.Inf(1)}}
	yhat := mat.NewDense(3, 2, []float64{
		0.9, math.Sqrt(1 - 0.81), // feasible, inside
		3, 3, // needs several steps
		1, 0.01, // nearly feasible
	})
	loose := itNew(t, itCircle{}, b, Settings{MaxDepth: 1})
	want, wst, err := loose.Project(nil, yhat)
	require.NoError(t, err)
	require.Equal(t, []int{1}, wst.Missed, "the test needs row 1 alone to miss after one step")

	p := itNew(t, itCircle{}, b, Settings{MaxDepth: 1, RequireTol: true})
	assert.True(t, p.Settings().RequireTol)
	y, st, err := p.Project(nil, yhat)
	assert.Nil(t, y)
	var te *ToleranceError
	require.True(t, errors.As(err, &te), "error %v", err)
	assert.Equal(t, []int{1}, te.Samples)
	assert.Equal(t, 3, te.Rows)
	assert.Equal(t, DefaultTol, te.Tol)
	assert.Equal(t, []int{1}, st.Missed)

	dst := mat.NewDense(3, 2, nil)
	st, err = p.ProjectTo(dst, nil, yhat)
	te = nil
	require.True(t, errors.As(err, &te), "error %v", err)
	assert.Equal(t, []int{1}, te.Samples)
	assert.Equal(t, want, dst, "ProjectTo leaves the projection in dst")
	assert.Equal(t, wst, st)

	// In place (dst = ŷ), and RefineRows.
	in := mat.DenseCopyOf(yhat)
	_, err = p.ProjectTo(in, nil, in)
	require.True(t, errors.As(err, &te))
	assert.Equal(t, want, in)
	in = mat.DenseCopyOf(yhat)
	_, err = p.RefineRows(nil, in, []int{0, 1})
	require.True(t, errors.As(err, &te))
	assert.Equal(t, []int{1}, te.Samples)
	assert.Equal(t, want.RawRowView(1), in.RawRowView(1))

	// Rows that all meet it: no error.
	_, err = p.RefineRows(nil, mat.DenseCopyOf(yhat), []int{0})
	assert.NoError(t, err)
}

// TestInteriorErrors: NewInterior, Project, ProjectTo reject what they
// cannot use with an error, without panicking.
func TestInteriorErrors(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	eq, g := thinSystem(t)
	fb, err := WithInequalities(eq, g, 1e-6)
	require.NoError(t, err)
	_, fbNy, _ := fb.Dims()
	fbBox := Box{Lo: make([]float64, fbNy), Hi: make([]float64, fbNy)}
	for i := range fbNy {
		fbBox.Lo[i], fbBox.Hi[i] = -1, 1
	}
	box := func(lo, hi float64) Box { // itCircle's box, y₁ free
		return Box{Lo: []float64{lo, -inf}, Hi: []float64{hi, inf}}
	}
	ok := box(0.8, 2)
	news := []struct {
		name   string
		c      Constraint
		b      Box
		margin float64
		s      Settings
	}{
		{"nil constraint", nil, ok, 0, Settings{}},
		{"latent variables", fb, fbBox, 0, Settings{}},
		{"short box", itCircle{}, Box{Lo: []float64{0}, Hi: []float64{1}}, 0, Settings{}},
		{"long Lo", itCircle{}, Box{Lo: []float64{0, 0, 0}, Hi: []float64{1, 1}}, 0, Settings{}},
		{"nil box", itCircle{}, Box{}, 0, Settings{}},
		{"NaN Lo", itCircle{}, box(nan, 1), 0, Settings{}},
		{"NaN Hi", itCircle{}, box(0, nan), 0, Settings{}},
		{"Lo > Hi", itCircle{}, box(1, 0.5), 0, Settings{}},
		{"Lo = +Inf", itCircle{}, box(inf, inf), 0, Settings{}},
		{"Hi = −Inf", itCircle{}, box(-inf, -inf), 0, Settings{}},
		{"negative margin", itCircle{}, ok, -1e-3, Settings{}},
		{"NaN margin", itCircle{}, ok, nan, Settings{}},
		{"infinite margin", itCircle{}, ok, inf, Settings{}},
		{"MinDepth 2", itCircle{}, ok, 0, Settings{MinDepth: 2}},
		{"Grad", itCircle{}, ok, 0, Settings{Grad: Projector}},
		{"Recompute", itCircle{}, ok, 0, Settings{Recompute: true}},
		{"MaxStep", itCircle{}, ok, 0, Settings{MaxStep: 1}},
		{"LineSearch", itCircle{}, ok, 0, Settings{LineSearch: true}},
		{"AutoDiagonal", itCircle{}, ok, 0, Settings{Weights: AutoDiagonal}},
		{"BatchDiagonal", itCircle{}, ok, 0, Settings{Weights: BatchDiagonal}},
		{"Diag length", itCircle{}, ok, 0, Settings{Weights: Diagonal, Diag: []float64{1, 2, 3}}},
		{"Diag zero", itCircle{}, ok, 0, Settings{Weights: Diagonal, Diag: []float64{1, 0}}},
		{"Diag with Identity", itCircle{}, ok, 0, Settings{Diag: []float64{1, 1}}},
		{"negative Tol", itCircle{}, ok, 0, Settings{Tol: -1}},
		{"negative Reg", itCircle{}, ok, 0, Settings{Reg: -1}},
		{"PathSparse without Sparse", itCircle{}, ok, 0, Settings{Path: PathSparse}},
	}
	for _, test := range news {
		var (
			p   *Interior
			err error
		)
		require.NotPanics(t, func() { p, err = NewInterior(test.c, test.b, test.margin, test.s) }, test.name)
		assert.Error(t, err, test.name)
		assert.Nil(t, p, test.name)
	}

	// Accepted: MinDepth 1, Diagonal weights, a margin, a pinned and a
	// one-sided bound.
	for _, s := range []Settings{{MinDepth: 1}, {Weights: Diagonal, Diag: []float64{1, 2}}} {
		_, err := NewInterior(itCircle{}, Box{Lo: []float64{0.5, 0.5}, Hi: []float64{inf, 0.5}}, 1e-3, s)
		assert.NoError(t, err)
	}

	p := itNew(t, itSystem{}, itSystemBox(), Settings{})
	nx, ny := p.Dims()
	assert.Equal(t, 1, nx)
	assert.Equal(t, 5, ny)
	x := mat.NewDense(2, 1, []float64{1, 1})
	good := mat.NewDense(2, 5, nil)
	nanY := mat.NewDense(2, 5, nil)
	nanY.Set(1, 2, nan)
	infY := mat.NewDense(2, 5, nil)
	infY.Set(0, 0, -inf)
	nanX := mat.NewDense(2, 1, []float64{1, nan})
	projects := []struct {
		name    string
		x, yhat *mat.Dense
	}{
		{"nil ŷ", x, nil},
		{"columns", x, mat.NewDense(2, 4, nil)},
		{"x rows", mat.NewDense(3, 1, nil), good},
		{"x columns", mat.NewDense(2, 2, nil), good},
		{"nil x", nil, good},
		{"NaN in ŷ", x, nanY},
		{"Inf in ŷ", x, infY},
		{"NaN in x", nanX, good},
	}
	for _, test := range projects {
		var (
			y   *mat.Dense
			err error
		)
		require.NotPanics(t, func() { y, _, err = p.Project(test.x, test.yhat) }, test.name)
		assert.Error(t, err, test.name)
		assert.Nil(t, y, test.name)
		if test.yhat != nil {
			r, c := test.yhat.Dims()
			dst := mat.NewDense(r, c, nil)
			require.NotPanics(t, func() { _, err = p.ProjectTo(dst, test.x, test.yhat) }, test.name)
			assert.Error(t, err, "ProjectTo: %s", test.name)
		}
	}
	_, err = p.ProjectTo(nil, x, good)
	assert.Error(t, err, "nil dst")
	_, err = p.ProjectTo(mat.NewDense(3, 5, nil), x, good)
	assert.Error(t, err, "dst rows")
	_, err = p.ProjectTo(mat.NewDense(2, 4, nil), x, good)
	assert.Error(t, err, "dst columns")
}

// TestInteriorDiagonal: a variable with a large weight W (small W⁻¹)
// moves much less than with Identity weights, and Settings reports the
// weights.
func TestInteriorDiagonal(t *testing.T) {
	inf := math.Inf(1)
	b := Box{Lo: []float64{0, -inf}, Hi: []float64{2, inf}}
	yhat := mat.NewDense(2, 2, []float64{0.6, 1.2, 0.5, 0.1})
	id := itNew(t, itCircle{}, b, Settings{})
	heavy := itNew(t, itCircle{}, b, Settings{Weights: Diagonal, Diag: []float64{1e6, 1}})
	assert.Equal(t, []float64{1e6, 1}, heavy.Settings().Diag)
	assert.Equal(t, Diagonal, heavy.Settings().Weights)
	yi, st, err := id.Project(nil, yhat)
	require.NoError(t, err)
	require.Nil(t, st.Missed)
	yd, st, err := heavy.Project(nil, yhat)
	require.NoError(t, err)
	require.Nil(t, st.Missed)
	for r := range 2 {
		assert.LessOrEqual(t, itRowResidual(itCircle{}, nil, yd, r), DefaultTol)
		mi := math.Abs(yi.At(r, 0) - yhat.At(r, 0))
		md := math.Abs(yd.At(r, 0) - yhat.At(r, 0))
		assert.Greater(t, mi, 0.05, "row %d: Identity moves y₀", r)
		assert.Less(t, md, 1e-3*mi, "row %d: the heavy y₀ hardly moves", r)
		assert.InDelta(t, math.Sqrt(1-yhat.At(r, 0)*yhat.At(r, 0)), yd.At(r, 1), 1e-3, "row %d: y₁ takes up the residual", r)
	}
	itAssertInBox(t, b, yd, "diagonal")

	// Settings returns a copy.
	s := heavy.Settings()
	s.Diag[0] = 7
	assert.Equal(t, 1e6, heavy.Settings().Diag[0])
}

// TestInteriorBatchIndependence: each row's projection does not depend on
// the batch nor on the number of workers: a batch of 64 rows at
// GOMAXPROCS ≥ 4 gives, bit for bit, each row's projection alone, and so
// do concurrent calls on one Interior.
func TestInteriorBatchIndependence(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(4, runtime.GOMAXPROCS(0))))
	b := itSystemBox()
	p := itNew(t, itSystem{}, b, Settings{})
	rnd := rand.New(rand.NewPCG(31, 32))
	const rows = 64
	x := mat.NewDense(rows, 1, ctRandVec(rnd, rows, 1, 2))
	yhat := randDense(rnd, rows, 5, 1.5)
	y, st, err := p.Project(x, yhat)
	require.NoError(t, err)
	require.Equal(t, rows, st.Samples)
	assert.Nil(t, st.Missed)
	var depth int
	for r := range rows {
		alone, ast, err := p.Project(mat.NewDense(1, 1, []float64{x.At(r, 0)}), mat.NewDense(1, 5, append([]float64(nil), yhat.RawRowView(r)...)))
		require.NoError(t, err)
		assert.Equal(t, alone.RawRowView(0), y.RawRowView(r), "row %d", r)
		depth = max(depth, ast.Depth)
	}
	assert.Equal(t, depth, st.Depth)

	var wg sync.WaitGroup
	got := make([]*mat.Dense, 6)
	for i := range got {
		wg.Go(func() {
			y, _, err := p.Project(x, yhat)
			assert.NoError(t, err)
			got[i] = y
		})
	}
	wg.Wait()
	for i, g := range got {
		assert.Equal(t, y, g, "concurrent call %d", i)
	}
}

// TestInteriorLinear projects onto a Linear constraint, whose constant
// Jacobian Interior must not let its step's AdaNP factor once (with
// unscaled weights): from a start next to a bound that y₀ should not
// approach, it converges in a few steps, y₀ hardly moves, and the result
// is that of the same constraint written by hand.
func TestInteriorLinear(t *testing.T) {
	inf := math.Inf(1)
	b := Box{Lo: []float64{0, 0, -1, -inf}, Hi: []float64{1, 10, 5, inf}}
	l := itLinear(t)
	pl := itNew(t, l, b, Settings{Tol: 1e-10})
	ph := itNew(t, itLinearHand{}, b, Settings{Tol: 1e-10})
	x := mat.NewDense(4, 1, []float64{2, 1.5, 0.3, 2.5})
	yhat := mat.NewDense(4, 4, []float64{
		0.999, 0.5, 0.3, 0.1,
		0.5, 0.5, 0.5, 0.5,
		-1, 20, 7, 0,
		0.9999, 0.2, 4.99, -3,
	})
	yl, st, err := pl.Project(x, yhat)
	require.NoError(t, err)
	assert.Nil(t, st.Missed)
	assert.LessOrEqual(t, st.Depth, 15)
	assert.LessOrEqual(t, maxResidual(l, x, yl), 1e-10)
	itAssertInBox(t, b, yl, "linear")
	assert.InDelta(t, 0.999, yl.At(0, 0), 1e-3, "y₀ near its bound hardly moves")
	assert.InDelta(t, 0.9999, yl.At(3, 0), 1e-3, "y₀ near its bound hardly moves")

	yh, sth, err := ph.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, sth.Depth, st.Depth)
	for r := range 4 {
		for k := range 4 {
			assert.InDelta(t, yh.At(r, k), yl.At(r, k), 1e-9, "row %d y[%d]", r, k)
		}
	}

	// Random batches.
	rnd := rand.New(rand.NewPCG(41, 42))
	const rows = 30
	x = mat.NewDense(rows, 1, ctRandVec(rnd, rows, 0.2, 1.8))
	yhat = randDense(rnd, rows, 4, 2)
	yl, st, err = pl.Project(x, yhat)
	require.NoError(t, err)
	assert.Nil(t, st.Missed)
	assert.LessOrEqual(t, maxResidual(l, x, yl), 1e-10)
	itAssertInBox(t, b, yl, "linear random")
}

// TestInteriorHugeAndTinyBoxes: bounds so large that the margin rounds
// away, and a box two ulps wide, still give outputs strictly inside; a box
// with no number strictly inside is an error.
func TestInteriorHugeAndTinyBoxes(t *testing.T) {
	inf := math.Inf(1)
	for _, b := range []Box{
		{Lo: []float64{1e20, -inf}, Hi: []float64{2e20, inf}},
		{Lo: []float64{-inf, 1e20}, Hi: []float64{inf, inf}},
		{Lo: []float64{1, -inf}, Hi: []float64{math.Nextafter(math.Nextafter(1, 2), 2), inf}},
	} {
		p, err := NewInterior(itSum{3}, b, 0, Settings{MaxDepth: 5})
		require.NoError(t, err)
		y, _, err := p.Project(nil, mat.NewDense(1, 2, []float64{0, 0}))
		require.NoError(t, err)
		for k, v := range y.RawRowView(0) {
			assert.True(t, b.Lo[k] < v && v < b.Hi[k], "box %v: y[%d] = %v", b, k, v)
		}
	}
	_, err := NewInterior(itSum{3}, Box{Lo: []float64{1, 0}, Hi: []float64{math.Nextafter(1, 2), 1}}, 0, Settings{})
	assert.ErrorContains(t, err, "strictly between")
}

// TestInteriorStepsDecreaseResidual checks the doc's promise that every
// step decreases ‖c‖ and keeps y strictly inside: the residual after k
// steps (MaxDepth k, a tolerance no step meets) never grows with k.
func TestInteriorStepsDecreaseResidual(t *testing.T) {
	b := itSystemBox()
	x := mat.NewDense(1, 1, []float64{1.5})
	yhat := mat.NewDense(1, 5, []float64{5, -4, 6, -7, 10})
	c := make([]float64, 2)
	prev := math.Inf(1)
	for k := 1; k <= 8; k++ {
		p := itNew(t, itSystem{}, b, Settings{Tol: 1e-300, MaxDepth: k})
		y, _, err := p.Project(x, yhat)
		require.NoError(t, err)
		itAssertInBox(t, b, y, fmt.Sprintf("%d steps", k))
		itSystem{}.Eval(x.RawRowView(0), y.RawRowView(0), c, nil)
		r := c[0]*c[0] + c[1]*c[1]
		assert.LessOrEqual(t, r, prev, "%d steps", k)
		prev = r
	}
}
