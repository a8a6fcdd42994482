package losses

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/diff/fd"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/gtest"
)

type builder func(c enforce.Constraint, x, y *gorgonia.Node, lambda float64) (*gorgonia.Node, error)

var builders = []struct {
	p     penalty
	build builder
}{
	{norm, Residual},
	{squaredNorm, SoftPenalty},
	{squaredHinge, HingePenalty},
	{squaredNormMeanAbs, SquaredNormMeanAbsPenalty},
}

func TestConstraintLossValues(t *testing.T) {
	const n = 7
	xv, yv := randData(1, 2*n, -1, 1), randData(2, 3*n, -1, 1)
	for _, b := range builders {
		for _, tc := range []struct {
			dt     tensor.Dtype
			lambda float64
			tol    float64
		}{
			{tensor.Float64, 1, 1e-14},
			{tensor.Float64, 0.3, 1e-14},
			{tensor.Float64, 0, 0},
			{tensor.Float32, 2.5, 1e-6},
		} {
			t.Run(b.p.String()+"/"+tc.dt.String(), func(t *testing.T) {
				g := gorgonia.NewGraph()
				x := matrixNode(g, tc.dt, "x", n, 2, xv)
				y := matrixNode(g, tc.dt, "y", n, 3, yv)
				l, err := b.build(twoCircles{}, x, y, tc.lambda)
				require.NoError(t, err)
				assert.True(t, l.IsScalar())
				assert.Equal(t, tc.dt, l.Dtype())
				m := gorgonia.NewTapeMachine(g)
				defer m.Close()
				require.NoError(t, m.RunAll())
				want := refLoss(twoCircles{}, b.p, tc.lambda, xv, yv)
				assert.InDelta(t, want, scalar(l), tc.tol*(1+want))
			})
		}
	}
}

func TestConstraintLossGradients(t *testing.T) {
	const n, upstream = 5, 3.0
	for _, b := range builders {
		for _, tc := range []struct {
			name   string
			c      enforce.Constraint
			jx     bool
			lambda float64
		}{
			{"two-circles", twoCircles{}, true, 0.7},
			{"circle-pointer", &circle{r: 1.5}, true, 2},
			{"without-jx", withoutJX{twoCircles{}}, false, 1},
			{"declines-jx", declinesJX{}, false, 1},
			{"sparse", sparseCircles{}, true, 0.7},
			{"sparse-dense-jx", sparseCircles{denseX: true}, true, 0.7},
		} {
			t.Run(b.p.String()+"/"+tc.name, func(t *testing.T) {
				nx, ny, _ := tc.c.Dims()
				xv, yv := randData(3, n*nx, -1, 1), randData(4, n*ny, -1, 1)
				g := gorgonia.NewGraph()
				x := matrixNode(g, tensor.Float64, "x", n, nx, xv)
				y := matrixNode(g, tensor.Float64, "y", n, ny, yv)
				l, err := b.build(tc.c, x, y, tc.lambda)
				require.NoError(t, err)
				assert.Equal(t, []bool{tc.jx, true}, l.Op().(gorgonia.SDOp).DiffWRT(2))
				loss, err := scale(l, upstream) // the gradient op must apply the upstream gradient
				require.NoError(t, err)
				wrt := gorgonia.Nodes{y}
				if tc.jx {
					wrt = gorgonia.Nodes{x, y}
				}
				_, err = gorgonia.Grad(loss, wrt...)
				require.NoError(t, err)
				m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(wrt...))
				defer m.Close()
				require.NoError(t, m.RunAll())
				f := func(xv, yv []float64) float64 { return upstream * refLoss(tc.c, b.p, tc.lambda, xv, yv) }
				assert.InDelta(t, f(xv, yv), scalar(loss), 1e-13)

				settings := &fd.Settings{Formula: fd.Central, Step: 1e-6}
				gy, err := y.Grad()
				require.NoError(t, err)
				wantY := fd.Gradient(nil, func(v []float64) float64 { return f(xv, v) }, yv, settings)
				assert.InDeltaSlice(t, wantY, gtest.Float64s(gy), 1e-7)
				if tc.jx {
					gx, err := x.Grad()
					require.NoError(t, err)
					wantX := fd.Gradient(nil, func(v []float64) float64 { return f(v, yv) }, xv, settings)
					assert.InDeltaSlice(t, wantX, gtest.Float64s(gx), 1e-7)
				}
			})
		}
	}
}

