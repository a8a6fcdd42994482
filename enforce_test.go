package enforce

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The test constraints below implement Constraint and Capabilities directly, so that
// the projection is tested independently of the constructors.

// npAffine is c = C·y − R·x.
type npAffine struct {
	nx, ny, nc int
	C, R       []float64
}

func newNPAffine(rnd *rand.Rand, nx, ny, nc int) *npAffine {
	a := &npAffine{nx: nx, ny: ny, nc: nc, C: make([]float64, nc*ny), R: make([]float64, nc*nx)}
	for i := range a.C {
		a.C[i] = rnd.NormFloat64()
	}
	for i := range a.R {
		a.R[i] = rnd.NormFloat64()
	}
	return a
}

func (a *npAffine) Dims() (int, int, int) { return a.nx, a.ny, a.nc }
func (a *npAffine) Eval(x, y, c, jy []float64) {
	for i := 0; i < a.nc; i++ {
		s := floats.Dot(a.C[i*a.ny:(i+1)*a.ny], y)
		if a.nx > 0 {
			s -= floats.Dot(a.R[i*a.nx:(i+1)*a.nx], x)
		}
		c[i] = s
	}
	if jy != nil {
		copy(jy, a.C)
	}
}
func (a *npAffine) JacobianX(x, y, jx []float64) {
	for i, v := range a.R {
		jx[i] = -v
	}
}
func (a *npAffine) HessVec(x, y, w, v, out []float64) { clear(out) }
func (a *npAffine) Capabilities() Capabilities {
	return Capabilities{JacobianX: a.JacobianX, HessVec: a.HessVec, MixedHessVec: a.MixedHessVec}
}
func (a *npAffine) MixedHessVec(x, y, w, v, out []float64) { clear(out) }

// npConstAffine is npAffine advertising its constant Jacobian.
type npConstAffine struct{ *npAffine }

func (a npConstAffine) Capabilities() Capabilities {
	k := a.npAffine.Capabilities()
	k.ConstantJacobian = a.C
	return k
}

// npQuad is c_i = yᵀA_i·y + b_iᵀy + (e_iᵀy)(f_iᵀx) + d_i − x_i³ with nx = nc:
// nonlinear in y, with a Jacobian that depends on x.
type npQuad struct {
	ny, nc     int
	A          [][]float64 // symmetric ny×ny
	b, e, f, d [][]float64
}

func newNPQuad(rnd *rand.Rand, ny, nc int, scale float64) *npQuad {
	q := &npQuad{ny: ny, nc: nc}
	vec := func(n int, s float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = s * rnd.NormFloat64()
		}
		return v
	}
	for i := 0; i < nc; i++ {
		a := vec(ny*ny, scale/math.Sqrt(float64(ny)))
		for r := 0; r < ny; r++ {
			for c := 0; c < r; c++ {
				a[r*ny+c] = a[c*ny+r]
			}
		}
		q.A = append(q.A, a)
		q.b = append(q.b, vec(ny, 1))
		q.e = append(q.e, vec(ny, 0.3))
		q.f = append(q.f, vec(nc, 0.3))
		q.d = append(q.d, vec(1, 0.1))
	}
	return q
}

func (q *npQuad) Dims() (int, int, int) { return q.nc, q.ny, q.nc }
func (q *npQuad) Capabilities() Capabilities {
	return Capabilities{JacobianX: q.JacobianX, HessVec: q.HessVec, MixedHessVec: q.MixedHessVec}
}
func (q *npQuad) Eval(x, y, c, jy []float64) {
	n := q.ny
	for i := 0; i < q.nc; i++ {
		ey, fx := floats.Dot(q.e[i], y), floats.Dot(q.f[i], x)
		s := floats.Dot(q.b[i], y) + ey*fx + q.d[i][0] - x[i]*x[i]*x[i]
		for r := 0; r < n; r++ {
			ay := floats.Dot(q.A[i][r*n:(r+1)*n], y)
			s += y[r] * ay
			if jy != nil {
				jy[i*n+r] = 2*ay + q.b[i][r] + q.e[i][r]*fx
			}
		}
		c[i] = s
	}
}
func (q *npQuad) JacobianX(x, y, jx []float64) {
	for i := 0; i < q.nc; i++ {
		ey := floats.Dot(q.e[i], y)
		for k := 0; k < q.nc; k++ {
			jx[i*q.nc+k] = ey * q.f[i][k]
		}
		jx[i*q.nc+i] -= 3 * x[i] * x[i]
	}
}
func (q *npQuad) HessVec(x, y, w, v, out []float64) {
	n := q.ny
	clear(out)
	for i := 0; i < q.nc; i++ {
		for r := 0; r < n; r++ {
			out[r] += 2 * w[i] * floats.Dot(q.A[i][r*n:(r+1)*n], v)
		}
	}
}
func (q *npQuad) MixedHessVec(x, y, w, v, out []float64) {
	clear(out)
	for i := 0; i < q.nc; i++ {
		ev := floats.Dot(q.e[i], v)
		for k := range out {
			out[k] += w[i] * q.f[i][k] * ev
		}
	}
}

