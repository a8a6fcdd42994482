package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/problems/acopf/dataset"
)

// TestScreen: -screen's rows (screenKeep) are those within the margin of
// binding at the given optima, and rowProjector's screened projection
// (acopf.Screened with the rows' settings)
// keeps each point that meets PGLib's whole set and projects the others
// again onto it: on case118_ieee, with every branch-limit row screened
// out, perturbed optima projected onto the power flow and bounds exceed a
// thermal limit (TestConstraintWithBranchLimits), are projected again and
// end feasible, each point equal to the whole set's projection of its
// prediction; the others equal the screened projection's; with every row
// kept nothing is projected again and the points are the whole set's.
func TestScreen(t *testing.T) {
	c, err := acopf.Load("pglib_opf_case118_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	opt, err := acopf.ReferenceOptimum(c.Name)
	require.NoError(t, err)
	nx, ny := m.Dims()
	bl, err := acopf.NewBranchLimits(c, nx)
	require.NoError(t, err)
	_, _, nbl := bl.Dims()

	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-screen", "0.05"}))
	assert.Equal(t, 0.05, o.screen)
	at := []dataset.Sample{{X: m.Loads(), Y: opt.Y}, {X: m.Loads()}} // an unsolved sample is skipped
	keep, kept, rows, err := screenKeep(m, at, o.screen)
	require.NoError(t, err)
	require.Equal(t, nbl, rows)
	g := make([]float64, nbl)
	bl.EvalSparse(m.Loads(), opt.Y, g, nil)
	n := 0
	for r, v := range g {
		assert.Equal(t, v > -0.05, keep[r], "row %d: g = %v", r, v)
		if keep[r] {
			n++
		}
	}
	assert.Equal(t, n, kept)
	assert.True(t, kept > 0 && kept < rows, "%d of %d kept", kept, rows)
	for _, bad := range []float64{-1, math.Inf(1), math.NaN()} {
		_, _, _, err := screenKeep(m, at, bad)
		assert.ErrorContains(t, err, "-screen", "margin %v", bad)
	}
	_, _, _, err = screenKeep(m, at[1:], 0.05)
	assert.ErrorContains(t, err, "no labelled sample")
	keep, _, _, err = screenKeep(m, at, 0)
	require.NoError(t, err)
	assert.Nil(t, keep, "0: no screening")

	const samples = 10
	x, yhat := mat.NewDense(samples, nx, nil), mat.NewDense(samples, ny, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range samples {
		x.SetRow(i, m.Loads())
		m.Perturb(yhat.RawRowView(i), opt.Y, acopf.Perturbation{Vm: 1e-3, Va: 1e-3, PQ: 1e-3}, rng)
	}
	whole, err := newRowProjector(o, m, nil, nil)
	require.NoError(t, err)
	yw, st, note, err := whole.project(x, yhat)
	require.NoError(t, err)
	require.True(t, st.Converged(), "%v", st)
	assert.Empty(t, note)

	// No branch-limit row: the first projection exceeds a thermal limit.
	none, err := newRowProjector(o, m, nil, make([]bool, nbl))
	require.NoError(t, err)
	// Both projections take the rows' settings.
	o2 := o
	require.NoError(t, flags(&o2).Parse([]string{"-nonmonotone", "5"}))
	p2, err := newRowProjector(o2, m, nil, make([]bool, nbl))
	require.NoError(t, err)
	assert.Equal(t, 5, p2.screened.First().Settings().Nonmonotone)
	assert.Equal(t, 5, p2.screened.Whole().Settings().Nonmonotone)
	first, _, err := none.screened.First().Project(x, yhat)
	require.NoError(t, err)
	ys, _, note, err := none.project(x, yhat)
	require.NoError(t, err)
	again := 0
	for i := range samples {
		v := m.Violations(x.RawRowView(i), first.RawRowView(i))
		want := first
		if !(v.Eq() <= acopf.DefaultScreenTol && v.Ineq() <= acopf.DefaultScreenTol) {
			again++
			want = yw
		}
		assert.Equal(t, want.RawRowView(i), ys.RawRowView(i), "sample %d", i)
		v = m.Violations(x.RawRowView(i), ys.RawRowView(i))
		assert.True(t, v.Eq() <= 1e-6 && v.Ineq() <= 1e-6, "sample %d: %+v", i, v)
	}
	require.Positive(t, again, "a thermal limit left out is exceeded")
	assert.Contains(t, note, fmt.Sprintf("0 of %d branch-limit rows", nbl))
	assert.Contains(t, note, "projected again")

	all := make([]bool, nbl)
	for i := range all {
		all[i] = true
	}
	every, err := newRowProjector(o, m, nil, all)
	require.NoError(t, err)
	ye, _, note, err := every.project(x, yhat)
	require.NoError(t, err)
	assert.Contains(t, note, ", 0 of 10 points projected again")
	assert.Equal(t, yw.RawMatrix().Data, ye.RawMatrix().Data, "every row kept: the whole set's projection")
}
