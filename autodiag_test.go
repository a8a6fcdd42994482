package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// TestAutoDiagonalOrientation pins AutoDiagonal's W⁻¹ to the reference's
// weighting option 5: W = diag(max_j d_j / d_k) inverted, so W⁻¹_k =
// d_k / max_j d_j with d_k = max(mean_i |B_ik|, 1): the output with the
// largest Jacobian column gets 1, and columns of mean at most 1 get the
// smallest weight.
func TestAutoDiagonalOrientation(t *testing.T) {
	// nc = 2, n = 3: column means 4, 0.5 (→ 1) and 2.
	b := []float64{
		6, 0.5, -1,
		-2, -0.5, 3,
	}
	d := make([]float64, 3)
	autoWeights(d, b, 2, 3)
	require.Equal(t, []float64{1, 0.25, 0.5}, d)

	// The projection moves the outputs in that proportion: for one linear
	// constraint a·y = 0 from ŷ, the step is W⁻¹aᵀ·(a·ŷ)/(a·W⁻¹·aᵀ).
	c, err := Linear(0, mat.NewDense(1, 3, []float64{4, 0.5, 2}), nil)
	require.NoError(t, err)
	a, err := NewAdaNP(c, Settings{Weights: AutoDiagonal})
	require.NoError(t, err)
	yhat := []float64{1, 1, 1}
	ym, _, err := a.Project(nil, mat.NewDense(1, 3, yhat))
	require.NoError(t, err)
	y := ym.RawRowView(0)
	w := []float64{4 / 4.0, 1 / 4.0, 2 / 4.0} // d_k / max d with d = (4, 1, 2)
	for k := range y {
		move := yhat[k] - y[k]
		want := w[k] * []float64{4, 0.5, 2}[k]
		require.InDelta(t, want/(4*w[0]), move/(yhat[0]-y[0]), 1e-12, "output %d", k)
	}
}

// TestAutoDiagonalVJP checks autoDiagonalVJP against central differences
// of ℓ(B) = Σ_k dbar_k·D_k(B), away from the kinks, with several columns
// above the floor so that both the direct and the max terms count.
func TestAutoDiagonalVJP(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	const nc, n = 3, 5
	a := &AdaNP{nc: nc, n: n}
	for trial := range 20 {
		b := make([]float64, nc*n)
		for i := range b {
			// Column means well away from 1 and from each other.
			b[i] = (0.2 + 3*float64(i%n) + rnd.Float64()) * float64(1-2*rnd.IntN(2))
		}
		dbar := make([]float64, n)
		for k := range dbar {
			dbar[k] = rnd.NormFloat64()
		}
		loss := func(b []float64) float64 {
			d := make([]float64, n)
			autoWeights(d, b, nc, n)
			var l float64
			for k := range d {
				l += dbar[k] * d[k]
			}
			return l
		}
		bbar, dt := make([]float64, nc*n), make([]float64, n)
		a.autoDiagonalVJP(b, dbar, bbar, dt)
		for i := range b {
			const h = 1e-6
			bp, bm := append([]float64(nil), b...), append([]float64(nil), b...)
			bp[i] += h
			bm[i] -= h
			fd := (loss(bp) - loss(bm)) / (2 * h)
			if math.Abs(fd-bbar[i]) > 1e-7*(1+math.Abs(fd)) {
				t.Fatalf("trial %d: ∂ℓ/∂B[%d] = %g, central difference %g", trial, i, bbar[i], fd)
			}
		}
	}
}
