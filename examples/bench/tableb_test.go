package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/train"
)

// TestSetReferenceInit checks -tableb-init's loading of another network's
// weights: the weights of one model, written as reference/tableb.py
// --dump-init writes them, make a second model (another seed) compute the
// first's output; a file for other layer sizes, or whose check output
// the loaded network does not reproduce, is an error and says why.
func TestSetReferenceInit(t *testing.T) {
	q, err := problems.NewNonconvexQuadratic(6, 3, 1)
	require.NoError(t, err)
	sizes := []int{3, 5, 5, 6}
	newModel := func(seed uint64) *train.Model {
		m, err := train.New(train.Config{Sizes: sizes, Hidden: layers.ReLU, PyTorchInit: true, Constraint: q.Equalities(), Seed: seed, Quiet: true})
		require.NoError(t, err)
		return m
	}
	src := newModel(1)
	require.NoError(t, src.SetWeights(src.Weights())) // its initial weights, on purpose
	x0 := []float64{0.5, -1, 2}
	y0, err := src.Backbone(mat.NewDense(1, 3, x0))
	require.NoError(t, err)
	write := func(sz []int, y []float64) string {
		b, err := json.Marshal(map[string]any{"seed": 1, "sizes": sz, "weights": src.Weights(), "x0": x0, "y0": y})
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "init-seed1.json")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		return path
	}

	dst := newModel(2)
	require.NoError(t, setReferenceInit(dst, sizes, write(sizes, y0.RawRowView(0))))
	assert.Equal(t, src.Weights(), dst.Weights())

	err = setReferenceInit(newModel(2), sizes, write([]int{3, 5, 6}, y0.RawRowView(0)))
	assert.ErrorContains(t, err, "is for layer sizes [3 5 6], the model has [3 5 5 6]")
	wrong := append([]float64(nil), y0.RawRowView(0)...)
	wrong[2] += 1
	err = setReferenceInit(newModel(2), sizes, write(sizes, wrong))
	assert.ErrorContains(t, err, "at output 2 of x0")
	err = setReferenceInit(newModel(2), sizes, filepath.Join(t.TempDir(), "none.json"))
	assert.ErrorContains(t, err, "-tableb-init")
}

// TestTableBVerdict checks that -tableb-train fails when a seed's test
// predictions are not all feasible, naming the seeds.
func TestTableBVerdict(t *testing.T) {
	require.NoError(t, tablebVerdict(nil))
	err := tablebVerdict([]string{"seed 2: 833 of 833", "seed 5: 1 of 833"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "seed 2: 833 of 833; seed 5: 1 of 833")
}
