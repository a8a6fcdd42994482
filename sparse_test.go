package enforce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// spSystem is a random sparse nonlinear test system, each row touching a
// few outputs and one input: with s_i = Σ_q e_q y_{j_q} over row i's
// pattern and k = i mod nx,
//
//	c_i(x, y) = Σ_q a_q y_{j_q} + ½β_i s_i² + γ_i x_k s_i + ρ_i x_k − t_i,
//
// so that ∂c_i/∂y_{j_q} = a_q + (β_i s_i + γ_i x_k) e_q, ∇²_yy c_i = β_i eeᵀ,
// ∂c_i/∂x_k = γ_i s_i + ρ_i and ∂²c_i/∂x_k∂y_{j_q} = γ_i e_q. It declares
// every capability, Sparse included, so that both paths can run it.
type spSystem struct {
	nx, ny, nc            int
	rowPtr, col           []int
	a, e                  []float64 // per nonzero
	beta, gamma, rho, tgt []float64 // per row
	k                     Capabilities
}

// newSPSystem returns a random system with rows of 2 to maxRow outputs,
// coefficients a of magnitude in [1, aMax].
func newSPSystem(rnd *rand.Rand, nx, ny, nc, maxRow int, aMax float64) *spSystem {
	return newSPSystemAt(rnd, 0, nx, ny, nc, maxRow, aMax)
}

// newSPSystemAt is newSPSystem whose row i touches output first+i.
func newSPSystemAt(rnd *rand.Rand, first, nx, ny, nc, maxRow int, aMax float64) *spSystem {
	s := &spSystem{nx: nx, ny: ny, nc: nc, rowPtr: []int{0}}
	for i := range nc {
		// Row i always touches output first+i (so that B tends to have
		// full row rank for nc ≤ ny) and a few others.
		seen := map[int]bool{(first + i) % ny: true}
		for range 1 + rnd.IntN(maxRow-1) {
			seen[rnd.IntN(ny)] = true
		}
		for j := range ny {
			if seen[j] {
				s.col = append(s.col, j)
				sign := 1.0
				if rnd.IntN(2) == 0 {
					sign = -1
				}
				s.a = append(s.a, sign*(1+(aMax-1)*rnd.Float64()))
				s.e = append(s.e, rnd.NormFloat64())
			}
		}
		s.rowPtr = append(s.rowPtr, len(s.col))
		s.beta = append(s.beta, 0.5*rnd.NormFloat64())
		s.gamma = append(s.gamma, 0.3*rnd.NormFloat64())
		s.rho = append(s.rho, rnd.NormFloat64())
		s.tgt = append(s.tgt, rnd.NormFloat64())
	}
	s.k = Capabilities{
		JacobianX: s.jacobianX, HessVec: s.hessVec, MixedHessVec: s.mixedHessVec,
		Sparse: &SparseJacobian{RowPtr: s.rowPtr, Col: s.col, Eval: s.evalSparse, JacobianXTVec: s.jacobianXTVec},
	}
	return s
}

func (s *spSystem) Dims() (nx, ny, nc int)     { return s.nx, s.ny, s.nc }
func (s *spSystem) Capabilities() Capabilities { return s.k }

// row returns s_i and the input index of row i.
func (s *spSystem) row(i int, y []float64) (si float64, k int) {
	for q := s.rowPtr[i]; q < s.rowPtr[i+1]; q++ {
		si += s.e[q] * y[s.col[q]]
	}
	return si, i % s.nx
}

func (s *spSystem) evalSparse(x, y, c, vals []float64) {
	for i := range s.nc {
		si, k := s.row(i, y)
		v := 0.5*s.beta[i]*si*si + s.gamma[i]*x[k]*si + s.rho[i]*x[k] - s.tgt[i]
		f := s.beta[i]*si + s.gamma[i]*x[k]
		for q := s.rowPtr[i]; q < s.rowPtr[i+1]; q++ {
			v += s.a[q] * y[s.col[q]]
			if vals != nil {
				vals[q] = s.a[q] + f*s.e[q]
			}
		}
		c[i] = v
	}
}

func (s *spSystem) Eval(x, y, c, jy []float64) {
	if jy == nil {
		s.evalSparse(x, y, c, nil)
		return
	}
	vals := make([]float64, len(s.col))
	s.evalSparse(x, y, c, vals)
	clear(jy)
	for i := range s.nc {
		for q := s.rowPtr[i]; q < s.rowPtr[i+1]; q++ {
			jy[i*s.ny+s.col[q]] = vals[q]
		}
	}
}

