package harness

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/train"
)

func TestTrials(t *testing.T) {
	var calls []string
	res, runs, err := Trials([]train.Mode{train.MLP, train.ENFORCE}, 3, 2, func(m train.Mode, seed uint64) (uint64, train.History, error) {
		calls = append(calls, m.String())
		return seed, train.History{{Epoch: 1}}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"MLP", "ENFORCE", "MLP", "ENFORCE"}, calls, "seeds outside, modes inside")
	assert.Equal(t, []uint64{3, 4}, res[train.MLP])
	assert.Equal(t, []uint64{3, 4}, res[train.ENFORCE])
	require.Len(t, runs, 4)
	assert.Equal(t, "ENFORCE seed 4", runs[3].Label)

	boom := errors.New("boom")
	_, _, err = Trials([]train.Mode{train.Soft}, 1, 1, func(train.Mode, uint64) (int, train.History, error) { return 0, nil, boom })
	assert.ErrorIs(t, err, boom)
	assert.ErrorContains(t, err, "Soft, seed 1")
}

func TestProgress(t *testing.T) {
	var cfg train.Config
	Progress(&cfg, nil, 0, "x")
	assert.True(t, cfg.Quiet)
	var w bytes.Buffer
	cfg = train.Config{Epochs: 100}
	Progress(&cfg, &w, 4, "MLP, seed 1")
	assert.Equal(t, 25, cfg.LogEvery)
	assert.Equal(t, "training MLP, seed 1\n", w.String())
	cfg = train.Config{Epochs: 2}
	Progress(&cfg, &w, 10, "")
	assert.Equal(t, 1, cfg.LogEvery, "at least every epoch")
}

func TestSortedRowsAndColumn(t *testing.T) {
	x := mat.NewDense(5, 2, []float64{3, 30, 1, 10, 4, 40, 0, 0, 2, 20})
	assert.Equal(t, []int{3, 1, 4, 0, 2}, SortedRows(x, 0))
	assert.Equal(t, []int{3, 4, 2}, SortedRows(x, 2), "stride 2 through the sorted rows")
	assert.Equal(t, []float64{0, 20, 40}, Column(x, 1, []int{3, 4, 2}))
}

func TestAbsResidual(t *testing.T) {
	// c = y − x: r(x) = x, ∂r/∂x = 1.
	c, err := enforce.Linear(1, mat.NewDense(1, 1, []float64{1}), func(x, r, jx []float64) {
		r[0] = x[0]
		if jx != nil {
			jx[0] = 1
		}
	})
	require.NoError(t, err)
	x := mat.NewDense(3, 1, []float64{1, 2, 3})
	y := mat.NewDense(3, 1, []float64{1, 2.5, 1})
	s := AbsResidual("ENFORCE", c, x, y, 0, []int{0, 1, 2}, 1e-16)
	assert.Equal(t, "ENFORCE", s.Label)
	assert.Equal(t, []float64{1, 2, 3}, s.X)
	assert.Equal(t, []float64{1e-16, 0.5, 2}, s.Y, "an exact zero is drawn at the floor")
}
