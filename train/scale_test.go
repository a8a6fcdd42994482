package train

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/hd"
	"github.com/enforce-nn/enforce/layers"
)

// Sizes of the memory-bounded tests: a sparse constraint of scaleNC
// equations with 4 nonzeros per row (sparseRing, 2·scaleNC outputs), and
// bounds on the heap growth: saveLoadBound for Save and Load, issue 56's
// target (they need about 230 MB at this size; before, each evaluated
// three dense nc×ny Jacobians of 6.4 GB), and runBound for a whole run
// (Fit with a checkpoint, Resume, Save, Load, Predict: about 320 MB), a
// tenth of one dense Jacobian.
const (
	scaleNC       = 20000
	saveLoadBound = 400 << 20
	runBound      = 640 << 20
)

// heapMeter runs stages in order and bounds the growth of the live heap
// over all of them: during a stage the live heap is at most what was live
// before it (measured after a collection) plus what it allocates
// (runtime.MemStats.TotalAlloc), so Peak, the largest such sum, bounds the
// peak growth from the first stage's start. The bound does not depend on
// when the collector runs.
type heapMeter struct {
	base, peak uint64
	started    bool
}

// run runs f as the next stage and returns the bytes it allocated.
func (h *heapMeter) run(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if !h.started {
		h.base, h.started = before.HeapAlloc, true
	}
	f()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	live := uint64(0)
	if before.HeapAlloc > h.base {
		live = before.HeapAlloc - h.base
	}
	h.peak = max(h.peak, live+alloc)
	return alloc
}

// scaleData returns rows inputs and labels for sparseRing(n).
func scaleData(rows, n int) (x, y *mat.Dense) {
	rnd := rand.New(rand.NewPCG(1, 2))
	x, y = mat.NewDense(rows, 2, nil), mat.NewDense(rows, 2*n, nil)
	for r := range rows {
		x.Set(r, 0, 0.5+rnd.Float64())
		x.Set(r, 1, rnd.Float64())
		for j := range 2 * n {
			y.Set(r, j, 0.1*rnd.NormFloat64())
		}
	}
	return x, y
}

// scaleConfig is a small MLP on sparseRing(n), on the sparse path.
func scaleConfig(c enforce.Constraint, n int) Config {
	s := enforce.Settings{Path: enforce.PathSparse}
	return Config{Sizes: []int{2, 4, 2 * n}, Hidden: layers.Tanh, Constraint: c, Epochs: 1, Quiet: true,
		AlwaysProject: true, Train: s, Infer: s}
}

// TestSaveLoadSparseMemory saves and loads a model whose sparse
// constraint has 2·10⁴ equations (4·10⁴ outputs): the constraint's
// fingerprint follows the nonzeros, so the two together add at most
// saveLoadBound to the heap (issue 56: 9.5 GB before), and the loaded
// model holds the same weights.
func TestSaveLoadSparseMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for itself")
	}
	c := sparseRing(t, scaleNC)
	m, err := New(scaleConfig(c, scaleNC))
	require.NoError(t, err)
	require.NoError(t, m.SetWeights(m.Weights()))

	var h heapMeter
	var buf bytes.Buffer
	saveBytes := h.run(func() { require.NoError(t, m.Save(&buf)) })
	require.Contains(t, buf.String(), `"fingerprint"`)
	var loaded *Model
	loadBytes := h.run(func() {
		loaded, err = Load(bytes.NewReader(buf.Bytes()), c)
		require.NoError(t, err)
	})
	t.Logf("file %d MB; Save allocates %d MB, Load %d MB; peak heap growth ≤ %d MB",
		buf.Len()>>20, saveBytes>>20, loadBytes>>20, h.peak>>20)
	assert.LessOrEqual(t, h.peak, uint64(saveLoadBound))
	assert.Equal(t, weightBits(m), weightBits(loaded))
}

// TestFitSaveLoadPredictSparseMemory trains (AdaNP projecting every
// batch, with a checkpoint at the end), resumes from the checkpoint,
// saves, loads and predicts with a model on the sparse constraint of
// TestSaveLoadSparseMemory: nothing on the way needs an nc×ny or nc²
// array, so the whole sequence adds at most runBound to the heap,
// and the predictions meet the tolerance.
func TestFitSaveLoadPredictSparseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("trains at 2·10⁴ equations (seconds)")
	}
	if raceEnabled {
		t.Skip("the race detector allocates for itself")
	}
	c := sparseRing(t, scaleNC)
	x, y := scaleData(4, scaleNC)
	cfg := scaleConfig(c, scaleNC)
	cfg.Checkpoint.Dir = t.TempDir()
	var h heapMeter
	var m, loaded *Model
	var hist History
	h.run(func() {
		var err error
		m, err = New(cfg)
		require.NoError(t, err)
		hist, err = m.Fit(x, y)
		require.NoError(t, err)
	})
	require.Len(t, hist, 1)
	assert.Equal(t, 1.0, hist[0].Projected)
	h.run(func() {
		resumed, err := Resume(cfg.Checkpoint.Dir, cfg)
		require.NoError(t, err)
		assert.Equal(t, weightBits(m), weightBits(resumed))
	})
	var buf bytes.Buffer
	h.run(func() { require.NoError(t, m.Save(&buf)) })
	h.run(func() {
		var err error
		loaded, err = Load(bytes.NewReader(buf.Bytes()), c)
		require.NoError(t, err)
	})
	var st enforce.Stats
	h.run(func() {
		var err error
		_, st, err = loaded.Predict(x)
		require.NoError(t, err)
	})
	t.Logf("peak heap growth ≤ %d MB; %v", h.peak>>20, st)
	assert.LessOrEqual(t, h.peak, uint64(runBound))
	assert.True(t, st.Converged(), "%v", st)
	assert.LessOrEqual(t, st.After.Max, enforce.DefaultTol)
}

