package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems"
)

// loopBatch gives a constraint an EvalBatch that evaluates row by row, so
// that the view's batched path can be checked with any constraint.
type loopBatch struct{ enforce.Constraint }

func (l loopBatch) Capabilities() enforce.Capabilities {
	k := enforce.CapabilitiesOf(l.Constraint)
	k.EvalBatch = l.EvalBatch
	return k
}

func (l loopBatch) EvalBatch(rows int, x, y, c, jy []float64) {
	nx, ny, nc := l.Dims()
	for s := range rows {
		var js []float64
		if jy != nil {
			js = jy[s*nc*ny : (s+1)*nc*ny]
		}
		l.Eval(x[s*nx:(s+1)*nx], y[s*ny:(s+1)*ny], c[s*nc:(s+1)*nc], js)
	}
}

// randDense returns an r×c matrix of normal entries; if strided, a view of
// a wider matrix, so that its rows are not contiguous.
func randDense(rng *rand.Rand, r, c int, strided bool) *mat.Dense {
	w := c
	if strided {
		w = c + 3
	}
	m := mat.NewDense(r, w, nil)
	for i := range r {
		for j := range w {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	if !strided {
		return m
	}
	return m.Slice(0, r, 1, 1+c).(*mat.Dense)
}

// TestMeanNormBatch checks that meanNorm with EvalBatch equals the per-row
// path to 1e-12 relative: for enforce.Quadratic with and without a
// right-hand side r(x), and for a Func constraint given a row-by-row
// EvalBatch; in one chunk and in several, with contiguous and strided
// rows. The constraint values and Jacobians of the loss terms' batchView
// must equal the view's Eval likewise.
func TestMeanNormBatch(t *testing.T) {
	big, err := problems.NewNonconvexQuadratic(30, 10, 1) // r(x) = x³, nx = 10
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	const ny, nc = 6, 4
	as := make([]*mat.SymDense, nc)
	for i := range as {
		as[i] = mat.NewSymDense(ny, nil)
		for j := range ny {
			for k := j; k < ny; k++ {
				as[i].SetSym(j, k, rng.NormFloat64())
			}
		}
	}
	cm := mat.NewDense(nc, ny, nil)
	for i := range nc {
		for j := range ny {
			cm.Set(i, j, rng.NormFloat64())
		}
	}
	noX, err := enforce.Quadratic(0, as, cm, []float64{1, -2, 0.5, 3}, nil)
	require.NoError(t, err)
	fn, err := enforce.Func(2, 3, 2, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Mul(y[0], y[1]), x[0])
		c[1] = hyperdual.Add(hyperdual.Sin(y[2]), hyperdual.Mul(x[1], y[0]))
	})
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		c    enforce.Constraint
		nx   int // the network's
	}{
		{"Quadratic with r(x)", big.Equalities(), 10},
		{"Quadratic without x", noX, 3},
		{"Func", loopBatch{fn}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cny, cnc := tc.c.Dims()
			v := newView(tc.c, tc.nx)
			require.NotNil(t, v.be)
			require.IsType(t, batchView{}, v.loss)
			ref := newView(tc.c, tc.nx)
			ref.be = nil // the per-row path
			for _, strided := range []bool{false, true} {
				for _, chunk := range []int{v.chunk, 7} {
					const rows = 25
					x, y := randDense(rng, rows, tc.nx, strided), randDense(rng, rows, cny, strided)
					want, wantMax, err := ref.norms(x, y)
					require.NoError(t, err)
					v.chunk = chunk
					got, gotMax, err := v.norms(x, y)
					require.NoError(t, err)
					assert.InDelta(t, 0, (got-want)/want, 1e-12, "strided %t, chunk %d: %v, want %v", strided, chunk, got, want)
					assert.InDelta(t, 0, (gotMax-wantMax)/wantMax, 1e-12, "max|c|, strided %t, chunk %d: %v, want %v", strided, chunk, gotMax, wantMax)
				}
			}

			// The loss terms' EvalBatch.
			const rows = 5
			x, y := randDense(rng, rows, tc.nx, false), randDense(rng, rows, cny, false)
			c, jy := make([]float64, rows*cnc), make([]float64, rows*cnc*cny)
			enforce.CapabilitiesOf(v.loss).EvalBatch(rows, x.RawMatrix().Data, y.RawMatrix().Data, c, jy)
			ci, ji := make([]float64, cnc), make([]float64, cnc*cny)
			for s := range rows {
				v.Eval(x.RawRowView(s), y.RawRowView(s), ci, ji)
				for i, w := range ci {
					assert.InDelta(t, w, c[s*cnc+i], 1e-12*math.Max(1, math.Abs(w)))
				}
				for i, w := range ji {
					assert.InDelta(t, w, jy[s*cnc*cny+i], 1e-12*math.Max(1, math.Abs(w)))
				}
			}
		})
	}

	// A constraint without EvalBatch keeps the per-row path.
	v := newView(fn, 2)
	assert.Nil(t, v.be)
	assert.Same(t, v, v.loss.(*view))
}