func (s *spSystem) jacobianX(x, y, jx []float64) {
	clear(jx)
	for i := range s.nc {
		si, k := s.row(i, y)
		jx[i*s.nx+k] = s.gamma[i]*si + s.rho[i]
	}
}

func (s *spSystem) jacobianXTVec(x, y, w, out []float64) {
	clear(out)
	for i := range s.nc {
		si, k := s.row(i, y)
		out[k] += w[i] * (s.gamma[i]*si + s.rho[i])
	}
}

func (s *spSystem) hessVec(x, y, w, v, out []float64) {
	clear(out)
	for i := range s.nc {
		ev, _ := s.row(i, v)
		f := w[i] * s.beta[i] * ev
		for q := s.rowPtr[i]; q < s.rowPtr[i+1]; q++ {
			out[s.col[q]] += f * s.e[q]
		}
	}
}

func (s *spSystem) mixedHessVec(x, y, w, v, out []float64) {
	clear(out)
	for i := range s.nc {
		ev, k := s.row(i, v)
		out[k] += w[i] * s.gamma[i] * ev
	}
}

func TestSPSystemDerivatives(t *testing.T) {
	s := newSPSystem(rand.New(rand.NewPCG(3, 4)), 3, 9, 5, 4, 3)
	ctCheckDerivatives(t, s, 5, -1, 1, -1, 1)
	rnd := rand.New(rand.NewPCG(5, 6))
	x, y, w := ctRandVec(rnd, 3, -1, 1), ctRandVec(rnd, 9, -1, 1), ctRandVec(rnd, 5, -1, 1)
	jx := make([]float64, 5*3)
	s.jacobianX(x, y, jx)
	want := make([]float64, 3)
	for i := range 5 {
		for m := range 3 {
			want[m] += jx[i*3+m] * w[i]
		}
	}
	got := make([]float64, 3)
	s.jacobianXTVec(x, y, w, got)
	ctAssertClose(t, want, got, 1e-14)
}

// spSettings are the settings variants both paths run.
var spSettings = []struct {
	name string
	set  func(*Settings, int)
}{
	{"identity", func(*Settings, int) {}},
	{"diagonal", func(s *Settings, ny int) {
		s.Weights = Diagonal
		s.Diag = make([]float64, ny)
		for j := range s.Diag {
			s.Diag[j] = 0.5 + float64(j%4)
		}
	}},
	{"auto", func(s *Settings, _ int) { s.Weights = AutoDiagonal }},
	{"linesearch+maxstep", func(s *Settings, _ int) { s.LineSearch, s.MaxStep = true, 0.7 }},
	{"auto+recompute+reg", func(s *Settings, _ int) { s.Weights, s.Recompute, s.Reg = AutoDiagonal, true, 1e-3 }},
}

// TestSparseMatchesDense projects random sparse systems with both paths,
// every weighting, globalisation and gradient mode, and compares the
// outputs, statistics and gradients (ŷ and x): equal to 1e-10.
func TestSparseMatchesDense(t *testing.T) {
	for _, mode := range []GradMode{Unrolled, Projector, Implicit, FinalProjector} {
		for _, v := range spSettings {
			t.Run(fmt.Sprintf("%v/%s", mode, v.name), func(t *testing.T) {
				rnd := rand.New(rand.NewPCG(11, uint64(len(v.name))+uint64(mode)))
				const nx, ny, nc, rows = 3, 16, 9, 4
				sys := newSPSystem(rnd, nx, ny, nc, 4, 6)
				s := Settings{Grad: mode, Tol: 1e-9}
				v.set(&s, ny)
				x := randDense(rnd, rows, nx, 0.5)
				yhat := randDense(rnd, rows, ny, 0.5)
				g := randDense(rnd, rows, ny, 1)
				var ys [2]*mat.Dense
				var sts [2]Stats
				var gys, gxs [2][]float64
				var gss [2]GradStats
				for p, path := range []Path{PathDense, PathSparse} {
					s.Path = path
					a, err := NewAdaNP(sys, s)
					require.NoError(t, err)
					require.Equal(t, path == PathSparse, a.sp != nil)
					ys[p], sts[p], err = a.Project(x, yhat)
					require.NoError(t, err)
					gys[p], gxs[p], gss[p] = gtVJP(t, a, x, yhat, g)
				}
				assert.True(t, sts[1].Converged(), "%+v", sts[1])
				assert.Equal(t, sts[0].Depth, sts[1].Depth)
				assert.Equal(t, sts[0].MeanDepth, sts[1].MeanDepth)
				assert.Equal(t, sts[0].NotConverged, sts[1].NotConverged)
				assert.Equal(t, sts[0].Clamped, sts[1].Clamped)
				ctAssertClose(t, ys[0].RawMatrix().Data, ys[1].RawMatrix().Data, 1e-10, "ỹ")
				ctAssertClose(t, gys[0], gys[1], 1e-10, "∂ℓ/∂ŷ")
				ctAssertClose(t, gxs[0], gxs[1], 1e-10, "∂ℓ/∂x")
				assert.Equal(t, gss[0].Inexact, gss[1].Inexact)
			})
		}
	}
}

