package acopf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
)

// loadModel returns the Model of the shipped case name.
func loadModel(t testing.TB, name string) *Model {
	t.Helper()
	c, err := Load(name)
	require.NoError(t, err)
	m, err := NewModel(c)
	require.NoError(t, err)
	return m
}

// branchLimitsOf returns the branch limits of m's case.
func branchLimitsOf(t testing.TB, m *Model) *BranchLimits {
	t.Helper()
	nx, _ := m.Dims()
	bl, err := NewBranchLimits(m.Case, nx)
	require.NoError(t, err)
	require.NotNil(t, bl)
	return bl
}

// TestBranchLimitsDerivatives compares BranchLimits' Jacobian (dense and
// sparse), HessVec and its zero x-derivatives with central finite
// differences at a random point and at the reference optimum, and checks
// with enforce.CheckSparse that the declared pattern holds every nonzero.
func TestBranchLimitsDerivatives(t *testing.T) {
	for _, name := range []string{"pglib_opf_case57_ieee", "pglib_opf_case118_ieee"} {
		t.Run(name, func(t *testing.T) {
			if testing.Short() && name != "pglib_opf_case57_ieee" {
				t.Skip("-short: case57 only")
			}
			m := loadModel(t, name)
			bl := branchLimitsOf(t, m)
			rng := rand.New(rand.NewPCG(3, 4))
			x, y := randomPoint(m, rng)
			opt, err := ReferenceOptimum(name)
			require.NoError(t, err)
			for _, yy := range [][]float64{y, opt.Y} {
				checkDerivatives(t, bl, x, yy, rng, 1e-6)
				assert.NoError(t, enforce.CheckSparse(bl, x, yy, 0))
			}
		})
	}
}

// TestBranchLimitsEvalBits: the thermal rows and their Jacobian values,
// computed with one sine and cosine per branch (the to end's from the from
// end's), are flow's, which takes each end's own, to the bit at both ends;
// and math.Sincos is odd and even to the bit.
func TestBranchLimitsEvalBits(t *testing.T) {
	m := loadModel(t, "pglib_opf_case118_ieee")
	bl := branchLimitsOf(t, m)
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := randomPoint(m, rng)
	_, ny, nc := bl.Dims()
	require.Len(t, y, ny)
	c := make([]float64, nc)
	vals := make([]float64, len(bl.col))
	bl.EvalSparse(x, y, c, vals)
	require.Zero(t, len(bl.ends)%2)
	for r := range bl.ends {
		end := &bl.ends[r]
		if r%2 == 1 {
			from := &bl.ends[r-1]
			require.Equal(t, [2]int{from.k, from.i}, [2]int{end.i, end.k}, "row %d is the other end of row %d's branch", r, r-1)
		}
		f := bl.flowAt(end, y)
		assert.Equal(t, math.Float64bits((f.p*f.p+f.q*f.q-end.rate*end.rate)/(2*end.rate)), math.Float64bits(c[r]), "row %d", r)
		for d, p := range end.perm {
			want := (f.p*f.dp[d] + f.q*f.dq[d]) / end.rate
			assert.Equal(t, math.Float64bits(want), math.Float64bits(vals[bl.rowPtr[r]+p]), "row %d, entry %d", r, d)
		}
	}
	for range 10000 {
		v := (rng.Float64() - 0.5) * math.Ldexp(1, rng.IntN(12)-6)
		s, co := math.Sincos(v)
		s1, co1 := math.Sincos(-v)
		require.True(t, math.Float64bits(-s) == math.Float64bits(s1) && math.Float64bits(co) == math.Float64bits(co1), "Sincos(%v)", v)
	}
}

