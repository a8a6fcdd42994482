package enforce

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// f32Quadratic returns c(x, y) = yᵀA_i y + C_i·y − x_i (nx = nc) with
// A_i of entries ~ scale/√ny and C ~ N(0, 1): solvable near C⁺x, and
// large enough that Float32 forms G and evaluates in single precision.
func f32Quadratic(t *testing.T, rnd *rand.Rand, ny, nc int, scale float64) Constraint {
	t.Helper()
	A := make([]*mat.SymDense, nc)
	for i := range A {
		a := mat.NewSymDense(ny, nil)
		for r := 0; r < ny; r++ {
			for c := r; c < ny; c++ {
				a.SetSym(r, c, scale/math.Sqrt(float64(ny))*rnd.NormFloat64())
			}
		}
		A[i] = a
	}
	C := mat.NewDense(nc, ny, nil)
	for i := 0; i < nc; i++ {
		for j := 0; j < ny; j++ {
			C.Set(i, j, rnd.NormFloat64())
		}
	}
	q, err := Quadratic(nc, A, C, nil, func(x, r, jx []float64) {
		copy(r, x)
		if jx != nil {
			clear(jx)
			for i := range r {
				jx[i*len(x)+i] = 1
			}
		}
	})
	require.NoError(t, err)
	return q
}

// TestFloat32Projection checks, for the batched (EvalBatch32) and the
// per-sample path and several settings, far from the constraint set, that
// Float32 meets the tolerance in float64 arithmetic on every sample,
// lands where Float64 does (within 1e-4 in the max row sum of |Δy|; about
// 2e-5 measured) and takes at most half a step more on average (the same
// number measured).
func TestFloat32Projection(t *testing.T) {
	rnd := rand.New(rand.NewPCG(61, 62))
	q := f32Quadratic(t, rnd, 40, 24, 0.3)
	rows := 120
	x := randDense(rnd, rows, 24, 0.5)
	yhat := randDense(rnd, rows, 40, 1)
	settings := map[string]Settings{
		"default":      {},
		"mean 1e-3":    {Measure: MeanAbs, Tol: 1e-3},
		"line search":  {LineSearch: true},
		"max step":     {MaxStep: 0.5},
		"auto-diag":    {Weights: AutoDiagonal, Reg: 1e-8},
		"tol 1e-9":     {Tol: 1e-9},
		"fixed depth2": {MinDepth: 2, MaxDepth: 2, Tol: 1e-300},
	}
	for name, s := range settings {
		for _, kind := range []string{"batch", "per-sample"} {
			c := q
			if kind == "per-sample" {
				c = perSample{q}
			}
			s64, s32 := s, s
			s64.Precision, s32.Precision = Float64, Float32
			a64, err := NewAdaNP(c, s64)
			require.NoError(t, err)
			a32, err := NewAdaNP(c, s32)
			require.NoError(t, err)
			y64, st64, err := a64.Project(x, yhat)
			require.NoError(t, err, name)
			y32, st32, err := a32.Project(x, yhat)
			require.NoError(t, err, name)
			tol := a32.Settings().Tol
			// Stats come from float64 residuals: they match an independent
			// float64 check of the output.
			chk, err := a64.Check(x, y32)
			require.NoError(t, err)
			assert.InDelta(t, chk.After.Max, st32.After.Max, 1e-12*math.Max(1, chk.After.Max), "%s %s: After.Max", name, kind)
			assert.Equal(t, st64.NotConverged, st32.NotConverged, "%s %s", name, kind)
			if s.MaxDepth == 0 {
				assert.Zero(t, st32.NotConverged, "%s %s", name, kind)
				if s.Measure == MaxAbs {
					assert.LessOrEqual(t, maxResidual(q, x, y32), tol, "%s %s", name, kind)
				}
			}
			assert.LessOrEqual(t, st32.MeanDepth, st64.MeanDepth+0.5, "%s %s: depth", name, kind)
			if s.MinDepth > 0 {
				// A fixed depth counts steps only: the float64 re-evaluation
				// of the last point is not a step.
				assert.Equal(t, float64(s.MinDepth), st32.MeanDepth, "%s %s: fixed depth", name, kind)
			}
			diff := mat.NewDense(rows, 40, nil)
			diff.Sub(y32, y64)
			assert.Less(t, mat.Norm(diff, math.Inf(1)), 1e-4, "%s %s: Float32 and Float64 outputs (max row sum of |Δy|)", name, kind)
		}
	}
}

