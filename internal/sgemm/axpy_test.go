package sgemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAdd4x64 compares Add4x64 with the plain-Go sum for every length up
// to 37 (whole and partial vectors of four), and checks that it writes
// nothing past len(y) and allocates nothing.
func TestAdd4x64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vec := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = 2*rng.Float64() - 1
		}
		return v
	}
	for n := 0; n <= 37; n++ {
		a0, a1, a2, a3 := vec(n+3), vec(n+3), vec(n+3), vec(n+3)
		b := vec(4)
		y := vec(n + 1)
		want := append([]float64(nil), y...)
		add4x64Go(want[:n], a0, a1, a2, a3, b[0], b[1], b[2], b[3])
		got := append([]float64(nil), y...)
		Add4x64(got[:n], a0, a1, a2, a3, b[0], b[1], b[2], b[3])
		for i := range n {
			assert.InDelta(t, want[i], got[i], 4e-16*(1+math.Abs(want[i])), "n = %d, i = %d", n, i)
		}
		assert.Equal(t, y[n], got[n], "n = %d: nothing written past len(y)", n)
	}
	y, a := make([]float64, 100), vec(100)
	allocs := testing.AllocsPerRun(10, func() { Add4x64(y, a, a, a, a, 1, 2, 3, 4) })
	assert.Zero(t, allocs)
}
