package enforce

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// fzSettings decodes a byte into settings: gradient mode, weighting and
// globalisation.
func fzSettings(b uint8, ny int) Settings {
	s := Settings{MaxDepth: 30}
	s.Grad = GradMode(b % 4)
	switch (b / 4) % 3 {
	case 1:
		s.Weights = Diagonal
		s.Diag = make([]float64, ny)
		for i := range s.Diag {
			s.Diag[i] = float64(i + 1)
		}
	case 2:
		s.Weights = AutoDiagonal
	}
	s.LineSearch = (b/12)%2 == 1
	if (b/24)%2 == 1 {
		s.MaxStep = 0.5
	}
	s.Recompute = (b/48)%2 == 1
	return s
}

// FuzzVJP projects and back-propagates one sample through several
// nonlinear systems under every mode, weighting and globalisation: the
// forward and backward passes return finite values or an error, never a
// panic or NaN.
func FuzzVJP(f *testing.F) {
	f.Add(0.5, 1.0, -0.3, 0.2, 1.0, uint8(0), uint8(0))
	f.Add(59.0, 0.0, 0.0, 1.0, -1.0, uint8(8), uint8(3))
	f.Add(1e-9, 1e-12, 2.0, 0.0, 0.0, uint8(200), uint8(1))
	f.Add(1e300, -1e300, 2.0, 1.0, 3.0, uint8(37), uint8(2))
	f.Fuzz(func(t *testing.T, x, y1, y2, g1, g2 float64, settings, which uint8) {
		cs := []Constraint{gtCircle(t), npFitting{}, npDuplicate{}, gtCircleIneqX1(t)}
		c := cs[int(which)%len(cs)]
		nx, nyExt, _ := c.Dims()
		ny := nyExt
		ny -= CapabilitiesOf(c).Latent
		p, err := NewAdaNP(c, fzSettings(settings, ny))
		require.NoError(t, err)
		xv := make([]float64, nx)
		for i := range xv {
			xv[i] = x
		}
		yv := []float64{y1, y2, y1 - y2}[:ny]
		var tr Trace
		yt := mat.NewDense(1, ny, nil)
		if _, err := p.ProjectTrace(yt, mat.NewDense(1, nx, xv), mat.NewDense(1, ny, yv), &tr); err != nil {
			return
		}
		require.True(t, allFinite(yt.RawMatrix().Data))
		gv := []float64{g1, g2, g1 + g2}[:ny]
		if !allFinite(gv) {
			return
		}
		gy, gx := mat.NewDense(1, ny, nil), mat.NewDense(1, nx, nil)
		if err := p.VJP(&tr, mat.NewDense(1, ny, gv), gy, gx); err != nil {
			return
		}
		require.True(t, allFinite(gy.RawMatrix().Data), "ŷ-gradient %v", gy.RawMatrix().Data)
		require.True(t, allFinite(gx.RawMatrix().Data), "x-gradient %v", gx.RawMatrix().Data)
		gs := tr.GradStats()
		require.False(t, math.IsNaN(gs.MaxGain))
	})
}

// gtCircleIneqX1 is gtCircleIneq with a single input: y1² + y2² = 1,
// y1 ≤ x.
func gtCircleIneqX1(t *testing.T) Constraint {
	return ineqOneInput{gtCircleIneq(t)}
}

// ineqOneInput feeds (x, 1) to a two-input system.
type ineqOneInput struct{ c Constraint }