// npFitting is the paper's fitting constraint c = (0.5·y1)² + x² + y2.
type npFitting struct{}

func (npFitting) Dims() (int, int, int) { return 1, 2, 1 }
func (npFitting) Eval(x, y, c, jy []float64) {
	c[0] = 0.25*y[0]*y[0] + x[0]*x[0] + y[1]
	if jy != nil {
		jy[0], jy[1] = 0.5*y[0], 1
	}
}
func (npFitting) JacobianX(x, y, jx []float64)         { jx[0] = 2 * x[0] }
func (npFitting) HessVec(x, y, w, v, out []float64)    { out[0], out[1] = 0.5*w[0]*v[0], 0 }
func (npFitting) MixedHessVec(x, y, w, v, o []float64) { o[0] = 0 }
func (f npFitting) Capabilities() Capabilities {
	return Capabilities{JacobianX: f.JacobianX, HessVec: f.HessVec, MixedHessVec: f.MixedHessVec}
}

// npSphere is ‖y‖² = x² (no curvature information: Eval only).
type npSphere struct{ ny int }

func (s npSphere) Dims() (int, int, int) { return 1, s.ny, 1 }
func (s npSphere) Eval(x, y, c, jy []float64) {
	c[0] = floats.Dot(y, y) - x[0]*x[0]
	if jy != nil {
		for j, v := range y {
			jy[j] = 2 * v
		}
	}
}

func randDense(rnd *rand.Rand, r, c int, scale float64) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, scale*rnd.NormFloat64())
		}
	}
	return m
}

// maxResidual recomputes max |c| over a batch.
func maxResidual(c Constraint, x, y *mat.Dense) float64 {
	_, _, nc := c.Dims()
	r, _ := y.Dims()
	cv := make([]float64, nc)
	var m float64
	for s := 0; s < r; s++ {
		var xs []float64
		if x != nil {
			xs = x.RawRowView(s)
		}
		c.Eval(xs, y.RawRowView(s), cv, nil)
		for _, v := range cv {
			m = math.Max(m, math.Abs(v))
		}
	}
	return m
}

func TestAffineOneStep(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name       string
		nx, ny, nc int
		constant   bool
		s          Settings
	}{
		{"identity", 3, 6, 3, false, Settings{}},
		{"identity-constant", 3, 6, 3, true, Settings{}},
		{"diagonal", 2, 5, 2, false, Settings{Weights: Diagonal, Diag: []float64{1, 2, 3, 4, 5}}},
		{"auto", 2, 5, 4, true, Settings{Weights: AutoDiagonal}},
		{"wide", 4, 40, 25, false, Settings{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			aff := newNPAffine(rnd, tc.nx, tc.ny, tc.nc)
			var c Constraint = aff
			if tc.constant {
				c = npConstAffine{aff}
			}
			s := tc.s
			s.MaxDepth = 1
			p, err := NewAdaNP(c, s)
			require.NoError(t, err)
			x := randDense(rnd, 50, tc.nx, 1)
			yhat := randDense(rnd, 50, tc.ny, 3)
			y, st, err := p.Project(x, yhat)
			require.NoError(t, err)
			assert.Less(t, maxResidual(c, x, y), 1e-12)
			assert.Equal(t, 1, st.Depth)
			assert.Zero(t, st.NotConverged)
			assert.Less(t, st.After.Max, 1e-12)
			assert.InDelta(t, maxResidual(c, x, yhat), st.Before.Max, 1e-12)

			// Idempotent: projecting again leaves it in place.
			y2, _, err := p.Project(x, y)
			require.NoError(t, err)
			assert.True(t, mat.EqualApprox(y, y2, 1e-12))
		})
	}
}