// TestSparseUnrolledFD checks the sparse path's Unrolled gradients (ŷ and
// x) against finite differences of the computed map, for every weighting
// and globalisation variant, on random sparse systems, and with general
// Fischer–Burmeister rows (fbRowsProblem), on PathSparse and PathAugmented.
func TestSparseUnrolledFD(t *testing.T) {
	type fdCase struct {
		name       string
		c          Constraint
		x, yhat, g *mat.Dense
		s          Settings
	}
	var cases []fdCase
	for _, v := range spSettings {
		rnd := rand.New(rand.NewPCG(21, uint64(len(v.name))))
		const nx, ny, nc, rows = 2, 12, 7, 2
		sys := newSPSystem(rnd, nx, ny, nc, 4, 5)
		s := Settings{MinDepth: 3, MaxDepth: 3}
		v.set(&s, ny)
		x := randDense(rnd, rows, nx, 0.5)
		yhat := randDense(rnd, rows, ny, 0.5)
		cases = append(cases, fdCase{v.name, sys, x, yhat, randDense(rnd, rows, ny, 1), s})
	}
	c, x, yhat := fbRowsProblem(t, 7, 2)
	_, ny := yhat.Dims()
	cases = append(cases, fdCase{"inequalities", c, x, yhat, randDense(rand.New(rand.NewPCG(9, 9)), 2, ny, 1), Settings{MinDepth: 3, MaxDepth: 3}})
	for _, path := range []Path{PathSparse, PathAugmented} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%v/%s", pathName(path), tc.name), func(t *testing.T) {
				s := tc.s
				s.Path = path
				a, err := NewAdaNP(tc.c, s)
				require.NoError(t, err)
				assert.True(t, a.ExactGradient())
				gy, gx, gs := gtVJP(t, a, tc.x, tc.yhat, tc.g)
				wy, wx := gtFD(t, a, tc.x, tc.yhat, tc.g)
				assert.Less(t, relErr(gy, wy), 2e-5, "ŷ-gradient\n got %v\nwant %v", gy, wy)
				assert.Less(t, relErr(gx, wx), 2e-5, "x-gradient\n got %v\nwant %v", gx, wx)
				assert.True(t, gs.Exact(), "%+v", gs)
			})
		}
	}
}

// TestSparseAffineModesFD checks every gradient mode of the sparse path
// against finite differences on a random sparse system affine in y (with
// x entering nonlinearly through ∂c/∂x), where every mode is exact:
// Gauss–Newton lands on the nearest point, which Implicit differentiates.
func TestSparseAffineModesFD(t *testing.T) {
	for _, mode := range []GradMode{Implicit, Projector, FinalProjector, Unrolled} {
		t.Run(mode.String(), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(31, uint64(mode)))
			const nx, ny, nc, rows = 2, 10, 6, 2
			sys := newSPSystem(rnd, nx, ny, nc, 4, 3)
			for i := range sys.beta {
				sys.beta[i], sys.gamma[i] = 0, 0 // affine in y
			}
			a, err := NewAdaNP(sys, Settings{Path: PathSparse, Grad: mode, Tol: 1e-12})
			require.NoError(t, err)
			x := randDense(rnd, rows, nx, 0.5)
			yhat := randDense(rnd, rows, ny, 0.5)
			g := randDense(rnd, rows, ny, 1)
			gy, gx, gs := gtVJP(t, a, x, yhat, g)
			wy, wx := gtFD(t, a, x, yhat, g)
			assert.Less(t, relErr(gy, wy), 1e-6, "ŷ-gradient")
			assert.Less(t, relErr(gx, wx), 1e-6, "x-gradient")
			// Projector and FinalProjector are exact for affine
			// constraints but, as on the dense path, never report so.
			assert.Equal(t, mode == Implicit || mode == Unrolled, gs.Exact(), "%+v", gs)
		})
	}
}

