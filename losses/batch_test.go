package losses

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems"
)

// TestConstraintLossEvalBatch checks that a constraint with
// EvalBatch in its enforce.Capabilities gives, through EvalBatch, the per-sample path's
// values and gradients with respect to x and y to 1e-12 relative, for
// both penalties, in one chunk (as eval chooses) and in several.
func TestConstraintLossEvalBatch(t *testing.T) {
	p, err := problems.NewNonconvexQuadratic(30, 10, 1) // nx = 10, ny = 30, nc = 10
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		c    enforce.Constraint
	}{
		{"Quadratic", p.Equalities()},
		{"row by row", loopBatch{}},
	} {
		nx, ny, _ := tc.c.Dims()
		be := enforce.CapabilitiesOf(tc.c).EvalBatch
		require.NotNil(t, be)
		const n = 23
		x, y := randData(31, n*nx, -2, 2), randData(32, n*ny, -1, 1)
		for _, b := range builders {
			op, err := newConstraintLossOp(b.p, tc.c, 0.7)
			require.NoError(t, err)
			require.True(t, op.jx)
			per := make([]float64, n)
			gxWant, gyWant := make([]float64, n*nx), make([]float64, n*ny)
			require.NoError(t, op.evalRange(x, y, 0, n, per, gxWant, gyWant, 0.3))
			var total float64
			for _, v := range per {
				total += v
			}
			want := 0.7 * total / n
			for _, k := range []int{n, 7} {
				gx, gy := make([]float64, n*nx), make([]float64, n*ny)
				for i := range per {
					per[i] = math.NaN()
				}
				require.NoError(t, op.evalBatch(be, x, y, n, k, per, gx, gy, 0.3))
				total = 0
				for _, v := range per {
					total += v
				}
				assert.InDelta(t, 0, (0.7*total/n-want)/want, 1e-12, "%s %v chunk %d", tc.name, b.p, k)
				assertClose(t, gxWant, gx, 1e-12)
				assertClose(t, gyWant, gy, 1e-12)
			}
			v, err := op.eval(x, y, n, nil, nil, 0)
			require.NoError(t, err)
			assert.InDelta(t, 0, (v-want)/want, 1e-12, "%s %v eval", tc.name, b.p)
		}
	}

	// Errors name the sample, as on the per-sample path.
	op, err := newConstraintLossOp(norm, loopBatch{}, 1)
	require.NoError(t, err)
	x, y := randData(33, 2*20, -1, 1), randData(34, 3*20, -1, 1)
	y[3*13+1] = math.NaN()
	_, err = op.eval(x, y, 20, nil, nil, 0)
	assert.ErrorContains(t, err, "sample 13")
}

// assertClose checks got against want entrywise to tol relative to the
// largest |want|.
func assertClose(t *testing.T, want, got []float64, tol float64) {
	t.Helper()
	var scale float64
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range want {
		if !assert.InDelta(t, want[i], got[i], tol*scale, "entry %d", i) {
			return
		}
	}
}
