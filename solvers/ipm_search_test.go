package solvers

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestLeq(t *testing.T) {
	for _, tc := range []struct {
		a, b, base float64
		want       bool
	}{
		{1, 2, 1, true},
		{2, 1, 1, false},
		{1 + 5*eps, 1, 1, true},   // within 10·ε·|base|
		{1 + 20*eps, 1, 1, false}, // beyond it
		{1e3 + 1e-12, 1e3, 1e3, true},
		{1e-12, 0, 0, false},
	} {
		assert.Equal(t, tc.want, leq(tc.a, tc.b, tc.base), "leq(%v, %v, %v)", tc.a, tc.b, tc.base)
	}
}

// newSearch returns an ipm of HS071 at its starting point and a search
// along dz with the given θ₀, φ₀ and ∇φᵀdz.
func newSearch(t *testing.T, dz []float64, theta0, phi0, dphi float64) (*ipm, *lineSearch) {
	t.Helper()
	p := hs071()
	init := []float64{1.5, 4.5, 4, 1.5}
	require.NoError(t, p.Validate(init))
	w := newIPM(p, init)
	w.thetaMax, w.thetaMin = 1e4, 1e-4
	ls := &lineSearch{dz: dz, dlam: make([]float64, p.M), theta0: theta0, phi0: phi0, dphi: dphi, alphaMax: 1,
		zTry: make([]float64, w.nz)}
	return w, ls
}

// TestTinyStep: a step below 10·ε·(1 + |z_j|) in every entry is taken
// whole while max|c| ≤ 10⁻⁴, and only then.
func TestTinyStep(t *testing.T) {
	tiny := func(w *ipm, f float64) []float64 {
		dz := make([]float64, w.nz)
		for j, zj := range w.z {
			dz[j] = f * eps * (1 + math.Abs(zj))
		}
		return dz
	}
	w, _ := newSearch(t, nil, 0, 0, 0)
	for _, tc := range []struct {
		name       string
		dz         []float64
		feas       float64
		want       bool
		wantLength float64
	}{
		{"tiny", tiny(w, 5), 1e-6, true, 1},
		{"tiny, infeasible", tiny(w, 5), 1e-3, false, 0},
		{"not tiny", tiny(w, 20), 1e-6, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ls := newSearch(t, tc.dz, 0, 0, 0)
			require.Equal(t, tc.want, ls.tinyStep(w, tc.feas))
			if tc.want {
				assert.Equal(t, tc.wantLength, ls.alpha)
				for j := range w.z {
					assert.Equal(t, w.z[j]+tc.dz[j], ls.zTry[j])
				}
			}
		})
	}
}

// TestFilterAcceptable checks the filter's rules (Wächter & Biegler 2006,
// §2.3): refusal above θ_max and by a filter entry, Armijo's rule on φ
// under the switching condition when θ₀ ≤ θ_min, and otherwise sufficient
// decrease of θ or φ.
func TestFilterAcceptable(t *testing.T) {
	dz := []float64{0.1, 0, 0, 0, 0}
	for _, tc := range []struct {
		name               string
		theta0, phi0, dphi float64
		filter             []filterEntry
		alpha, phi, theta  float64
		wantOK, wantArmijo bool
	}{
		{"above θ_max", 1, 10, -1, nil, 1, 5, 2e4, false, false},
		{"in the filter", 1, 10, -1, []filterEntry{{0.5, 9}}, 1, 9.5, 0.6, false, false},
		{"left of the filter", 1, 10, -1, []filterEntry{{0.5, 9}}, 1, 9.5, 0.4, true, false},
		{"θ decreases", 1, 10, -1, nil, 1, 11, 0.5, true, false},
		{"φ decreases", 1, 10, -1, nil, 1, 9, 2, true, false},
		{"neither", 1, 10, -1, nil, 1, 10.5, 1.5, false, false},
		{"Armijo, feasible", 0, 10, -1, nil, 1, 9, 0, true, true},
		{"Armijo fails, feasible", 0, 10, -1, nil, 1, 10 - 1e-9, 0, false, false},
		{"switching with θ > θ_min: an f-type step", 1e-3, 10, -1, nil, 1, 9, 1e-3, true, true},
		{"no descent, feasible: θ stays 0", 0, 10, 1, nil, 1, 9, 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ls := newSearch(t, dz, tc.theta0, tc.phi0, tc.dphi)
			w.filter = tc.filter
			ok, armijo := ls.acceptable(w, tc.alpha, tc.phi, tc.theta)
			assert.Equal(t, tc.wantOK, ok, "accepted")
			assert.Equal(t, tc.wantArmijo, armijo, "Armijo step")
		})
	}
}

