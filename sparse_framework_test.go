package enforce

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// spFramework is the framework benchmark family of issue 54: a planar
// g×g grid of joints, joint i at (y[2i], y[2i+1]), whose horizontal and
// vertical bars have their lengths fixed to x₁:
//
//	c_e = (p_i − p_j)·(p_i − p_j) − x₁²   for each bar e = (i, j),
//
// nc = 2g(g−1) ≈ ny = 2g², four nonzeros per row. Without diagonal bars
// the framework is flexible (each square can shear), so the constraint
// set is a manifold of large dimension and the minimum-norm Gauss–Newton
// step from a perturbed grid overshoots.
type spFramework struct {
	g           int
	bars        [][2]int
	rowPtr, col []int
	k           Capabilities
}

func newSPFramework(g int) *spFramework {
	f := &spFramework{g: g, rowPtr: []int{0}}
	for r := range g {
		for c := range g {
			i := r*g + c
			if c+1 < g {
				f.bars = append(f.bars, [2]int{i, i + 1})
			}
			if r+1 < g {
				f.bars = append(f.bars, [2]int{i, i + g})
			}
		}
	}
	for _, e := range f.bars {
		f.col = append(f.col, 2*e[0], 2*e[0]+1, 2*e[1], 2*e[1]+1)
		f.rowPtr = append(f.rowPtr, len(f.col))
	}
	f.k = Capabilities{
		HessVec: f.hessVec, MixedHessVec: f.mixedHessVec, JacobianX: f.jacobianX,
		Sparse: &SparseJacobian{RowPtr: f.rowPtr, Col: f.col, Eval: f.evalSparse, JacobianXTVec: f.jacobianXTVec},
	}
	return f
}

func (f *spFramework) Dims() (nx, ny, nc int)     { return 1, 2 * f.g * f.g, len(f.bars) }
func (f *spFramework) Capabilities() Capabilities { return f.k }

func (f *spFramework) Eval(x, y, c, jy []float64) {
	_, ny, _ := f.Dims()
	if jy == nil {
		f.evalSparse(x, y, c, nil)
		return
	}
	vals := make([]float64, len(f.col))
	f.evalSparse(x, y, c, vals)
	clear(jy)
	for e := range f.bars {
		for q := f.rowPtr[e]; q < f.rowPtr[e+1]; q++ {
			jy[e*ny+f.col[q]] = vals[q]
		}
	}
}

func (f *spFramework) evalSparse(x, y, c, vals []float64) {
	for e, b := range f.bars {
		dx, dy := y[2*b[0]]-y[2*b[1]], y[2*b[0]+1]-y[2*b[1]+1]
		c[e] = dx*dx + dy*dy - x[0]*x[0]
		if vals != nil {
			q := f.rowPtr[e]
			vals[q], vals[q+1], vals[q+2], vals[q+3] = 2*dx, 2*dy, -2*dx, -2*dy
		}
	}
}

// hessVec: ∇²c_e is 2·[I −I; −I I] on the bar's two joints.
func (f *spFramework) hessVec(x, y, w, v, out []float64) {
	clear(out)
	for e, b := range f.bars {
		for d := range 2 {
			t := 2 * w[e] * (v[2*b[0]+d] - v[2*b[1]+d])
			out[2*b[0]+d] += t
			out[2*b[1]+d] -= t
		}
	}
}

func (f *spFramework) mixedHessVec(x, y, w, v, out []float64) { out[0] = 0 }

func (f *spFramework) jacobianX(x, y, jx []float64) {
	for e := range f.bars {
		jx[e] = -2 * x[0]
	}
}

func (f *spFramework) jacobianXTVec(x, y, w, out []float64) {
	var s float64
	for _, v := range w {
		s += v
	}
	out[0] = -2 * x[0] * s
}

// start returns rows perturbed unit grids: joint (r, c) at (c, r) plus
// σ·ξ in each coordinate, x₁ = 1.
func (f *spFramework) start(rows int, sigma float64, seed uint64) (x, y *mat.Dense) {
	rng := rand.New(rand.NewPCG(seed, 54))
	_, ny, _ := f.Dims()
	x, y = mat.NewDense(rows, 1, nil), mat.NewDense(rows, ny, nil)
	for s := range rows {
		x.Set(s, 0, 1)
		for i := range f.g * f.g {
			y.Set(s, 2*i, float64(i%f.g)+sigma*rng.NormFloat64())
			y.Set(s, 2*i+1, float64(i/f.g)+sigma*rng.NormFloat64())
		}
	}
	return x, y
}