// TestGradientThroughNetwork differentiates a loss that mixes the
// constraint terms with gorgonia's own ops, y = tanh(w), with respect to w,
// against finite differences of whole machine runs.
func TestGradientThroughNetwork(t *testing.T) {
	const n = 4
	g := gorgonia.NewGraph()
	x := matrixNode(g, tensor.Float64, "x", n, 2, randData(5, 2*n, -1, 1))
	w := matrixNode(g, tensor.Float64, "w", n, 3, randData(6, 3*n, -1, 1))
	target := matrixNode(g, tensor.Float64, "t", n, 3, randData(7, 3*n, -1, 1))
	y, err := gorgonia.Tanh(w)
	require.NoError(t, err)
	res, err := Residual(twoCircles{}, x, y, 0.5)
	require.NoError(t, err)
	soft, err := SoftPenalty(twoCircles{}, x, y, 2)
	require.NoError(t, err)
	mse, err := MSE(y, target)
	require.NoError(t, err)
	loss, err := gorgonia.ReduceAdd(gorgonia.Nodes{res, soft, mse})
	require.NoError(t, err)
	_, err = gorgonia.Grad(loss, w)
	require.NoError(t, err)
	m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(w))
	defer m.Close()

	run := func() float64 {
		m.Reset()
		require.NoError(t, m.RunAll())
		return scalar(loss)
	}
	run()
	gw, err := w.Grad()
	require.NoError(t, err)
	got := gtest.Float64s(gw)
	wv := w.Value().Data().([]float64)
	theta := append([]float64(nil), wv...)
	want := fd.Gradient(nil, func(v []float64) float64 {
		copy(wv, v)
		return run()
	}, theta, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	assert.InDeltaSlice(t, want, got, 1e-7)
}

func TestConstraintLossAtZeroResidual(t *testing.T) {
	g := gorgonia.NewGraph()
	c := &circle{r: 1}
	x := matrixNode(g, tensor.Float64, "x", 2, 1, []float64{1, 1})
	y := matrixNode(g, tensor.Float64, "y", 2, 2, []float64{1, 0, 2, 0}) // c = 0, then c = 3
	l, err := Residual(c, x, y, 1)
	require.NoError(t, err)
	_, err = gorgonia.Grad(l, x, y)
	require.NoError(t, err)
	m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(x, y))
	defer m.Close()
	require.NoError(t, m.RunAll())
	assert.InDelta(t, 1.5, scalar(l), 1e-15)
	gy, err := y.Grad()
	require.NoError(t, err)
	gx, err := x.Grad()
	require.NoError(t, err)
	// sample 0: subgradient 0; sample 1: (1/2)·Jᵀc/|c| = (1/2)·(4, 0), (1/2)·(−2).
	assert.Equal(t, []float64{0, 0, 2, 0}, gtest.Float64s(gy))
	assert.Equal(t, []float64{0, -1}, gtest.Float64s(gx))
}

