package train

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/data"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
)

// TestSchedules checks StepDecay's and CosineDecay's factors and their
// argument checks.
func TestSchedules(t *testing.T) {
	s := StepDecay(3, 0.5)
	var got []float64
	for e := 1; e <= 7; e++ {
		got = append(got, s(e, nil))
	}
	assert.Equal(t, []float64{1, 1, 1, 0.5, 0.5, 0.5, 0.25}, got)

	c := CosineDecay(5, 0.1)
	assert.Equal(t, 1.0, c(1, nil))
	assert.InDelta(t, 0.1+0.9*(1+math.Cos(math.Pi/4))/2, c(2, nil), 1e-15)
	assert.InDelta(t, 0.55, c(3, nil), 1e-15)
	assert.Equal(t, 0.1, c(5, nil))
	assert.Equal(t, 0.1, c(9, nil))
	assert.Equal(t, 0.3, CosineDecay(1, 0.3)(1, nil))

	assert.Panics(t, func() { StepDecay(0, 0.5) })
	assert.Panics(t, func() { StepDecay(2, 0) })
	assert.Panics(t, func() { StepDecay(2, math.Inf(1)) })
	assert.Panics(t, func() { CosineDecay(0, 0.5) })
	assert.Panics(t, func() { CosineDecay(4, 0) })
	assert.Panics(t, func() { CosineDecay(4, 1.5) })
	assert.Panics(t, func() { ReduceOnPlateau(0, 0.5) })
	assert.Panics(t, func() { ReduceOnPlateau(2, 1) })
	for _, tiny := range []float64{MinLearnRate / 2, math.SmallestNonzeroFloat64} {
		assert.Panics(t, func() { StepDecay(1, tiny) }, "%v", tiny)
		assert.Panics(t, func() { CosineDecay(4, tiny) }, "%v", tiny)
		assert.Panics(t, func() { ReduceOnPlateau(2, tiny) }, "%v", tiny)
	}
	assert.NotPanics(t, func() { StepDecay(1, MinLearnRate); CosineDecay(4, MinLearnRate); ReduceOnPlateau(2, MinLearnRate) })

	// ReduceOnPlateau with patience 2: the loss improves at epochs 1, 2
	// and 5, and stalls at 3–4 (one reduction) and at 6–9 (two more).
	r := ReduceOnPlateau(2, 0.5)
	losses := []float64{5, 4, 4, 4.5, 3, 3, 3, 3, 3}
	var past History
	var factors []float64
	for i, l := range losses {
		factors = append(factors, r(i+1, past))
		past = append(past, Epoch{Epoch: i + 1, Loss: l})
	}
	factors = append(factors, r(len(losses)+1, past))
	assert.Equal(t, []float64{1, 1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.125}, factors)
	withVal := History{{Loss: 1, ValLoss: 3}, {Loss: 0.5, ValLoss: 4}, {Loss: 0.2, ValLoss: 5}}
	assert.Equal(t, 0.5, r(4, withVal), "ValLoss is monitored when present")
}

// TestFitSchedule checks that Fit uses the schedule's rate in each epoch
// (recorded in Epoch.LearnRate and equal to training with that constant
// rate for a one-epoch run), and that a schedule returning a factor that
// is not positive and finite stops Fit with an error naming the epoch.
func TestFitSchedule(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(40, 1)
	cfg := Config{Sizes: []int{1, 6, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 5, Quiet: true,
		LearnRate: 0.01, Schedule: StepDecay(2, 0.1)}
	m, err := New(cfg)
	require.NoError(t, err)
	h, err := m.Fit(d.X, d.Y)
	require.NoError(t, err)
	var rates []float64
	for _, e := range h {
		rates = append(rates, e.LearnRate)
	}
	assert.InDeltaSlice(t, []float64{0.01, 0.01, 0.001, 0.001, 0.0001}, rates, 1e-18)

	plain := cfg
	plain.Schedule = nil
	m2, err := New(plain)
	require.NoError(t, err)
	h2, err := m2.Fit(d.X, d.Y)
	require.NoError(t, err)
	assert.Equal(t, 0.01, h2.Last().LearnRate)
	assert.Equal(t, h[:2], h2[:2], "the same rate for two epochs gives the same epochs")
	assert.NotEqual(t, h[2:], h2[2:])

	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		cfg.Schedule = func(e int, _ History) float64 {
			if e == 3 {
				return bad
			}
			return 1
		}
		m, err := New(cfg)
		require.NoError(t, err)
		h, err := m.Fit(d.X, d.Y)
		require.Error(t, err)
		if bad == 0 {
			assert.Contains(t, err.Error(), "epoch 3: the learning rate underflows: Config.Schedule returned the factor 0")
		} else {
			assert.Contains(t, err.Error(), "epoch 3: Config.Schedule returned the factor")
		}
		assert.Len(t, h, 2)
	}
}