// TestSparseImplicitKKT: on a nonlinear system Gauss–Newton does not end
// at the nearest point, and the sparse path reports the Implicit gradient
// inexact, as the dense path does (TestSparseMatchesDense compares the
// two to 1e-10; Implicit's derivative of the nearest point itself is
// FD-checked on the dense path by TestImplicitIsTheNearestPointDerivative).
func TestSparseImplicitKKT(t *testing.T) {
	rnd := rand.New(rand.NewPCG(41, 1))
	const nx, ny, nc, rows = 2, 10, 5, 3
	sys := newSPSystem(rnd, nx, ny, nc, 3, 3)
	a, err := NewAdaNP(sys, Settings{Path: PathSparse, Grad: Implicit, Tol: 1e-12})
	require.NoError(t, err)
	x := randDense(rnd, rows, nx, 0.5)
	yhat := randDense(rnd, rows, ny, 0.5)
	g := randDense(rnd, rows, ny, 1)
	_, _, gs := gtVJP(t, a, x, yhat, g)
	// Gauss–Newton on a nonlinear system does not end at the nearest
	// point: the gradient is reported inexact, never silently wrong.
	assert.Equal(t, rows, gs.Samples)
	assert.Equal(t, rows, gs.Inexact)
}

// TestSparseGOMAXPROCS checks that the sparse path's results do not depend
// on the number of threads.
func TestSparseGOMAXPROCS(t *testing.T) {
	rnd := rand.New(rand.NewPCG(51, 1))
	const nx, ny, nc, rows = 2, 30, 20, 40
	sys := newSPSystem(rnd, nx, ny, nc, 4, 3)
	a, err := NewAdaNP(sys, Settings{Path: PathSparse, Weights: AutoDiagonal})
	require.NoError(t, err)
	x := randDense(rnd, rows, nx, 0.5)
	yhat := randDense(rnd, rows, ny, 0.5)
	g := randDense(rnd, rows, ny, 1)
	prev := runtime.GOMAXPROCS(1)
	y1, st1, err := a.Project(x, yhat)
	require.NoError(t, err)
	gy1, gx1, _ := gtVJP(t, a, x, yhat, g)
	runtime.GOMAXPROCS(max(prev, 4))
	y2, st2, err := a.Project(x, yhat)
	runtime.GOMAXPROCS(prev)
	require.NoError(t, err)
	gy2, gx2, _ := gtVJP(t, a, x, yhat, g)
	assert.Equal(t, y1.RawMatrix().Data, y2.RawMatrix().Data)
	assert.Equal(t, st1, st2)
	assert.Equal(t, gy1, gy2)
	assert.Equal(t, gx1, gx2)
}

// TestSparseRankDeficient projects onto a system with two identical rows:
// G is singular, the sparse factorisation retries with a larger ε, the
// sample converges and is counted in Stats.Clamped, and its gradient is
// reported inexact.
func TestSparseRankDeficient(t *testing.T) {
	rnd := rand.New(rand.NewPCG(61, 1))
	sys := newSPSystem(rnd, 1, 6, 3, 3, 2)
	// Make row 2 a copy of row 1 (same pattern, coefficients and target).
	lo1, hi1 := sys.rowPtr[1], sys.rowPtr[2]
	sys.col = append(sys.col[:sys.rowPtr[2]], sys.col[lo1:hi1]...)
	sys.a = append(sys.a[:sys.rowPtr[2]], sys.a[lo1:hi1]...)
	sys.e = append(sys.e[:sys.rowPtr[2]], sys.e[lo1:hi1]...)
	sys.rowPtr[3] = len(sys.col)
	sys.beta[2], sys.gamma[2], sys.rho[2], sys.tgt[2] = sys.beta[1], sys.gamma[1], sys.rho[1], sys.tgt[1]
	sys.k.Sparse.Col = sys.col
	a, err := NewAdaNP(sys, Settings{Path: PathSparse, Tol: 1e-8})
	require.NoError(t, err)
	x := randDense(rnd, 2, 1, 0.5)
	yhat := randDense(rnd, 2, 6, 0.5)
	_, st, err := a.Project(x, yhat)
	require.NoError(t, err)
	assert.True(t, st.Converged(), "%+v", st)
	assert.Equal(t, 2, st.Clamped)
	_, _, gs := gtVJP(t, a, x, yhat, randDense(rnd, 2, 6, 1))
	assert.Equal(t, 2, gs.Inexact)
}

