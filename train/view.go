package train

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// view presents a constraint on the network's inputs and predicted outputs:
// x has the network's nx columns (the constraint may have none) and y only
// the predicted outputs (latent variables, such as the Fischer–Burmeister
// multipliers of enforce.WithInequalities, are appended as zeros, as AdaNP
// does before projecting). The loss terms losses.Residual and
// losses.SoftPenalty see this view, so they work for every constraint a
// Model accepts. It implements no optional interface: the graph needs no
// gradient with respect to x, which is data.
type view struct {
	c      enforce.Constraint
	nx, ny int // presented sizes
	nc     int
	cnx    int // the constraint's own nx: 0 or nx
	cn     int // the constraint's own ny: ny + latent
	pool   sync.Pool
}

func newView(c enforce.Constraint, nx int) *view {
	cnx, cn, nc := c.Dims()
	ny := cn
	if l, ok := c.(enforce.Latent); ok {
		ny -= l.Latent()
	}
	v := &view{c: c, nx: nx, ny: ny, nc: nc, cnx: cnx, cn: cn}
	v.pool.New = func() any {
		buf := make([]float64, cn+nc*cn)
		return &buf
	}
	return v
}

// Dims returns the network's nx, the number of predicted outputs and nc.
func (v *view) Dims() (nx, ny, nc int) { return v.nx, v.ny, v.nc }

// Eval evaluates the constraint at (x, y) with latent variables at zero.
func (v *view) Eval(x, y, c, jy []float64) {
	x = x[:v.cnx]
	if v.cn == v.ny {
		v.c.Eval(x, y, c, jy)
		return
	}
	bp := v.pool.Get().(*[]float64)
	buf := *bp
	yy := buf[:v.cn]
	copy(yy, y)
	clear(yy[v.ny:])
	var jj []float64
	if jy != nil {
		jj = buf[v.cn:]
	}
	v.c.Eval(x, yy, c, jj)
	if jy != nil {
		for i := range v.nc {
			copy(jy[i*v.ny:(i+1)*v.ny], jj[i*v.cn:i*v.cn+v.ny])
		}
	}
	v.pool.Put(bp)
}

// meanNorm returns (1/N)Σ_i ‖c(x_i, y_i)‖₂ over the rows of x and y.
func (v *view) meanNorm(x, y *mat.Dense) float64 {
	r, _ := y.Dims()
	c := make([]float64, v.nc)
	var sum float64
	for i := range r {
		v.Eval(x.RawRowView(i), y.RawRowView(i), c, nil)
		var ss float64
		for _, ci := range c {
			ss += ci * ci
		}
		sum += math.Sqrt(ss)
	}
	return sum / float64(r)
}