func (w ineqOneInput) Dims() (int, int, int) { _, ny, nc := w.c.Dims(); return 1, ny, nc }
func (w ineqOneInput) Eval(x, y, c, jy []float64) {
	w.c.Eval([]float64{x[0], 1}, y, c, jy)
}
func (w ineqOneInput) JacobianX(x, y, jx []float64) {
	j := make([]float64, 2*len(jx))
	CapabilitiesOf(w.c).JacobianX([]float64{x[0], 1}, y, j)
	for i := range jx {
		jx[i] = j[2*i]
	}
}
func (w ineqOneInput) HessVec(x, y, wt, v, out []float64) {
	CapabilitiesOf(w.c).HessVec([]float64{x[0], 1}, y, wt, v, out)
}
func (w ineqOneInput) MixedHessVec(x, y, wt, v, out []float64) {
	o := make([]float64, 2)
	CapabilitiesOf(w.c).MixedHessVec([]float64{x[0], 1}, y, wt, v, o)
	out[0] = o[0]
}
func (w ineqOneInput) feasibility(x, y, r []float64) {
	CapabilitiesOf(w.c).feasibility([]float64{x[0], 1}, y, r)
}
func (w ineqOneInput) Capabilities() Capabilities {
	return Capabilities{JacobianX: w.JacobianX, HessVec: w.HessVec, MixedHessVec: w.MixedHessVec,
		Latent: CapabilitiesOf(w.c).Latent, feasibility: w.feasibility}
}

// FuzzInequalities projects one sample onto the unit circle with y1 ≤ x
// under every setting: the output is finite, and when AdaNP reports
// convergence, Check finds the equality and the inequality met.
func FuzzInequalities(f *testing.F) {
	f.Add(0.5, 1.0, -0.3, uint8(0))
	f.Add(59.0, 0.0, 0.0, uint8(8))
	f.Add(-0.99, 3.0, 3.0, uint8(12))
	f.Add(-2.0, 0.1, 0.1, uint8(40))
	f.Fuzz(func(t *testing.T, x, y1, y2 float64, settings uint8) {
		c := gtCircleIneqX1(t)
		s := fzSettings(settings, 2)
		s.MaxDepth = 100
		p, err := NewAdaNP(c, s)
		require.NoError(t, err)
		xm, yhat := mat.NewDense(1, 1, []float64{x}), mat.NewDense(1, 2, []float64{y1, y2})
		y, st, err := p.Project(xm, yhat)
		if err != nil {
			return
		}
		require.True(t, allFinite(y.RawMatrix().Data))
		if st.Converged() {
			chk, err := p.Check(xm, y)
			require.NoError(t, err)
			require.LessOrEqual(t, chk.After.Max, 1e-5, "ỹ = %v, x = %v", y.RawMatrix().Data, x)
		}
	})
}

// FuzzInterior projects one point onto the circle y1² + y2² = x² within a
// box drawn from the inputs (possibly pinned, one-sided or empty of
// solutions) with Interior: no panic, NewInterior rejects bad boxes with
// an error, and every output is finite and inside its box (strictly,
// except a pinned value), converged or not.
func FuzzInterior(f *testing.F) {
	f.Add(1.0, 0.5, 0.2, 0.8, 2.0, -1.0, 1.0)
	f.Add(2.0, 0.0, 0.0, 1.0, 1.0, -1e300, 1e300)
	f.Add(1e-9, 3.0, -3.0, -0.5, 0.5, 0.0, 0.0)
	f.Add(1.0, 1e300, -1e300, 5.0, 6.0, 5.0, 6.0)
	f.Add(1.0, 0.0, 0.0, 1e20, 2e20, -1.0, 1.0)
	f.Fuzz(func(t *testing.T, x, y1, y2, lo1, hi1, lo2, hi2 float64) {
		p, err := NewInterior(gtCircle(t), Box{Lo: []float64{lo1, lo2}, Hi: []float64{hi1, hi2}}, 0, Settings{MaxDepth: 30})
		if err != nil {
			return
		}
		y, _, err := p.Project(mat.NewDense(1, 1, []float64{x}), mat.NewDense(1, 2, []float64{y1, y2}))
		if err != nil {
			return
		}
		for k, v := range y.RawRowView(0) {
			lo, hi := []float64{lo1, lo2}[k], []float64{hi1, hi2}[k]
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "y[%d] = %v", k, v)
			if lo == hi {
				require.Equal(t, lo, v)
				continue
			}
			require.True(t, lo < v && v < hi, "y[%d] = %v outside (%v, %v)", k, v, lo, hi)
		}
	})
}
