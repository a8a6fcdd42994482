package enforce

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"

	"github.com/enforce-nn/enforce/internal/dense"
	"github.com/enforce-nn/enforce/internal/mixed"
	"github.com/enforce-nn/enforce/internal/par"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// Single-precision batch arithmetic of Quadratic (EvalBatch32 and
// HessVecBatch32 in its Capabilities): the
// products A_i·y_s, which are almost all of an evaluation's work, run in
// float32 with internal/sgemm's kernel on [A_1 … A_nc] packed once (also
// with the openblas build tag: OpenBLAS's sgemm packs the 4·nc·ny² bytes
// again at every call, and was no faster when tried here, 2026-11-24).
//
// EvalBatch32 gets the Jacobians straight from the kernel: it multiplies
// [y_s 1] by [2A_1 … 2A_nc] stacked over the row [C_1 … C_nc], which gives
// J_s = [2A_1 y_s + C_1 … 2A_nc y_s + C_nc] (doubling is exact), written
// into jy. The residual is then c_i = ½·y_s·J_i + ½·C_i·y_s + d_i − r_i(x),
// with the dot products summed in float64 and C·y_s from one more small
// product; d and r stay float64.

// q32Rows is the number of samples per single-precision product, and
// q32Cols the number of columns of [A_1 … A_nc] per block of its output.
const (
	q32Rows = 48
	q32Cols = 1536
)

// quadratic32 is the single-precision form of Quadratic's data, packed
// for sgemm on first use.
type quadratic32 struct {
	once   sync.Once
	wide   bool         // some entry of A or C exceeds float32's range
	k      int          // rows of panels: ny, and one more for C
	panels sgemm.Panels // [2A_1 … 2A_nc] over [C_1 … C_nc]: k×nc·ny
	cy     sgemm.Panels // Cᵀ over a zero row: k×nc (C set only)
	pool   sync.Pool    // *q32Scratch
}

// q32Scratch holds one worker's temporaries.
type q32Scratch struct {
	y32  []float32 // q32Rows×k: the rows [v_s 1] (or [v_s 0])
	pa   []float32 // y32 packed: sgemm.WorkLen(q32Rows, k) − MR·NR
	tile []float32 // MR·NR
	out  []float32 // q32Rows×max(q32Cols, nc)
}

func (q *quadraticConstraint) init32() {
	ny, nc := q.ny, q.nc
	for _, v := range q.a {
		if math.Abs(v) > math.MaxFloat32/2 {
			// 2A does not fit float32: the single-precision methods use
			// the float64 ones.
			q.q32.wide = true
			return
		}
	}
	for _, v := range q.cm {
		if math.Abs(v) > math.MaxFloat32 {
			q.q32.wide = true
			return
		}
	}
	k, w := ny, nc*ny
	if q.cm != nil {
		k++
	}
	q.q32.k = k
	m := make([]float32, k*w)
	for i := 0; i < nc; i++ {
		for j := 0; j < ny; j++ {
			row := m[j*w+i*ny : j*w+(i+1)*ny]
			for kk, v := range q.a[(i*ny+j)*ny : (i*ny+j+1)*ny] {
				row[kk] = float32(2 * v)
			}
		}
	}
	if q.cm != nil {
		for col, v := range q.cm {
			m[ny*w+col] = float32(v)
		}
		ct := make([]float32, k*nc)
		for i := 0; i < nc; i++ {
			for kk := 0; kk < ny; kk++ {
				ct[kk*nc+i] = float32(q.cm[i*ny+kk])
			}
		}
		q.q32.cy.Pack(k, nc, ct, nc)
	}
	q.q32.panels.Pack(k, w, m, w)
	q.q32.pool.New = func() any {
		return &q32Scratch{
			y32:  make([]float32, q32Rows*k),
			pa:   make([]float32, sgemm.WorkLen(q32Rows, k)-sgemm.MR*sgemm.NR),
			tile: make([]float32, sgemm.MR*sgemm.NR),
			out:  make([]float32, q32Rows*max(q32Cols, nc)),
		}
	}
}

// products32 computes, for the rows of j.v (rows×ny), a block of samples
// and columns at a time, the products [v_s e]·panels with e = 1
// (EvalBatch32: the Jacobians, into j.jy) or e = 0 (HessVecBatch32: 2A_i
// v_s, into scratch), and passes each block to j's consumer.
func (q *quadraticConstraint) products32(rows int, j *q32Job) {
	j.q = q
	par.For(rows, q32Rows, j)
}

