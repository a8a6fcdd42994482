package enforce

import (
	"math"
	"math/rand/v2"
	"runtime/debug"
	"testing"

	"github.com/enforce-nn/enforce/internal/sparse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// withSupernodal makes the sparse path of AdaNPs built in fn use the
// kernel's supernodal method, which Precision Float32 needs and which its
// Auto choice takes only for large factors.
func withSupernodal(t *testing.T, fn func()) {
	t.Helper()
	// The tests read the workspace the projection left in the pool, which
	// a garbage collection would empty: none runs while fn does.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	old := sparseMethod
	sparseMethod = sparse.Supernodal
	defer func() { sparseMethod = old }()
	fn()
}

// TestSparseFloat32 projects the mesh with Precision Float32 on the
// sparse path: G's factor is single precision (and no float64 factor is
// made), every sample meets the float64 tolerance, the depth is that of
// Float64 give or take a step, the points agree with Float64's to the
// accuracy of a projection whose steps carry float32 rounding, and so do
// the Unrolled gradients.
func TestSparseFloat32(t *testing.T) {
	withSupernodal(t, func() {
		m := newSPMesh(14)
		_, ny, _ := m.Dims()
		const rows = 6
		x, yhat := spMeshBatch(rand.New(rand.NewPCG(3, 4)), m, rows)
		grad := randDense(rand.New(rand.NewPCG(5, 6)), rows, ny, 1)
		var ys [2]*mat.Dense
		var sts [2]Stats
		var gys, gxs [2][]float64
		for p, prec := range []Precision{Float64, Float32} {
			a, err := NewAdaNP(m, Settings{Path: PathSparse, Precision: prec, Tol: 1e-9})
			require.NoError(t, err)
			require.Equal(t, prec == Float32, a.sp.single)
			ys[p], sts[p], err = a.Project(x, yhat)
			require.NoError(t, err)
			require.True(t, sts[p].Converged(), "%v: %+v", prec, sts[p])
			assert.LessOrEqual(t, sts[p].After.Max, 1e-9)
			if !raceEnabled { // sync.Pool drops items at random under the race detector
				// and at every garbage collection: none runs between the
				// projection and this Get (CI's go test ./... failed on it).
				ws := a.pool.Get().(*workspace)
				if prec == Float32 {
					assert.NotNil(t, ws.sp.f32)
					assert.Nil(t, ws.sp.f, "no step needed the float64 factor")
				}
				a.pool.Put(ws)
			}
			gys[p], gxs[p], _ = gtVJP(t, a, x, yhat, grad)
		}
		assert.InDelta(t, sts[0].MeanDepth, sts[1].MeanDepth, 1)
		ctAssertClose(t, ys[0].RawMatrix().Data, ys[1].RawMatrix().Data, 1e-6, "ỹ")
		ctAssertClose(t, gys[0], gys[1], 1e-4, "∂ℓ/∂ŷ")
		ctAssertClose(t, gxs[0], gxs[1], 1e-4, "∂ℓ/∂x")
		// The single-precision solves do change the points.
		assert.NotEqual(t, ys[0].RawMatrix().Data, ys[1].RawMatrix().Data)
	})
}

// nearParallel is a sparse constraint whose two rows have nearly parallel
// gradients, c_0 = Σ_j y_j + ¼y_0² − 1 and c_1 = c_0 + 1e-4·y_1 − 1e-4, so
// that G's Schur complement is about 1e-8 of its diagonal: beyond single
// precision, well within float64.
type nearParallel struct {
	ny          int
	rowPtr, col []int
}

func newNearParallel(ny int) *nearParallel {
	p := &nearParallel{ny: ny, rowPtr: []int{0, ny, 2 * ny}}
	for range 2 {
		for j := range ny {
			p.col = append(p.col, j)
		}
	}
	return p
}

func (p *nearParallel) Dims() (nx, ny, nc int) { return 0, p.ny, 2 }
func (p *nearParallel) Eval(x, y, c, jy []float64) {
	panic("dense Eval not used on the sparse path")
}
func (p *nearParallel) Capabilities() Capabilities {
	return Capabilities{Sparse: &SparseJacobian{RowPtr: p.rowPtr, Col: p.col, Eval: p.evalSparse}}
}

func (p *nearParallel) evalSparse(x, y, c, vals []float64) {
	s := 0.0
	for _, v := range y {
		s += v
	}
	c[0] = s + 0.25*y[0]*y[0] - 1
	c[1] = c[0] + 1e-4*y[1] - 1e-4
	if vals == nil {
		return
	}
	for j := range p.ny {
		vals[j], vals[p.ny+j] = 1, 1
	}
	vals[0] += 0.5 * y[0]
	vals[p.ny] += 0.5 * y[0]
	vals[p.ny+1] += 1e-4
}

// TestSparseFloat32Fallback: where single precision cannot resolve G (a
// pivot below sparse.SingleTol of its diagonal entry) the step is taken
// with a float64 factor, so the projection is Float64's bit for bit and
// meets the tolerance.
func TestSparseFloat32Fallback(t *testing.T) {
	withSupernodal(t, func() {
		c := newNearParallel(30)
		x := mat.NewDense(2, 1, nil)
		_ = x
		rnd := rand.New(rand.NewPCG(8, 9))
		yhat := randDense(rnd, 2, 30, 0.5)
		var ys [2]*mat.Dense
		for p, prec := range []Precision{Float64, Float32} {
			a, err := NewAdaNP(c, Settings{Path: PathSparse, Precision: prec, Tol: 1e-10})
			require.NoError(t, err)
			require.Equal(t, prec == Float32, a.sp.single)
			var st Stats
			ys[p], st, err = a.Project(nil, yhat)
			require.NoError(t, err)
			require.True(t, st.Converged(), "%v: %+v", prec, st)
			assert.Zero(t, st.Clamped)
			// The workspace the projection used, from the pool: under the
			// race detector sync.Pool drops items at random, so the check
			// runs without it (the bit-for-bit equality below still shows
			// that the float64 factor took every step).
			if !raceEnabled {
				// (No garbage collection between the projection and this
				// Get either: it empties the pool. CI's go test ./...
				// failed on it once.)
				ws := a.pool.Get().(*workspace)
				if prec == Float32 {
					assert.NotNil(t, ws.sp.f, "the float64 factor was needed")
				}
				a.pool.Put(ws)
			}
		}
		assert.Equal(t, ys[0].RawMatrix().Data, ys[1].RawMatrix().Data)
		for _, v := range ys[1].RawMatrix().Data {
			require.False(t, math.IsNaN(v))
		}
	})
}

// TestOpSparseFloat32Graph: in a float32 gorgonia graph, Precision Auto
// gives the node an AdaNP with Precision Float32, whose sparse path
// factors G in single precision; the gradients with respect to the
// network's weights match the float64 graph's to float32 accuracy.
func TestOpSparseFloat32Graph(t *testing.T) {
	withSupernodal(t, func() {
		m := newSPMesh(6)
		_, ny, _ := m.Dims()
		rnd := rand.New(rand.NewPCG(41, 42))
		X := randDense(rnd, 3, 2, 0.3)
		for r := range 3 {
			X.Set(r, 0, X.At(r, 0)+1)
		}
		A := randDense(rnd, 3, ny, 1)
		a, err := NewAdaNP(m, Settings{Path: PathSparse})
		require.NoError(t, err)
		var grads [2][]float64
		for p, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			net := newOpNet(t, a, X, A, 5, 9, dt)
			require.Equal(t, dt == tensor.Float32, net.op.a.sp.single, "%v graph", dt)
			vm := G.NewTapeMachine(net.g, G.BindDualValues(net.wx, net.w1, net.w2))
			require.NoError(t, vm.RunAll())
			vm.Close()
			require.True(t, net.op.Projected())
			grads[p] = gradOf(t, net.w2)
		}
		assert.Less(t, relErr(grads[1], grads[0]), 1e-3, "∂ℓ/∂W2, float32 graph against float64")
	})
}

// TestSparseInfo reports the analysis of the path taken: the mesh's
// pattern on the sparse path, with the method and the precision of L, and
// nothing on the dense path.
func TestSparseInfo(t *testing.T) {
	m := newSPMesh(10)
	_, _, nc := m.Dims()
	a, err := NewAdaNP(m, Settings{Path: PathSparse})
	require.NoError(t, err)
	info, ok := a.SparseInfo()
	require.True(t, ok)
	assert.Equal(t, len(m.col), info.NNZB)
	assert.GreaterOrEqual(t, info.NNZL, info.NNZG-nc, "L holds G's strict lower triangle")
	assert.Greater(t, info.NNZG, 2*nc, "G couples neighbours")
	assert.Positive(t, info.Flops)
	assert.False(t, info.Single)
	withSupernodal(t, func() {
		a, err := NewAdaNP(m, Settings{Path: PathSparse, Precision: Float32})
		require.NoError(t, err)
		info, ok := a.SparseInfo()
		require.True(t, ok)
		assert.True(t, info.Supernodal)
		assert.True(t, info.Single)
	})
	d, err := NewAdaNP(m, Settings{Path: PathDense})
	require.NoError(t, err)
	_, ok = d.SparseInfo()
	assert.False(t, ok)
}