// TestBranchLimitsRows checks the rows against NLP's (PGLib's
// formulation): each thermal row is (P² + Q² − RateA²)/(2·RateA) of NLP's
// P² + Q², each angle row ±(Va_f − Va_t) minus its bound, in the order
// the type's documentation gives; the row counts and nonzeros; and that
// Violations' thermal excess, computed in complex arithmetic, is the
// largest √(2R·g + R²) − R of the thermal rows.
func TestBranchLimitsRows(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		branches, thermal, angl int
	}{
		{"pglib_opf_case57_ieee", 80, 160, 160},
		{"pglib_opf_case118_ieee", 186, 372, 372},
		{"pglib_opf_case300_ieee", 411, 822, 822},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadModel(t, tc.name)
			bl := branchLimitsOf(t, m)
			require.Len(t, m.Case.Branches, tc.branches)
			th, an := bl.Rows()
			assert.Equal(t, tc.thermal, th)
			assert.Equal(t, tc.angl, an)
			nx, ny, nc := bl.Dims()
			assert.Equal(t, [3]int{len(m.Loads()), 2*len(m.Case.Buses) + 2*len(m.Case.Gens), th + an}, [3]int{nx, ny, nc})
			rowPtr, _ := bl.Pattern()
			assert.Equal(t, 4*th+2*an, rowPtr[nc], "nonzeros")

			rng := rand.New(rand.NewPCG(5, 6))
			x, y := randomPoint(m, rng)
			g := make([]float64, nc)
			bl.Eval(x, y, g, nil)
			p, err := m.NLP(x, Formulation{})
			require.NoError(t, err)
			gn := make([]float64, p.M)
			p.Constraints(y, gn)
			_, _, npf := m.PowerFlow().Dims()
			nb := len(m.Case.Buses)
			r, a := 0, 0
			var worst float64
			for _, br := range m.Case.Branches {
				if !math.IsInf(br.RateA, 1) {
					for range 2 {
						rate := br.RateA
						assert.Equal(t, (gn[npf+r]-rate*rate)/(2*rate), g[r], "thermal row %d", r)
						worst = math.Max(worst, math.Sqrt(2*rate*g[r]+rate*rate)-rate)
						r++
					}
				}
				d := y[nb+br.From] - y[nb+br.To]
				if br.AngMax < 2*math.Pi {
					assert.Equal(t, d-br.AngMax, g[th+a], "angle row %d", a)
					a++
				}
				if br.AngMin > -2*math.Pi {
					assert.Equal(t, br.AngMin-d, g[th+a], "angle row %d", a)
					a++
				}
			}
			assert.Equal(t, [2]int{th, an}, [2]int{r, a})
			require.Greater(t, worst, 0.0, "the random point violates a thermal limit")
			assert.InDelta(t, worst, m.Violations(x, y).Thermal, 1e-9*(1+worst))
		})
	}
}