// q32Job is one single-precision batch operation: EvalBatch32 (hv false)
// or HessVecBatch32 (hv true).
type q32Job struct {
	q      *quadraticConstraint
	v      []float64 // the vectors multiplied: y or v
	hv     bool
	c      []float64 // EvalBatch32
	jy     []float32 // EvalBatch32
	w, out []float64 // HessVecBatch32
}

// Run handles samples [lo, hi).
func (j *q32Job) Run(lo, hi int) {
	q := j.q
	ny, nc, k, w := q.ny, q.nc, q.q32.k, q.nc*q.ny
	sc := q.q32.pool.Get().(*q32Scratch)
	defer q.q32.pool.Put(sc)
	e := float32(1)
	if j.hv {
		e = 0
	}
	for s0 := lo; s0 < hi; s0 += q32Rows {
		m := min(q32Rows, hi-s0)
		y32 := sc.y32[:m*k]
		for r := range m {
			row := y32[r*k : (r+1)*k]
			for t, v := range j.v[(s0+r)*ny : (s0+r+1)*ny] {
				row[t] = float32(v)
			}
			if k > ny {
				row[ny] = e
			}
		}
		sgemm.PackAScaled(m, k, y32, k, nil, sc.pa)
		for j0 := 0; j0 < w; j0 += q32Cols {
			j1 := min(j0+q32Cols, w)
			if j.hv {
				out := sc.out[:m*(j1-j0)]
				sgemm.MulPacked(m, sc.pa, &q.q32.panels, j0, j1, out, j1-j0, false, sc.tile)
				hessVecBlock(q, j.w, j.out, s0, m, j0, j1, out)
				continue
			}
			sgemm.MulPacked(m, sc.pa, &q.q32.panels, j0, j1, j.jy[s0*w+j0:], w, false, sc.tile)
			evalBlock(q, j.v, j.c, s0, m, j0, j1, j.jy[s0*w+j0:], w)
		}
		if !j.hv && q.cm != nil {
			out := sc.out[:m*nc]
			sgemm.MulPacked(m, sc.pa, &q.q32.cy, 0, nc, out, nc, false, sc.tile)
			for t, v := range out {
				j.c[s0*nc+t] += 0.5 * float64(v)
			}
		}
	}
}

// EvalBatch32 is EvalBatch with the products A_i·y_s (and C·y_s) in single
// precision and the Jacobians in float32 (see Capabilities): c and jy
// carry float32 rounding of those products, about 1e-7 relative to the
// terms summed. An entry of jy that is not finite (float32 overflowed)
// makes the residual of its sample not finite too, so that AdaNP, which
// checks only c for Quadratic, evaluates that sample again in float64.
func (q *quadraticConstraint) EvalBatch32(rows int, x, y, c []float64, jy []float32) {
	nx, ny, nc := q.nx, q.ny, q.nc
	if rows < 0 || len(x) != rows*nx || len(y) != rows*ny || len(c) != rows*nc || len(jy) != rows*nc*ny {
		panic(fmt.Sprintf("enforce: Quadratic.EvalBatch32: rows=%d len(x)=%d len(y)=%d len(c)=%d len(jy)=%d, want %d, %d, %d, %d",
			rows, len(x), len(y), len(c), len(jy), rows*nx, rows*ny, rows*nc, rows*nc*ny))
	}
	if rows == 0 {
		return
	}
	if q.q32.once.Do(q.init32); q.q32.wide {
		q.evalWide32(rows, x, y, c, jy)
		return
	}
	clear(c)
	jobs := q.jobs.Get().(*quadraticJobs)
	defer q.putJobs(jobs)
	jobs.q32 = q32Job{v: y, c: c, jy: jy}
	q.products32(rows, &jobs.q32)
	jobs.rest = quadraticRest{q: q, x: x, y: y, c: c}
	par.For(rows, 8, &jobs.rest)
}

