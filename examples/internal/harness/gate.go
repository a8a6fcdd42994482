package harness

import (
	"cmp"
	"errors"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// GateReplay is the activation rule (the paper's Algorithm 2) replayed on
// a data set with a trained ENFORCE model's final backbone: for each batch
// of consecutive rows, one NP step of the model's training AdaNP, and the
// squared error against the labels before and after it, in the units the
// rule measures (standardised when the model standardises its outputs,
// as package train's rule does).
type GateReplay struct {
	// Rejected counts the batches whose squared error one NP step raises
	// (the rule keeps the backbone's prediction for those), of Batches.
	Rejected, Batches int
	// Delta is, per output, the change of the squared error that the step
	// makes, summed over the batches; Std the outputs' standard deviations
	// in the model's standardisation (1 where it has none).
	Delta, Std []float64
}

// ReplayGate replays the activation rule of m, an ENFORCE model, on set in
// batches of batch rows (a last, shorter batch is dropped, as Fit drops
// it).
func ReplayGate(m *train.Model, set problems.Dataset, batch int) (GateReplay, error) {
	np := m.TrainAdaNP()
	if np == nil {
		return GateReplay{}, errors.New("harness: ReplayGate: not an ENFORCE model")
	}
	s := np.Settings()
	s.MinDepth, s.MaxDepth = 1, 1
	one, err := enforce.NewAdaNP(np.Constraint(), s)
	if err != nil {
		return GateReplay{}, err
	}
	_, ny := np.Dims()
	r := GateReplay{Delta: make([]float64, ny), Std: make([]float64, ny)}
	_, sy := m.Standardizers()
	for j := range r.Std {
		r.Std[j] = 1
		if sy != nil {
			r.Std[j] = sy.Std[j]
		}
	}
	n, nx := set.X.Dims()
	d := make([]float64, ny)
	for lo := 0; lo+batch <= n; lo += batch {
		x := set.X.Slice(lo, lo+batch, 0, nx).(*mat.Dense)
		y := set.Y.Slice(lo, lo+batch, 0, ny).(*mat.Dense)
		yhat, err := m.Backbone(x)
		if err != nil {
			return r, err
		}
		stepped, _, err := one.Project(x, yhat)
		if err != nil {
			return r, err
		}
		var change float64
		for j := range d {
			d[j] = 0
			for i := range batch {
				a, b := (yhat.At(i, j)-y.At(i, j))/r.Std[j], (stepped.At(i, j)-y.At(i, j))/r.Std[j]
				d[j] += b*b - a*a
			}
			r.Delta[j] += d[j]
			change += d[j]
		}
		r.Batches++
		if change > 0 {
			r.Rejected++
		}
	}
	return r, nil
}

// Largest returns the indices of the k largest values of v, largest
// first.
func Largest(v []float64, k int) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(v[b], v[a]) })
	return idx[:min(k, len(idx))]
}