// TestScheduleUnderflow checks the rule of Schedule: an epoch whose rate
// LearnRate·factor falls below MinLearnRate (zero or a subnormal: it
// underflowed) stops Fit with an error naming the epoch before training
// it, at the epochs Schedule's documentation states. Before, Fit trained
// on at the rate 1e-303, 1e-310 or 0, and stopped only once the factor
// itself reached zero, with an error that did not say why.
func TestScheduleUnderflow(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(20, 1)
	for _, tc := range []struct {
		rate   float64
		epochs int // trained before the error
	}{{0, 2}, {1e-10, 1}, {1e-30, 1}} {
		m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 4, Quiet: true,
			LearnRate: tc.rate, Schedule: StepDecay(1, 1e-300)})
		require.NoError(t, err)
		h, err := m.Fit(d.X, d.Y)
		require.Error(t, err, "LearnRate %v", tc.rate)
		assert.Contains(t, err.Error(), fmt.Sprintf("epoch %d: the learning rate underflows", tc.epochs+1))
		assert.Len(t, h, tc.epochs)
		for _, e := range h {
			assert.GreaterOrEqual(t, e.LearnRate, MinLearnRate)
		}
	}

	m, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Quiet: true, Schedule: StepDecay(1, 0.5)})
	require.NoError(t, err)
	rate, err := m.rateAt(1013, nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, rate, MinLearnRate)
	_, err = m.rateAt(1014, nil)
	assert.ErrorContains(t, err, "epoch 1014: the learning rate underflows")

	for _, bad := range []float64{MinLearnRate / 2, 1e-310} {
		_, err := New(Config{Sizes: []int{1, 4, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), LearnRate: bad})
		assert.ErrorContains(t, err, "at least MinLearnRate", "%v", bad)
	}
}

// TestHistoryWriteCSV checks that WriteCSV writes a header and one row per
// epoch that data.LoadCSV reads back exactly.
func TestHistoryWriteCSV(t *testing.T) {
	h := History{
		{Epoch: 1, Loss: 0.1, Task: 1.0 / 3, Displacement: 2e-300, Residual: 1e-7, MaxResidual: 3e-7, Depth: 2.5, Projected: 1, Missed: 3, ValLoss: 0.2, LearnRate: 1e-3},
		{Epoch: 2, Loss: math.Pi, Task: -0, Displacement: 0, Residual: 12345.678, MaxResidual: 1e5, Depth: 0, Projected: 0.25, LearnRate: 5e-4},
	}
	var buf bytes.Buffer
	require.NoError(t, h.WriteCSV(&buf))
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	require.Len(t, lines, 3)
	assert.Equal(t, "epoch,loss,task,displacement,residual,max_residual,depth,projected,missed,val_loss,learn_rate", string(lines[0]))

	path := filepath.Join(t.TempDir(), "history.csv")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	d, err := data.LoadCSV(path, csvHeader, nil)
	require.NoError(t, err)
	for i, e := range h {
		want := []float64{float64(e.Epoch), e.Loss, e.Task, e.Displacement, e.Residual, e.MaxResidual, e.Depth, e.Projected, float64(e.Missed), e.ValLoss, e.LearnRate}
		assert.Equal(t, want, d.X.RawRowView(i))
	}

	assert.Error(t, h.WriteCSV(failWriter{}))
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestEarlyStopping checks validation and early stopping: with a
// validation set whose labels disagree with the training labels, the
// validation loss soon stops improving; Fit with Patience stops early
// without an error and leaves the weights of the epoch with the lowest
// validation loss. Without Patience it runs every epoch and still records
// the validation loss.
func TestEarlyStopping(t *testing.T) {
	p := problems.FittingEquality{}
	d := p.Sample(60, 1)
	v := p.Sample(30, 2)
	// Labels of the validation set are the truth for 1.3·x: the better
	// the network fits the training data, the worse it does on these.
	vy := mat.NewDense(30, 2, nil)
	for i := range 30 {
		p.Truth(1.3*v.X.At(i, 0), vy.RawRowView(i))
	}
	cfg := Config{Sizes: []int{1, 16, 2}, Hidden: layers.Tanh, Constraint: p.Equalities(), Epochs: 400, Quiet: true,
		LearnRate: 0.01, Standardize: true, Patience: 5, Seed: 3}
	m, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, m.SetValidation(v.X, vy))
	h, err := m.Fit(d.X, d.Y)
	require.NoError(t, err)
	require.Less(t, len(h), cfg.Epochs, "stopped early")
	vals := make([]float64, len(h))
	for i, e := range h {
		vals[i] = e.ValLoss
		require.Greater(t, e.ValLoss, 0.0)
	}
	bestAt := slices.Index(vals, slices.Min(vals))
	assert.Equal(t, len(h)-1-cfg.Patience, bestAt, "stopped Patience epochs after the best")
	got, err := m.valLoss()
	require.NoError(t, err)
	assert.Equal(t, vals[bestAt], got, "the best epoch's weights")

	cfg.Patience = 0
	cfg.Epochs = 20
	all, err := New(cfg)
	require.NoError(t, err)
	require.NoError(t, all.SetValidation(v.X, vy))
	h, err = all.Fit(d.X, d.Y)
	require.NoError(t, err)
	assert.Len(t, h, 20)
	assert.NotZero(t, h.Last().ValLoss)

	require.NoError(t, all.SetValidation(nil, nil))
	h, err = all.Fit(d.X, d.Y)
	require.NoError(t, err)
	assert.Zero(t, h.Last().ValLoss, "no validation set")

	assert.Error(t, all.SetValidation(v.X, nil))
	assert.ErrorContains(t, all.SetValidation(v.X, mat.NewDense(30, 3, nil)), "SetValidation")
	cfg.Patience = -1
	_, err = New(cfg)
	assert.ErrorContains(t, err, "Patience")
}
