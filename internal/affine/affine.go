// Package affine evaluates an affine constraint system c = C·y − r(x)
// over a batch of samples with matrix products: the residuals
//
//	Res = Y·Cᵀ − R,  R = r(X)   (rows×nc)
//
// and the products G = diag(k)·Res·C (rows×ny, row s = k_s·Cᵀc_s) that the
// gradient of a penalty of the residuals needs. Package enforce builds one
// for a Linear constraint (and a Stack of them) and hands it out through
// Provider; packages losses and train use it instead of evaluating the
// constraint one sample at a time.
//
// Blocks of Rows samples are multiplied together on internal/sgemm's
// float64 kernel, which accumulates every entry over k in order whatever
// the number of rows, and the blocks are fixed (internal/par.ForBlocks),
// so the results do not depend on GOMAXPROCS. They differ from those of a
// per-sample matrix–vector product (gonum's Dgemv) by rounding only.
package affine

import (
	"fmt"
	"sync"

	"github.com/enforce-nn/enforce/internal/par"
	"github.com/enforce-nn/enforce/internal/sgemm"
)

// Rows is the number of samples multiplied together: a multiple of the
// 2·MR rows of the AVX-512 float64 kernel.
const Rows = 48

// Provider is implemented by constraints that are affine in y with a
// batched Residual: enforce's Linear and Stacks of Linears, and train's
// view of them. AffineResidual returns nil when the constraint is not such
// a system (a Stack with a nonlinear part).
type Provider interface {
	AffineResidual() *Residual
}

// Residual evaluates c = C·y − r(x), for a constant nc×ny matrix C and an
// RHS r of x ∈ ℝ^nx, over blocks of samples. It is safe for concurrent
// use if r is.
type Residual struct {
	nx, ny, nc int
	r          func(x, r, jx []float64) // may be nil: r = 0
	ct         sgemm.Panels64           // Cᵀ, ny×nc
	c          sgemm.Panels64           // C, nc×ny
	scratch    sync.Pool                // *scratch
	jobs       sync.Pool                // *job
}

// scratch is one block's temporaries.
type scratch struct {
	in, pa, tile, r []float64
}

// New returns the Residual of C (nc×ny, row-major, which New packs and
// does not keep) and r (nil meaning r = 0). It panics if C has not nc·ny
// entries or a size is not positive (nx may be 0): a programmer error of
// package enforce.
func New(nx, ny, nc int, c []float64, r func(x, r, jx []float64)) *Residual {
	if nx < 0 || ny < 1 || nc < 1 || len(c) != nc*ny {
		panic(fmt.Sprintf("affine: New(%d, %d, %d) with %d entries of C", nx, ny, nc, len(c)))
	}
	a := &Residual{nx: nx, ny: ny, nc: nc, r: r}
	a.c.Pack(nc, ny, c, ny)
	ct := make([]float64, ny*nc)
	for i := range nc {
		for j := range ny {
			ct[j*nc+i] = c[i*ny+j]
		}
	}
	a.ct.Pack(ny, nc, ct, nc)
	w := max(ny, nc)
	a.scratch.New = func() any {
		return &scratch{
			in:   make([]float64, Rows*nc),
			pa:   make([]float64, sgemm.WorkLen(Rows, w)-sgemm.MR*sgemm.NR),
			tile: make([]float64, sgemm.MR*sgemm.NR),
			r:    make([]float64, nc),
		}
	}
	a.jobs.New = func() any { return new(job) }
	return a
}

// Dims returns the sizes of x, y and c.
func (a *Residual) Dims() (nx, ny, nc int) { return a.nx, a.ny, a.nc }

// job is one call of Eval or GradY, run by par.ForBlocks.
type job struct {
	a        *Residual
	grad     bool
	x, y, k  []float64
	ldx, ldy int
	c, g     []float64

	mu  sync.Mutex
	bad int // the first sample whose r panicked, or −1
	val any // its panic value
}

// Run evaluates samples [lo, hi), Rows at a time.
func (j *job) Run(lo, hi int) {
	sc := j.a.scratch.Get().(*scratch)
	for s0 := lo; s0 < hi; s0 += Rows {
		j.block(sc, s0, min(hi, s0+Rows))
	}
	j.a.scratch.Put(sc)
}

// block evaluates samples [lo, hi), at most Rows of them.
func (j *job) block(sc *scratch, lo, hi int) {
	a := j.a
	m := hi - lo
	if j.grad {
		nc := a.nc
		for s := range m {
			k, row, in := j.k[lo+s], j.c[(lo+s)*nc:(lo+s+1)*nc], sc.in[s*nc:(s+1)*nc]
			for i, v := range row {
				in[i] = k * v
			}
		}
		sgemm.PackA64(m, nc, sc.in, nc, sc.pa)
		sgemm.MulPacked64(m, sc.pa, &a.c, 0, a.ny, j.g[lo*a.ny:], a.ny, sc.tile)
		return
	}
	sgemm.PackA64(m, a.ny, j.y[lo*j.ldy:], j.ldy, sc.pa)
	sgemm.MulPacked64(m, sc.pa, &a.ct, 0, a.nc, j.c[lo*a.nc:], a.nc, sc.tile)
	if a.r == nil {
		return
	}
	for s := lo; s < hi; s++ {
		if !j.rhs(s, sc.r) {
			return
		}
		c := j.c[s*a.nc : (s+1)*a.nc]
		for i, v := range sc.r {
			c[i] -= v
		}
	}
}

// rhs writes r(x_s) into r and reports false, recording the panic, if r
// panicked.
func (j *job) rhs(s int, r []float64) (ok bool) {
	defer func() {
		if e := recover(); e != nil {
			j.mu.Lock()
			if j.bad < 0 || s < j.bad {
				j.bad, j.val = s, e
			}
			j.mu.Unlock()
			ok = false
		}
	}()
	j.a.r(j.x[s*j.ldx:s*j.ldx+j.a.nx], r, nil)
	return true
}

// Eval writes c_s = C·y_s − r(x_s) into row s of c (rows×nc, row-major)
// for the rows samples of x (row s at x[s·ldx:], of which the first nx
// entries are read) and y (row s at y[s·ldy:], ny entries). x may be nil
// when nx is 0. If r panics, Eval returns an error naming the first
// sample whose r panicked, and c is undefined. It does not check that c
// is finite.
func (a *Residual) Eval(rows int, x []float64, ldx int, y []float64, ldy int, c []float64) error {
	if rows <= 0 {
		return nil
	}
	j := a.jobs.Get().(*job)
	*j = job{a: a, x: x, ldx: ldx, y: y, ldy: ldy, c: c[:rows*a.nc], bad: -1}
	par.ForBlocks(rows, Rows, j)
	bad, val := j.bad, j.val
	*j = job{}
	a.jobs.Put(j)
	if bad >= 0 {
		return fmt.Errorf("right-hand side r(x) panicked at sample %d: %v", bad, val)
	}
	return nil
}

// GradY writes g_s = k_s·Cᵀ·c_s into row s of g (rows×ny, row-major) for
// the rows residuals of c (rows×nc) and weights k (rows): one product
// G = diag(k)·Res·C.
func (a *Residual) GradY(rows int, k, c, g []float64) {
	if rows <= 0 {
		return
	}
	j := a.jobs.Get().(*job)
	*j = job{a: a, grad: true, k: k[:rows], c: c[:rows*a.nc], g: g[:rows*a.ny], bad: -1}
	par.ForBlocks(rows, Rows, j)
	*j = job{}
	a.jobs.Put(j)
}
