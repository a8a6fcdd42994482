package enforce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// lbProblem is a Linear constraint with a nonlinear RHS and a batch for it.
type lbProblem struct {
	c       Constraint
	x, yhat *mat.Dense
	grad    *mat.Dense // an upstream gradient ∂ℓ/∂ỹ
}

// lbRHS is r_i(x) = sin(x_{i mod nx}) + 0.1·i·x_0.
func lbRHS(x, r, jx []float64) {
	nx := len(x)
	for i := range r {
		r[i] = math.Sin(x[i%nx]) + 0.1*float64(i)*x[0]
	}
	if jx == nil {
		return
	}
	clear(jx)
	for i := range r {
		jx[i*nx+i%nx] += math.Cos(x[i%nx])
		jx[i*nx] += 0.1 * float64(i)
	}
}

func newLBProblem(t *testing.T, seed uint64, rows, nx, ny, nc int, scale float64, C *mat.Dense) lbProblem {
	rnd := rand.New(rand.NewPCG(seed, 3))
	if C == nil {
		C = randDense(rnd, nc, ny, 1)
	}
	c, err := Linear(nx, C, lbRHS)
	require.NoError(t, err)
	return lbProblem{c: c, x: randDense(rnd, rows, nx, 1), yhat: randDense(rnd, rows, ny, scale), grad: randDense(rnd, rows, ny, 1)}
}

// lbPair returns the AdaNP for s with the batched path (which must apply
// when want is set) and one forced onto the per-sample path.
func lbPair(t require.TestingT, c Constraint, s Settings, want bool) (batched, single *AdaNP) {
	batched, err := NewAdaNP(c, s)
	require.NoError(t, err)
	single, err = NewAdaNP(c, s)
	require.NoError(t, err)
	single.perSample = true
	if want {
		require.NotNil(t, batched.lin, "the batched path does not apply")
	}
	return batched, single
}

// lbRun is one forward pass with a trace and a VJP (with the x-gradient).
type lbRun struct {
	y, gy, gx *mat.Dense
	st        Stats
	gs        GradStats
	depth     []int
	err, gerr error
}

func lbDo(a *AdaNP, p lbProblem) lbRun {
	rows, _ := p.yhat.Dims()
	nx, ny := a.Dims()
	r := lbRun{y: mat.NewDense(rows, ny, nil), gy: mat.NewDense(rows, ny, nil), gx: mat.NewDense(rows, nx, nil)}
	var tr Trace
	r.st, r.err = a.ProjectTrace(r.y, p.x, p.yhat, &tr)
	if r.err != nil {
		return r
	}
	for s := 0; s < rows; s++ {
		r.depth = append(r.depth, tr.Depth(s))
	}
	r.gerr = a.VJP(&tr, p.grad, r.gy, r.gx)
	r.gs = tr.GradStats()
	return r
}

// lbClose asserts that two matrices agree to tol relative to each row's
// largest entry (or 1).
func lbClose(t *testing.T, want, got *mat.Dense, tol float64, what string) {
	t.Helper()
	rows, _ := want.Dims()
	for s := 0; s < rows; s++ {
		w, g := want.RawRowView(s), got.RawRowView(s)
		scale := 1.0
		for _, v := range w {
			scale = math.Max(scale, math.Abs(v))
		}
		for j := range w {
			if !(math.Abs(w[j]-g[j]) <= tol*scale) {
				t.Errorf("%s: sample %d, entry %d: per-sample %v, batched %v", what, s, j, w[j], g[j])
				return
			}
		}
	}
}

// lbCloseScalar asserts |want − got| ≤ tol·max(|want|, floor).
func lbCloseScalar(t *testing.T, want, got, tol, floor float64, what string) {
	t.Helper()
	if want == got {
		return
	}
	assert.LessOrEqual(t, math.Abs(want-got), tol*math.Max(math.Abs(want), floor), "%s: per-sample %v, batched %v", what, want, got)
}