// TestSparsePathErrors: a forced sparse path needs the capability (a
// hand-written constraint without it; a Func's pattern is detected); an
// unknown path is rejected; PathAuto keeps small systems dense.
func TestSparsePathErrors(t *testing.T) {
	_, err := NewAdaNP(struct{ Constraint }{gtTwo(t)}, Settings{Path: PathSparse})
	assert.ErrorContains(t, err, "Capabilities.Sparse")
	sys := newSPSystem(rand.New(rand.NewPCG(1, 1)), 1, 6, 3, 3, 2)
	_, err = NewAdaNP(sys, Settings{Path: Path(7)})
	assert.ErrorContains(t, err, "Path(7)")
	a, err := NewAdaNP(sys, Settings{Path: PathDense})
	require.NoError(t, err)
	assert.Nil(t, a.sp, "PathDense keeps a sparse constraint dense")
	for _, w := range []Weighting{BatchDiagonal, TrainableDiagonal} {
		_, err = NewAdaNP(sys, Settings{Path: PathSparse, Weights: w})
		assert.ErrorContains(t, err, "does not implement", w.String())
		a, err = NewAdaNP(sys, Settings{Weights: w})
		require.NoError(t, err, w.String())
		assert.Nil(t, a.sp, "%v weights take the dense path under PathAuto", w)
	}
}

// spPanicky panics in its sparse Eval at sample x = 7.
type spPanicky struct{ *spSystem }

func (p spPanicky) Capabilities() Capabilities {
	k := p.spSystem.Capabilities()
	sj := *k.Sparse
	sj.Eval = func(x, y, c, vals []float64) {
		if x[0] == 7 {
			panic("boom")
		}
		p.evalSparse(x, y, c, vals)
	}
	k.Sparse = &sj
	return k
}

// TestSparsePanicNamesSample: a panic in user code on the sparse path
// comes back as an error naming the sample.
func TestSparsePanicNamesSample(t *testing.T) {
	// On PathAugmented the first sample also orders K: a panic there
	// gives the structural order, and the projection reports it.
	for _, tc := range []struct {
		path   Path
		sample int
	}{{PathSparse, 1}, {PathAugmented, 0}, {PathAugmented, 1}} {
		sys := spPanicky{newSPSystem(rand.New(rand.NewPCG(1, 2)), 1, 6, 3, 3, 2)}
		a, err := NewAdaNP(sys, Settings{Path: tc.path})
		require.NoError(t, err)
		x := mat.NewDense(3, 1, []float64{0.1, 0.15, 0.2})
		x.Set(tc.sample, 0, 7)
		_, _, err = a.Project(x, mat.NewDense(3, 6, nil))
		assert.ErrorContains(t, err, fmt.Sprintf("sample %d", tc.sample), tc.path)
		assert.ErrorContains(t, err, "boom")
		// The AdaNP still works afterwards.
		x.Set(tc.sample, 0, 0.3)
		_, st, err := a.Project(x, mat.NewDense(3, 6, nil))
		require.NoError(t, err)
		assert.True(t, st.Converged())
		assert.False(t, math.IsNaN(st.After.Max))
	}
}

// TestPathAuto checks PathAuto's rule on both sides of the crossover: a
// system below 16 rows stays dense, a mesh of 100 rows goes sparse, a
// random system with a quarter of B's entries in the pattern at 128 rows
// stays dense (its factor fills in), and a pattern with more than half of
// the entries is not analysed.
func TestPathAuto(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      Constraint
		sparse bool
	}{
		{"mesh/nc=9", newSPMesh(3), true},
		{"mesh/nc=100", newSPMesh(10), true},
		{"random/nc=64", newSPSystem(rand.New(rand.NewPCG(5, 64)), 2, 128, 64, 8, 3), true},
		{"dense-ish/nc=128", newSPSystem(rand.New(rand.NewPCG(6, 128)), 2, 256, 128, 64, 3), true},
		{"full/nc=20", newSPSystem(rand.New(rand.NewPCG(6, 20)), 2, 30, 20, 100, 3), false},
	} {
		a, err := NewAdaNP(tc.c, Settings{})
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.sparse, a.sp != nil, tc.name)
		want := PathDense
		if tc.sparse {
			want = PathSparse
		}
		assert.Equal(t, want, a.Path(), "AdaNP.Path: %s", tc.name)
	}
	assert.True(t, worthAnalysing(16, 32, 256))
	assert.True(t, worthAnalysing(2, 4, 3))
	assert.False(t, worthAnalysing(20, 30, 301))
}