// TestBranchLimitsErrors checks NewBranchLimits' errors, nil for a case
// without line limits (DC3's case57), and the panics of Eval and
// EvalSparse for wrong lengths.
func TestBranchLimitsErrors(t *testing.T) {
	m := loadModel(t, "matpower6_case57")
	nx, _ := m.Dims()
	bl, err := NewBranchLimits(m.Case, nx)
	require.NoError(t, err)
	assert.Nil(t, bl, "no line limits")

	base := loadModel(t, "pglib_opf_case57_ieee").Case
	for _, tc := range []struct {
		name string
		edit func(c *Case)
		want string
	}{
		{"no buses", func(c *Case) { c.Buses = nil }, "0 buses"},
		{"zero rating", func(c *Case) { c.Branches[3].RateA = 0 }, "RateA = 0"},
		{"NaN rating", func(c *Case) { c.Branches[3].RateA = math.NaN() }, "RateA = NaN"},
		{"equal angle limits", func(c *Case) { c.Branches[3].AngMin, c.Branches[3].AngMax = 0.1, 0.1 }, "AngMin < AngMax"},
		{"NaN angle limit", func(c *Case) { c.Branches[3].AngMin = math.NaN() }, "AngMin < AngMax"},
		{"self loop", func(c *Case) { c.Branches[3].To = c.Branches[3].From }, "both ends"},
	} {
		c := *base
		c.Branches = append([]Branch(nil), base.Branches...)
		tc.edit(&c)
		_, err := NewBranchLimits(&c, nx)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	_, err = NewBranchLimits(base, -1)
	assert.ErrorContains(t, err, "nx = -1")

	bl = branchLimitsOf(t, loadModel(t, "pglib_opf_case57_ieee"))
	nx, ny, nc := bl.Dims()
	x, y, c := make([]float64, nx), make([]float64, ny), make([]float64, nc)
	assert.Panics(t, func() { bl.Eval(x, y[1:], c, nil) })
	assert.Panics(t, func() { bl.Eval(x, y, c, make([]float64, 3)) })
	assert.Panics(t, func() { bl.EvalSparse(x, y, c, make([]float64, 3)) })
}

// perturbedOptima returns n points perturbed by σ (Vm, Va and the
// injections) around the reference optimum of m's case, seed 1 as
// examples/acopf -project draws them, and their loads.
func perturbedOptima(t testing.TB, m *Model, n int, sigma float64) (x, y *mat.Dense) {
	t.Helper()
	opt, err := ReferenceOptimum(m.Case.Name)
	require.NoError(t, err)
	nx, ny := m.Dims()
	rng := rand.New(rand.NewPCG(1, 28))
	x, y = mat.NewDense(n, nx, nil), mat.NewDense(n, ny, nil)
	for i := range n {
		x.SetRow(i, m.Loads())
		m.Perturb(y.RawRowView(i), opt.Y, Perturbation{Vm: sigma, Va: sigma, PQ: sigma}, rng)
	}
	return x, y
}

// TestConstraintWithBranchLimits checks ConstraintOptions.BranchLimits:
// the default system is unchanged (no line rows); with the option the
// system has one more row and multiplier per thermal and angle row, keeps
// the pinned variables as equalities (case57_ieee has three), the sparse
// path and exact Unrolled and Implicit gradients; and AdaNP projects points perturbed (σ = 1e-3) around the
// reference optimum onto it with every constraint of PGLib's formulation
// met to 1e-6 (Violations), where without the option the projections of
// case118_ieee, whose optimum has two thermal limits active, exceed a
// thermal limit.
func TestConstraintWithBranchLimits(t *testing.T) {
	for _, tc := range []struct {
		name           string
		pinned         int
		thermalWithout bool // the projection without the option violates a thermal limit
	}{{"case57_ieee", 3, false}, {"case118_ieee", 35, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := loadModel(t, tc.name)
			bl := branchLimitsOf(t, m)
			_, _, nbl := bl.Dims()
			def, err := m.Constraint()
			require.NoError(t, err)
			off, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon})
			require.NoError(t, err)
			on, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: true})
			require.NoError(t, err)
			_, nyOff, ncOff := off.Dims()
			_, nyOn, ncOn := on.Dims()
			_, nyDef, ncDef := def.Dims()
			assert.Equal(t, [2]int{nyDef, ncDef}, [2]int{nyOff, ncOff}, "the default has no line rows")
			assert.Equal(t, ncOff+nbl, ncOn)
			assert.Equal(t, nyOff+nbl, nyOn, "one multiplier per line row")
			_, ny := m.Dims()
			_, _, npf := m.PowerFlow().Dims()
			_, _, np := m.Pinned().Dims()
			require.Equal(t, tc.pinned, np)
			assert.Equal(t, nyOff-ny, ncOff-npf-np, "pinned rows are equalities")
			spOff, spOn := enforce.CapabilitiesOf(off).Sparse, enforce.CapabilitiesOf(on).Sparse
			require.NotNil(t, spOn)
			rowPtr, _ := bl.Pattern()
			assert.Equal(t, spOff.RowPtr[ncOff]+rowPtr[nbl]+nbl, spOn.RowPtr[ncOn], "nonzeros")

			for _, mode := range []enforce.GradMode{enforce.Unrolled, enforce.Implicit} {
				a, err := enforce.NewAdaNP(on, enforce.Settings{Grad: mode})
				require.NoError(t, err)
				assert.True(t, a.ExactGradient(), "%v: exact with the curvature of every row", mode)
			}

			const n = 10
			x, y := perturbedOptima(t, m, n, 1e-3)
			var before Violation
			for i := range n {
				before.Thermal = math.Max(before.Thermal, m.Violations(x.RawRowView(i), y.RawRowView(i)).Thermal)
			}
			for _, c := range []struct {
				con  enforce.Constraint
				with bool
			}{{off, false}, {on, true}} {
				a, err := enforce.NewAdaNP(c.con, enforce.Settings{Tol: 1e-6, MaxDepth: 30})
				require.NoError(t, err)
				assert.Equal(t, enforce.PathSparse, a.Path())
				out, st, err := a.Project(x, y)
				require.NoError(t, err)
				require.True(t, st.Converged(), "branch limits %v: %v", c.with, st)
				var worst Violation
				for i := range n {
					v := m.Violations(x.RawRowView(i), out.RawRowView(i))
					worst.PowerFlow = math.Max(worst.PowerFlow, v.Eq())
					worst.Bounds = math.Max(worst.Bounds, v.Bounds)
					worst.Thermal = math.Max(worst.Thermal, v.Thermal)
					worst.Angle = math.Max(worst.Angle, v.Angle)
				}
				t.Logf("branch limits %v: depth mean %.2f max %d; thermal before %.3g; after %+v", c.with, st.MeanDepth, st.Depth, before.Thermal, worst)
				assert.LessOrEqual(t, worst.Eq(), 1e-6, "branch limits %v", c.with)
				assert.LessOrEqual(t, worst.Bounds, 1e-6, "branch limits %v", c.with)
				if c.with {
					assert.LessOrEqual(t, worst.Thermal, 1e-6)
					assert.LessOrEqual(t, worst.Angle, 1e-6)
				} else if tc.thermalWithout {
					assert.Greater(t, worst.Thermal, 1e-6, "without the option a thermal limit is exceeded")
				}
			}
		})
	}
}