// TestViewResidualSparseLatent checks that the residual of a sparse
// constraint with inequalities (latent multipliers), which Fit records
// for every batch (and its largest violation, maxViolation), is evaluated
// without an nc×ny scratch Jacobian: the
// view's scratch used to hold one (1.2·10⁹ entries here).
func TestViewResidualSparseLatent(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for itself")
	}
	eq := sparseRing(t, scaleNC)
	pattern := make([][]int, scaleNC)
	for i := range pattern {
		pattern[i] = []int{2 * i}
	}
	g, err := enforce.SparseFunc(2, 2*scaleNC, scaleNC, pattern, func(x, y, c []hd.Number) {
		for i := range c {
			c[i] = hd.Sub(y[2*i], hd.Const(10))
		}
	})
	require.NoError(t, err)
	c, err := enforce.WithInequalities(eq, g, 0)
	require.NoError(t, err)
	require.NotNil(t, enforce.CapabilitiesOf(c).Sparse)
	x, y := scaleData(2, scaleNC)
	v := newView(c, 2)
	var h heapMeter
	var res float64
	var mx float64
	h.run(func() {
		res, err = v.meanNorm(x, y)
		require.NoError(t, err)
		mx, err = v.maxViolation(x, y)
		require.NoError(t, err)
	})
	assert.Greater(t, res, 0.0)
	assert.Greater(t, mx, 0.0)
	assert.LessOrEqual(t, h.peak, uint64(64<<20), "%d MB", h.peak>>20)
}

// BenchmarkSaveLoadSparse times Save followed by Load of the model of
// TestSaveLoadSparseMemory (issue 56's target: 2 s; 54 s and 28 s before).
func BenchmarkSaveLoadSparse(b *testing.B) {
	c := sparseRing(b, scaleNC)
	m, err := New(scaleConfig(c, scaleNC))
	if err != nil {
		b.Fatal(err)
	}
	if err := m.SetWeights(m.Weights()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		if err := m.Save(&buf); err != nil {
			b.Fatal(err)
		}
		if _, err := Load(&buf, c); err != nil {
			b.Fatal(err)
		}
	}
}

// funcRing is sparseRing written with enforce.Func: no declared pattern,
// so its AdaNP detects one (enforce.Func) and takes the sparse path.
func funcRing(t testing.TB, n int) enforce.Constraint { return funcRingK(t, n, 0.2) }

// TestSaveLoadFuncMemory is TestSaveLoadSparseMemory for a Func: its
// fingerprint follows the pattern the model's AdaNP detected
// (AdaNP.SparseJacobian) instead of three dense nc×ny Jacobians (3.2 GB
// each at this size), and a loaded model checks it the same way.
func TestSaveLoadFuncMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for itself")
	}
	c := funcRing(t, scaleNC)
	m, err := New(scaleConfig(c, scaleNC))
	require.NoError(t, err)
	require.NotNil(t, m.InferAdaNP().SparseJacobian(), "the Func's pattern was detected")
	require.NoError(t, m.SetWeights(m.Weights()))
	var h heapMeter
	var buf bytes.Buffer
	h.run(func() { require.NoError(t, m.Save(&buf)) })
	h.run(func() {
		_, err = Load(bytes.NewReader(buf.Bytes()), c)
		require.NoError(t, err)
	})
	t.Logf("peak heap growth ≤ %d MB", h.peak>>20)
	assert.LessOrEqual(t, h.peak, uint64(saveLoadBound))
	// Another Func of the same sizes is told apart.
	other := funcRingK(t, scaleNC, 0.3)
	_, err = Load(bytes.NewReader(buf.Bytes()), other)
	assert.ErrorIs(t, err, ErrConstraintMismatch)
}

// funcRingK is funcRing with the coupling k in place of 0.2.
func funcRingK(t testing.TB, n int, k float64) enforce.Constraint {
	c, err := enforce.Func(2, 2*n, n, func(x, y, c []hd.Number) {
		for i := range c {
			u, v := y[2*i], y[2*i+1]
			l, r := y[2*((i+n-1)%n)], y[2*((i+1)%n)]
			c[i] = hd.Sub(hd.Add(u, hd.Scale(k, hd.Sub(hd.Scale(2, u), hd.Add(l, r))), hd.Mul(u, v)),
				hd.Add(x[0], hd.Scale(0.1, x[1])))
		}
	})
	require.NoError(t, err)
	return c
}