// lbCompare asserts that the batched and per-sample passes agree: every
// decision exactly, every number to rounding.
func lbCompare(t *testing.T, want, got lbRun, resScale float64) {
	t.Helper()
	if want.err != nil || got.err != nil {
		require.Error(t, want.err)
		require.Error(t, got.err)
		assert.Equal(t, want.err.Error(), got.err.Error())
		return
	}
	const tol = 1e-12
	w, g := want.st, got.st
	assert.Equal(t, []int{w.Samples, w.Depth, w.NotConverged, w.Clamped, w.Stopped, w.Stalled},
		[]int{g.Samples, g.Depth, g.NotConverged, g.Clamped, g.Stopped, g.Stalled}, "Stats counts")
	assert.Equal(t, w.MeanDepth, g.MeanDepth, "MeanDepth")
	assert.Equal(t, want.depth, got.depth, "trace depths")
	lbCloseScalar(t, w.Before.Max, g.Before.Max, tol, resScale, "Before.Max")
	lbCloseScalar(t, w.Before.Mean, g.Before.Mean, tol, resScale, "Before.Mean")
	lbCloseScalar(t, w.After.Max, g.After.Max, tol, resScale, "After.Max")
	lbCloseScalar(t, w.After.Mean, g.After.Mean, tol, resScale, "After.Mean")
	lbCloseScalar(t, w.Displacement.Max, g.Displacement.Max, tol, 1, "Displacement.Max")
	lbCloseScalar(t, w.Displacement.Mean, g.Displacement.Mean, tol, 1, "Displacement.Mean")
	lbClose(t, want.y, got.y, tol, "ỹ")
	if want.gerr != nil || got.gerr != nil {
		require.Error(t, want.gerr)
		require.Error(t, got.gerr)
		assert.Equal(t, want.gerr.Error(), got.gerr.Error())
		return
	}
	lbClose(t, want.gy, got.gy, tol, "∂ℓ/∂ŷ")
	lbClose(t, want.gx, got.gx, tol, "∂ℓ/∂x")
	assert.Equal(t, want.gs.Samples, got.gs.Samples)
	assert.Equal(t, want.gs.Inexact, got.gs.Inexact)
	assert.Equal(t, want.gs.Amplified, got.gs.Amplified)
	lbCloseScalar(t, want.gs.MaxGain, got.gs.MaxGain, tol, 1, "MaxGain")
}

// TestLinearBatchedMatchesPerSample compares the batched path of a Linear
// constraint with the per-sample path, forward (ProjectTrace) and backward
// (VJP with x-gradients), over the settings that change what a pass
// computes.
func TestLinearBatchedMatchesPerSample(t *testing.T) {
	const rows, nx, ny, nc = 101, 3, 12, 5
	diag := make([]float64, ny)
	for j := range diag {
		diag[j] = 0.5 + float64(j%4)
	}
	for _, tc := range []struct {
		name    string
		s       Settings
		scale   float64 // of ŷ
		batched bool    // the batched path applies to the whole pass
		check   func(t *testing.T, st Stats)
	}{
		{"default", Settings{}, 1, true, nil},
		{"train", Settings{Tol: 1e-4, Measure: MeanAbs}, 1, true, nil},
		{"diagonal", Settings{Weights: Diagonal, Diag: diag}, 1, true, nil},
		{"auto-diagonal", Settings{Weights: AutoDiagonal}, 1, true, nil},
		{"reg", Settings{Reg: 0.05, Tol: 1e-9}, 1, true, nil},
		{"reg/not-converged", Settings{Reg: 0.3, MinDepth: 2, MaxDepth: 4, Tol: 1e-9}, 1, true,
			func(t *testing.T, st Stats) { assert.Equal(t, rows, st.NotConverged) }},
		{"reg/stalls", Settings{Reg: 1e4, MaxDepth: 40, Tol: 1e-9}, 1, true,
			func(t *testing.T, st Stats) { assert.Positive(t, st.Stalled); assert.Less(t, st.MeanDepth, 40.0) }},
		{"fixed-depth", Settings{MinDepth: 4, MaxDepth: 4}, 1, true, nil},
		{"tol", Settings{Tol: 1e-12}, 1, true, nil},
		{"far", Settings{Weights: Diagonal, Diag: diag}, 1e6, true, nil},
		{"float32", Settings{Precision: Float32, Reg: 0.05}, 1, true, nil},
		{"projector", Settings{Grad: Projector, Reg: 0.05}, 1, true, nil},
		{"final-projector", Settings{Grad: FinalProjector, Reg: 0.05}, 1, true, nil},
		{"implicit", Settings{Grad: Implicit}, 1, true, nil},
		{"recompute", Settings{Recompute: true, Reg: 0.05}, 1, true, nil},
		{"line-search", Settings{LineSearch: true, Reg: 0.05}, 1, true, nil}, // forward per sample, VJP batched
		{"max-step", Settings{MaxStep: 0.5}, 3, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newLBProblem(t, 41, rows, nx, ny, nc, tc.scale, nil)
			a, b := lbPair(t, p.c, tc.s, tc.batched)
			got, want := lbDo(a, p), lbDo(b, p)
			require.NoError(t, want.err)
			if tc.check != nil {
				tc.check(t, want.st)
			}
			lbCompare(t, want, got, 10*tc.scale)
		})
	}
}