// BenchmarkProjectBranchLimits projects 20 points perturbed by σ = 1e-4
// and 1e-3 around the reference optimum of the PEGASE cases
// (perturbedOptima) onto ConstraintWith's system (ProjectionFBEpsilon;
// AdaNP's sparse path, Tol 1e-6, MaxDepth 100) in three ways: without the
// branch limits (lines=off), with them (lines=on), and onto the system
// without them and then, from its output, onto the system with them
// (lines=warm; the depths are the second projection's, the first's are
// lines=off's). It reports the system's rows and nonzeros, the depths, the
// samples that did not converge, the largest thermal excess before, and
// the largest violations after of PGLib's constraint set (Violations):
//
//	go test -run '^$' -bench ProjectBranchLimits -benchtime 1x ./problems/acopf
func BenchmarkProjectBranchLimits(b *testing.B) {
	for _, name := range []string{"pglib_opf_case1354_pegase", "pglib_opf_case2869_pegase"} {
		m := loadModel(b, name)
		s := enforce.Settings{Tol: 1e-6, MaxDepth: 100, Path: enforce.PathSparse}
		newAdaNP := func(lines bool) *enforce.AdaNP {
			con, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: lines})
			require.NoError(b, err)
			a, err := enforce.NewAdaNP(con, s)
			require.NoError(b, err)
			return a
		}
		off, on := newAdaNP(false), newAdaNP(true)
		for _, sigma := range []float64{1e-4, 1e-3} {
			const n = 20
			x, y := perturbedOptima(b, m, n, sigma)
			var before float64
			for i := range n {
				before = worse(before, m.Violations(x.RawRowView(i), y.RawRowView(i)).Thermal)
			}
			for _, lines := range []string{"off", "on", "warm"} {
				b.Run(fmt.Sprintf("%s/sigma=%g/lines=%s", name, sigma, lines), func(b *testing.B) {
					a, start := on, y
					switch lines {
					case "off":
						a = off
					case "warm":
						var err error
						start, _, err = off.Project(x, y)
						require.NoError(b, err)
					}
					dst := mat.NewDense(n, y.RawMatrix().Cols, nil)
					var st enforce.Stats
					var err error
					b.ReportAllocs()
					for b.Loop() {
						st, err = a.ProjectTo(dst, x, start)
						require.NoError(b, err)
					}
					var after Violation
					for i := range n {
						v := m.Violations(x.RawRowView(i), dst.RawRowView(i))
						after.PowerFlow = worse(after.PowerFlow, v.PowerFlow)
						after.Bounds = worse(after.Bounds, v.Bounds)
						after.Thermal = worse(after.Thermal, v.Thermal)
						after.Angle = worse(after.Angle, v.Angle)
					}
					con := a.Constraint()
					_, _, nc := con.Dims()
					b.ReportMetric(float64(nc), "rows")
					b.ReportMetric(float64(enforce.CapabilitiesOf(con).Sparse.RowPtr[nc]), "nnz")
					b.ReportMetric(st.MeanDepth, "depth/mean")
					b.ReportMetric(float64(st.Depth), "depth/max")
					b.ReportMetric(float64(st.NotConverged), "fails")
					b.ReportMetric(before, "thermal-before")
					b.ReportMetric(after.PowerFlow, "eq-after")
					b.ReportMetric(after.Bounds, "bounds-after")
					b.ReportMetric(after.Thermal, "thermal-after")
					b.ReportMetric(after.Angle, "angle-after")
				})
			}
		}
	}
}