func TestAffineNonExpansive(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	aff := newNPAffine(rnd, 2, 8, 5)
	p, err := NewAdaNP(aff, Settings{})
	require.NoError(t, err)
	x := randDense(rnd, 1, 2, 1)
	for trial := 0; trial < 200; trial++ {
		a := randDense(rnd, 1, 8, 5)
		b := randDense(rnd, 1, 8, 5)
		pa, _, err := p.Project(x, a)
		require.NoError(t, err)
		pb, _, err := p.Project(x, b)
		require.NoError(t, err)
		var d1, d2 mat.Dense
		d1.Sub(pa, pb)
		d2.Sub(a, b)
		assert.LessOrEqual(t, mat.Norm(&d1, 2), mat.Norm(&d2, 2)*(1+1e-12))
	}
}

// jacobianByVJP returns the Jacobian ∂ỹ/∂ŷ of sample 0 using VJP on unit
// vectors.
func jacobianByVJP(t *testing.T, p *AdaNP, tr *Trace) *mat.Dense {
	_, ny := p.Dims()
	J := mat.NewDense(ny, ny, nil)
	grad := mat.NewDense(1, ny, nil)
	gy := mat.NewDense(1, ny, nil)
	for i := 0; i < ny; i++ {
		grad.Zero()
		grad.Set(0, i, 1)
		require.NoError(t, p.VJP(tr, grad, gy, nil))
		J.SetRow(i, gy.RawRowView(0))
	}
	return J
}

func TestAffineJacobianIsProjector(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	aff := newNPAffine(rnd, 2, 7, 3)
	C := mat.NewDense(3, 7, aff.C)
	// P = I − Cᵀ(CCᵀ)⁻¹C
	var cct, inv, ct, P mat.Dense
	cct.Mul(C, C.T())
	require.NoError(t, inv.Inverse(&cct))
	ct.Mul(C.T(), &inv)
	P.Mul(&ct, C)
	P.Scale(-1, &P)
	for i := 0; i < 7; i++ {
		P.Set(i, i, P.At(i, i)+1)
	}
	for _, mode := range []GradMode{Unrolled, Projector, Implicit} {
		for _, depth := range []int{1, 3} {
			p, err := NewAdaNP(aff, Settings{Grad: mode, MinDepth: depth, MaxDepth: depth})
			require.NoError(t, err)
			x := randDense(rnd, 1, 2, 1)
			yhat := randDense(rnd, 1, 7, 2)
			var tr Trace
			out := mat.NewDense(1, 7, nil)
			_, err = p.ProjectTrace(out, x, yhat, &tr)
			require.NoError(t, err)
			J := jacobianByVJP(t, p, &tr)
			assert.True(t, mat.EqualApprox(J, &P, 1e-12), "%v depth %d:\n%v", mode, depth, mat.Formatted(J))
		}
	}
}