// TestSecondOrderCorrection is the Maratos effect (Nocedal & Wright,
// Example 15.4): min 2(y₁² + y₂² − 1) − y₁ s.t. y₁² + y₂² = 1, at y =
// (cos t, sin t) with the optimal multiplier λ = −3/2. The Newton step d =
// sin t·(sin t, −cos t) raises both f and ‖c‖₁ by sin²t, so the filter
// refuses it and, without a correction, cuts it short; the second-order
// correction brings the trial point back to the circle and the whole step
// is taken.
func TestSecondOrderCorrection(t *testing.T) {
	const th = 0.2
	p := &SparseNLP{
		N: 2, M: 1, GLower: []float64{1}, GUpper: []float64{1},
		Objective:   func(y []float64) float64 { return 2*(y[0]*y[0]+y[1]*y[1]-1) - y[0] },
		Grad:        func(y, g []float64) { g[0], g[1] = 4*y[0]-1, 4*y[1] },
		Constraints: func(y, g []float64) { g[0] = y[0]*y[0] + y[1]*y[1] },
		JacRows:     []int{0, 0}, JacCols: []int{0, 1},
		Jacobian: func(y, v []float64) { v[0], v[1] = 2*y[0], 2*y[1] },
		HessRows: []int{0, 1}, HessCols: []int{0, 1},
		Hessian: func(y []float64, s float64, l, v []float64) { v[0], v[1] = 4*s+2*l[0], 4*s+2*l[0] },
	}
	y := []float64{math.Cos(th), math.Sin(th)}
	// The Newton system [I Jᵀ; J 0] at (y, λ) with ∇²L = (4 − 3)I.
	jac := []float64{2 * y[0], 2 * y[1]}
	rd := []float64{4*y[0] - 1 - 1.5*jac[0], 4*y[1] - 1.5*jac[1]}
	kkt := mat.NewDense(3, 3, []float64{1, 0, jac[0], 0, 1, jac[1], jac[0], jac[1], 0})
	solve := func(cs []float64) ([]float64, []float64) {
		var x mat.VecDense
		require.NoError(t, x.SolveVec(kkt, mat.NewVecDense(3, []float64{-rd[0], -rd[1], -cs[0]})))
		return []float64{x.AtVec(0), x.AtVec(1)}, []float64{x.AtVec(2)}
	}
	for _, tc := range []struct {
		name      string
		soc       func([]float64) ([]float64, []float64)
		corrected bool
	}{
		{"with corrections", solve, true},
		{"without", func([]float64) ([]float64, []float64) { return nil, nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newIPM(p, y)
			require.Zero(t, w.nz-2)
			w.lambda[0] = -1.5
			w.thetaMax, w.thetaMin = 1e4, 1e-4
			c := make([]float64, 1)
			w.residual(w.z, c)
			gz := make([]float64, 2)
			w.gradient(gz)
			jac := mat.NewDense(1, 2, nil)
			w.jacobian(jac)
			dz, dlam := solve(c)
			assert.InDeltaSlice(t, []float64{math.Sin(th) * math.Sin(th), -math.Sin(th) * math.Cos(th)}, dz, 1e-12)
			var ls lineSearch
			ls.begin(w, dz, dlam, c, gz, jac, 0.1, 0.99)
			// The full step is refused: it raises both θ and φ.
			phi, theta := w.barrier([]float64{y[0] + dz[0], y[1] + dz[1]}, 0.1, make([]float64, 1))
			require.Greater(t, theta, ls.theta0)
			require.Greater(t, phi, ls.phi0)
			require.True(t, ls.filterSearch(w, tc.soc))
			if !tc.corrected {
				assert.Less(t, ls.alpha, 1.0)
				return
			}
			assert.Equal(t, 1.0, ls.alpha)
			assert.NotEqual(t, dz, ls.stepZ)
			_, theta = w.barrier(ls.zTry, 0.1, make([]float64, 1))
			assert.Less(t, theta, 1e-2*math.Sin(th)*math.Sin(th), "‖c‖₁ after the corrected step, against sin²t before")
		})
	}
}