// evalWide32 is EvalBatch32 for an A or C beyond float32's range: EvalBatch
// into float64 scratch, a block of samples at a time, with the Jacobians
// then rounded to float32; a sample whose Jacobian overflows float32 gets
// c = +Inf, which AdaNP answers by evaluating it again in float64.
func (q *quadraticConstraint) evalWide32(rows int, x, y, c []float64, jy []float32) {
	nx, ny, nc := q.nx, q.ny, q.nc
	sc := q.pool.Get().(*quadraticScratch)
	defer q.pool.Put(sc)
	if len(sc.jWide) < q32Rows*nc*ny {
		sc.jWide = make([]float64, q32Rows*nc*ny)
	}
	for s0 := 0; s0 < rows; s0 += q32Rows {
		m := min(q32Rows, rows-s0)
		j64 := sc.jWide[:m*nc*ny]
		q.EvalBatch(m, x[s0*nx:(s0+m)*nx], y[s0*ny:(s0+m)*ny], c[s0*nc:(s0+m)*nc], j64)
		for r := range m {
			s := s0 + r
			if !dense.Round32(jy[s*nc*ny:(s+1)*nc*ny], j64[r*nc*ny:(r+1)*nc*ny]) {
				// c shows a Jacobian beyond float32.
				for i := range nc {
					c[s*nc+i] = math.Inf(1)
				}
			}
		}
	}
}

// evalBlock adds, for the block J[s0:s0+m, j0:j1] of the Jacobians just
// computed (row r of the block at jb[r·ld:], column col at col − j0), ½·y_s·J_i
// to c_i, segment by segment, in float64.
func evalBlock[T sgemm.Real](q *quadraticConstraint, y, c []float64, s0, m, j0, j1 int, jb []T, ld int) {
	ny, nc := q.ny, q.nc
	for r := range m {
		s := s0 + r
		ys, cs := y[s*ny:(s+1)*ny], c[s*nc:(s+1)*nc]
		js := jb[r*ld : r*ld+j1-j0]
		for col := j0; col < j1; {
			i, k := col/ny, col%ny
			end := min(j1, (i+1)*ny)
			cs[i] += 0.5 * dotMixed(js[col-j0:end-j0], ys[k:k+end-col])
			col = end
		}
	}
}

// dotMixed returns a·b in float64 for a float32 or float64 a, with four
// partial sums so that the additions overlap. It is NaN or ±Inf if an
// entry of a is.
func dotMixed[T sgemm.Real](a []T, b []float64) float64 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float64
	t := 0
	for ; t+4 <= n; t += 4 {
		s0 += float64(a[t]) * b[t]
		s1 += float64(a[t+1]) * b[t+1]
		s2 += float64(a[t+2]) * b[t+2]
		s3 += float64(a[t+3]) * b[t+3]
	}
	for ; t < n; t++ {
		s0 += float64(a[t]) * b[t]
	}
	return (s0 + s1) + (s2 + s3)
}

// hessVecBlock consumes the block o = P[s0:s0+m, j0:j1] (stride j1 − j0)
// of the products 2A_i v_s for HessVecBatch and HessVecBatch32:
// out_s += Σ_i w_si (2A_i v_s).
func hessVecBlock[T sgemm.Real](q *quadraticConstraint, w, out []float64, s0, m, j0, j1 int, o []T) {
	ny, nc := q.ny, q.nc
	wd := j1 - j0
	// Single-precision products go through mixed.Axpy (AVX2, the same
	// bits as the loop).
	o32, is32 := any(o).([]float32)
	for r := range m {
		s := s0 + r
		os, ws := out[s*ny:(s+1)*ny], w[s*nc:(s+1)*nc]
		or := o[r*wd : (r+1)*wd]
		for col := j0; col < j1; {
			i, k := col/ny, col%ny
			end := min(j1, (i+1)*ny)
			if wi := ws[i]; wi != 0 {
				dst := os[k : k+end-col]
				if is32 {
					mixed.Axpy(dst, wi, o32[r*wd+col-j0:r*wd+end-j0])
				} else {
					for t, p := range or[col-j0 : end-j0] {
						dst[t] += wi * float64(p)
					}
				}
			}
			col = end
		}
	}
}

// quadraticRest adds d_i − r_i(x) to c_i = yᵀA_i y + C_i·y, and first ½·C_i·y
// with cy (EvalBatch, whose products give ½·y·J_i = yᵀA_i y + ½·C_i·y).
type quadraticRest struct {
	q       *quadraticConstraint
	x, y, c []float64
	cy      bool
}

// Run handles samples [lo, hi).
func (j *quadraticRest) Run(lo, hi int) {
	q := j.q
	nx, nc := q.nx, q.nc
	sc := q.pool.Get().(*quadraticScratch)
	defer q.pool.Put(sc)
	ny := q.ny
	for s := lo; s < hi; s++ {
		cs := j.c[s*nc : (s+1)*nc]
		if j.cy && q.cm != nil {
			ys := j.y[s*ny : (s+1)*ny]
			for i := range cs {
				cs[i] += 0.5 * floats.Dot(q.cm[i*ny:(i+1)*ny], ys)
			}
		}
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
// precision (see Capabilities).
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
