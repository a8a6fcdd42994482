package acopf

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// knownFarMisses lists, per grid, the far starts of farStarts(m, 8, 1)
// that Smoothing 1e-2 and DefaultDamping do not bring to 1e-6: on
// case2869_pegase row 9 (an untrained-network-like start) stops at
// max|c| 0.89 after 215 steps, also with Smoothing 1e-1, 3e-2 or 3e-3
// (measured 2026-12-06). The test fails when a row joins or leaves the list.
var knownFarMisses = map[string][]int{"pglib_opf_case2869_pegase": {9}}

// without returns m without the listed rows (increasing).
func without(m *mat.Dense, rows []int) *mat.Dense {
	r, c := m.Dims()
	out := mat.NewDense(r-len(rows), c, nil)
	k := 0
	for i := range r {
		if len(rows) > 0 && rows[0] == i {
			rows = rows[1:]
			continue
		}
		out.SetRow(k, m.RawRowView(i))
		k++
	}
	return out
}

// farStarts returns rows far from the power flow: the flat start, the
// case file's own operating point, and rows drawn as an untrained
// network's outputs would be (Vm = 1 + 0.01ξ, Va = 0.01ξ rad, Pg and Qg at
// the middle of their bounds plus a tenth of their range times ξ, ξ
// standard normal), with the case's loads as x.
func farStarts(m *Model, random int, seed uint64) (x, y *mat.Dense) {
	nx, ny := m.Dims()
	rows := 2 + random
	x, y = mat.NewDense(rows, nx, nil), mat.NewDense(rows, ny, nil)
	flat := m.FlatStart()
	y.SetRow(0, flat)
	y.SetRow(1, m.OperatingPoint())
	rng := rand.New(rand.NewPCG(seed, 54))
	nb, ng := len(m.Case.Buses), len(m.Case.Gens)
	for r := 2; r < rows; r++ {
		row := append([]float64(nil), flat...)
		for i := range nb {
			row[i] = 1 + 0.01*rng.NormFloat64()
			row[nb+i] = 0.01 * rng.NormFloat64()
		}
		for j, g := range m.Case.Gens {
			if w := g.Pmax - g.Pmin; w < 1e3 {
				row[2*nb+j] += 0.1 * w * rng.NormFloat64()
			}
			if w := g.Qmax - g.Qmin; w < 1e3 {
				row[2*nb+ng+j] += 0.1 * w * rng.NormFloat64()
			}
		}
		y.SetRow(r, row)
	}
	for r := range rows {
		x.SetRow(r, m.Loads())
	}
	return x, y
}

// TestFarStartConverges: from the flat start, the case file's operating
// point and untrained-network-like points, AdaNP with the limits'
// smoothing continued from 1e-2 (Settings.Smoothing) and damped
// steps (Settings.Damping) projects every row of the shipped PGLib grids to 1e-6 p.u. on
// the power flow and the limits (RequireTol: a row that missed would be
// an error naming it); with -acopf.big also case2869_pegase (but for
// knownFarMisses) and case10000_goc (seconds). Without the continuation the flat start of
// case1354_pegase stalls (the last check).
func TestFarStartConverges(t *testing.T) {
	for _, name := range farStartGrids() {
		t.Run(name, func(t *testing.T) {
			assertFarStarts(t, name, ConstraintOptions{FBEps: ProjectionFBEpsilon},
				enforce.Settings{Path: enforce.PathSparse, Smoothing: 1e-2, Damping: enforce.DefaultDamping}, knownFarMisses[name])
		})
	}
	c, err := Load("pglib_opf_case1354_pegase")
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	k, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon})
	require.NoError(t, err)
	a, err := enforce.NewAdaNP(k, enforce.Settings{Path: enforce.PathSparse})
	require.NoError(t, err)
	_, st, err := a.Project(mat.NewDense(1, len(m.Loads()), m.Loads()), mat.NewDense(1, len(m.FlatStart()), m.FlatStart()))
	require.NoError(t, err)
	assert.False(t, st.Converged(), "without the continuation the flat start stalls: %v", st)
}

