package enforce

import "math"

// The backward pass of the sparse path: the formulas of backStep,
// implicitVJP and projectorVJP (step.go, vjp.go) with B as its values in
// the constraint's pattern and G's factor from the sparse kernel, which
// recordSparse computes again for each step (Trace documents what is
// stored).

// sampleSparse is vjpJob.sample on the sparse path.
func (j *vjpJob) sampleSparse(ws *workspace, s int) {
	a, tr := j.a, j.tr
	g, gx := ws.gy, ws.gx
	j.load(s, g, gx)
	xs := tr.xrow(s)
	exact := a.exactGradient(j.wantX)
	var rec stepRecord
	switch a.s.Grad {
	case Implicit:
		if tr.Depth(s) == 1 {
			if !tr.recordSparse(ws, s, 0, &rec) {
				j.bad[s] = true
				return
			}
			if rec.alpha > kktTol || tr.eig[s][0] || !a.hasHV {
				exact = false
			}
			if !a.hasHV || !a.implicitVJP(ws, &rec, xs, g, gx, j.wantX) {
				exact = false
				a.projectorVJPSparse(ws, &rec, xs, g, gx, j.wantX)
			}
		} else {
			exact = false
		}
	default:
		curv, curvX := j.curvature()
		for k := tr.Depth(s) - 1; k >= 0; k-- {
			if !tr.recordSparse(ws, s, k, &rec) {
				j.bad[s] = true
				return
			}
			if tr.eig[s][k] {
				exact = false
			}
			a.backStep(ws, &rec, xs, g, gx, curv, curvX, j.wantX)
			if curv {
				h := a.k.HessVec
				h(xs, rec.y, rec.mu, ws.dp, ws.hMu)
				h(xs, rec.y, ws.w, ws.delta, ws.hW)
				finishBackStep(g, ws.acc, ws.hMu, ws.hW, rec.alpha)
			} else {
				finishBackStep(g, ws.acc, nil, nil, rec.alpha)
			}
		}
	}
	j.inexact[s] = !exact
	j.store(s, g, gx)
}

// rowSetCurvature adds Σ_i ∇²c_i·B̄_i to ws.acc and, with curvX,
// Σ_i ∇²_xy c_i·B̄_i to xacc, for B̄ given by its values bbar in the
// pattern: one HessVec (and MixedHessVec) per row set with a nonzero B̄.
func (a *AdaNP) rowSetCurvature(ws *workspace, xs, y, bbar, xacc []float64, curvX bool) {
	sp := a.sp
	ind, v := ws.sp.ind, ws.hpk
	clear(ind)
	clear(v)
	for _, set := range sp.rowColour {
		nonzero := false
		for _, i := range set {
			for q := sp.rowPtr[i]; q < sp.rowPtr[i+1]; q++ {
				if bbar[q] != 0 {
					nonzero = true
					v[sp.col[q]] = bbar[q]
				}
			}
			ind[i] = 1
		}
		if nonzero {
			a.k.HessVec(xs, y, ind, v, ws.hv)
			for k, t := range ws.hv {
				ws.acc[k] += t
			}
			if curvX {
				a.k.MixedHessVec(xs, y, ind, v, ws.gxHV)
				for m, t := range ws.gxHV {
					xacc[m] += t
				}
			}
		}
		for _, i := range set {
			for q := sp.rowPtr[i]; q < sp.rowPtr[i+1]; q++ {
				v[sp.col[q]] = 0
			}
			ind[i] = 0
		}
	}
}

// autoDiagonalVJPSparse is autoDiagonalVJP with B and B̄ as values in the
// pattern.
func (a *AdaNP) autoDiagonalVJPSparse(vals, dbar, bbar, dt []float64) bool {
	nc, col := a.nc, a.sp.col
	clear(dt)
	for q, v := range vals {
		dt[col[q]] += math.Abs(v)
	}
	top, arg := 0.0, 0
	for k, s := range dt {
		dt[k] = math.Max(s/float64(nc), 1)
		if dt[k] > top {
			top, arg = dt[k], k
		}
	}
	var topBar float64
	for k := range dt {
		topBar += dbar[k] * dt[k]
	}
	topBar /= top * top
	any := false
	for q, b := range vals {
		k := col[q]
		v := 0.0
		if dt[k] > 1 {
			g := dbar[k] / top
			if k == arg {
				g -= topBar
			}
			switch {
			case b > 0:
				v = g / float64(nc)
			case b < 0:
				v = -g / float64(nc)
			}
		}
		bbar[q] = v
		any = any || v != 0
	}
	return any
}

// projectorVJPSparse is projectorVJP on the sparse path.
func (a *AdaNP) projectorVJPSparse(ws *workspace, rec *stepRecord, xs, g, gx []float64, wantX bool) {
	clear(ws.zeroMu)
	r := *rec
	r.mu, r.alpha, r.bounded = ws.zeroMu, 1, false
	a.backStep(ws, &r, xs, g, gx, false, false, wantX)
	finishBackStep(g, ws.acc, nil, nil, 1)
}

// projectDualSparse is projectDual on the sparse path, with G's factor in
// ws.sp.cur.
func (a *AdaNP) projectDualSparse(ws *workspace, st *stepRecord, r, z []float64) {
	for i, v := range r {
		if st.d != nil {
			v *= st.d[i]
		}
		z[i] = v
	}
	a.sp.mulVec(ws.w, st.B, z)
	ws.sp.cur.Solve(ws.w)
	a.sp.mulTransVec(ws.hv, st.B, ws.w)
	for i := range z {
		v := r[i] - ws.hv[i]
		r[i] = v
		if st.d != nil {
			v *= st.d[i]
		}
		z[i] = v
	}
}

// kktMultipliersSparse is kktMultipliers on the sparse path, with G's
// factor in ws.sp.cur.
func (a *AdaNP) kktMultipliersSparse(ws *workspace, y, yhat, vals, d, lam []float64) float64 {
	for i := range y {
		ws.p[i] = y[i] - yhat[i]
	}
	a.sp.mulVec(lam, vals, ws.p)
	ws.sp.cur.Solve(lam)
	for i := range lam {
		lam[i] = -lam[i]
	}
	a.sp.mulTransVec(ws.hv, vals, lam)
	var res float64
	for i := range ws.p {
		v := ws.p[i]
		if d != nil {
			v = ws.p[i] + d[i]*ws.hv[i]
		} else {
			v += ws.hv[i]
		}
		res += v * v
	}
	return math.Sqrt(res) / math.Max(norm2(ws.p), 1)
}