func TestConstraintLossFloat32(t *testing.T) {
	const n = 6
	xv, yv := randData(8, 2*n, -1, 1), randData(9, 3*n, -1, 1)
	for _, b := range builders {
		t.Run(b.p.String(), func(t *testing.T) {
			var vals [2]float64
			var grads [2][2][]float64
			for k, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				g := gorgonia.NewGraph()
				x := matrixNode(g, dt, "x", n, 2, xv)
				y := matrixNode(g, dt, "y", n, 3, yv)
				l, err := b.build(twoCircles{}, x, y, 0.5)
				require.NoError(t, err)
				loss, err := scale(l, 2)
				require.NoError(t, err)
				_, err = gorgonia.Grad(loss, x, y)
				require.NoError(t, err)
				m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(x, y))
				require.NoError(t, m.RunAll())
				vals[k] = scalar(loss)
				for i, node := range []*gorgonia.Node{x, y} {
					gv, err := node.Grad()
					require.NoError(t, err)
					assert.Equal(t, dt, gv.Dtype())
					grads[k][i] = gtest.Float64s(gv)
				}
				m.Close()
			}
			assert.InDelta(t, vals[0], vals[1], 1e-6*(1+vals[0]))
			assert.InDeltaSlice(t, grads[0][0], grads[1][0], 1e-5)
			assert.InDeltaSlice(t, grads[0][1], grads[1][1], 1e-5)
		})
	}
}

func TestConstraintLossWithoutJacobianX(t *testing.T) {
	for _, c := range []enforce.Constraint{withoutJX{twoCircles{}}, declinesJX{}} {
		g := gorgonia.NewGraph()
		x := matrixNode(g, tensor.Float64, "x", 3, 2, randData(1, 6, -1, 1))
		y := matrixNode(g, tensor.Float64, "y", 3, 3, randData(2, 9, -1, 1))
		l, err := Residual(c, x, y, 1)
		require.NoError(t, err)
		_, err = gorgonia.Grad(l, x)
		assert.Error(t, err, "%T: no gradient flows to x", c)
	}
}

func TestConstraintLossNonFinite(t *testing.T) {
	for _, b := range builders {
		g := gorgonia.NewGraph()
		x := matrixNode(g, tensor.Float64, "x", 2, 1, []float64{1, 1})
		y := matrixNode(g, tensor.Float64, "y", 2, 1, []float64{4, -1})
		l, err := b.build(sqrtConstraint{}, x, y, 1)
		require.NoError(t, err)
		m := gorgonia.NewTapeMachine(g)
		err = m.RunAll()
		assert.ErrorContains(t, err, "not finite")
		m.Close()
		_, err = l.Op().Do(x.Value(), y.Value())
		assert.ErrorContains(t, err, "sample 1")
	}
}

func TestConstraintLossHash(t *testing.T) {
	c1, c2 := &circle{r: 1}, &circle{r: 1}
	op := func(p penalty, c enforce.Constraint, lambda float64) *constraintLossOp {
		o, err := newConstraintLossOp(p, c, lambda)
		require.NoError(t, err)
		return o
	}
	base := op(norm, c1, 1)
	assert.Equal(t, base.Hashcode(), op(norm, c1, 1).Hashcode(), "same parameters, same hash")
	for name, other := range map[string]*constraintLossOp{
		"lambda":         op(norm, c1, 1.0000000001),
		"constraint":     op(norm, c2, 1),
		"penalty":        op(squaredNorm, c1, 1),
		"value type":     op(norm, twoCircles{}, 1),
		"no JacobianX":   op(norm, withoutJX{c1}, 1),
		"other wrapping": op(norm, withoutJX{c2}, 1),
	} {
		assert.NotEqual(t, base.Hashcode(), other.Hashcode(), name)
	}
	// Value constraints: one boxing, one identity; closures tell values apart.
	var v1, v2 enforce.Constraint = withRHS{r: func() float64 { return 1 }}, withRHS{r: func() float64 { return 2 }}
	assert.Equal(t, op(norm, v1, 1).Hashcode(), op(norm, v1, 1).Hashcode())
	assert.NotEqual(t, op(norm, v1, 1).Hashcode(), op(norm, v2, 1).Hashcode())

	gx := &constraintLossGradOp{loss: base, wrt: 0}
	gy := &constraintLossGradOp{loss: base, wrt: 1}
	assert.NotEqual(t, gx.Hashcode(), gy.Hashcode())
	assert.NotEqual(t, base.Hashcode(), gy.Hashcode())
	assert.NotEqual(t, gy.Hashcode(), (&constraintLossGradOp{loss: op(norm, c1, 2), wrt: 1}).Hashcode())
	assert.NotSame(t, base.Type(), base.Type(), "Type builds a fresh type")
	assert.NotSame(t, gy.Type(), gy.Type(), "Type builds a fresh type")
	assert.Contains(t, base.String(), "Residual")
	assert.Contains(t, gx.String(), "∂x")
}