// TestFarStartFullSet is TestFarStartConverges on PGLib's full constraint
// set (ConstraintOptions.BranchLimits: the thermal and angle-difference
// limits too), where two steps on the power flow first
// (Settings.EqualitySteps) are needed as well: without them, 7 of the 10
// far starts of case1354_pegase miss 1e-6 within 300 steps
// (BenchmarkEqualitySteps, docs/numerics.md). Its damping starts at
// θ₀ = 1e-1 (farDamping), not DefaultDamping's 1e-3, with which
// case2869_pegase's row 9 (an untrained-network-like start) stops at
// max|c| 0.87 after 617 steps (measured 2026-12-07 and again 2026-12-08,
// also with 5 or 10 equality steps). Every row of every grid must reach
// 1e-6 p.u. on the power flow and every limit (RequireTol), checked again
// by Check and by Model.Violations (PGLib's MODEL.tex constraints); with
// -acopf.big also case2869_pegase and case10000_goc.
func TestFarStartFullSet(t *testing.T) {
	for _, name := range farStartGrids() {
		t.Run(name, func(t *testing.T) {
			assertFarStarts(t, name, ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: true},
				enforce.Settings{Path: enforce.PathSparse, Smoothing: 1e-2, Damping: farDamping,
					EqualitySteps: 2, MaxDepth: 300}, nil)
		})
	}
}

// farDamping is the damping θ₀ of TestFarStartFullSet: from far starts
// on PGLib's full set it takes every start of every shipped grid to 1e-6
// (TestFarStartFullSet checks case57 to case1354_pegase, and
// case2869_pegase and case10000_goc with -acopf.big), where DefaultDamping
// leaves case2869_pegase's row 9 (docs/numerics.md, "Far starts on the
// full set: a larger damping").
const farDamping = 1e-1

// farStartGrids returns the grids of the far-start tests: case57 to
// case1354_pegase (the case57s with -short), and with -acopf.big also
// case2869_pegase and case10000_goc.
func farStartGrids() []string {
	cases := []string{"matpower6_case57", "pglib_opf_case57_ieee", "pglib_opf_case118_ieee", "pglib_opf_case300_ieee", "pglib_opf_case1354_pegase"}
	if testing.Short() {
		cases = cases[:2]
	}
	if *bigGrids {
		cases = append(cases, "pglib_opf_case2869_pegase", "pglib_opf_case10000_goc")
	}
	return cases
}

// assertFarStarts projects farStarts(m, 8, 1) of the grid name onto the
// system of o with settings s (RequireTol where known is empty) and
// checks that exactly the rows known miss 1e-6, that the starts are far,
// and that every other row meets 1e-6 by Check and by Model.Violations
// (PGLib's MODEL.tex constraints).
func assertFarStarts(t *testing.T, name string, o ConstraintOptions, s enforce.Settings, known []int) {
	t.Helper()
	m := loadModel(t, name)
	k, err := m.ConstraintWith(o)
	require.NoError(t, err)
	s.RequireTol = known == nil
	a, err := enforce.NewAdaNP(k, s)
	require.NoError(t, err)
	x, y := farStarts(m, 8, 1)
	out, st, err := a.Project(x, y)
	require.NoError(t, err, "%v", st)
	assert.Equal(t, known, st.Missed, "%v", st)
	if known != nil {
		t.Logf("%s: rows %v miss the tolerance (a known gap of issue 53, item 2)", name, known)
		x, out = without(x, known), without(out, known)
	}
	assert.Greater(t, st.Before.Max, 1.0, "the starts are far")
	plain, err := enforce.NewAdaNP(k, enforce.Settings{Path: enforce.PathSparse})
	require.NoError(t, err)
	chk, err := plain.Check(x, out)
	require.NoError(t, err)
	assert.LessOrEqual(t, chk.After.Max, 1e-6)
	if o.BranchLimits {
		r, _ := out.Dims()
		for i := range r {
			v := m.Violations(x.RawRowView(i), out.RawRowView(i))
			assert.LessOrEqual(t, worse(v.Eq(), v.Ineq()), 1e-6, "row %d: %+v", i, v)
		}
	}
	t.Logf("%s: %v", name, st)
}
