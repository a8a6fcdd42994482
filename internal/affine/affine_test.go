package affine

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randSlice(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// cube is r(x)_i = x_{i mod nx}³.
func cube(x, r, _ []float64) {
	for i := range r {
		v := x[i%len(x)]
		r[i] = v * v * v
	}
}

// TestResidual checks Eval and GradY against plain loops, with and without
// r, with strided rows, for batches of one, several and many blocks.
func TestResidual(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const nx, ny, nc = 3, 21, 17
	cm := randSlice(rng, nc*ny)
	for _, r := range []func(x, r, jx []float64){cube, nil} {
		a := New(nx, ny, nc, cm, r)
		for _, rows := range []int{1, 7, Rows, 3*Rows + 5} {
			const ldx, ldy = nx + 2, ny + 1
			x, y, k := randSlice(rng, rows*ldx), randSlice(rng, rows*ldy), randSlice(rng, rows)
			c := make([]float64, rows*nc)
			require.NoError(t, a.Eval(rows, x, ldx, y, ldy, c))
			g := make([]float64, rows*ny)
			a.GradY(rows, k, c, g)
			rs := make([]float64, nc)
			for s := range rows {
				clear(rs)
				if r != nil {
					r(x[s*ldx:s*ldx+nx], rs, nil)
				}
				for i := range nc {
					want := -rs[i]
					for j := range ny {
						want += cm[i*ny+j] * y[s*ldy+j]
					}
					assert.InDelta(t, want, c[s*nc+i], 1e-13*(1+math.Abs(rs[i])), "rows %d: c[%d, %d]", rows, s, i)
				}
				for j := range ny {
					var want float64
					for i := range nc {
						want += k[s] * c[s*nc+i] * cm[i*ny+j]
					}
					assert.InDelta(t, want, g[s*ny+j], 1e-12*(1+math.Abs(k[s])), "rows %d: g[%d, %d]", rows, s, j)
				}
			}
		}
	}
}

// TestResidualGOMAXPROCS checks that Eval and GradY give the same bits with
// 1, 2 and 3 threads.
func TestResidualGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const nx, ny, nc, rows = 2, 40, 30, 200
	a := New(nx, ny, nc, randSlice(rng, nc*ny), cube)
	x, y, k := randSlice(rng, rows*nx), randSlice(rng, rows*ny), randSlice(rng, rows)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want []float64
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		c, g := make([]float64, rows*nc), make([]float64, rows*ny)
		require.NoError(t, a.Eval(rows, x, nx, y, ny, c))
		a.GradY(rows, k, c, g)
		got := append(c, g...)
		if want == nil {
			want = got
			continue
		}
		for i := range want {
			require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "GOMAXPROCS %d, entry %d", procs, i)
		}
	}
}

// TestResidualPanic checks that a panic in r is an error naming the first
// sample that panicked, whatever the blocks.
func TestResidualPanic(t *testing.T) {
	a := New(1, 2, 1, []float64{1, 1}, func(x, r, _ []float64) {
		if x[0] < 0 {
			panic("negative")
		}
		r[0] = x[0]
	})
	const rows = 3 * Rows
	x, y, c := make([]float64, rows), make([]float64, 2*rows), make([]float64, rows)
	x[2*Rows+1], x[Rows+3], x[Rows+4] = -1, -1, -1
	err := a.Eval(rows, x, 1, y, 2, c)
	require.Error(t, err)
	assert.EqualError(t, err, "right-hand side r(x) panicked at sample 51: negative")
	x[Rows+3], x[Rows+4], x[2*Rows+1] = 0, 0, 0
	assert.NoError(t, a.Eval(rows, x, 1, y, 2, c))
}

// TestResidualAllocs checks that Eval and GradY do not allocate in steady
// state.
func TestResidualAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const nx, ny, nc, rows = 4, 30, 10, 300
	a := New(nx, ny, nc, randSlice(rng, nc*ny), cube)
	x, y, k := randSlice(rng, rows*nx), randSlice(rng, rows*ny), randSlice(rng, rows)
	c, g := make([]float64, rows*nc), make([]float64, rows*ny)
	allocs := testing.AllocsPerRun(20, func() {
		if err := a.Eval(rows, x, nx, y, ny, c); err != nil {
			t.Fatal(err)
		}
		a.GradY(rows, k, c, g)
	})
	assert.Less(t, allocs, 1.0)
}

// BenchmarkResidual times Eval and GradY at the §5.3 nonconvex-linear size
// (N_O = 100, N_C = 50, batch 200).
func BenchmarkResidual(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	const nx, ny, nc, rows = 50, 100, 50, 200
	a := New(nx, ny, nc, randSlice(rng, nc*ny), cube)
	x, y, k := randSlice(rng, rows*nx), randSlice(rng, rows*ny), randSlice(rng, rows)
	c, g := make([]float64, rows*nc), make([]float64, rows*ny)
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Eval(rows, x, nx, y, ny, c); err != nil {
			b.Fatal(err)
		}
		a.GradY(rows, k, c, g)
	}
}
