package losses

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
)

// linearFixture returns C·y − r(x) with nx inputs, ny outputs, nc rows and
// r(x) = x³ componentwise mixed (nil when withR is false).
func linearFixture(t testing.TB, nx, ny, nc int, seed uint64, withR bool) enforce.Constraint {
	t.Helper()
	cm := mat.NewDense(nc, ny, randData(seed, nc*ny, -1, 1))
	var r enforce.RHS
	if withR {
		r = func(x, r, jx []float64) {
			for i := range r {
				xi := x[i%len(x)]
				r[i] = xi*xi*xi + float64(i)
				if jx != nil {
					clear(jx[i*len(x) : (i+1)*len(x)])
					jx[i*len(x)+i%len(x)] = 3 * xi * xi
				}
			}
		}
	}
	c, err := enforce.Linear(nx, cm, r)
	require.NoError(t, err)
	return c
}

// evalBoth runs op.eval on the batched affine path and on the per-sample
// path, with gradients with respect to x (when the constraint has them)
// and y.
func evalBoth(t *testing.T, op *constraintLossOp, x, y []float64, n int) (v, vRef float64, gx, gxRef, gy, gyRef []float64) {
	t.Helper()
	run := func() (float64, []float64, []float64) {
		var gx []float64
		if op.jx {
			gx = make([]float64, n*op.nx)
		}
		gy := make([]float64, n*op.ny)
		v, err := op.eval(x, y, n, gx, gy, 0.7)
		require.NoError(t, err)
		v2, err := op.eval(x, y, n, nil, nil, 0)
		require.NoError(t, err)
		require.Equal(t, v, v2, "the value does not depend on the gradients asked for")
		return v, gx, gy
	}
	v, gx, gy = run()
	perSampleAffine = true
	defer func() { perSampleAffine = false }()
	vRef, gxRef, gyRef = run()
	return
}

// assertNear checks got against want to tol relative to want's largest
// entry.
func assertNear(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want))
	var scale float64
	for _, v := range want {
		scale = max(scale, math.Abs(v))
	}
	for i := range want {
		if !assert.InDelta(t, want[i], got[i], tol*scale, "%s[%d]", what, i) {
			return
		}
	}
}

// TestConstraintLossAffine checks that the batched affine path (Linear,
// a Linear without x or r, a Stack of Linears) gives the per-sample
// path's values and gradients to 1e-12 relative, for every penalty, on
// batches of one, several and many blocks of affine.Rows samples.
func TestConstraintLossAffine(t *testing.T) {
	const nx, ny = 3, 7
	l1 := linearFixture(t, nx, ny, 4, 1, true)
	l2 := linearFixture(t, nx, ny, 2, 2, false)
	st, err := enforce.Stack(l1, l2)
	require.NoError(t, err)
	noR := linearFixture(t, nx, ny, 5, 3, false)
	for _, c := range []struct {
		name string
		c    enforce.Constraint
	}{{"Linear", l1}, {"Linear r = 0", noR}, {"Stack", st}} {
		for _, b := range builders {
			for _, n := range []int{1, 5, 131} {
				t.Run(fmt.Sprintf("%s/%v/n=%d", c.name, b.p, n), func(t *testing.T) {
					op, err := newConstraintLossOp(b.p, c.c, 1.3)
					require.NoError(t, err)
					require.NotNil(t, op.aff, "the batched path applies")
					x, y := randData(4, n*nx, -2, 2), randData(5, n*ny, -2, 2)
					v, vRef, gx, gxRef, gy, gyRef := evalBoth(t, op, x, y, n)
					assert.InDelta(t, 1, v/vRef, 1e-12, "value %v, want %v", v, vRef)
					assertNear(t, gyRef, gy, 1e-12, "gy")
					assertNear(t, gxRef, gx, 1e-12, "gx")
				})
			}
		}
	}
}

// TestConstraintLossAffineGOMAXPROCS checks that the batched affine path
// gives the same bits with 1, 2 and 3 threads.
func TestConstraintLossAffineGOMAXPROCS(t *testing.T) {
	const nx, ny, n = 3, 9, 200
	op, err := newConstraintLossOp(norm, linearFixture(t, nx, ny, 5, 6, true), 1)
	require.NoError(t, err)
	x, y := randData(7, n*nx, -2, 2), randData(8, n*ny, -2, 2)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want []float64
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		gy := make([]float64, n*ny)
		v, err := op.eval(x, y, n, nil, gy, 0.5)
		require.NoError(t, err)
		got := append(gy, v)
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "GOMAXPROCS %d, entry %d", procs, i)
		}
	}
}