func TestNonlinearConverges(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	quad := newNPQuad(rnd, 12, 5, 0.3)
	for _, tc := range []struct {
		name  string
		c     Constraint
		nx    int
		ny    int
		x, y0 func(s int) []float64
	}{
		{"fitting", npFitting{}, 1, 2,
			func(s int) []float64 { return []float64{-2 + 4*float64(s)/99} },
			func(s int) []float64 {
				x := -2 + 4*float64(s)/99
				y1 := 2 * math.Sin(5*x)
				return []float64{y1 + 0.05*rnd.NormFloat64(), -y1*y1/4 - x*x + 0.05*rnd.NormFloat64()}
			}},
		{"sphere", npSphere{ny: 3}, 1, 3,
			func(s int) []float64 { return []float64{1 + float64(s)/100} },
			func(s int) []float64 {
				return []float64{0.6 + 0.1*rnd.NormFloat64(), 0.6 + 0.1*rnd.NormFloat64(), 0.6 + 0.1*rnd.NormFloat64()}
			}},
		{"quadratic", quad, 5, 12,
			func(s int) []float64 {
				v := make([]float64, 5)
				for i := range v {
					v[i] = 0.2 * rnd.NormFloat64()
				}
				return v
			},
			func(s int) []float64 {
				v := make([]float64, 12)
				for i := range v {
					v[i] = 0.1 * rnd.NormFloat64()
				}
				return v
			}},
	} {
		for _, m := range []Measure{MaxAbs, MeanAbs} {
			t.Run(tc.name+"/"+m.String(), func(t *testing.T) {
				const rows = 100
				x := mat.NewDense(rows, tc.nx, nil)
				yhat := mat.NewDense(rows, tc.ny, nil)
				for s := 0; s < rows; s++ {
					x.SetRow(s, tc.x(s))
					yhat.SetRow(s, tc.y0(s))
				}
				p, err := NewAdaNP(tc.c, Settings{Tol: 1e-10, Measure: m})
				require.NoError(t, err)
				y, st, err := p.Project(x, yhat)
				require.NoError(t, err)
				require.Zero(t, st.NotConverged)
				assert.Zero(t, st.Stopped)
				assert.Zero(t, st.Clamped)
				_, _, nc := tc.c.Dims()
				bound := 1e-10
				if m == MeanAbs {
					bound *= float64(nc)
				}
				assert.LessOrEqual(t, maxResidual(tc.c, x, y), bound)
				assert.InDelta(t, maxResidual(tc.c, x, y), st.After.Max, 1e-15)
				assert.InDelta(t, maxResidual(tc.c, x, yhat), st.Before.Max, 1e-15)
				assert.Greater(t, st.Depth, 1)

				// The reported depths are true: a plain reference
				// implementation takes the same number of steps per sample
				// and lands on the same point.
				var tr Trace
				out := mat.NewDense(rows, tc.ny, nil)
				_, err = p.ProjectTrace(out, x, yhat, &tr)
				require.NoError(t, err)
				assert.True(t, mat.Equal(out, y))
				maxDepth, sum := 0, 0
				for s := 0; s < rows; s++ {
					ref, steps := npReference(tc.c, x.RawRowView(s), yhat.RawRowView(s), 1e-10, m)
					assert.Equal(t, steps, tr.Depth(s), "sample %d", s)
					assert.InDeltaSlice(t, ref, y.RawRowView(s), 1e-12)
					maxDepth = max(maxDepth, steps)
					sum += steps
				}
				assert.Equal(t, maxDepth, st.Depth)
				assert.InDelta(t, float64(sum)/rows, st.MeanDepth, 1e-12)
			})
		}
	}
}

// npReference is a direct transcription of Algorithm 1 for one sample with
// W = I, using gonum's general solver: the oracle for depth and output.
func npReference(c Constraint, x, y0 []float64, tol float64, m Measure) ([]float64, int) {
	_, ny, nc := c.Dims()
	y := mat.NewVecDense(ny, append([]float64(nil), y0...))
	cv := make([]float64, nc)
	jv := make([]float64, nc*ny)
	steps := 0
	for {
		c.Eval(x, y.RawVector().Data, cv, jv)
		if steps >= DefaultMaxDepth || (steps >= 1 && m.reduce(cv) <= tol) {
			return y.RawVector().Data, steps
		}
		B := mat.NewDense(nc, ny, jv)
		var G mat.Dense
		G.Mul(B, B.T())
		var mu mat.VecDense
		if err := mu.SolveVec(&G, mat.NewVecDense(nc, cv)); err != nil {
			panic(err)
		}
		var step mat.VecDense
		step.MulVec(B.T(), &mu)
		y.SubVec(y, &step)
		steps++
	}
}

// npLoss is ℓ = Σ a ⊙ ỹ for a fixed weight matrix a; its gradient with
// respect to ỹ is a.
func npLoss(t *testing.T, p *AdaNP, x, yhat, a *mat.Dense) float64 {
	y, _, err := p.Project(x, yhat)
	require.NoError(t, err)
	var l float64
	r, c := y.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			l += a.At(i, j) * y.At(i, j)
		}
	}
	return l
}