// TestAugmentedFill checks the claim of docs/sparse.md and the README that
// on PGLib's full constraint sets the augmented system's factor costs
// 19–35× fewer multiply–adds than G's (case1354_pegase 24.6×,
// case2869_pegase 34.9×, case10000_goc 19.3×, ordered from a perturbed
// optimum; 22.6×, 32× and 11.9× before K's order compared two candidates,
// 2026-12-07 evening), and that the projection with acopf-learn's row settings
// converges there (-short: case1354_pegase only).
func TestAugmentedFill(t *testing.T) {
	for _, tc := range []struct {
		name     string
		minRatio float64
	}{{"pglib_opf_case1354_pegase", 24.5}, {"pglib_opf_case2869_pegase", 34.5}, {"pglib_opf_case10000_goc", 19}} {
		if testing.Short() && tc.name != "pglib_opf_case1354_pegase" {
			continue
		}
		m := loadModel(t, tc.name)
		k, err := m.ConstraintWith(ConstraintOptions{FBEps: ProjectionFBEpsilon, BranchLimits: true})
		require.NoError(t, err)
		a, err := enforce.NewAdaNP(k, enforce.Settings{Path: enforce.PathAugmented, Damping: enforce.DefaultDamping, StopWhenFeasible: true,
			Smoothing: 1e-2, SmoothingLadder: []float64{1e-4}, MaxDepth: 300})
		require.NoError(t, err)
		x, y := perturbedOptima(t, m, 2, 1e-3)
		_, st, err := a.Project(x, y)
		require.NoError(t, err)
		assert.True(t, st.Converged(), "%s: %v", tc.name, st)
		info, ok := a.SparseInfo()
		require.True(t, ok)
		require.Positive(t, info.AugFlops)
		assert.GreaterOrEqual(t, info.Flops/info.AugFlops, tc.minRatio, "%s: G %.3g, K %.3g multiply–adds", tc.name, info.Flops, info.AugFlops)
	}
}