// TestThetaRounding: the tolerance of θ's comparisons is 10·ε·(θ + Σ|b| +
// Σ|J_ij·z_j|). HS071 at z = (1.5, 4.5, 4, 1.5, s = 40.5): row 1 is
// y₁y₂y₃y₄ − s, whose Σ|J_ij·z_j| is 4·40.5 + 40.5 = 202.5; row 2 is
// Σy² − 40 with Σ|J_ij·z_j| = 2·40.75 = 81.5 and |b| = 40; θ = 0.75.
func TestThetaRounding(t *testing.T) {
	w, _ := newSearch(t, nil, 0, 0, 0)
	require.Equal(t, []float64{1.5, 4.5, 4, 1.5, 40.5}, w.z)
	c := make([]float64, w.m)
	w.residual(w.z, c)
	jac := mat.NewDense(w.m, w.nz, nil)
	w.jacobian(jac)
	theta := math.Abs(c[0]) + math.Abs(c[1])
	require.InDelta(t, 0.75, theta, 1e-14)
	assert.InEpsilon(t, 10*eps*(0.75+202.5+81.5+40), w.thetaRounding(jac, theta), 1e-12)
}

// TestFilterThetaRounding is the stall of feeder8 (problems/acopf) under
// OpenBLAS, with the values of its iteration 4: z feasible to rounding
// (θ₀ = 5.24·10⁻¹⁴), a Newton step of 2·10⁻¹⁴ that corrects λ by 10⁻³ and
// raises φ by 4.6·10⁻¹², and a trial point whose θ rounds to 1.19·10⁻¹³.
// Compared up to 10·ε·θ₀ (IPOPT) the filter refused the full step and
// every step that rounded θ up, so λ, moving with α, stopped short and
// the search stalled for 1000 iterations; compared up to the rounding of
// c's terms (3.5·10⁻¹² there) the step is taken. A trial point whose θ
// exceeds θ₀ by more than that rounding is still refused.
func TestFilterThetaRounding(t *testing.T) {
	const theta0, phi0, dphi = 5.24051e-14, 16.707237141573941, 4.63162e-12
	entry := filterEntry{(1 - filterGammaTheta) * theta0, phi0 - filterGammaPhi*theta0}
	ipopt, rounding := 10*eps*theta0, 3.53e-12
	for _, tc := range []struct {
		name       string
		thetaTol   float64
		filter     []filterEntry
		theta, phi float64
		want       bool
	}{
		{"θ rounded up, IPOPT's tolerance", ipopt, nil, 1.18829e-13, phi0 + dphi, false},
		{"θ rounded up, c's rounding", rounding, nil, 1.18829e-13, phi0 + dphi, true},
		{"θ rounded up, φ within rounding, filter entry at z, IPOPT's tolerance", ipopt, []filterEntry{entry}, 1.18829e-13, phi0 + 1e-14, false},
		{"θ rounded up, φ within rounding, filter entry at z, c's rounding", rounding, []filterEntry{entry}, 1.18829e-13, phi0 + 1e-14, true},
		{"θ beyond c's rounding", rounding, nil, 1e-11, phi0 + dphi, false},
		{"θ beyond c's rounding, φ within rounding, filter entry at z", rounding, []filterEntry{entry}, 1e-11, phi0 + 1e-14, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ls := newSearch(t, []float64{2e-14, 0, 0, 0, 0}, theta0, phi0, dphi)
			w.filter = tc.filter
			ls.thetaTol = tc.thetaTol
			ok, armijo := ls.acceptable(w, 1, tc.phi, tc.theta)
			assert.Equal(t, tc.want, ok, "accepted")
			assert.False(t, armijo, "no Armijo step: φ rises")
		})
	}
}
