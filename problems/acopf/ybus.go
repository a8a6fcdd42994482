package acopf

import (
	"math"
	"math/cmplx"
	"sort"
)

// Admittances returns the four entries of a branch's 2×2 admittance
// matrix in MATPOWER's π model: with y_s = 1/(R + jX), the charging
// susceptance B split in halves at the ends, and the complex ratio
// T = Tap·e^{j·Shift} at the From end, the currents injected into the
// branch are I_f = Yff·V_f + Yft·V_t and I_t = Ytf·V_f + Ytt·V_t, where
//
//	Yff = (y_s + jB/2)/Tap²,  Yft = −y_s/conj(T),  Ytf = −y_s/T,  Ytt = y_s + jB/2.
func (b Branch) Admittances() (yff, yft, ytf, ytt complex128) {
	ys := 1 / complex(b.R, b.X)
	ch := complex(0, b.B/2)
	t := cmplx.Rect(b.Tap, b.Shift)
	return (ys + ch) / complex(b.Tap*b.Tap, 0), -ys / cmplx.Conj(t), -ys / t, ys + ch
}

// admittance is the bus admittance matrix Y = G + jB in compressed
// sparse rows: row i holds the buses k adjacent to i and i itself, in
// increasing order, with diag[i] the position of (i, i).
type admittance struct {
	rowPtr, col []int
	g, b        []float64
	diag        []int
}

// newAdmittance builds the bus admittance matrix of c: the sum of the
// branches' 2×2 matrices (Branch.Admittances) and the shunts Gs + jBs on
// the diagonal.
func newAdmittance(c *Case) *admittance {
	nb := len(c.Buses)
	rows := make([]map[int]complex128, nb)
	for i, bus := range c.Buses {
		rows[i] = map[int]complex128{i: complex(bus.Gs, bus.Bs)}
	}
	for _, br := range c.Branches {
		yff, yft, ytf, ytt := br.Admittances()
		f, t := br.From, br.To
		rows[f][f] += yff
		rows[f][t] += yft
		rows[t][f] += ytf
		rows[t][t] += ytt
	}
	y := &admittance{rowPtr: make([]int, nb+1), diag: make([]int, nb)}
	for i, r := range rows {
		cols := make([]int, 0, len(r))
		for k := range r {
			cols = append(cols, k)
		}
		sort.Ints(cols)
		for _, k := range cols {
			if k == i {
				y.diag[i] = len(y.col)
			}
			y.col = append(y.col, k)
			y.g = append(y.g, real(r[k]))
			y.b = append(y.b, imag(r[k]))
		}
		y.rowPtr[i+1] = len(y.col)
	}
	return y
}

// pairTerms returns, for one term V_i·V_k·(G − jB)·e^{jt} of the complex
// power S_i = V_i·conj(Σ_k Y_ik V_k) injected at bus i (k ≠ i, Y_ik = G + jB), a = G cos t + B sin t and
// b = G sin t − B cos t at t = θ_i − θ_k: the term's real part is
// V_i·V_k·a and its imaginary part V_i·V_k·b, with da/dt = −b and
// db/dt = a.
func pairTerms(g, b, t float64) (pa, pb float64) {
	s, c := math.Sincos(t)
	return pairTermsSC(g, b, s, c)
}

// pairTermsSC is pairTerms given s, c = sin t, cos t.
func pairTermsSC(g, b, s, c float64) (pa, pb float64) {
	return g*c + b*s, g*s - b*c
}
