package solvers

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{"ascent direction, feasible: sufficient decrease of φ", 0, 10, 1, nil, 1, 9, 0, true, false},
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