func TestVJPMatchesFiniteDifferences(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	quad := newNPQuad(rnd, 6, 3, 0.3)
	for _, tc := range []struct {
		name   string
		c      Constraint
		nx, ny int
		s      Settings
		exact  bool // the gradient is the derivative of the computed map
		yScale float64
	}{
		{"fitting/unrolled", npFitting{}, 1, 2, Settings{}, true, 0.3},
		{"quadratic/unrolled", quad, 3, 6, Settings{}, true, 0.2},
		{"quadratic/unrolled/diagonal", quad, 3, 6, Settings{Weights: Diagonal, Diag: []float64{1, 2, 0.5, 1, 3, 1}}, true, 0.2},
		{"quadratic/unrolled/reg", quad, 3, 6, Settings{Reg: 1e-3}, true, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			s.MinDepth, s.MaxDepth = 4, 4
			p, err := NewAdaNP(tc.c, s)
			require.NoError(t, err)
			assert.Equal(t, tc.exact, p.ExactGradient())
			const rows = 3
			x := randDense(rnd, rows, tc.nx, 0.5)
			yhat := randDense(rnd, rows, tc.ny, tc.yScale)
			a := randDense(rnd, rows, tc.ny, 1)
			npCheckVJP(t, p, x, yhat, a)
		})
	}
}

// npCheckVJP compares VJP's ŷ- and x-gradients of ℓ = Σ a ⊙ ỹ with
// central finite differences of the projection, to 1e-6 relative.
func npCheckVJP(t *testing.T, p *AdaNP, x, yhat, a *mat.Dense) {
	t.Helper()
	rows, ny := yhat.Dims()
	_, nx := x.Dims()
	var tr Trace
	_, err := p.ProjectTrace(mat.NewDense(rows, ny, nil), x, yhat, &tr)
	require.NoError(t, err)
	gy, gx := mat.NewDense(rows, ny, nil), mat.NewDense(rows, nx, nil)
	require.NoError(t, p.VJP(&tr, a, gy, gx))
	settings := &fd.Settings{Formula: fd.Central, Step: 1e-6}
	wantY := fd.Gradient(nil, func(v []float64) float64 {
		return npLoss(t, p, x, mat.NewDense(rows, ny, v), a)
	}, append([]float64(nil), yhat.RawMatrix().Data...), settings)
	wantX := fd.Gradient(nil, func(v []float64) float64 {
		return npLoss(t, p, mat.NewDense(rows, nx, v), yhat, a)
	}, append([]float64(nil), x.RawMatrix().Data...), settings)
	assert.Less(t, relErr(gy.RawMatrix().Data, wantY), 1e-6, "ŷ-gradient\n got %v\nwant %v", gy.RawMatrix().Data, wantY)
	assert.Less(t, relErr(gx.RawMatrix().Data, wantX), 1e-6, "x-gradient\n got %v\nwant %v", gx.RawMatrix().Data, wantX)
}

// relErr is ‖got − want‖∞ / max(1, ‖want‖∞).
func relErr(got, want []float64) float64 {
	var d, m float64
	for i := range want {
		d = math.Max(d, math.Abs(got[i]-want[i]))
		m = math.Max(m, math.Abs(want[i]))
	}
	return d / math.Max(1, m)
}

func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	x := randDense(rnd, 300, 4, 0.2)
	yhat := randDense(rnd, 300, 10, 0.1)
	for _, tc := range []struct {
		c Constraint
		s Settings
	}{
		{newNPQuad(rnd, 10, 4, 0.3), Settings{Tol: 1e-12, Measure: MeanAbs}},
		{randomQuadratic(t, rnd, 10, 4, 1), Settings{Tol: 1e-12, Weights: AutoDiagonal, LineSearch: true, MaxStep: 0.05}},
	} {
		p, err := NewAdaNP(tc.c, tc.s)
		require.NoError(t, err)
		run := func(procs int) (*mat.Dense, Stats, *mat.Dense) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			var tr Trace
			out := mat.NewDense(300, 10, nil)
			st, err := p.ProjectTrace(out, x, yhat, &tr)
			require.NoError(t, err)
			g := mat.NewDense(300, 10, nil)
			require.NoError(t, p.VJP(&tr, yhat, g, nil))
			return out, st, g
		}
		y1, st1, g1 := run(1)
		for _, procs := range []int{2, 3, 8} {
			y, st, g := run(procs)
			assert.True(t, mat.Equal(y1, y))
			assert.Equal(t, st1, st)
			assert.True(t, mat.Equal(g1, g))
		}
	}
}