// TestLinearBatchedEdgeCases compares the two paths where a pass stops
// early or fails: non-finite inputs, an RHS that panics or overflows, a
// step that overflows, and a rank-deficient C (which takes the per-sample
// path).
func TestLinearBatchedEdgeCases(t *testing.T) {
	const rows, nx, ny, nc = 60, 2, 6, 3
	t.Run("rank-deficient", func(t *testing.T) {
		rnd := rand.New(rand.NewPCG(5, 6))
		C := randDense(rnd, nc, ny, 1)
		C.SetRow(2, C.RawRowView(0))
		p := newLBProblem(t, 7, rows, nx, ny, nc, 1, C)
		a, b := lbPair(t, p.c, Settings{MaxDepth: 5}, false)
		assert.Nil(t, a.lin, "a clamped G takes the per-sample path")
		got, want := lbDo(a, p), lbDo(b, p)
		assert.Equal(t, rows, want.st.Clamped)
		lbCompare(t, want, got, 10)
	})
	for _, tc := range []struct {
		name string
		edit func(p *lbProblem)
	}{
		{"nan-yhat", func(p *lbProblem) { p.yhat.Set(50, 1, math.NaN()) }},
		{"inf-x", func(p *lbProblem) { p.x.Set(17, 0, math.Inf(1)) }},
		{"rhs-panics", func(p *lbProblem) {
			p.c = lbMust(Linear(nx, mat.DenseCopyOf(mat.NewDense(nc, ny, p.c.(*linearConstraint).c)), func(x, r, jx []float64) {
				if x[0] > 0.9 {
					panic(fmt.Sprintf("r(%v)", x[0]))
				}
				lbRHS(x, r, jx)
			}))
			p.x.Set(55, 0, 0.95)
		}},
		{"rhs-not-finite", func(p *lbProblem) {
			p.c = lbMust(Linear(nx, mat.DenseCopyOf(mat.NewDense(nc, ny, p.c.(*linearConstraint).c)), func(x, r, jx []float64) {
				lbRHS(x, r, jx)
				if x[0] > 0.9 {
					r[1] = math.Inf(-1)
				}
			}))
			p.x.Set(12, 0, 0.95)
		}},
		{"step-overflows", func(p *lbProblem) {
			// c is finite at ŷ, but the step, or the trial point, is not:
			// with C small, K = G⁻¹C is large.
			C := mat.NewDense(nc, ny, nil)
			C.Scale(0.01, mat.NewDense(nc, ny, p.c.(*linearConstraint).c))
			p.c = lbMust(Linear(nx, C, func(x, r, jx []float64) {
				lbRHS(x, r, jx)
				if x[0] > 0.9 {
					r[0] = 1e307
				}
			}))
			p.x.Set(30, 0, 0.95)
			for j := 0; j < ny; j++ {
				p.yhat.Set(4, j, math.Copysign(1.7e308, C.At(0, j)))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newLBProblem(t, 8, rows, nx, ny, nc, 1, nil)
			tc.edit(&p)
			for _, s := range []Settings{{}, {Grad: Implicit}, {LineSearch: true, Reg: 0.05}} {
				a, b := lbPair(t, p.c, s, true)
				got, want := lbDo(a, p), lbDo(b, p)
				if tc.name == "step-overflows" {
					require.NoError(t, want.err)
					assert.GreaterOrEqual(t, want.st.Stopped, 2)
				}
				lbCompare(t, want, got, 10)
				// Check takes no step: the per-sample path serves it.
				stA, errA := a.Check(p.x, p.yhat)
				stB, errB := b.Check(p.x, p.yhat)
				assert.Equal(t, errB, errA)
				assert.Equal(t, stB, stA)
			}
		})
	}
}

// TestLinearBatchedGOMAXPROCS checks that the batched path gives the same
// bits whatever GOMAXPROCS.
func TestLinearBatchedGOMAXPROCS(t *testing.T) {
	p := newLBProblem(t, 9, 203, 3, 20, 8, 1, nil)
	for _, s := range []Settings{{Reg: 0.02, Tol: 1e-10}, {Grad: FinalProjector, Weights: AutoDiagonal}} {
		a, err := NewAdaNP(p.c, s)
		require.NoError(t, err)
		require.NotNil(t, a.lin)
		var ref lbRun
		for _, procs := range []int{1, 2, 3} {
			old := runtime.GOMAXPROCS(procs)
			r := lbDo(a, p)
			runtime.GOMAXPROCS(old)
			require.NoError(t, r.err)
			require.NoError(t, r.gerr)
			if procs == 1 {
				ref = r
				continue
			}
			assert.Equal(t, ref.st, r.st, "GOMAXPROCS %d", procs)
			assert.Equal(t, ref.y.RawMatrix().Data, r.y.RawMatrix().Data, "GOMAXPROCS %d", procs)
			assert.Equal(t, ref.gy.RawMatrix().Data, r.gy.RawMatrix().Data, "GOMAXPROCS %d", procs)
			assert.Equal(t, ref.gx.RawMatrix().Data, r.gx.RawMatrix().Data, "GOMAXPROCS %d", procs)
		}
	}
}

// TestLinearBatchedFiniteDifferences checks the batched gradients, in ŷ
// and x, against central differences of the loss Σ A ⊙ ỹ.
func TestLinearBatchedFiniteDifferences(t *testing.T) {
	const rows, nx, ny, nc = 5, 2, 7, 3
	for _, s := range []Settings{{}, {Reg: 0.1, MinDepth: 3, MaxDepth: 3, Weights: AutoDiagonal}, {Grad: FinalProjector}} {
		p := newLBProblem(t, 10, rows, nx, ny, nc, 1, nil)
		a, err := NewAdaNP(p.c, s)
		require.NoError(t, err)
		require.NotNil(t, a.lin)
		gy, gx, _ := gtVJP(t, a, p.x, p.yhat, p.grad)
		fy, fx := gtFD(t, a, p.x, p.yhat, p.grad)
		assert.Less(t, relErr(gy, fy), 1e-7, "ŷ-gradient, %+v", s)
		assert.Less(t, relErr(gx, fx), 1e-7, "x-gradient, %+v", s)
	}
}

// TestLinearBatchedOpGradient checks the gradient of a graph through the
// Op of a Linear constraint, which takes the batched path, against finite
// differences.
func TestLinearBatchedOpGradient(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	c := lbMust(Linear(2, randDense(rnd, 2, 5, 1), lbRHS))
	for _, s := range []Settings{{Reg: 0.05, MinDepth: 3, MaxDepth: 3}, {Grad: FinalProjector}} {
		a, err := NewAdaNP(c, s)
		require.NoError(t, err)
		require.NotNil(t, a.lin)
		X := randDense(rnd, 4, 2, 0.4)
		A := randDense(rnd, 4, 5, 1)
		net := newOpNet(t, a, X, A, 6, 7, tensor.Float64)
		m := G.NewTapeMachine(net.g, G.BindDualValues(net.wx, net.w1, net.w2))
		require.NoError(t, m.RunAll())
		m.Close()
		for _, w := range []*G.Node{net.wx, net.w1, net.w2} {
			got := gradOf(t, w)
			w0 := append([]float64(nil), w.Value().Data().([]float64)...)
			want := fd.Gradient(nil, func(v []float64) float64 { return net.lossAt(t, w, v) }, w0,
				&fd.Settings{Formula: fd.Central, Step: 1e-6})
			assert.Less(t, relErr(got, want), 1e-6, "%v: %s\n got %v\nwant %v", s.Grad, w.Name(), got, want)
		}
	}
}

func lbMust(c Constraint, err error) Constraint {
	if err != nil {
		panic(err)
	}
	return c
}

// BenchmarkLinearBatched times the per-sample and the batched paths of a
// Linear constraint alternately in one run, at the size of the §5.3
// nonconvex-linear problem's batches: 200 samples, ny = 100, nc = 50, r(x) =
// x, with the training settings (mean|c| ≤ 1e-4). It reports the best time
// of each path over the rounds (the least disturbed by other load) and the
// ratios of the best and of the median times: measurements, not
// assertions. "forward" is ProjectTo; "forward+vjp" is ProjectTrace and
// VJP (∂ℓ/∂ŷ only, as in training).
func BenchmarkLinearBatched(b *testing.B) {
	const rows, ny, nc = 200, 100, 50
	rnd := rand.New(rand.NewPCG(1, 2))
	c := lbMust(Linear(nc, randDense(rnd, nc, ny, 1), func(x, r, jx []float64) {
		copy(r, x)
		if jx != nil {
			clear(jx)
			for i := range r {
				jx[i*len(x)+i] = 1
			}
		}
	}))
	x, yhat, grad := randDense(rnd, rows, nc, 1), randDense(rnd, rows, ny, 1), randDense(rnd, rows, ny, 1)
	for _, vjp := range []bool{false, true} {
		name := "forward"
		if vjp {
			name = "forward+vjp"
		}
		b.Run(name, func(b *testing.B) {
			s := Settings{Tol: 1e-4, Measure: MeanAbs}
			batched, single := lbPair(b, c, s, false)
			if batched.lin == nil {
				b.Fatal("the batched path does not apply")
			}
			dst, gy := mat.NewDense(rows, ny, nil), mat.NewDense(rows, ny, nil)
			var tr Trace
			run := func(a *AdaNP) {
				var err error
				if vjp {
					if _, err = a.ProjectTrace(dst, x, yhat, &tr); err == nil {
						err = a.VJP(&tr, grad, gy, nil)
					}
				} else {
					_, err = a.ProjectTo(dst, x, yhat)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			run(single) // warm-up: buffers, pools, packed operands
			run(batched)
			var old, new []float64
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				t := time.Now()
				run(single)
				old = append(old, time.Since(t).Seconds())
				t = time.Now()
				run(batched)
				new = append(new, time.Since(t).Seconds())
			}
			slices.Sort(old)
			slices.Sort(new)
			b.ReportMetric(old[0]*1e6, "per-sample-µs")
			b.ReportMetric(new[0]*1e6, "batched-µs")
			b.ReportMetric(old[0]/new[0], "best-ratio")
			b.ReportMetric(old[len(old)/2]/new[len(new)/2], "median-ratio")
		})
	}
}

// TestLinearBatchedStack checks that a Stack of Linear constraints takes
// the batched path, as the stacked system, and matches the per-sample path.
func TestLinearBatchedStack(t *testing.T) {
	const rows, nx, ny = 70, 2, 8
	rnd := rand.New(rand.NewPCG(13, 14))
	l1 := lbMust(Linear(nx, randDense(rnd, 2, ny, 1), lbRHS))
	l2 := lbMust(Linear(nx, randDense(rnd, 3, ny, 1), nil))
	l3 := lbMust(Linear(nx, randDense(rnd, 1, ny, 1), func(x, r, jx []float64) {
		r[0] = x[1] * x[1]
		if jx != nil {
			jx[0], jx[1] = 0, 2*x[1]
		}
	}))
	c := lbMust(Stack(l1, lbMust(Stack(l2, l3))))
	p := lbProblem{c: c, x: randDense(rnd, rows, nx, 1), yhat: randDense(rnd, rows, ny, 2), grad: randDense(rnd, rows, ny, 1)}
	for _, s := range []Settings{{}, {Reg: 0.05, Weights: AutoDiagonal, Tol: 1e-9}} {
		a, b := lbPair(t, c, s, true)
		lbCompare(t, lbDo(b, p), lbDo(a, p), 10)
	}
	// Against the same system as one Linear.
	C := mat.NewDense(6, ny, slices.Concat(l1.(*linearConstraint).c, l2.(*linearConstraint).c, l3.(*linearConstraint).c))
	whole := lbMust(Linear(nx, C, func(x, r, jx []float64) {
		lbRHS(x, r[:2], nil)
		clear(r[2:5])
		r[5] = x[1] * x[1]
		if jx != nil {
			clear(jx)
			lbRHS(x, make([]float64, 2), jx[:2*nx])
			jx[5*nx+1] = 2 * x[1]
		}
	}))
	a, err := NewAdaNP(whole, Settings{})
	require.NoError(t, err)
	b, err := NewAdaNP(c, Settings{})
	require.NoError(t, err)
	lbCompare(t, lbDo(a, p), lbDo(b, p), 10)
}

// TestLinearBatchedVJPStepLengths checks the batched VJP on records whose
// step lengths are not 1 (a line search's backtracked steps, which the
// forward pass of a Linear constraint hardly ever takes): the trace of a
// per-sample pass with its lengths edited goes through both VJPs.
func TestLinearBatchedVJPStepLengths(t *testing.T) {
	const rows, nx, ny, nc = 30, 2, 7, 3
	p := newLBProblem(t, 15, rows, nx, ny, nc, 1, nil)
	a, err := NewAdaNP(p.c, Settings{Reg: 0.1, LineSearch: true, MinDepth: 2, MaxDepth: 6})
	require.NoError(t, err)
	require.NotNil(t, a.lin)
	var tr Trace
	_, err = a.ProjectTrace(mat.NewDense(rows, ny, nil), p.x, p.yhat, &tr)
	require.NoError(t, err)
	for s := 0; s < rows; s++ {
		for k := 0; k < tr.Depth(s); k++ {
			tr.recs[s][k][0] = math.Ldexp(1, -(s+k)%4)
		}
	}
	grad := func(perSample bool) (gy, gx *mat.Dense, gs GradStats) {
		a.perSample = perSample
		defer func() { a.perSample = false }()
		gy, gx = mat.NewDense(rows, ny, nil), mat.NewDense(rows, nx, nil)
		require.NoError(t, a.VJP(&tr, p.grad, gy, gx))
		return gy, gx, tr.GradStats()
	}
	wy, wx, wgs := grad(true)
	gy, gx, gs := grad(false)
	lbClose(t, wy, gy, 1e-12, "∂ℓ/∂ŷ")
	lbClose(t, wx, gx, 1e-12, "∂ℓ/∂x")
	assert.Equal(t, wgs.Inexact, gs.Inexact)
	lbCloseScalar(t, wgs.MaxGain, gs.MaxGain, 1e-12, 1, "MaxGain")
}