// TestConstraintLossNodesAreDistinct checks that gorgonia does not merge
// loss nodes that differ only in λ or in the constraint instance.
func TestConstraintLossNodesAreDistinct(t *testing.T) {
	g := gorgonia.NewGraph()
	x := matrixNode(g, tensor.Float64, "x", 3, 1, []float64{1, 2, 3})
	y := matrixNode(g, tensor.Float64, "y", 3, 2, randData(1, 6, -1, 1))
	a, err := Residual(&circle{r: 1}, x, y, 1)
	require.NoError(t, err)
	b, err := Residual(&circle{r: 1}, x, y, 2)
	require.NoError(t, err)
	c, err := Residual(&circle{r: 2}, x, y, 1)
	require.NoError(t, err)
	assert.NotSame(t, a, b)
	assert.NotSame(t, a, c)
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	require.NoError(t, m.RunAll())
	assert.InDelta(t, 2*scalar(a), scalar(b), 1e-14)
	assert.NotEqual(t, scalar(a), scalar(c))
}

func TestConstraintLossLispMachine(t *testing.T) {
	const n = 4
	xv, yv := randData(11, 2*n, -1, 1), randData(12, 3*n, -1, 1)
	for _, b := range builders {
		t.Run(b.p.String(), func(t *testing.T) {
			g := gorgonia.NewGraph()
			x := matrixNode(g, tensor.Float64, "x", n, 2, xv)
			y := matrixNode(g, tensor.Float64, "y", n, 3, yv)
			l, err := b.build(twoCircles{}, x, y, 0.7)
			require.NoError(t, err)
			m := gorgonia.NewLispMachine(g)
			defer m.Close()
			require.NoError(t, m.RunAll())
			settings := &fd.Settings{Formula: fd.Central, Step: 1e-6}
			f := func(xv, yv []float64) float64 { return refLoss(twoCircles{}, b.p, 0.7, xv, yv) }
			assert.InDelta(t, f(xv, yv), scalar(l), 1e-13)
			gy, err := y.Grad()
			require.NoError(t, err)
			assert.InDeltaSlice(t, fd.Gradient(nil, func(v []float64) float64 { return f(xv, v) }, yv, settings), gtest.Float64s(gy), 1e-7)
			gx, err := x.Grad()
			require.NoError(t, err)
			assert.InDeltaSlice(t, fd.Gradient(nil, func(v []float64) float64 { return f(v, yv) }, xv, settings), gtest.Float64s(gx), 1e-7)
		})
	}
}

func TestConstraintLossErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	other := gorgonia.NewGraph()
	x := matrixNode(g, tensor.Float64, "x", 4, 2, make([]float64, 8))
	y := matrixNode(g, tensor.Float64, "y", 4, 3, make([]float64, 12))
	for _, tc := range []struct {
		name   string
		c      enforce.Constraint
		x, y   *gorgonia.Node
		lambda float64
	}{
		{"nil constraint", nil, x, y, 1},
		{"nil pointer constraint", (*circle)(nil), x, y, 1},
		{"negative lambda", twoCircles{}, x, y, -1},
		{"NaN lambda", twoCircles{}, x, y, math.NaN()},
		{"infinite lambda", twoCircles{}, x, y, math.Inf(1)},
		{"nil x", twoCircles{}, nil, y, 1},
		{"nil y", twoCircles{}, x, nil, 1},
		{"x columns", twoCircles{}, matrixNode(g, tensor.Float64, "x3", 4, 3, make([]float64, 12)), y, 1},
		{"y columns", twoCircles{}, x, matrixNode(g, tensor.Float64, "y2", 4, 2, make([]float64, 8)), 1},
		{"rows", twoCircles{}, x, matrixNode(g, tensor.Float64, "y5", 5, 3, make([]float64, 15)), 1},
		{"dtypes", twoCircles{}, x, matrixNode(g, tensor.Float32, "y32", 4, 3, make([]float64, 12)), 1},
		{"graphs", twoCircles{}, x, matrixNode(other, tensor.Float64, "yo", 4, 3, make([]float64, 12)), 1},
		{"vector y", twoCircles{}, x, gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("v")), 1},
		{"int dtype", twoCircles{}, gorgonia.NewMatrix(g, tensor.Int, gorgonia.WithShape(4, 2), gorgonia.WithName("xi")),
			gorgonia.NewMatrix(g, tensor.Int, gorgonia.WithShape(4, 3), gorgonia.WithName("yi")), 1},
	} {
		for _, b := range builders {
			t.Run(b.p.String()+"/"+tc.name, func(t *testing.T) {
				l, err := b.build(tc.c, tc.x, tc.y, tc.lambda)
				assert.Error(t, err)
				assert.Nil(t, l)
			})
		}
	}
	_, err := Residual((*circle)(nil), x, y, 1)
	assert.ErrorContains(t, err, "nil *losses.circle")
}

func TestParallelBlocks(t *testing.T) {
	for _, tc := range []struct{ n, minBlock int }{{1, 1}, {7, 10}, {103, 10}, {1000, 1}} {
		seen := make([]int32, tc.n)
		require.NoError(t, parallelBlocks(tc.n, tc.minBlock, func(lo, hi int) error {
			for i := lo; i < hi; i++ {
				seen[i]++ // blocks are disjoint, so there is no race
			}
			return nil
		}))
		for i, s := range seen {
			require.Equal(t, int32(1), s, "n=%d: sample %d", tc.n, i)
		}
	}
	err := parallelBlocks(1000, 1, func(lo, hi int) error {
		if hi > 500 {
			return fmt.Errorf("block from %d", lo)
		}
		return nil
	})
	require.Error(t, err)
	var lo int
	_, scanErr := fmt.Sscanf(err.Error(), "block from %d", &lo)
	require.NoError(t, scanErr)
	assert.LessOrEqual(t, lo, 500, "the first failing block is reported")
}

// TestConstraintLossLargeBatch runs a batch big enough to be split across
// goroutines and checks it against one serial pass.
func TestConstraintLossLargeBatch(t *testing.T) {
	const n = 3000
	xv, yv := randData(21, 2*n, -1, 1), randData(22, 3*n, -1, 1)
	op, err := newConstraintLossOp(norm, twoCircles{}, 0.5)
	require.NoError(t, err)
	require.Less(t, op.samplesPerBlock(), n/2)

	per := make([]float64, n)
	gyWant, gxWant := make([]float64, 3*n), make([]float64, 2*n)
	require.NoError(t, op.evalRange(xv, yv, 0, n, per, gxWant, gyWant, 0.25))
	var total float64
	for _, v := range per {
		total += v
	}

	gy, gx := make([]float64, 3*n), make([]float64, 2*n)
	v, err := op.eval(xv, yv, n, gx, gy, 0.25)
	require.NoError(t, err)
	assert.Equal(t, 0.5*total/n, v)
	assert.Equal(t, gyWant, gy)
	assert.Equal(t, gxWant, gx)

	bad := append([]float64(nil), yv...)
	bad[3*2500] = math.NaN()
	_, err = op.eval(xv, bad, n, nil, nil, 0)
	assert.ErrorContains(t, err, "sample 2500")
}

