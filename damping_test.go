package enforce

import (
	"math"
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
