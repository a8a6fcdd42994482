package enforce

import (
	"fmt"
	"math"
	"sync"

	"github.com/enforce-nn/enforce/internal/par"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// Single-precision batch arithmetic of Quadratic (Float32Batcher): the
// products A_i·y_s, which are almost all of an evaluation's work, run in
// float32 with internal/sgemm's kernel on [A_1 … A_nc] packed once (also
// with the openblas build tag: OpenBLAS's sgemm packs the 4·nc·ny² bytes
// again at every call, and was no faster when tried here, 2026-11-24);
// everything else (C, d, r, the sums giving c) stays float64.

var _ Float32Batcher = (*quadraticConstraint)(nil)

// q32Rows is the number of samples per single-precision product, and
// q32Cols the number of columns of [A_1 … A_nc] per block of its output.
const (
	q32Rows = 48
	q32Cols = 1536
)

// quadratic32 is the single-precision form of [A_1 … A_nc] (ny×nc·ny),
// packed for sgemm.Mul on first use.
type quadratic32 struct {
	once   sync.Once
	wide   bool // some |A_i[j, k]| exceeds float32's range
	panels sgemm.Panels
	pool   sync.Pool // *q32Scratch
}

// q32Scratch holds one worker's temporaries.
type q32Scratch struct {
	y32  []float32 // q32Rows×ny
	work []float32 // sgemm.WorkLen(q32Rows, ny)
	out  []float32 // q32Rows×q32Cols
}

func (q *quadraticConstraint) init32() {
	for _, v := range q.a {
		if math.Abs(v) > math.MaxFloat32 {
			// A does not fit float32: the single-precision methods call
			// the float64 ones.
			q.q32.wide = true
			return
		}
	}
	q.ahOnce.Do(q.sideBySide)
	ny, w := q.ny, q.nc*q.ny
	ah := make([]float32, len(q.ah))
	for i, v := range q.ah {
		ah[i] = float32(v)
	}
	q.q32.panels.Pack(ny, w, ah, w)
	q.q32.pool.New = func() any {
		return &q32Scratch{
			y32:  make([]float32, q32Rows*ny),
			work: make([]float32, sgemm.WorkLen(q32Rows, ny)),
			out:  make([]float32, q32Rows*q32Cols),
		}
	}
}

// products32 computes P_s = [A_1 v_s … A_nc v_s] in single precision for
// the rows of j.v (rows×ny), a block of samples and columns at a time, and
// passes each block to j.use.
func (q *quadraticConstraint) products32(rows int, j *q32Job) {
	j.q = q
	par.For(rows, q32Rows, j)
}

// q32Job is one single-precision batch operation: EvalBatch32 (hv false)
// or HessVecBatch32 (hv true).
type q32Job struct {
	q        *quadraticConstraint
	v        []float64 // the vectors multiplied: y or v
	hv       bool
	y, c, jy []float64 // EvalBatch32
	w, out   []float64 // HessVecBatch32
}

// Run handles samples [lo, hi).
func (j *q32Job) Run(lo, hi int) {
	q := j.q
	ny, w := q.ny, q.nc*q.ny
	sc := q.q32.pool.Get().(*q32Scratch)
	defer q.q32.pool.Put(sc)
	for s0 := lo; s0 < hi; s0 += q32Rows {
		m := min(q32Rows, hi-s0)
		y32 := sc.y32[:m*ny]
		for i, v := range j.v[s0*ny : (s0+m)*ny] {
			y32[i] = float32(v)
		}
		for j0 := 0; j0 < w; j0 += q32Cols {
			j1 := min(j0+q32Cols, w)
			out := sc.out[:m*(j1-j0)]
			sgemm.Mul(m, y32, ny, &q.q32.panels, j0, j1, out, j1-j0, false, sc.work)
			if j.hv {
				j.hessVec(s0, m, j0, j1, out)
			} else {
				j.eval(s0, m, j0, j1, out)
			}
		}
	}
}

// EvalBatch32 is EvalBatch with the products A_i·y_s in single precision
// (see Float32Batcher): c and jy carry float32 rounding of those products,
// about 1e-7 relative to |A_i y_s|. jy must not be nil.
func (q *quadraticConstraint) EvalBatch32(rows int, x, y, c, jy []float64) {
	nx, ny, nc := q.nx, q.ny, q.nc
	if rows < 0 || len(x) != rows*nx || len(y) != rows*ny || len(c) != rows*nc || len(jy) != rows*nc*ny {
		panic(fmt.Sprintf("enforce: Quadratic.EvalBatch32: rows=%d len(x)=%d len(y)=%d len(c)=%d len(jy)=%d, want %d, %d, %d, %d",
			rows, len(x), len(y), len(c), len(jy), rows*nx, rows*ny, rows*nc, rows*nc*ny))
	}
	if rows == 0 {
		return
	}
	if q.q32.once.Do(q.init32); q.q32.wide {
		q.EvalBatch(rows, x, y, c, jy)
		return
	}
	clear(c)
	jobs := q.jobs.Get().(*quadraticJobs)
	defer q.putJobs(jobs)
	jobs.q32 = q32Job{v: y, y: y, c: c, jy: jy}
	q.products32(rows, &jobs.q32)
	jobs.rest = quadraticRest{q: q, x: x, y: y, c: c}
	par.For(rows, 8, &jobs.rest)
}

// eval consumes the block out = P[s0:s0+m, j0:j1] for EvalBatch32: it
// writes J = C + 2P and accumulates c_i = y·(A_i y + C_i); d and r are
// added per sample afterwards.
func (j *q32Job) eval(s0, m, j0, j1 int, out []float32) {
	q := j.q
	ny, nc := q.ny, q.nc
	wd := j1 - j0
	for r := range m {
		s := s0 + r
		ys, cs := j.y[s*ny:(s+1)*ny], j.c[s*nc:(s+1)*nc]
		js := j.jy[s*nc*ny : (s+1)*nc*ny]
		o := out[r*wd : (r+1)*wd]
		for col := j0; col < j1; {
			i, k := col/ny, col%ny
			end := min(j1, (i+1)*ny)
			seg, jseg := o[col-j0:end-j0], js[col:end]
			yseg := ys[k : k+len(seg)]
			var cseg []float64
			if q.cm != nil {
				cseg = q.cm[col:end]
			}
			cs[i] += convertRow(seg, jseg, yseg, cseg)
			col = end
		}
	}
}

// convertRow writes j = cm + 2p (cm nil meaning 0) and returns y·(p + cm),
// in float64, with four partial sums so that the additions overlap.
func convertRow(p []float32, j, y, cm []float64) float64 {
	n := len(p)
	j, y = j[:n], y[:n]
	var a0, a1, a2, a3 float64
	t := 0
	if cm != nil {
		cm = cm[:n]
		for ; t+4 <= n; t += 4 {
			p0, p1, p2, p3 := float64(p[t]), float64(p[t+1]), float64(p[t+2]), float64(p[t+3])
			c0, c1, c2, c3 := cm[t], cm[t+1], cm[t+2], cm[t+3]
			j[t], j[t+1], j[t+2], j[t+3] = c0+2*p0, c1+2*p1, c2+2*p2, c3+2*p3
			a0 += y[t] * (p0 + c0)
			a1 += y[t+1] * (p1 + c1)
			a2 += y[t+2] * (p2 + c2)
			a3 += y[t+3] * (p3 + c3)
		}
		for ; t < n; t++ {
			pv, cv := float64(p[t]), cm[t]
			j[t] = cv + 2*pv
			a0 += y[t] * (pv + cv)
		}
		return (a0 + a1) + (a2 + a3)
	}
	for ; t+4 <= n; t += 4 {
		p0, p1, p2, p3 := float64(p[t]), float64(p[t+1]), float64(p[t+2]), float64(p[t+3])
		j[t], j[t+1], j[t+2], j[t+3] = 2*p0, 2*p1, 2*p2, 2*p3
		a0 += y[t] * p0
		a1 += y[t+1] * p1
		a2 += y[t+2] * p2
		a3 += y[t+3] * p3
	}
	for ; t < n; t++ {
		pv := float64(p[t])
		j[t] = 2 * pv
		a0 += y[t] * pv
	}
	return (a0 + a1) + (a2 + a3)
}

// hessVec consumes the block out = P[s0:s0+m, j0:j1] for HessVecBatch32:
// out_s += 2Σ_i w_si (A_i v_s).
func (j *q32Job) hessVec(s0, m, j0, j1 int, o []float32) {
	q := j.q
	ny, nc := q.ny, q.nc
	wd := j1 - j0
	for r := range m {
		s := s0 + r
		os, ws := j.out[s*ny:(s+1)*ny], j.w[s*nc:(s+1)*nc]
		or := o[r*wd : (r+1)*wd]
		for col := j0; col < j1; {
			i, k := col/ny, col%ny
			end := min(j1, (i+1)*ny)
			if wi := 2 * ws[i]; wi != 0 {
				dst := os[k : k+end-col]
				for t, p := range or[col-j0 : end-j0] {
					dst[t] += wi * float64(p)
				}
			}
			col = end
		}
	}
}

// quadraticRest adds d_i − r_i(x) to c_i = yᵀA_i y + C_i·y.
type quadraticRest struct {
	q       *quadraticConstraint
	x, y, c []float64
}

// Run handles samples [lo, hi).
func (j *quadraticRest) Run(lo, hi int) {
	q := j.q
	nx, nc := q.nx, q.nc
	sc := q.pool.Get().(*quadraticScratch)
	defer q.pool.Put(sc)
	for s := lo; s < hi; s++ {
		cs := j.c[s*nc : (s+1)*nc]
		if q.d != nil {
			for i := range cs {
				cs[i] += q.d[i]
			}
		}
		if q.r != nil {
			r := sc.r
			q.r(j.x[s*nx:(s+1)*nx], r, nil)
			for i := range cs {
				cs[i] -= r[i]
			}
		}
	}
}

// HessVecBatch32 is HessVecBatch with the products A_i·v_s in single
// precision (see Float32Batcher).
func (q *quadraticConstraint) HessVecBatch32(rows int, x, y, w, v, out []float64) {
	nx, ny, nc := q.nx, q.ny, q.nc
	if rows < 0 || len(x) != rows*nx || len(y) != rows*ny || len(w) != rows*nc || len(v) != rows*ny || len(out) != rows*ny {
		panic(fmt.Sprintf("enforce: Quadratic.HessVecBatch32: rows=%d len(x)=%d len(y)=%d len(w)=%d len(v)=%d len(out)=%d",
			rows, len(x), len(y), len(w), len(v), len(out)))
	}
	if q.q32.once.Do(q.init32); q.q32.wide {
		q.HessVecBatch(rows, x, y, w, v, out)
		return
	}
	clear(out)
	if rows == 0 {
		return
	}
	jobs := q.jobs.Get().(*quadraticJobs)
	defer q.putJobs(jobs)
	jobs.q32 = q32Job{v: v, hv: true, w: w, out: out}
	q.products32(rows, &jobs.q32)
}