// TestHingePenaltyClips checks that the hinge counts only positive
// constraint values: on the data of TestConstraintLossValues, where both
// signs occur, it lies strictly between 0 and the squared norm, and it is
// 0 where every c_j ⩽ 0 and the squared norm where every c_j ⩾ 0.
func TestHingePenaltyClips(t *testing.T) {
	const n = 7
	xv, yv := randData(1, 2*n, -1, 1), randData(2, 3*n, -1, 1)
	hinge, sq := refLoss(twoCircles{}, squaredHinge, 1, xv, yv), refLoss(twoCircles{}, squaredNorm, 1, xv, yv)
	assert.Greater(t, hinge, 0.0)
	assert.Less(t, hinge, sq)

	for _, tc := range []struct {
		name string
		y    float64
		want float64
	}{{"feasible", -2, 0}, {"violated", 2, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			x := matrixNode(g, tensor.Float64, "x", 1, 1, []float64{0})
			y := matrixNode(g, tensor.Float64, "y", 1, 1, []float64{tc.y})
			l, err := HingePenalty(line{}, x, y, 1)
			require.NoError(t, err)
			m := gorgonia.NewTapeMachine(g)
			defer m.Close()
			require.NoError(t, m.RunAll())
			assert.Equal(t, tc.want, scalar(l))
		})
	}
}

// line is the inequality c(x, y) = y − x ⩽ 0.
type line struct{}

func (line) Dims() (nx, ny, nc int) { return 1, 1, 1 }

func (line) Eval(x, y, c, jy []float64) {
	c[0] = y[0] - x[0]
	if jy != nil {
		jy[0] = 1
	}
}

// TestTransposeTimesNonFinite: a Jacobian entry that is not finite is an
// error naming it, also where it meets a zero constraint value (Inf·0),
// and a finite one gives k·Jᵀc.
func TestTransposeTimesNonFinite(t *testing.T) {
	dst := make([]float64, 3)
	j := []float64{1, 2, 3, 4, 5, 6}
	require.NoError(t, transposeTimes(dst, j, []float64{1, -1}, 2))
	assert.Equal(t, []float64{-6, -6, -6}, dst)
	for _, c := range [][]float64{{1, 1}, {0, 1}, {1, 0}} {
		for _, bad := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
			j := []float64{1, 2, 3, 4, bad, 6}
			err := transposeTimes(dst, j, c, 2)
			assert.ErrorContains(t, err, "entry (1, 1)", "c %v, J₁₁ %v", c, bad)
		}
	}
}

// panicky panics in Eval on samples with y0 > 0.5 (user code gone wrong).
type panicky struct{}

func (panicky) Dims() (nx, ny, nc int) { return 1, 1, 1 }
func (panicky) Eval(x, y, c, jy []float64) {
	if y[0] > 0.5 {
		panic("user constraint failed")
	}
	c[0] = y[0] - x[0]
	if jy != nil {
		jy[0] = 1
	}
}

// TestConstraintLossUserPanic: a constraint that panics is an error of the
// op, not a crash, whether the samples are evaluated on the calling
// goroutine (few samples) or on several (many), with and without the
// gradient.
func TestConstraintLossUserPanic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{3, 20000} {
		for _, b := range builders {
			g := gorgonia.NewGraph()
			xs, ys := make([]float64, n), make([]float64, n)
			for i := range ys {
				ys[i] = float64(i) / float64(n)
			}
			x := matrixNode(g, tensor.Float64, "x", n, 1, xs)
			y := matrixNode(g, tensor.Float64, "y", n, 1, ys)
			l, err := b.build(panicky{}, x, y, 1)
			require.NoError(t, err)
			_, err = l.Op().Do(x.Value(), y.Value())
			assert.ErrorContains(t, err, "panicked", "n %d", n)
			_, err = gorgonia.Grad(l, y)
			require.NoError(t, err)
			m := gorgonia.NewTapeMachine(g)
			assert.ErrorContains(t, m.RunAll(), "panicked", "n %d, with the gradient", n)
			m.Close()
		}
	}
}