// TestFloat32Gradients checks every gradient mode of Float32 against
// Float64's: the steps differ by single-precision rounding only.
func TestFloat32Gradients(t *testing.T) {
	rnd := rand.New(rand.NewPCG(63, 64))
	q := f32Quadratic(t, rnd, 30, 20, 0.3)
	rows := 40
	x := randDense(rnd, rows, 20, 0.5)
	yhat := randDense(rnd, rows, 30, 0.5)
	grad := randDense(rnd, rows, 30, 1)
	for _, tc := range []struct {
		mode      GradMode
		recompute bool
	}{{Unrolled, false}, {Projector, false}, {Implicit, false}, {FinalProjector, false}, {Unrolled, true}, {Projector, true}} {
		mode := tc.mode
		var gys [2]*mat.Dense
		var gxs [2]*mat.Dense
		for k, p := range []Precision{Float64, Float32} {
			a, err := NewAdaNP(q, Settings{Grad: mode, Precision: p, Recompute: tc.recompute})
			require.NoError(t, err)
			var tr Trace
			out := mat.NewDense(rows, 30, nil)
			_, err = a.ProjectTrace(out, x, yhat, &tr)
			require.NoError(t, err)
			gys[k], gxs[k] = mat.NewDense(rows, 30, nil), mat.NewDense(rows, 20, nil)
			require.NoError(t, a.VJP(&tr, grad, gys[k], gxs[k]), "%v %v", mode, p)
		}
		for k, pair := range [][2]*mat.Dense{{gys[0], gys[1]}, {gxs[0], gxs[1]}} {
			d := mat.DenseCopyOf(pair[1])
			d.Sub(d, pair[0])
			rel := mat.Norm(d, 2) / mat.Norm(pair[0], 2)
			assert.Less(t, rel, 1e-3, "%v (recompute %v): relative difference of the %s-gradients", mode, tc.recompute, [2]string{"ŷ", "x"}[k])
		}
	}
}

// TestFloat32IllConditioned: two nearly dependent constraints make G
// singular in single precision; Float32 must fall back to float64 and
// agree with Float64.
func TestFloat32IllConditioned(t *testing.T) {
	rnd := rand.New(rand.NewPCG(65, 66))
	ny, nc := 30, 24
	A := make([]*mat.SymDense, nc)
	C := mat.NewDense(nc, ny, nil)
	for i := range A {
		a := mat.NewSymDense(ny, nil)
		for r := 0; r < ny; r++ {
			for c := r; c < ny; c++ {
				a.SetSym(r, c, 0.05*rnd.NormFloat64())
			}
		}
		A[i] = a
		for j := 0; j < ny; j++ {
			C.Set(i, j, rnd.NormFloat64())
		}
	}
	// Constraint 1 is constraint 0 plus 1e-6 of a perturbation.
	for j := 0; j < ny; j++ {
		C.Set(1, j, C.At(0, j)+1e-6*rnd.NormFloat64())
	}
	A[1] = mat.NewSymDense(ny, nil)
	A[1].CopySym(A[0])
	q, err := Quadratic(0, A, C, nil, nil)
	require.NoError(t, err)
	yhat := randDense(rnd, 50, ny, 0.01)
	var res [2]Stats
	var out [2]*mat.Dense
	for k, p := range []Precision{Float64, Float32} {
		a, err := NewAdaNP(q, Settings{Precision: p})
		require.NoError(t, err)
		out[k], res[k], err = a.Project(nil, yhat)
		require.NoError(t, err)
	}
	assert.Equal(t, res[0].NotConverged, res[1].NotConverged)
	assert.Equal(t, res[0].Clamped, res[1].Clamped)
	assert.LessOrEqual(t, res[1].After.Max, math.Max(res[0].After.Max, 1e-6))
	d := mat.DenseCopyOf(out[1])
	d.Sub(d, out[0])
	assert.Less(t, mat.Norm(d, math.Inf(1)), 1e-4)
}

// TestFloat32DoesNotAllocate: the Float32 step loop, batched, with its
// Unrolled VJP, allocates nothing once warm.
func TestFloat32DoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	rnd := rand.New(rand.NewPCG(67, 68))
	q := f32Quadratic(t, rnd, 40, 24, 0.3)
	x := randDense(rnd, 100, 24, 0.5)
	yhat := randDense(rnd, 100, 40, 0.5)
	grad := randDense(rnd, 100, 40, 1)
	out, gy := mat.NewDense(100, 40, nil), mat.NewDense(100, 40, nil)
	a, err := NewAdaNP(q, Settings{Precision: Float32})
	require.NoError(t, err)
	var tr Trace
	run := func() {
		_, err := a.ProjectTrace(out, x, yhat, &tr)
		require.NoError(t, err)
		require.NoError(t, a.VJP(&tr, grad, gy, nil))
	}
	run()
	assert.LessOrEqual(t, testing.AllocsPerRun(10, run), 0.0)
}

