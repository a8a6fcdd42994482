package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestDampingValidation(t *testing.T) {
	lin, err := Linear(0, mat.NewDense(1, 2, []float64{1, 1}), nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		c    Constraint
		s    Settings
	}{
		{"negative", gtCircle(t), Settings{Damping: -1}},
		{"infinite", gtCircle(t), Settings{Damping: math.Inf(1)}},
		{"constant Jacobian", lin, Settings{Damping: DefaultDamping}},
		{"dense float32", gtTwo(t), Settings{Damping: DefaultDamping, Precision: Float32, Path: PathDense}},
		{"batch-diagonal", gtTwo(t), Settings{Damping: DefaultDamping, Weights: BatchDiagonal}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewAdaNP(tc.c, tc.s)
			assert.Error(t, err)
		})
	}
	_, err = NewInterior(gtCircle(t), Box{Lo: []float64{-2, -2}, Hi: []float64{2, 2}}, 0, Settings{Damping: 1})
	assert.Error(t, err, "Interior does not use Damping")
}

// TestDampingFarStart: from a point where full Gauss–Newton steps run
// away (gtAtan, the case of TestGlobalisationFarFromManifold), damped
// steps converge, to a point no farther than the line search's, and θ
// falls back so that the last steps are Newton's.
func TestDampingFarStart(t *testing.T) {
	c := gtAtan(t)
	yhat := mat.NewDense(1, 2, []float64{2, 0})
	ls, err := NewAdaNP(c, Settings{LineSearch: true})
	require.NoError(t, err)
	yls, _, err := ls.Project(nil, yhat)
	require.NoError(t, err)
	dls := math.Hypot(yls.At(0, 0)-2, yls.At(0, 1))
	for _, theta := range []float64{DefaultDamping, 1e-1, 10} {
		p, err := NewAdaNP(c, Settings{Damping: theta, Tol: 1e-12})
		require.NoError(t, err)
		y, st, err := p.Project(nil, yhat)
		require.NoError(t, err)
		require.True(t, st.Converged(), "θ₀ %v: %v", theta, st)
		d := math.Hypot(y.At(0, 0)-2, y.At(0, 1))
		assert.LessOrEqual(t, d, 1.01*dls, "θ₀ %v", theta)
		assert.LessOrEqual(t, st.Depth, 30, "θ₀ %v", theta)
		t.Logf("θ₀ %v: depth %d, distance %.4g (line search %.4g)", theta, st.Depth, d, dls)
	}
}

// TestDampingSparseInequalities: Unrolled gradients through damped steps
// on the sparse path of a system with Fischer–Burmeister rows (the
// framework's bars with a bound on every joint's first coordinate) match
// finite differences, and the sparse and dense paths agree.
func TestDampingSparseInequalities(t *testing.T) {
	f := newSPFramework(3)
	_, ny, _ := f.Dims()
	rowPtr, col := []int{0}, []int{}
	for j := 0; j < ny; j += 2 {
		col = append(col, j)
		rowPtr = append(rowPtr, len(col))
	}
	bound := func(x, y, c, vals []float64) {
		for i := range c {
			c[i] = y[2*i] - 2.05
			if vals != nil {
				vals[i] = 1
			}
		}
	}
	g := &spSparseOnly{nx: 1, ny: ny, nc: ny / 2, k: Capabilities{
		HessVec:      func(x, y, w, v, out []float64) { clear(out) },
		MixedHessVec: func(x, y, w, v, out []float64) { clear(out) },
		JacobianX:    func(x, y, jx []float64) { clear(jx) },
		Sparse:       &SparseJacobian{RowPtr: rowPtr, Col: col, Eval: bound},
	}}
	c, err := WithInequalities(f, g, 1e-4)
	require.NoError(t, err)
	xs, ys := f.start(2, 0.2, 2)
	a := randDense(rand.New(rand.NewPCG(4, 4)), 2, ny, 1)
	var ref []float64
	for _, path := range []Path{PathSparse, PathDense} {
		p, err := NewAdaNP(c, Settings{Path: path, Damping: 0.05, MinDepth: 5, MaxDepth: 5})
		require.NoError(t, err)
		gy, gx, gs := gtVJP(t, p, xs, ys, a)
		wy, wx := gtFD(t, p, xs, ys, a)
		assert.Less(t, relErr(gy, wy), 2e-5, "%v ŷ-gradient", path)
		assert.Less(t, relErr(gx, wx), 2e-5, "%v x-gradient", path)
		assert.True(t, gs.Exact(), "%v %+v", path, gs)
		if ref == nil {
			ref = gy
		} else {
			assert.Less(t, relErr(gy, ref), 1e-9, "sparse and dense paths")
		}
	}
}

// spSparseOnly is a constraint given by its sparse Jacobian alone.
type spSparseOnly struct {
	nx, ny, nc int
	k          Capabilities
}

func (s *spSparseOnly) Dims() (nx, ny, nc int)     { return s.nx, s.ny, s.nc }
func (s *spSparseOnly) Capabilities() Capabilities { return s.k }
func (s *spSparseOnly) Eval(x, y, c, jy []float64) {
	sj := s.k.Sparse
	vals := make([]float64, len(sj.Col))
	sj.Eval(x, y, c, vals)
	if jy != nil {
		clear(jy)
		for i := range s.nc {
			for q := sj.RowPtr[i]; q < sj.RowPtr[i+1]; q++ {
				jy[i*s.ny+sj.Col[q]] = vals[q]
			}
		}
	}
}

// TestAdaptDampingRule pins θ's rule: a step the line search shortened
// but whose ratio ρ of actual to predicted decrease is fair leaves θ as
// it was (before 2026-12-07 it was ×4); ρ < ¼ or no predicted decrease
// multiplies it by 4; ρ > ¾ divides it by 4.
func TestAdaptDampingRule(t *testing.T) {
	// Merit ½‖c‖² = 1 at y, slope 2 and ‖Bδ‖² 2: a step of length α
	// predicts the decrease 2α − α².
	step := func(alpha, mT float64) float64 {
		st := sampleState{scalars: scalars{theta: 1, alpha: alpha, alpha0: 1, m0: 1, slope: 2, quad: 2}}
		st.adaptDamping(mT)
		return st.theta
	}
	assert.Equal(t, 1.0, step(0.25, 1-0.5*(2*0.25-0.25*0.25)), "backtracked, ρ = ½: θ unchanged")
	assert.Equal(t, 4.0, step(0.25, 1-0.1*(2*0.25-0.25*0.25)), "backtracked, ρ = 0.1: θ ×4")
	assert.Equal(t, 4.0, step(1, 1-0.2), "full step, ρ = 0.2: θ ×4")
	assert.Equal(t, 0.25, step(1, 1-0.9), "full step, ρ = 0.9: θ ÷4")
	assert.Equal(t, 0.25, step(0.5, 1-0.9*(2*0.5-0.25)), "backtracked, ρ = 0.9: θ ÷4")
	st := sampleState{scalars: scalars{theta: 1, alpha: 1, alpha0: 1, m0: 1, slope: 1, quad: 4}}
	st.adaptDamping(0.5)
	assert.Equal(t, 4.0, st.theta, "no predicted decrease: θ ×4")
}