// TestBranchLimitsSelect: Select keeps the chosen rows (a rated branch's
// two thermal rows together) with the values, Jacobian values and pattern
// of the whole limits' rows to the bit, and its derivatives pass the
// finite-difference check; Near marks the rows above −margin; keeping
// every row is the whole limits, keeping none is nil; ConstraintWith's
// BranchRows has one multiplier per kept row.
func TestBranchLimitsSelect(t *testing.T) {
	m := loadModel(t, "pglib_opf_case118_ieee")
	bl := branchLimitsOf(t, m)
	rng := rand.New(rand.NewPCG(7, 8))
	x, y := randomPoint(m, rng)
	_, _, nc := bl.Dims()
	nt, _ := bl.Rows()
	c := make([]float64, nc)
	vals := make([]float64, len(bl.col))
	bl.EvalSparse(x, y, c, vals)

	keep := make([]bool, nc)
	bl.Near(x, y, 0.3, keep)
	var near []int
	for r := range nc {
		assert.Equal(t, c[r] > -0.3, keep[r], "row %d (g = %v)", r, c[r])
		if keep[r] {
			near = append(near, r)
		}
	}
	require.NotEmpty(t, near)
	require.Less(t, len(near), nc, "the point has rows far from binding")
	// The rows Select keeps: a thermal row's partner joins it.
	var want []int
	for r := 0; r < nt; r += 2 {
		if keep[r] || keep[r+1] {
			want = append(want, r, r+1)
		}
	}
	for r := nt; r < nc; r++ {
		if keep[r] {
			want = append(want, r)
		}
	}
	sel := bl.Select(func(r int) bool { return keep[r] })
	require.NotNil(t, sel)
	_, _, ns := sel.Dims()
	require.Equal(t, len(want), ns)
	cs := make([]float64, ns)
	vs := make([]float64, len(sel.col))
	sel.EvalSparse(x, y, cs, vs)
	for i, r := range want {
		assert.Equal(t, math.Float64bits(c[r]), math.Float64bits(cs[i]), "row %d (%d of the whole)", i, r)
		assert.Equal(t, bl.col[bl.rowPtr[r]:bl.rowPtr[r+1]], sel.col[sel.rowPtr[i]:sel.rowPtr[i+1]], "pattern of row %d", i)
		for p := range bl.rowPtr[r+1] - bl.rowPtr[r] {
			assert.Equal(t, math.Float64bits(vals[bl.rowPtr[r]+p]), math.Float64bits(vs[sel.rowPtr[i]+p]), "row %d, entry %d", i, p)
		}
	}
	checkDerivatives(t, sel, x, y, rng, 1e-6)
	assert.NoError(t, enforce.CheckSparse(sel, x, y, 0))

	all := bl.Select(func(int) bool { return true })
	_, _, na := all.Dims()
	assert.Equal(t, nc, na)
	assert.Equal(t, bl.col, all.col)
	assert.Nil(t, bl.Select(func(int) bool { return false }))

	whole, err := m.ConstraintWith(ConstraintOptions{BranchLimits: true})
	require.NoError(t, err)
	part, err := m.ConstraintWith(ConstraintOptions{BranchLimits: true, BranchRows: func(r int) bool { return keep[r] }})
	require.NoError(t, err)
	none, err := m.ConstraintWith(ConstraintOptions{BranchLimits: true, BranchRows: func(int) bool { return false }})
	require.NoError(t, err)
	off, err := m.ConstraintWith(ConstraintOptions{})
	require.NoError(t, err)
	_, nyW, ncW := whole.Dims()
	_, nyP, ncP := part.Dims()
	_, nyN, ncN := none.Dims()
	_, nyO, ncO := off.Dims()
	assert.Equal(t, [2]int{nyW - nc + ns, ncW - nc + ns}, [2]int{nyP, ncP})
	assert.Equal(t, [2]int{nyO, ncO}, [2]int{nyN, ncN})

	assert.Panics(t, func() { bl.Near(x, y, -1, keep) })
	assert.Panics(t, func() { bl.Near(x, y, math.NaN(), keep) })
	assert.Panics(t, func() { bl.Near(x, y, 0, keep[1:]) })
	assert.Panics(t, func() { bl.Near(x, y[1:], 0, keep) })
}
