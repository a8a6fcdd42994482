package acopf

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// TestScreened: on case118_ieee, perturbed optima projected onto the power
// flow and bounds alone exceed a thermal limit
// (TestConstraintWithBranchLimits). With every branch-limit row screened
// out, Screened projects those points again onto the whole set and every
// point ends feasible; each point is the first projection's where that one
// passed the check and the whole set's projection of its prediction
// otherwise, bit for bit. With every row kept nothing is projected again
// and the points are the whole set's. Bad options are errors.
func TestScreened(t *testing.T) {
	m := loadModel(t, "pglib_opf_case118_ieee")
	bl := branchLimitsOf(t, m)
	_, _, nbl := bl.Dims()
	o := ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: true}
	s := enforce.Settings{Path: enforce.PathSparse, Smoothing: 1e-2, Damping: enforce.DefaultDamping}
	const n = 10
	x, y := perturbedOptima(t, m, n, 1e-3)

	whole, err := m.ConstraintWith(o)
	require.NoError(t, err)
	a, err := enforce.NewAdaNP(whole, s)
	require.NoError(t, err)
	yw, stw, err := a.Project(x, y)
	require.NoError(t, err)
	require.True(t, stw.Converged(), "%v", stw)

	none, err := m.NewScreened(o, s, ScreenOptions{Keep: func(int) bool { return false }})
	require.NoError(t, err)
	first, _, err := none.First().Project(x, y)
	require.NoError(t, err)
	ys, st, err := none.Project(x, y)
	require.NoError(t, err)
	var again []int
	for i := range n {
		v := m.Violations(x.RawRowView(i), first.RawRowView(i))
		want := first
		if !(v.Eq() <= DefaultScreenTol && v.Ineq() <= DefaultScreenTol) {
			again = append(again, i)
			want = yw
		}
		assert.Equal(t, want.RawRowView(i), ys.RawRowView(i), "sample %d", i)
		v = m.Violations(x.RawRowView(i), ys.RawRowView(i))
		assert.True(t, v.Eq() <= 1e-6 && v.Ineq() <= 1e-6, "sample %d: %+v", i, v)
	}
	require.NotEmpty(t, again, "a thermal limit left out is exceeded")
	assert.Equal(t, again, st.Again)
	assert.Equal(t, len(again), st.Whole.Samples)
	assert.Equal(t, [2]int{0, nbl}, [2]int{st.Kept, st.Rows})
	assert.Contains(t, st.String(), "projected again onto the whole set (")

	every, err := m.NewScreened(o, s, ScreenOptions{Keep: func(int) bool { return true }})
	require.NoError(t, err)
	ye, st, err := every.Project(x, y)
	require.NoError(t, err)
	assert.Empty(t, st.Again)
	assert.Equal(t, [2]int{nbl, nbl}, [2]int{st.Kept, st.Rows})
	assert.Equal(t, yw.RawMatrix().Data, ye.RawMatrix().Data, "every row kept: the whole set's projection")

	// Concurrent use: two goroutines project the same batch with one
	// Screened and get the sequential points.
	var wg sync.WaitGroup
	outs := make([]*mat.Dense, 2)
	for g := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[g], _, _ = none.Project(x, y)
		}()
	}
	wg.Wait()
	for _, o := range outs {
		require.NotNil(t, o)
		assert.Equal(t, ys.RawMatrix().Data, o.RawMatrix().Data, "concurrent Project")
	}

	keep := func(int) bool { return true }
	for _, bad := range []struct {
		o  ConstraintOptions
		sc ScreenOptions
	}{
		{o, ScreenOptions{}},
		{o, ScreenOptions{Keep: keep, Tol: -1}},
		{o, ScreenOptions{Keep: keep, Tol: math.NaN()}},
		{o, ScreenOptions{Keep: keep, Tol: math.Inf(1)}},
		{ConstraintOptions{FBEps: ProjectionFBEpsilon}, ScreenOptions{Keep: keep}},
		{ConstraintOptions{BranchLimits: true, BranchRows: keep}, ScreenOptions{Keep: keep}},
	} {
		_, err := m.NewScreened(bad.o, s, bad.sc)
		assert.ErrorContains(t, err, "NewScreened", "%+v", bad.sc)
	}
	dc3 := loadModel(t, "matpower6_case57")
	_, err = dc3.NewScreened(o, s, ScreenOptions{Keep: keep})
	assert.ErrorContains(t, err, "no branch limits")
}
