package sparse

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// augSolveCase factors B's augmented system and G's own factor and
// compares their solves of G·μ = x.
func augSolveCase(t *testing.T, b csr, winv []float64, eps float64, vals []float64, method Method) {
	t.Helper()
	a, err := AnalyseAugmented(b.rows, b.cols, b.ptr, b.col, vals, Options{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	if st := a.Stats(); st.N != b.rows+b.cols || st.NNZL <= 0 {
		t.Fatalf("stats %+v", st)
	}
	f := a.NewFactor()
	if err := f.Factor(b.val, winv, eps); err != nil {
		t.Fatalf("factor: %v", err)
	}
	g := denseGram(b, winv, eps)
	rng := rand.New(rand.NewPCG(5, uint64(b.rows)))
	for range 3 {
		x := randomVec(rng, b.rows, -1, 1)
		mu := append([]float64(nil), x...)
		f.Solve(mu)
		var want mat.VecDense
		if err := want.SolveVec(g, mat.NewVecDense(b.rows, append([]float64(nil), x...))); err != nil {
			t.Fatal(err)
		}
		var d, n float64
		for i, v := range mu {
			d = math.Max(d, math.Abs(v-want.AtVec(i)))
			n = math.Max(n, math.Abs(want.AtVec(i)))
		}
		if d > 1e-10*n {
			t.Errorf("%v: max|μ − G⁻¹x| = %.3g, |G⁻¹x| %.3g", method, d, n)
		}
		if be := f.BackwardError(x, mu); be > 1e-14 {
			t.Errorf("%v: backward error %.3g", method, be)
		}
	}
	if f.Inexact() != 0 {
		t.Errorf("%v: %d inexact solves", method, f.Inexact())
	}
}

// TestAugmentedSolves: the augmented factor's solves equal G's (dense
// reference) on random patterns with private columns (as a
// Fischer–Burmeister row's multiplier), with and without them, with and
// without ε and the values that order K, simplicial and supernodal (whose
// supernodes do not mix the signs of the pivots).
func TestAugmentedSolves(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		nc, ny, perRow int
		private        bool
	}{{30, 60, 4, true}, {40, 50, 3, false}, {120, 150, 5, true}, {8, 40, 6, false}} {
		b := randomB(rng, tc.nc, tc.ny, tc.perRow, tc.private)
		winv := randomVec(rng, b.cols, 0.5, 2)
		for _, eps := range []float64{0, 1e-6} {
			for _, vals := range [][]float64{nil, b.val} {
				for _, m := range []Method{Simplicial, Supernodal} {
					augSolveCase(t, b, winv, eps, vals, m)
				}
			}
		}
	}
	b := meshB(rng, 12, 11)
	augSolveCase(t, b, randomVec(rng, b.cols, 0.5, 2), 0, b.val, Supernodal)
}

// TestAugmentedOrderRowsAfterPartner: every row of B is eliminated after
// its column of largest |B_ij| (or its private column, without values).
func TestAugmentedOrderRowsAfterPartner(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	b := randomB(rng, 50, 70, 4, true)
	for _, vals := range [][]float64{nil, b.val} {
		a, err := AnalyseAugmented(b.rows, b.cols, b.ptr, b.col, vals, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < b.rows; i++ {
			partner, best := -1, -1.0
			for p := b.ptr[i]; p < b.ptr[i+1]; p++ {
				c := b.col[p]
				if vals == nil && c >= 70 { // the private column
					partner = c
					break
				}
				if vals != nil && math.Abs(vals[p]) > best {
					best, partner = math.Abs(vals[p]), c
				}
			}
			if a.sym.iperm[b.cols+i] < a.sym.iperm[partner] {
				t.Fatalf("row %d at step %d before its column %d at %d", i, a.sym.iperm[b.cols+i], partner, a.sym.iperm[partner])
			}
		}
	}
}

// TestAugmentedOrders: both orders AnalyseAugmented compares (AMD on the
// pairs' quotient graph, and AMD on K with rows moved after their
// partners) are permutations of K's nodes with every row after its
// partner, and it keeps the one with fewer multiply–adds; on random
// patterns with and without private columns, a mesh, a row without
// columns, with and without values. Each order is the cheaper on some of
// them (the reason both are analysed).
func TestAugmentedOrders(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	cases := []csr{randomB(rng, 50, 70, 4, true), randomB(rng, 60, 50, 3, false), meshB(rng, 12, 11), withoutColumns(randomB(rng, 20, 30, 3, false), 2)}
	var wins [2]int
	for ci, b := range cases {
		for _, vals := range [][]float64{nil, b.val} {
			partner := partners(b.cols, b.rows, b.ptr, b.col, vals)
			adj := augmentedAdjacency(b.rows, b.cols, b.ptr, b.col)
			best := math.Inf(1)
			var flops [2]float64
			for oi, perm := range [][]int{pairOrder(b.cols, b.rows, b.ptr, b.col, partner, DefaultDense), constrainRows(amdOrder(adj, DefaultDense), b.cols, b.rows, partner)} {
				n := b.cols + b.rows
				pos := make([]int, n)
				for k := range pos {
					pos[k] = -1
				}
				for k, node := range perm {
					if node < 0 || node >= n || pos[node] >= 0 {
						t.Fatalf("case %d, order %d: not a permutation at %d (node %d)", ci, oi, k, node)
					}
					pos[node] = k
				}
				if len(perm) != n {
					t.Fatalf("case %d, order %d: %d nodes, want %d", ci, oi, len(perm), n)
				}
				for i, p := range partner {
					if p >= 0 && pos[b.cols+i] < pos[p] {
						t.Errorf("case %d, order %d: row %d before its partner %d", ci, oi, i, p)
					}
				}
				sopt := Options{Ordering: Given, Perm: perm, Method: Simplicial}
				s, err := newSymbolic(adj, &sopt, true)
				if err != nil {
					t.Fatal(err)
				}
				best = math.Min(best, s.flops)
				flops[oi] = s.flops
			}
			switch {
			case flops[0] < flops[1]:
				wins[0]++
			case flops[1] < flops[0]:
				wins[1]++
			}
			a, err := AnalyseAugmented(b.rows, b.cols, b.ptr, b.col, vals, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Stats().Flops; got != best {
				t.Errorf("case %d: kept an order of %g multiply–adds, the better has %g", ci, got, best)
			}
		}
	}
	if wins[0] == 0 || wins[1] == 0 {
		t.Errorf("cheaper order per case (quotient graph, constrained AMD): %v wins; want each to win somewhere", wins)
	}
}

// withoutColumns returns b with row i's entries removed.
func withoutColumns(b csr, i int) csr {
	out := csr{rows: b.rows, cols: b.cols, ptr: []int{0}}
	for r := 0; r < b.rows; r++ {
		if r != i {
			out.col = append(out.col, b.col[b.ptr[r]:b.ptr[r+1]]...)
			out.val = append(out.val, b.val[b.ptr[r]:b.ptr[r+1]]...)
		}
		out.ptr = append(out.ptr, len(out.col))
	}
	return out
}

// TestAugmentedRefuses: a G singular at ε = 0 (two equal rows) makes the
// factor refuse (ErrAugmented: its probe finds cond(G) > 1e14), and a
// NaN is ErrNonFinite; invalid patterns and values are ErrPattern.
func TestAugmentedRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	b := randomB(rng, 10, 30, 3, false)
	// Row 1 := row 0.
	r0 := append([]int(nil), b.col[b.ptr[0]:b.ptr[1]]...)
	v0 := append([]float64(nil), b.val[b.ptr[0]:b.ptr[1]]...)
	var col []int
	var val []float64
	ptr := []int{0}
	for i := 0; i < b.rows; i++ {
		if i == 1 {
			col, val = append(col, r0...), append(val, v0...)
		} else {
			col, val = append(col, b.col[b.ptr[i]:b.ptr[i+1]]...), append(val, b.val[b.ptr[i]:b.ptr[i+1]]...)
		}
		ptr = append(ptr, len(col))
	}
	a, err := AnalyseAugmented(b.rows, b.cols, ptr, col, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := a.NewFactor()
	winv := randomVec(rng, b.cols, 1, 1)
	if err := f.Factor(val, winv, 0); !errors.Is(err, ErrAugmented) {
		t.Errorf("singular G: %v, want ErrAugmented", err)
	}
	if err := f.Factor(val, winv, 1e-6); err != nil {
		t.Errorf("singular G with ε = 1e-6: %v", err)
	}
	val[0] = math.NaN()
	if err := f.Factor(val, winv, 0); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN: %v, want ErrNonFinite", err)
	}
	if _, err := AnalyseAugmented(2, 3, []int{0, 1, 2}, []int{0, 5}, nil, Options{}); !errors.Is(err, ErrPattern) {
		t.Errorf("column out of range: %v", err)
	}
	if _, err := AnalyseAugmented(2, 3, []int{0, 1, 2}, []int{0, 1}, []float64{1}, Options{}); !errors.Is(err, ErrPattern) {
		t.Errorf("short vals: %v", err)
	}
	if _, err := AnalyseAugmented(2, 3, []int{0, 1, 2}, []int{0, 1}, nil, Options{Ordering: Natural}); !errors.Is(err, ErrPattern) {
		t.Errorf("Natural ordering: %v", err)
	}
}
