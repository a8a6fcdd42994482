package losses

import (
	"fmt"

	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/internal/graphguard"
)

// MSE returns the mean over all elements of (pred − target)²,
// (1/(N·m)) Σ_i Σ_j (pred_ij − target_ij)² for N×m inputs, as PyTorch's
// MSELoss with its default mean reduction. pred and target must have the
// same shape and dtype. For the paper's per-sample normalisation
// (1/N) Σ_i ‖pred_i − target_i‖² use SumSquaredMean; the two differ by the
// factor m.
func MSE(pred, target *gorgonia.Node) (out *gorgonia.Node, err error) {
	const where = "losses: MSE"
	if err := checkPair(where, pred, target); err != nil {
		return nil, err
	}
	defer graphguard.Recover(&out, &err, where)
	sq, err := squaredDiff(pred, target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if out, err = gorgonia.Mean(sq); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return out, nil
}

// SumSquaredMean returns (1/N) Σ_i ‖pred_i − target_i‖², the squared
// Euclidean distance of each sample (a row, or everything after the first
// axis) averaged over the N samples along the first axis. It is the paper's
// regression measure m_ℓ.
func SumSquaredMean(pred, target *gorgonia.Node) (*gorgonia.Node, error) {
	return sumSquaredMean("losses: SumSquaredMean", pred, target, 1)
}

// Displacement returns λ_D·(1/N) Σ_i ‖ŷ_i − ỹ_i‖², the projection
// displacement penalty of the ENFORCE loss, for the backbone prediction
// yhat and its projection ytilde (both N×ny). lambdaD must be finite and
// non-negative.
func Displacement(yhat, ytilde *gorgonia.Node, lambdaD float64) (*gorgonia.Node, error) {
	const where = "losses: Displacement"
	if err := checkLambda(where, lambdaD); err != nil {
		return nil, err
	}
	return sumSquaredMean(where, yhat, ytilde, lambdaD)
}

// sumSquaredMean returns k·(1/N) Σ_i ‖a_i − b_i‖².
func sumSquaredMean(where string, a, b *gorgonia.Node, k float64) (out *gorgonia.Node, err error) {
	if err := checkPair(where, a, b); err != nil {
		return nil, err
	}
	defer graphguard.Recover(&out, &err, where)
	sq, err := squaredDiff(a, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	total, err := gorgonia.Sum(sq)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if out, err = scale(total, k/float64(a.Shape()[0])); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return out, nil
}

func squaredDiff(a, b *gorgonia.Node) (*gorgonia.Node, error) {
	d, err := gorgonia.Sub(a, b)
	if err != nil {
		return nil, err
	}
	return gorgonia.Square(d)
}
