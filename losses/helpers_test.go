package losses

import (
	"math"
	"math/rand/v2"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/gtest"
)

// twoCircles is a small nonlinear system with nx = 2, ny = 3, nc = 2:
//
//	c0 = y0² + y1² − x0²
//	c1 = y1·y2 + sin y0 − x0·x1
type twoCircles struct{}

func (twoCircles) Dims() (nx, ny, nc int) { return 2, 3, 2 }

func (twoCircles) Eval(x, y, c, jy []float64) {
	c[0] = y[0]*y[0] + y[1]*y[1] - x[0]*x[0]
	c[1] = y[1]*y[2] + math.Sin(y[0]) - x[0]*x[1]
	if jy != nil {
		copy(jy, []float64{
			2 * y[0], 2 * y[1], 0,
			math.Cos(y[0]), y[2], y[1],
		})
	}
}

func (c twoCircles) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{JacobianX: c.JacobianX}
}

func (twoCircles) JacobianX(x, y, jx []float64) {
	copy(jx, []float64{
		-2 * x[0], 0,
		-x[1], -x[0],
	})
}

// circle is c = y0² + y1² − x0² (nx = 1, ny = 2, nc = 1) with a radius
// parameter to tell instances apart: c = y0² + y1² − (r·x0)².
type circle struct{ r float64 }

func (c *circle) Dims() (nx, ny, nc int) { return 1, 2, 1 }

func (c *circle) Eval(x, y, out, jy []float64) {
	out[0] = y[0]*y[0] + y[1]*y[1] - c.r*c.r*x[0]*x[0]
	if jy != nil {
		jy[0], jy[1] = 2*y[0], 2*y[1]
	}
}

func (c *circle) JacobianX(x, y, jx []float64) { jx[0] = -2 * c.r * c.r * x[0] }

func (c *circle) Capabilities() enforce.Capabilities {
	return enforce.Capabilities{JacobianX: c.JacobianX}
}

// withoutJX hides the JacobianX method of a constraint.
type withoutJX struct{ c enforce.Constraint }

func (w withoutJX) Dims() (nx, ny, nc int)     { return w.c.Dims() }
func (w withoutJX) Eval(x, y, c, jy []float64) { w.c.Eval(x, y, c, jy) }

// declinesJX has a JacobianX method but does not declare it in its
// Capabilities: the method does not count.
type declinesJX struct{ twoCircles }

func (declinesJX) Capabilities() enforce.Capabilities { return enforce.Capabilities{} }

// sqrtConstraint is c = √y0 − x0, NaN for y0 < 0.
type sqrtConstraint struct{}

func (sqrtConstraint) Dims() (nx, ny, nc int) { return 1, 1, 1 }
func (sqrtConstraint) Eval(x, y, c, jy []float64) {
	c[0] = math.Sqrt(y[0]) - x[0]
	if jy != nil {
		jy[0] = 0.5 / math.Sqrt(y[0])
	}
}

// refLoss is λ/N Σ_i p(c(x_i, y_i)) in plain Go.
func refLoss(c enforce.Constraint, p penalty, lambda float64, x, y []float64) float64 {
	nx, ny, nc := c.Dims()
	n := len(y) / ny
	cv := make([]float64, nc)
	var total float64
	for i := range n {
		c.Eval(x[i*nx:(i+1)*nx], y[i*ny:(i+1)*ny], cv, nil)
		var ss float64
		for _, v := range cv {
			if p == squaredHinge {
				v = max(v, 0)
			}
			ss += v * v
			if p == squaredNormMeanAbs {
				ss += math.Abs(v) / float64(nc)
			}
		}
		if p == norm {
			total += math.Sqrt(ss)
		} else {
			total += ss
		}
	}
	return lambda * total / float64(n)
}

// randData returns n values uniform in [lo, hi) from a fixed seed.
func randData(seed uint64, n int, lo, hi float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	v := make([]float64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*rng.Float64()
	}
	return v
}

// matrixNode adds an r×c variable named name holding v converted to dt.
func matrixNode(g *gorgonia.ExprGraph, dt tensor.Dtype, name string, r, c int, v []float64) *gorgonia.Node {
	var backing any = append([]float64(nil), v...)
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		backing = f
	}
	t := tensor.New(tensor.WithShape(r, c), tensor.WithBacking(backing))
	return gorgonia.NewMatrix(g, dt, gorgonia.WithShape(r, c), gorgonia.WithName(name), gorgonia.WithValue(t))
}

// scalar returns the value of a scalar node after a run.
func scalar(n *gorgonia.Node) float64 { return gtest.Float64s(n.Value())[0] }

// withRHS is a value-type constraint holding a closure: c = y0 − r().
type withRHS struct{ r func() float64 }

func (w withRHS) Dims() (nx, ny, nc int) { return 1, 1, 1 }
func (w withRHS) Eval(x, y, c, jy []float64) {
	c[0] = y[0] - w.r()
	if jy != nil {
		jy[0] = 1
	}
}

// loopBatch gives a constraint an EvalBatch that evaluates row by row.
type loopBatch struct{ twoCircles }

func (l loopBatch) Capabilities() enforce.Capabilities {
	k := l.twoCircles.Capabilities()
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

// sparseCircles is twoCircles declaring its sparse Jacobian (the entry
// (0, 2) is structurally zero) and, unless denseX, ∂c/∂x through
// JacobianXTVec instead of JacobianX; its Eval panics if asked for a
// dense Jacobian, so a loss must follow the nonzeros.
type sparseCircles struct {
	twoCircles
	denseX bool
}

func (s sparseCircles) Eval(x, y, c, jy []float64) {
	if jy != nil {
		panic("sparseCircles: a dense Jacobian was asked for")
	}
	s.twoCircles.Eval(x, y, c, nil)
}

func (s sparseCircles) Capabilities() enforce.Capabilities {
	sj := &enforce.SparseJacobian{RowPtr: []int{0, 2, 5}, Col: []int{0, 1, 0, 1, 2},
		Eval: func(x, y, c, vals []float64) {
			s.twoCircles.Eval(x, y, c, nil)
			if vals != nil {
				copy(vals, []float64{2 * y[0], 2 * y[1], math.Cos(y[0]), y[2], y[1]})
			}
		}}
	k := enforce.Capabilities{Sparse: sj}
	if s.denseX {
		k.JacobianX = s.JacobianX
	} else {
		sj.JacobianXTVec = func(x, y, w, out []float64) {
			out[0] = -2*x[0]*w[0] - x[1]*w[1]
			out[1] = -x[0] * w[1]
		}
	}
	return k
}
