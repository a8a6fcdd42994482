package enforce

import "github.com/enforce-nn/enforce/internal/par"

// vjpLock back-propagates a batch in lockstep when the constraint computes
// curvature products for many samples at once (BatchHessVecer): at step k,
// every sample deeper than k goes through backStep in parallel, then two
// batched products supply the curvature terms. Per sample, the arithmetic
// is that of vjpJob.sample.
type vjpLock struct {
	j         *vjpJob
	bh        BatchHessVecer
	g, gx     []float64 // rows×n and rows×nx gradients
	act       []int     // samples deeper than k
	k         int
	finish    bool
	xa, ya    []float64 // per position: x_s, y_k
	mu, w     []float64 // μ_k, w
	dp, delta []float64 // Dp, δ
	hMu, hW   []float64 // Σ μ_i ∇²c_i·Dp, Σ w_i ∇²c_i·δ
}

func (l *vjpLock) run(j *vjpJob, bh BatchHessVecer) {
	a, tr := j.a, j.tr
	rows, n, nc, nx := tr.rows, a.n, a.nc, a.nx
	l.j, l.bh = j, bh
	l.g = resize(l.g, rows*n)
	l.gx = resize(l.gx, rows*nx)
	l.act = resize(l.act, rows)[:0]
	for _, buf := range []*[]float64{&l.ya, &l.dp, &l.delta, &l.hMu, &l.hW} {
		*buf = resize(*buf, rows*n)
	}
	l.xa = resize(l.xa, rows*nx)
	l.mu = resize(l.mu, rows*nc)
	l.w = resize(l.w, rows*nc)
	depth := 0
	for s := 0; s < rows; s++ {
		j.load(s, l.g[s*n:(s+1)*n], l.gx[s*nx:(s+1)*nx])
		depth = max(depth, tr.Depth(s))
	}
	for l.k = depth - 1; l.k >= 0; l.k-- {
		l.act = l.act[:0]
		for s := 0; s < rows; s++ {
			if tr.Depth(s) > l.k {
				l.act = append(l.act, s)
			}
		}
		m := len(l.act)
		l.finish = false
		par.For(m, grain, l)
		bh.HessVecBatch(m, l.xa[:m*nx], l.ya[:m*n], l.mu[:m*nc], l.dp[:m*n], l.hMu[:m*n])
		bh.HessVecBatch(m, l.xa[:m*nx], l.ya[:m*n], l.w[:m*nc], l.delta[:m*n], l.hW[:m*n])
		l.finish = true
		par.For(m, grain, l)
	}
	for s := 0; s < rows; s++ {
		j.store(s, l.g[s*n:(s+1)*n], l.gx[s*nx:(s+1)*nx])
	}
}

// Run processes positions [lo, hi) of act: the projector part of step k,
// or (finish) the curvature terms.
func (l *vjpLock) Run(lo, hi int) {
	a := l.j.a
	n, nc, nx := a.n, a.nc, a.nx
	if l.finish {
		for p := lo; p < hi; p++ {
			s := l.act[p]
			g := l.g[s*n : (s+1)*n]
			for i := range g {
				g[i] += l.hW[p*n+i] - l.hMu[p*n+i]
			}
		}
		return
	}
	ws := a.pool.Get().(*workspace)
	defer a.pool.Put(ws)
	for p := lo; p < hi; p++ {
		s := l.act[p]
		yk, mu := l.j.backStep(ws, s, l.k, l.g[s*n:(s+1)*n], l.gx[s*nx:(s+1)*nx])
		copy(l.xa[p*nx:(p+1)*nx], l.j.tr.x[s*nx:(s+1)*nx])
		copy(l.ya[p*n:(p+1)*n], yk)
		copy(l.mu[p*nc:(p+1)*nc], mu)
		copy(l.w[p*nc:(p+1)*nc], ws.w)
		copy(l.dp[p*n:(p+1)*n], ws.dp)
		copy(l.delta[p*n:(p+1)*n], ws.delta)
	}
}