func TestPrecisionSettings(t *testing.T) {
	rnd := rand.New(rand.NewPCG(69, 70))
	q := f32Quadratic(t, rnd, 8, 3, 0.3)
	_, err := NewAdaNP(q, Settings{Precision: Precision(7)})
	assert.ErrorContains(t, err, "Precision(7)")
	for p, s := range map[Precision]string{Auto: "auto", Float64: "float64", Float32: "float32"} {
		assert.Equal(t, s, p.String())
	}
	a, err := NewAdaNP(q, Settings{})
	require.NoError(t, err)
	assert.Equal(t, Auto, a.Settings().Precision)
	// A small system: Float32 computes in float64 where single precision
	// does not pay, and gives Float64's result.
	x, yhat := randDense(rnd, 10, 3, 0.3), randDense(rnd, 10, 8, 0.3)
	y1, _, err := a.Project(x, yhat)
	require.NoError(t, err)
	b, err := NewAdaNP(perSample{q}, Settings{Precision: Float32})
	require.NoError(t, err)
	y2, _, err := b.Project(x, yhat)
	require.NoError(t, err)
	assert.True(t, floats.EqualApprox(y1.RawMatrix().Data, y2.RawMatrix().Data, 1e-12))
}

// TestFloat32OutOfRange: values beyond float32's range (3.4e38) in A or in
// ŷ must not turn into errors that Float64 does not give: Quadratic's
// single-precision methods fall back to float64 for such an A, and a
// sample whose single-precision evaluation overflows is evaluated again in
// float64.
func TestFloat32OutOfRange(t *testing.T) {
	rnd := rand.New(rand.NewPCG(71, 72))
	ny, nc := 30, 24
	A := make([]*mat.SymDense, nc)
	C := mat.NewDense(nc, ny, nil)
	for i := range A {
		A[i] = mat.NewSymDense(ny, nil)
		for j := 0; j < ny; j++ {
			C.Set(i, j, rnd.NormFloat64())
		}
	}
	A[3].SetSym(0, 1, 1e-40) // fits float64 only as a tiny value: fine
	wide, err := Quadratic(0, A, C, nil, nil)
	require.NoError(t, err)
	// C beyond float32 while A fits: the single-precision Jacobian
	// overflows where c does not.
	Cbig := mat.DenseCopyOf(C)
	Cbig.Set(2, 5, 1e39)
	bigC, err := Quadratic(0, A, Cbig, nil, nil)
	require.NoError(t, err)
	A[5].SetSym(2, 2, 1e39) // beyond float32
	huge, err := Quadratic(0, A, C, nil, nil)
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		c    Constraint
		yhat *mat.Dense
	}{
		"A beyond float32": {huge, randDense(rnd, 40, ny, 1e-20)},
		"C beyond float32": {bigC, randDense(rnd, 40, ny, 0.1)},
		"ŷ beyond float32": {wide, func() *mat.Dense {
			y := randDense(rnd, 40, ny, 0.1)
			y.Set(7, 4, 1e39)
			return y
		}()},
	} {
		var outs [2]*mat.Dense
		var sts [2]Stats
		var errs [2]error
		for k, p := range []Precision{Float64, Float32} {
			a, err := NewAdaNP(tc.c, Settings{Precision: p})
			require.NoError(t, err)
			outs[k], sts[k], errs[k] = a.Project(nil, tc.yhat)
		}
		require.Equal(t, errs[0] == nil, errs[1] == nil, "%s: Float64 error %v, Float32 error %v", name, errs[0], errs[1])
		if errs[0] != nil {
			continue
		}
		// From 1e39 the steps are inexact in either precision (rounding of
		// the huge terms), so the depths may differ; convergence may not.
		// A sample that cannot converge ends at the rounding level of its
		// terms, |c| ~ a few 1e-16·Σ_j|C_ij·y_j| ≤ 1e-14·max_s ‖ŷ_s‖₁ here
		// (|C_ij| ≲ 3), in either precision, and which of the two ends
		// lower is a matter of rounding.
		assert.Equal(t, sts[0].NotConverged, sts[1].NotConverged, name)
		rounding := 1e-14 * mat.Norm(tc.yhat, math.Inf(1))
		assert.LessOrEqual(t, sts[1].After.Max, math.Max(math.Max(sts[0].After.Max, DefaultTol), rounding), name)
	}
}

// countingEvals forwards a constraint's batched evaluations and counts the
// rows each precision evaluates.
type countingEvals struct {
	c      Constraint
	k      Capabilities
	rows64 atomic.Int64
	rows32 atomic.Int64
}

func (e *countingEvals) Dims() (int, int, int)      { return e.c.Dims() }
func (e *countingEvals) Eval(x, y, c, jy []float64) { e.c.Eval(x, y, c, jy) }
func (e *countingEvals) Capabilities() Capabilities {
	k := e.k
	k.EvalBatch = func(rows int, x, y, c, jy []float64) {
		e.rows64.Add(int64(rows))
		e.k.EvalBatch(rows, x, y, c, jy)
	}
	k.EvalBatch32 = func(rows int, x, y, c []float64, jy []float32) {
		e.rows32.Add(int64(rows))
		e.k.EvalBatch32(rows, x, y, c, jy)
	}
	return k
}