func TestBadInput(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 14))
	aff := newNPAffine(rnd, 2, 4, 2)
	p, err := NewAdaNP(aff, Settings{})
	require.NoError(t, err)
	x := randDense(rnd, 5, 2, 1)
	yhat := randDense(rnd, 5, 4, 1)

	_, err = NewAdaNP(newNPAffine(rnd, 2, 3, 4), Settings{})
	assert.ErrorContains(t, err, "4 constraints on 3 outputs: more equations than unknowns (need nc ≤ ny)")
	_, err = NewAdaNP(nil, Settings{})
	assert.Error(t, err)
	for _, s := range []Settings{
		{Tol: -1}, {Tol: math.NaN()}, {MinDepth: 5, MaxDepth: 2}, {Reg: -1},
		{Weights: Diagonal}, {Weights: Diagonal, Diag: []float64{1, 1, 0, 1}},
		{Diag: []float64{1, 1, 1, 1}}, {Measure: 7}, {Grad: 9}, {Weights: 5},
	} {
		_, err := NewAdaNP(aff, s)
		assert.Error(t, err, "%+v", s)
	}

	_, _, err = p.Project(x, mat.NewDense(5, 3, nil))
	assert.ErrorContains(t, err, "columns")
	_, _, err = p.Project(mat.NewDense(4, 2, nil), yhat)
	assert.ErrorContains(t, err, "x is")
	_, _, err = p.Project(nil, yhat)
	assert.Error(t, err)
	_, _, err = p.Project(x, nil)
	assert.Error(t, err)
	_, err = p.ProjectTo(mat.NewDense(2, 2, nil), x, yhat)
	assert.Error(t, err)

	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		yb := mat.DenseCopyOf(yhat)
		yb.Set(3, 1, bad)
		_, _, err = p.Project(x, yb)
		assert.ErrorContains(t, err, "sample 3")
		xb := mat.DenseCopyOf(x)
		xb.Set(2, 0, bad)
		_, _, err = p.Project(xb, yhat)
		assert.ErrorContains(t, err, "sample 2")
	}

	// A constraint that is not finite at ŷ.
	ps, err := NewAdaNP(npSphere{ny: 2}, Settings{})
	require.NoError(t, err)
	_, _, err = ps.Project(mat.NewDense(1, 1, []float64{1}), mat.NewDense(1, 2, []float64{1e200, 1}))
	assert.ErrorContains(t, err, "not finite")

	var tr Trace
	_, err = p.ProjectTrace(mat.NewDense(5, 4, nil), x, yhat, &tr)
	require.NoError(t, err)
	assert.Error(t, p.VJP(&tr, mat.NewDense(5, 3, nil), nil, nil))
	assert.Error(t, p.VJP(&tr, yhat, mat.NewDense(1, 4, nil), nil))
	assert.Error(t, p.VJP(&tr, yhat, nil, mat.NewDense(5, 4, nil)))
	assert.Error(t, p.VJP(nil, yhat, nil, nil))
	other, _ := NewAdaNP(aff, Settings{})
	assert.Error(t, other.VJP(&tr, yhat, nil, nil))
	nanGrad := mat.DenseCopyOf(yhat)
	nanGrad.Set(0, 0, math.NaN())
	assert.Error(t, p.VJP(&tr, nanGrad, nil, nil))
	pn, err := NewAdaNP(npSphere{ny: 2}, Settings{})
	require.NoError(t, err)
	var trn Trace
	_, err = pn.ProjectTrace(mat.NewDense(1, 2, nil), mat.NewDense(1, 1, []float64{1}), mat.NewDense(1, 2, []float64{1, 1}), &trn)
	require.NoError(t, err)
	assert.ErrorContains(t, pn.VJP(&trn, mat.NewDense(1, 2, nil), nil, mat.NewDense(1, 1, nil)), "JacobianX")
}

// npDuplicate repeats the fitting constraint twice: its Jacobian has rank 1.
type npDuplicate struct{ npFitting }

