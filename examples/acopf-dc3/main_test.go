package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems/acopf"
)

func loadModel(t *testing.T) (*acopf.Case, *acopf.Model) {
	c, err := acopf.Load(dc3Case)
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	return c, m
}

// TestQuick runs -quick's setting on the shipped data set (50 training
// and 10 test samples, 3 epochs, one seed) and checks the table: the
// optimizer's test objective, and ENFORCE's predictions on the power
// flow and within the limits.
func TestQuick(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick"}))
	o.out, o.data = t.TempDir(), "data" // the shipped data set, from the package's folder
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := out.String()
	assert.Contains(t, text, "matpower6_case57: 1200 samples (train 1000, valid 100, test 100), seed 1")
	assert.Regexp(t, `optimizer: mean objective \(DC3-scaled\) all [0-9.]+, test 3\.[78]`, text)
	assert.Contains(t, text, "| MLP, 3 epochs, 50 training samples (1 seeds) |")
	assert.Contains(t, text, "| Soft, 3 epochs, 50 training samples (1 seeds) |")
	// DC3's completion and correction: the correction's steps are not
	// re-completed, so the balances drift from Newton's tolerance (DC3's
	// own table: 6.8e-5), but stay well below the MLP's order 1.
	assert.Regexp(t, `\| DC3 with correction, 3 epochs, 50 training samples \(1 seeds\) \| [0-9.]+ \| [-0-9.]+ % \| [0-9.]+e-(0[2-9]|1[0-9])`, text)
	// After 3 epochs on 50 samples the backbone is far from trained and
	// AdaNP does not reach 1e-6 on every test sample within its 100
	// steps; the mean max residual is still below 1e-3 p.u. (MLP's is
	// of order 1).
	assert.Regexp(t, `\| ENFORCE, 3 epochs, 50 training samples \(1 seeds\) \| [0-9.]+ \| [-0-9.]+ % \| [0-9.]+e-(0[4-9]|1[0-9])`, text)
	md, err := os.ReadFile(filepath.Join(o.out, "acopf-dc3.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "| DC3 (DC3 paper) | 3.8160 |")
}

// TestSample checks DC3's load recipe: factors within ±70 % at the buses
// with a positive load, power factors in [0.8, 1] with the sign of the
// base reactive load, and the same draws for the same seed.
func TestSample(t *testing.T) {
	c, m := loadModel(t)
	xs, err := sampleLoads(m, 200, 3)
	require.NoError(t, err)
	again, err := sampleLoads(m, 10, 3)
	require.NoError(t, err)
	assert.Equal(t, xs[:10], again, "a longer draw starts with the shorter one")
	lb := m.PowerFlow().LoadBuses()
	nl := len(lb)
	var meanF float64
	for _, x := range xs {
		for k, i := range lb {
			b := c.Buses[i]
			if b.Pd <= 0 {
				assert.Equal(t, b.Pd, x[k])
				continue
			}
			f := x[k] / b.Pd
			require.Greater(t, f, 0.3)
			require.Less(t, f, 1.7)
			meanF += f / float64(len(xs)*nl)
			q := x[nl+k]
			pf := x[k] / math.Hypot(x[k], q)
			assert.GreaterOrEqual(t, pf, 0.8-1e-12)
			assert.Equal(t, b.Qd > 0, q > 0)
		}
	}
	assert.InDelta(t, 1, meanF, 0.1, "the factors are centred on 1")
}

// TestFBEps checks -fbeps: ENFORCE's constraint takes the smoothing ε
// (acopf.ConstraintOptions.FBEps) and its runs are a row of their own;
// a negative ε is an error.
func TestFBEps(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-methods", "ENFORCE", "-fbeps", "1e-4", "-epochs", "1"}))
	o.out, o.data = "", "data"
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	assert.Contains(t, out.String(), "| ENFORCE, ε_FB 0.0001, 1 epochs, 50 training samples (1 seeds) |")
	o.fbEps = -1
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "FBEps")
}