// TestFloat32AimsAtTol checks the rule of Float32 for a sample whose terms
// of c at the first iterate say single precision can reach the tolerance
// (their size·2⁻¹⁸ ≤ Tol, see floor32Bits): its single-precision steps go on until the
// single-precision residual meets Tol, and then a float64 evaluation
// checks it. With Tol = 1e-3 and starts at m₀ ≤ 262 every sample takes
// the same number of steps as in Float64 and all but a few (whose float64
// residual misses Tol and which go on in float64) are evaluated in
// float64 once; the reported residuals are float64's and meet Tol. With
// Tol = 1e-9 (beyond single precision from these starts) the last steps
// are float64 steps, as before: more float64 evaluations than samples;
// so are they for a start close to the set whose terms are large.
func TestFloat32AimsAtTol(t *testing.T) {
	rnd := rand.New(rand.NewPCG(71, 72))
	q := f32Quadratic(t, rnd, 40, 24, 0.3)
	rows := 120
	x := randDense(rnd, rows, 24, 0.5)
	yhat := randDense(rnd, rows, 40, 1)
	for _, tc := range []struct {
		tol  float64
		once bool
	}{{1e-3, true}, {1e-9, false}} {
		ce := &countingEvals{c: q, k: CapabilitiesOf(q)}
		a32, err := NewAdaNP(ce, Settings{Tol: tc.tol, Precision: Float32})
		require.NoError(t, err)
		a64, err := NewAdaNP(q, Settings{Tol: tc.tol})
		require.NoError(t, err)
		chk, err := a64.Check(x, yhat)
		require.NoError(t, err)
		require.LessOrEqual(t, math.Ldexp(chk.Before.Max, -floor32Bits), 1e-3, "every residual allows aiming at Tol 1e-3")
		y32, st32, err := a32.Project(x, yhat)
		require.NoError(t, err)
		_, st64, err := a64.Project(x, yhat)
		require.NoError(t, err)
		assert.Zero(t, st32.NotConverged, "tol %v", tc.tol)
		assert.LessOrEqual(t, maxResidual(q, x, y32), tc.tol, "tol %v", tc.tol)
		after, err := a64.Check(x, y32)
		require.NoError(t, err)
		assert.InDelta(t, after.After.Max, st32.After.Max, 1e-12*math.Max(1, after.After.Max), "tol %v: Stats from float64 residuals", tc.tol)
		assert.Equal(t, st64.MeanDepth, st32.MeanDepth, "tol %v: depth", tc.tol)
		assert.Positive(t, ce.rows32.Load(), "tol %v", tc.tol)
		if tc.once {
			// A sample whose float64 residual misses Tol after its
			// single-precision one met it (3 of 120 here) goes on in float64.
			assert.GreaterOrEqual(t, ce.rows64.Load(), int64(rows), "tol %v: a float64 evaluation per sample", tc.tol)
			assert.LessOrEqual(t, ce.rows64.Load(), int64(rows+rows/20), "tol %v: about one float64 evaluation per sample", tc.tol)
		} else {
			assert.Greater(t, ce.rows64.Load(), int64(rows), "tol %v: float64 steps", tc.tol)
		}
	}

	// A start close to the set (a float64 projection moved by about 1e-4)
	// has a small residual (max|c| 2.2e-3) but terms of c of order 10,
	// whose single-precision rounding (about 1e-6) is above Tol = 1e-7:
	// the terms' size, not the residual's, must decide, or the sample
	// takes single-precision steps that stall (3.17 steps on average
	// against Float64's 1.00 when only the residual decided).
	a64, err := NewAdaNP(q, Settings{Tol: 1e-12})
	require.NoError(t, err)
	near, _, err := a64.Project(x, yhat)
	require.NoError(t, err)
	near.Add(near, randDense(rnd, rows, 40, 1e-4))
	b64, err := NewAdaNP(q, Settings{Tol: 1e-7})
	require.NoError(t, err)
	b32, err := NewAdaNP(q, Settings{Tol: 1e-7, Precision: Float32})
	require.NoError(t, err)
	_, st64, err := b64.Project(x, near)
	require.NoError(t, err)
	y32, st32, err := b32.Project(x, near)
	require.NoError(t, err)
	assert.Zero(t, st32.NotConverged)
	assert.LessOrEqual(t, maxResidual(q, x, y32), 1e-7)
	assert.LessOrEqual(t, st32.MeanDepth, st64.MeanDepth+1, "near start: depth")
}
