package enforce

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// maxTheta bounds |θ_j| for TrainableDiagonal weights: exp(±θ) and the
// Gram matrix built from it stay finite.
const maxTheta = 300

// thetaWeights returns W⁻¹'s diagonal exp(−θ) for TrainableDiagonal
// weights, extended with 1 for the latent variables, after checking θ.
func (a *AdaNP) thetaWeights(theta []float64) ([]float64, error) {
	if a.s.Weights != TrainableDiagonal {
		return nil, fmt.Errorf("enforce: θ is only used with trainable-diagonal weights, not %v", a.s.Weights)
	}
	if len(theta) != a.ny {
		return nil, fmt.Errorf("enforce: θ has length %d, want ny = %d", len(theta), a.ny)
	}
	d := make([]float64, a.n)
	for j := range d {
		d[j] = 1
	}
	for j, t := range theta {
		if !(math.Abs(t) <= maxTheta) {
			return nil, fmt.Errorf("enforce: θ[%d] = %v, want |θ| ≤ %d", j, t, maxTheta)
		}
		d[j] = math.Exp(-t)
	}
	return d, nil
}

// ProjectTheta is Project for TrainableDiagonal weights W = diag(exp(θ)),
// θ of length ny.
func (a *AdaNP) ProjectTheta(x, yhat *mat.Dense, theta []float64) (*mat.Dense, Stats, error) {
	if yhat == nil || yhat.IsEmpty() {
		return nil, Stats{}, errors.New("enforce: nil or empty ŷ (a batch needs at least one row)")
	}
	r, _ := yhat.Dims()
	dst := mat.NewDense(r, a.ny, nil)
	st, err := a.ProjectTraceTheta(dst, x, yhat, theta, nil)
	if err != nil {
		return nil, st, err
	}
	return dst, st, nil
}

// ProjectTraceTheta is ProjectTrace for TrainableDiagonal weights
// W = diag(exp(θ)), θ of length ny; tr may be nil (then it is ProjectTo
// with these weights). VJPTheta back-propagates through the trace,
// into θ too.
func (a *AdaNP) ProjectTraceTheta(dst, x, yhat *mat.Dense, theta []float64, tr *Trace) (Stats, error) {
	d, err := a.thetaWeights(theta)
	if err != nil {
		return Stats{}, err
	}
	return a.forward(dst, x, yhat, tr, false, d)
}

// VJPTheta is VJP for a trace recorded by ProjectTraceTheta that also
// writes ∂ℓ/∂θ (summed over the batch) into gtheta, of length ny. With
// D = W⁻¹ = diag(exp(−θ)), for Unrolled and Projector gradients each step
// y⁺ = y − α·D·Bᵀμ contributes
//
//	∂ℓ/∂θ_j = α·p_j·(Bᵀμ)_j·D_j,  p = ḡ' − Bᵀw
//
// with ḡ', w as in backStep (step.go). Implicit gradients differentiate
// the KKT conditions W(y* − ŷ) + Bᵀλ = 0 of the W-nearest point y*:
// ∂ℓ/∂θ_j = u_j·(Bᵀλ)_j, where ∂ℓ/∂ŷ = W·u (see implicitVJP), and
// FinalProjector takes the same formula without curvature (u = D·p, p
// the projected gradient). ∂ℓ/∂θ is exact where the ŷ-gradient is
// (AdaNP.ExactGradient and Trace.GradStats).
func (a *AdaNP) VJPTheta(tr *Trace, grad, gyhat, gx *mat.Dense, gtheta []float64) error {
	if a.s.Weights != TrainableDiagonal {
		return fmt.Errorf("enforce: VJPTheta needs trainable-diagonal weights, not %v", a.s.Weights)
	}
	if len(gtheta) != a.ny {
		return fmt.Errorf("enforce: θ-gradient has length %d, want ny = %d", len(gtheta), a.ny)
	}
	return a.vjp(tr, grad, gyhat, gx, gtheta)
}