func (npDuplicate) Dims() (int, int, int) { return 1, 3, 2 }
func (d npDuplicate) Eval(x, y, c, jy []float64) {
	var j2 []float64
	if jy != nil {
		j2 = make([]float64, 2)
	}
	d.npFitting.Eval(x, y[:2], c[:1], j2)
	c[1] = c[0]
	if jy != nil {
		jy[0], jy[1], jy[2] = j2[0], j2[1], 0
		jy[3], jy[4], jy[5] = j2[0], j2[1], 0
	}
}

func TestRankDeficientUsesClamp(t *testing.T) {
	rnd := rand.New(rand.NewPCG(15, 16))
	p, err := NewAdaNP(npDuplicate{}, Settings{})
	require.NoError(t, err)
	x := randDense(rnd, 20, 1, 1)
	yhat := randDense(rnd, 20, 3, 1)
	y, st, err := p.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, 20, st.Clamped)
	assert.True(t, allFinite(y.RawMatrix().Data))
	assert.Zero(t, st.NotConverged)
	assert.LessOrEqual(t, maxResidual(npDuplicate{}, x, y), 1e-6)
}

func TestNonConvergenceIsReported(t *testing.T) {
	rnd := rand.New(rand.NewPCG(17, 18))
	p, err := NewAdaNP(npFitting{}, Settings{MaxDepth: 1, Tol: 1e-12})
	require.NoError(t, err)
	x := randDense(rnd, 30, 1, 1)
	yhat := randDense(rnd, 30, 2, 3)
	y, st, err := p.Project(x, yhat)
	require.NoError(t, err)
	assert.Equal(t, 30, st.NotConverged)
	assert.False(t, st.Converged())
	assert.True(t, allFinite(y.RawMatrix().Data))

	// Rank loss at y = 0 of the sphere: B = 0 stops the sample, which keeps
	// a finite output.
	ps, err := NewAdaNP(npSphere{ny: 2}, Settings{})
	require.NoError(t, err)
	y, st, err = ps.Project(mat.NewDense(1, 1, []float64{1}), mat.NewDense(1, 2, nil))
	require.NoError(t, err)
	assert.Equal(t, 1, st.NotConverged)
	assert.True(t, allFinite(y.RawMatrix().Data))
}

func TestProjectDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	rnd := rand.New(rand.NewPCG(19, 20))
	quad := newNPQuad(rnd, 8, 3, 0.3)
	x := randDense(rnd, 200, 3, 0.2)
	yhat := randDense(rnd, 200, 8, 0.1)
	out := mat.NewDense(200, 8, nil)
	grad := randDense(rnd, 200, 8, 1)
	gy := mat.NewDense(200, 8, nil)
	gx := mat.NewDense(200, 3, nil)
	p, err := NewAdaNP(quad, Settings{MinDepth: 3, MaxDepth: 3})
	require.NoError(t, err)
	var tr Trace
	run := func() {
		_, err := p.ProjectTrace(out, x, yhat, &tr)
		require.NoError(t, err)
		require.NoError(t, p.VJP(&tr, grad, gy, gx))
	}
	run()
	assert.Zero(t, testing.AllocsPerRun(20, run))
}

func FuzzProject(f *testing.F) {
	f.Add(0.5, 1.0, -0.3, 0.0, uint8(0))
	f.Add(0.0, 0.0, 0.0, 0.0, uint8(1))
	f.Add(1e300, -1e300, 2.0, 1.0, uint8(2))
	f.Fuzz(func(t *testing.T, x, y1, y2, y3 float64, which uint8) {
		cs := []Constraint{npFitting{}, npSphere{ny: 2}, npDuplicate{}}
		c := cs[int(which)%len(cs)]
		_, ny, _ := c.Dims()
		p, err := NewAdaNP(c, Settings{MaxDepth: 20})
		require.NoError(t, err)
		yv := []float64{y1, y2, y3}[:ny]
		y, st, err := p.Project(mat.NewDense(1, 1, []float64{x}), mat.NewDense(1, ny, yv))
		if err != nil {
			return // non-finite input or constraint: reported, not projected
		}
		require.True(t, allFinite(y.RawMatrix().Data), "non-finite output for %v %v", x, yv)
		if st.NotConverged == 0 {
			require.LessOrEqual(t, maxResidual(c, mat.NewDense(1, 1, []float64{x}), y), DefaultTol)
		}
	})
}
