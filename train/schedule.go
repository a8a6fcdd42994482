package train

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/gonum/mat"
)

// Schedule is a learning-rate schedule: the factor by which Config.LearnRate
// is multiplied for epoch e (counted from 1 in each Fit call, as
// Epoch.Epoch), given the epochs of the call completed before it (past,
// of length e−1; a Fit call that Resume continues passes the restored
// ones). It must be a function of its arguments alone, so that a resumed
// run takes the same steps, and return a positive, finite factor whose
// rate LearnRate·factor is finite and a normal float64, at least
// MinLearnRate; Fit stops with an error naming the epoch otherwise, before
// training it. A smaller rate has underflowed: to zero, or to a subnormal
// number whose Adam steps no longer move the weights, so training would go
// on doing nothing without a word. A decaying schedule reaches that point
// after enough epochs (StepDecay(1, 1e-300) at epoch 3 from the default
// rate, StepDecay(1, 0.5) at epoch 1014). Epoch.LearnRate records the rate
// each epoch used.
type Schedule func(epoch int, past History) float64

// MinLearnRate is the smallest learning rate Fit accepts, for
// Config.LearnRate and for every epoch of a Schedule: the smallest normal
// float64, 2⁻¹⁰²² ≈ 2.2250738585072014e-308.
const MinLearnRate = 0x1p-1022

// StepDecay returns the schedule that multiplies the rate by factor every
// `every` epochs: factor^⌊(e−1)/every⌋. It panics unless every ≥ 1 and
// factor is positive, finite and at least MinLearnRate (a smaller factor
// underflows the rate at its first step). Fit stops with an error at the
// first epoch whose rate falls below MinLearnRate (see Schedule).
func StepDecay(every int, factor float64) Schedule {
	if every < 1 || !(factor >= MinLearnRate) || math.IsInf(factor, 1) {
		panic(fmt.Sprintf("train: StepDecay(%d, %v): want every ≥ 1 and a finite factor ≥ MinLearnRate = %v", every, factor, MinLearnRate))
	}
	return func(e int, _ History) float64 { return math.Pow(factor, float64((e-1)/every)) }
}

// ReduceOnPlateau returns the schedule that multiplies the rate by factor
// each time the monitored loss has not improved on its best for patience
// epochs in a row (the count then starts again), as Keras's and PyTorch's
// ReduceLROnPlateau: the monitored loss is Epoch.ValLoss with a validation
// set (SetValidation), Epoch.Loss otherwise. An epoch improves when its
// loss is below the best so far. It panics unless patience ≥ 1 and
// MinLearnRate ≤ factor < 1; Fit stops with an error at the first epoch
// whose rate falls below MinLearnRate (see Schedule).
func ReduceOnPlateau(patience int, factor float64) Schedule {
	if patience < 1 || !(factor >= MinLearnRate && factor < 1) {
		panic(fmt.Sprintf("train: ReduceOnPlateau(%d, %v): want patience ≥ 1 and MinLearnRate ≤ factor < 1", patience, factor))
	}
	return func(_ int, past History) float64 {
		f, best, since := 1.0, math.Inf(1), 0
		for _, e := range past {
			loss := e.Loss
			if e.ValLoss != 0 {
				loss = e.ValLoss
			}
			if loss < best {
				best, since = loss, 0
			} else if since++; since >= patience {
				f, since = f*factor, 0
			}
		}
		return f
	}
}

// CosineDecay returns the cosine schedule from 1 at epoch 1 down to floor
// at epoch `epochs` (and floor after it):
// floor + (1−floor)·(1 + cos(π·(e−1)/(epochs−1)))/2. It panics unless
// epochs ≥ 1 and MinLearnRate ≤ floor ≤ 1; Fit stops with an error if
// LearnRate·floor falls below MinLearnRate (see Schedule).
func CosineDecay(epochs int, floor float64) Schedule {
	if epochs < 1 || !(floor >= MinLearnRate && floor <= 1) {
		panic(fmt.Sprintf("train: CosineDecay(%d, %v): want epochs ≥ 1 and MinLearnRate ≤ floor ≤ 1", epochs, floor))
	}
	return func(e int, _ History) float64 {
		if epochs == 1 || e >= epochs {
			return floor
		}
		t := float64(max(e-1, 0)) / float64(epochs-1)
		return floor + (1-floor)*(1+math.Cos(math.Pi*t))/2
	}
}

// rateAt returns Config.LearnRate times the schedule's factor for epoch e.
func (m *Model) rateAt(e int, past History) (float64, error) {
	base := m.cfg.LearnRate
	if m.cfg.Schedule == nil {
		return base, nil
	}
	f := m.cfg.Schedule(e, past)
	rate := base * f
	switch {
	case math.IsNaN(f) || f < 0 || math.IsInf(f, 1) || math.IsInf(rate, 1):
		return 0, fmt.Errorf("train: epoch %d: Config.Schedule returned the factor %v; want positive and finite", e, f)
	case rate < MinLearnRate:
		return 0, fmt.Errorf("train: epoch %d: the learning rate underflows: Config.Schedule returned the factor %v, and LearnRate %v times it is %v, below MinLearnRate = %v",
			e, f, base, rate, MinLearnRate)
	}
	return rate, nil
}

// csvHeader names the columns of History.WriteCSV.
var csvHeader = []string{"epoch", "loss", "task", "displacement", "residual", "max_residual", "depth", "projected", "missed", "val_loss", "learn_rate"}

// WriteCSV writes the history to w as CSV: a header row
//
//	epoch,loss,task,displacement,residual,max_residual,depth,projected,missed,val_loss,learn_rate
//
// and one row per epoch, every number in the shortest form that parses
// back to the same float64 (so data.LoadCSV reads it back exactly). It
// returns the error of w, if any.
func (h History) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, e := range h {
		rec := []string{strconv.Itoa(e.Epoch), f(e.Loss), f(e.Task), f(e.Displacement), f(e.Residual), f(e.MaxResidual), f(e.Depth),
			f(e.Projected), strconv.Itoa(e.Missed), f(e.ValLoss), f(e.LearnRate)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// SetValidation sets the validation set of Fit: inputs x and labels y in
// original units, held out of training. After every epoch Fit then records
// in Epoch.ValLoss the validation loss, (1/N)Σ‖y − ỹ‖² of Predict's ỹ on x
// (in the units of Epoch.Task: standardised when the model standardises),
// and with Config.Patience stops early (see Patience). Nil x and y remove
// the validation set. It returns an error for invalid data. The set is
// not saved, and FitUnsupervised does not use it.
func (m *Model) SetValidation(x, y *mat.Dense) error {
	if m == nil {
		return errNilModel
	}
	if x == nil && y == nil {
		m.valX, m.valY = nil, nil
		return nil
	}
	if y == nil {
		return errors.New("train: SetValidation: nil labels")
	}
	if err := m.checkData(x, y, true); err != nil {
		return fmt.Errorf("train: SetValidation: %w", err)
	}
	m.valX, m.valY = mat.DenseCopyOf(x), mat.DenseCopyOf(y)
	return nil
}

// valLoss returns the validation loss of the current weights.
func (m *Model) valLoss() (float64, error) {
	pred, _, err := m.Predict(m.valX)
	if err != nil {
		return 0, fmt.Errorf("the validation set: %w", err)
	}
	r, c := pred.Dims()
	var s float64
	for i := range r {
		p, y := pred.RawRowView(i), m.valY.RawRowView(i)
		for j := range c {
			d := p[j] - y[j]
			if m.sy != nil {
				d /= m.sy.Std[j]
			}
			s += d * d
		}
	}
	return s / float64(r), nil
}
