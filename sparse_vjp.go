package enforce

import "math"

// The parts of the backward pass that the sparse path does its own way:
// B as its values in the constraint's pattern, and G's factor from the
// sparse kernel, which recordSparse computes again for each step (Trace
// documents what is stored). backStep, projectDual and kktMultipliers
// (step.go) dispatch to them.

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
