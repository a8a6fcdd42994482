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
		add4Go(want[:n], a0, a1, a2, a3, b[0], b[1], b[2], b[3])
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

// TestAdd4x32 is TestAdd4x64 for Add4x32, lengths up to 41 (whole and
// partial vectors of eight).
func TestAdd4x32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(2*rng.Float64() - 1)
		}
		return v
	}
	for n := 0; n <= 41; n++ {
		a0, a1, a2, a3 := vec(n+3), vec(n+3), vec(n+3), vec(n+3)
		b := vec(4)
		y := vec(n + 1)
		got := append([]float32(nil), y...)
		Add4x32(got[:n], a0, a1, a2, a3, b[0], b[1], b[2], b[3])
		for i := range n {
			want := float64(y[i]) + float64(a0[i])*float64(b[0]) + float64(a1[i])*float64(b[1]) + float64(a2[i])*float64(b[2]) + float64(a3[i])*float64(b[3])
			assert.InDelta(t, want, float64(got[i]), 1e-6*(1+math.Abs(want)), "n = %d, i = %d", n, i)
		}
		assert.Equal(t, y[n], got[n], "n = %d: nothing written past len(y)", n)
	}
	y, a := make([]float32, 100), vec(100)
	allocs := testing.AllocsPerRun(10, func() { Add4x32(y, a, a, a, a, 1, 2, 3, 4) })
	assert.Zero(t, allocs)
}