// TestConstraintLossAffineErrors checks that a panicking or non-finite
// r(x) is an error naming the first bad sample on the batched path.
func TestConstraintLossAffineErrors(t *testing.T) {
	const nx, ny, n = 2, 4, 150
	cm := mat.NewDense(2, ny, randData(9, 2*ny, -1, 1))
	panicky, err := enforce.Linear(nx, cm, func(x, r, _ []float64) {
		if x[0] > 100 {
			panic("r(x) fails")
		}
		r[0], r[1] = x[0], x[1]
	})
	require.NoError(t, err)
	x, y := randData(10, n*nx, -1, 1), randData(11, n*ny, -1, 1)
	for _, s := range []int{130, 60, 61} {
		x[s*nx] = 200
	}
	op, err := newConstraintLossOp(squaredNorm, panicky, 1)
	require.NoError(t, err)
	require.NotNil(t, op.aff)
	_, err = op.eval(x, y, n, nil, make([]float64, n*ny), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "panicked at sample 60: r(x) fails")

	x = randData(10, n*nx, -1, 1)
	x[77*nx+1] = math.NaN()
	_, err = op.eval(x, y, n, nil, nil, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not finite at sample 77")

	// An overflowing gradient is an error too.
	x = randData(10, n*nx, -1, 1)
	_, err = op.eval(x, y, n, nil, make([]float64, n*ny), 1e308)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "∂c/∂y at sample 0: k·Cᵀc is not finite")
}

// TestConstraintLossAffineAllocs checks that the batched affine path's
// allocations do not grow with the batch.
func TestConstraintLossAffineAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	const nx, ny = 3, 20
	op, err := newConstraintLossOp(norm, linearFixture(t, nx, ny, 6, 12, true), 1)
	require.NoError(t, err)
	allocs := func(n int) float64 {
		x, y, gy := randData(13, n*nx, -1, 1), randData(14, n*ny, -1, 1), make([]float64, n*ny)
		return testing.AllocsPerRun(20, func() {
			if _, err := op.eval(x, y, n, nil, gy, 1); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(50), allocs(500)
	assert.LessOrEqual(t, large, small, "allocations per call at 500 samples vs 50")
	assert.LessOrEqual(t, large, 4.0)
}

// TestConstraintLossAffineNotApplicable checks that the batched path is
// not taken for a Stack with a nonlinear part.
func TestConstraintLossAffineNotApplicable(t *testing.T) {
	fn, err := enforce.Func(3, 7, 1, func(x, y, c []hd.Number) { c[0] = hd.Mul(y[0], y[1]) })
	require.NoError(t, err)
	st, err := enforce.Stack(linearFixture(t, 3, 7, 2, 15, true), fn)
	require.NoError(t, err)
	op, err := newConstraintLossOp(norm, st, 1)
	require.NoError(t, err)
	assert.Nil(t, op.aff)
}

// BenchmarkConstraintLossLinear times the constraint loss and its
// y-gradient at the §5.3 nonconvex-linear size (N_O = 100, N_C = 50,
// batch 200), the per-sample and batched paths alternately.
func BenchmarkConstraintLossLinear(b *testing.B) {
	const nx, ny, nc, n = 50, 100, 50, 200
	op, err := newConstraintLossOp(norm, linearFixture(b, nx, ny, nc, 16, true), 1)
	if err != nil {
		b.Fatal(err)
	}
	x, y, gy := randData(17, n*nx, -1, 1), randData(18, n*ny, -1, 1), make([]float64, n*ny)
	for round := range 3 {
		for _, perSample := range []bool{true, false} {
			name := "batched"
			if perSample {
				name = "per-sample"
			}
			b.Run(fmt.Sprintf("%s/round=%d", name, round), func(b *testing.B) {
				perSampleAffine = perSample
				defer func() { perSampleAffine = false }()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := op.eval(x, y, n, nil, gy, 1); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
