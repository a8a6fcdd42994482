package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// linearWithR returns C·y − r(x), C random nc×ny, r(x)_i = x_{i mod nx}³
// (r = 0 when nx is 0).
func linearWithR(t testing.TB, rng *rand.Rand, nx, ny, nc int) enforce.Constraint {
	t.Helper()
	cm := randDense(rng, nc, ny, false)
	var r enforce.RHS
	if nx > 0 {
		r = func(x, r, _ []float64) {
			for i := range r {
				v := x[i%nx]
				r[i] = v * v * v
			}
		}
	}
	c, err := enforce.Linear(nx, cm, r)
	require.NoError(t, err)
	return c
}

// TestMeanNormAffine checks that meanNorm on the batched affine path
// equals the per-row path to 1e-12 relative, for a Linear with r(x), a
// Linear without x under a network with inputs, and a Stack of Linears,
// with contiguous and strided rows, one and several blocks; that it gives
// the same bits with GOMAXPROCS 1, 2 and 3; and that the loss terms see
// the evaluator.
func TestMeanNormAffine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const ny = 9
	l1, l2 := linearWithR(t, rng, 4, ny, 3), linearWithR(t, rng, 4, ny, 2)
	st, err := enforce.Stack(l1, l2)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		c    enforce.Constraint
		nx   int // the network's
	}{
		{"Linear", l1, 4},
		{"Linear without x", linearWithR(t, rng, 0, ny, 4), 3},
		{"Stack", st, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newView(tc.c, tc.nx)
			require.NotNil(t, v.aff)
			require.Same(t, v.aff, v.loss.(*view).AffineResidual())
			for _, strided := range []bool{false, true} {
				for _, rows := range []int{1, 25, 130} {
					x, y := randDense(rng, rows, tc.nx, strided), randDense(rng, rows, ny, strided)
					got, gotMax, err := v.norms(x, y)
					require.NoError(t, err)
					perSampleAffine = true
					want, wantMax, err := v.norms(x, y)
					perSampleAffine = false
					require.NoError(t, err)
					assert.InDelta(t, 0, (got-want)/want, 1e-12, "strided %t, rows %d: %v, want %v", strided, rows, got, want)
					assert.InDelta(t, 0, (gotMax-wantMax)/wantMax, 1e-12, "max|c|, strided %t, rows %d: %v, want %v", strided, rows, gotMax, wantMax)
				}
			}
			x, y := randDense(rng, 200, tc.nx, false), randDense(rng, 200, ny, false)
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
			var want float64
			for _, procs := range []int{1, 2, 3} {
				runtime.GOMAXPROCS(procs)
				got, err := v.meanNorm(x, y)
				require.NoError(t, err)
				if procs == 1 {
					want = got
				}
				assert.Equal(t, math.Float64bits(want), math.Float64bits(got), "GOMAXPROCS %d", procs)
			}
		})
	}
}

// TestMeanNormAffineErrors checks that a panicking r(x) is an error on the
// batched path, and that a constraint with latent variables does not take
// it.
func TestMeanNormAffineErrors(t *testing.T) {
	c, err := enforce.Linear(1, mat.NewDense(1, 2, []float64{1, 1}), func(x, r, _ []float64) {
		if x[0] > 10 {
			panic("bad x")
		}
		r[0] = x[0]
	})
	require.NoError(t, err)
	v := newView(c, 1)
	x, y := mat.NewDense(3, 1, []float64{0, 20, 1}), mat.NewDense(3, 2, nil)
	_, err = v.meanNorm(x, y)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "panicked at sample 1: bad x")

	g, err := enforce.Linear(1, mat.NewDense(1, 2, []float64{1, -1}), nil)
	require.NoError(t, err)
	fb, err := enforce.WithInequalities(c, g, 0)
	require.NoError(t, err)
	assert.Nil(t, newView(fb, 1).aff)
}

// TestFitLinearAffine trains ENFORCE and MLP models on the §5.3
// nonconvex-linear problem (their λ_C residual terms and History residuals
// evaluated on the batched path) and checks that the History matches the
// per-sample path's to rounding. ENFORCE's residuals are those of
// projected outputs, about 3e-14, pure rounding of C·y − r(x) with terms of
// order 10 to 100: they are compared absolutely.
func TestFitLinearAffine(t *testing.T) {
	p, err := problems.NewNonconvexLinear(100, 50, 1)
	require.NoError(t, err)
	x := p.SampleX(400, 1)
	objective := func(_, y *gorgonia.Node) (*gorgonia.Node, error) { return p.ObjectiveNode(y) }
	fit := func(mode Mode, perSample bool) History {
		perSampleAffine = perSample
		defer func() { perSampleAffine = false }()
		m, err := New(Config{
			Sizes: []int{50, 32, 100}, Hidden: layers.ReLU, PyTorchInit: true, Constraint: p.Equalities(),
			Mode: mode, BatchSize: 200, Epochs: 3, Seed: 1, Quiet: true,
		})
		require.NoError(t, err)
		require.NotNil(t, m.view.aff)
		h, err := m.FitUnsupervised(x, objective)
		require.NoError(t, err)
		return h
	}
	for _, mode := range []Mode{ENFORCE, MLP} {
		got, want := fit(mode, false), fit(mode, true)
		require.Len(t, got, len(want))
		for i := range want {
			if mode == ENFORCE {
				assert.InDelta(t, want[i].Residual, got[i].Residual, 1e-12, "epoch %d: Residual", i+1)
				want[i].Residual = got[i].Residual
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"Loss", got[i].Loss, want[i].Loss},
				{"Task", got[i].Task, want[i].Task},
				{"Residual", got[i].Residual, want[i].Residual},
				{"Displacement", got[i].Displacement, want[i].Displacement},
			} {
				if f.want != 0 || f.got != 0 {
					assert.InEpsilon(t, f.want, f.got, 1e-9, "%v epoch %d: %s", mode, i+1, f.name)
				}
			}
		}
	}
}

// BenchmarkMeanNormLinear times meanNorm at the §5.3 nonconvex-linear size
// (N_O = 100, N_C = 50, batch 200), the per-row and batched paths
// alternately.
func BenchmarkMeanNormLinear(b *testing.B) {
	p, err := problems.NewNonconvexLinear(100, 50, 1)
	if err != nil {
		b.Fatal(err)
	}
	x, y := p.SampleX(200, 2), randomMatrix(200, 100, 3)
	v := newView(p.Equalities(), 50)
	for round := range 3 {
		for _, perSample := range []bool{true, false} {
			name := "batched"
			if perSample {
				name = "per-row"
			}
			b.Run(fmt.Sprintf("%s/round=%d", name, round), func(b *testing.B) {
				perSampleAffine = perSample
				defer func() { perSampleAffine = false }()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := v.meanNorm(x, y); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