// TestFrameworkFamily: the hand-written framework's derivatives are
// exact (CheckSparse against its dense Eval), damped steps converge on it
// in fewer steps than full ones, and their Unrolled gradients match
// finite differences through a damped projection.
func TestFrameworkFamily(t *testing.T) {
	f := newSPFramework(6)
	ctCheckDerivatives(t, f, 5, 0.8, 1.2, -1, 6)
	x, y := f.start(4, 0.3, 1)
	full, err := NewAdaNP(f, Settings{Path: PathSparse})
	require.NoError(t, err)
	damped, err := NewAdaNP(f, Settings{Path: PathSparse, Damping: DefaultDamping})
	require.NoError(t, err)
	_, sf, err := full.Project(x, y)
	require.NoError(t, err)
	_, sd, err := damped.Project(x, y)
	require.NoError(t, err)
	require.True(t, sd.Converged(), "%v", sd)
	assert.LessOrEqual(t, sd.MeanDepth, sf.MeanDepth, "full %v\ndamped %v", sf, sd)

	small := newSPFramework(3)
	xs, ys := small.start(2, 0.2, 2)
	p, err := NewAdaNP(small, Settings{Path: PathSparse, Damping: 0.05, MinDepth: 4, MaxDepth: 4})
	require.NoError(t, err)
	a := randDense(rand.New(rand.NewPCG(9, 9)), 2, 18, 1)
	gy, gx, gs := gtVJP(t, p, xs, ys, a)
	wy, wx := gtFD(t, p, xs, ys, a)
	assert.Less(t, relErr(gy, wy), 2e-5, "ŷ-gradient")
	assert.Less(t, relErr(gx, wx), 2e-5, "x-gradient")
	assert.True(t, gs.Exact(), "%+v", gs)
}

// BenchmarkFramework measures steps per sample and time per batch on the
// framework family at 10³–10⁵ equations, with full steps and with
// Settings.Damping, and chord steps (Settings.Chord, exact with the
// stored factor or inexact with ChordCG) (issue 54):
//
//	go test -run '^$' -bench Framework -benchtime 1x .
//
// (-short keeps the 10³ and 10⁴ sizes).
func BenchmarkFramework(b *testing.B) {
	sizes := []int{23, 71, 224} // nc = 1 012, 9 940, 99 904
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, g := range sizes {
		f := newSPFramework(g)
		rows := 16
		x, y := f.start(rows, frameworkSigma, 1)
		for _, ctl := range []struct {
			name string
			s    Settings
		}{
			{"full", Settings{}},
			{"linesearch", Settings{LineSearch: true}},
			{"damping", Settings{Damping: DefaultDamping}},
			{"damping+chord2", Settings{Damping: DefaultDamping, Chord: 2, Grad: FinalProjector}},
			{"damping+chord4", Settings{Damping: DefaultDamping, Chord: 4, Grad: FinalProjector}},
			{"damping+chord2+cg10", Settings{Damping: DefaultDamping, Chord: 2, ChordCG: 10, Grad: FinalProjector}},
			{"damping+chord4+cg10", Settings{Damping: DefaultDamping, Chord: 4, ChordCG: 10, Grad: FinalProjector}},
		} {
			s := ctl.s
			s.Path = PathSparse
			a, err := NewAdaNP(f, s)
			if err != nil {
				b.Fatal(err)
			}
			_, _, nc := f.Dims()
			b.Run(fmt.Sprintf("nc=%d/%s", nc, ctl.name), func(b *testing.B) {
				b.ReportAllocs()
				var st Stats
				var fact int64
				for b.Loop() {
					before := factorizations.Load()
					if _, st, err = a.Project(x, y); err != nil {
						b.Fatal(err)
					}
					fact = factorizations.Load() - before
				}
				b.ReportMetric(float64(fact)/float64(rows), "factorisations/sample")
				b.ReportMetric(st.MeanDepth, "steps/sample")
				b.ReportMetric(float64(st.Depth), "maxsteps")
				b.ReportMetric(float64(st.NotConverged), "missed")
				b.ReportMetric(float64(rows), "rows")
			})
		}
	}
}

// frameworkSigma is the perturbation of BenchmarkFramework's joints.
var frameworkSigma = 0.1
