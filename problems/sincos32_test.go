package problems

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSinCos32 checks sinCos32 against math.Sin and math.Cos on float32
// arguments: random ones, those nearest to multiples of π/2 (where the
// result is small and the reduction matters), the quadrant edges ±π/4 + kπ/2,
// and special values. It also counts how often the float32 rounding differs
// from that of math's float64 results.
func TestSinCos32(t *testing.T) {
	var xs []float64
	rnd := newRand(9, 0)
	for range 200000 {
		xs = append(xs, float64(float32(60*(2*rnd.Float64()-1))))
	}
	for range 20000 {
		xs = append(xs, float64(float32(math.Ldexp(2*rnd.Float64()-1, int(rnd.Float64()*60)-40))))
	}
	for k := -2000; k <= 2000; k++ {
		for _, c := range []float64{math.Pi / 2 * float64(k), math.Pi/4 + math.Pi/2*float64(k)} {
			v := float32(c)
			xs = append(xs, float64(v), float64(math.Nextafter32(v, float32(math.Inf(1)))), float64(math.Nextafter32(v, float32(math.Inf(-1)))))
		}
	}
	xs = append(xs, 0, math.Copysign(0, -1), 1e-30, 0x1p20-1, -(0x1p20 - 1), 0x1p20, 3e8, -1e30)
	var differ int
	for _, x := range xs {
		s, c := sinCos32(x)
		ws, wc := math.Sincos(x)
		if !(math.Abs(s-ws) <= 1e-10*math.Abs(ws)) || !(math.Abs(c-wc) <= 1e-10*math.Abs(wc)) {
			t.Fatalf("sinCos32(%v) = %v, %v; math: %v, %v", x, s, c, ws, wc)
		}
		for _, v := range [][2]float64{{s, ws}, {c, wc}} {
			if got, want := float32(v[0]), float32(v[1]); got != want {
				differ++
				if got != math.Nextafter32(want, got) {
					t.Errorf("sinCos32(%v) rounds to %v, math's to %v: more than one ulp apart", x, got, want)
				}
			}
		}
	}
	t.Logf("%d arguments, %d roundings to float32 differ from math's", len(xs), differ)
	assert.Less(t, differ, len(xs)/1000, "near-ties only")
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s, c := sinCos32(x)
		assert.True(t, math.IsNaN(s) && math.IsNaN(c), "%v", x)
	}
}

// BenchmarkSinCos32 compares sinCos32 with math.Sincos on a batch of
// float32 arguments in (−10, 10).
func BenchmarkSinCos32(b *testing.B) {
	rnd := newRand(10, 0)
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = float64(float32(20*rnd.Float64() - 10))
	}
	var sum float64
	b.Run("sinCos32", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				s, c := sinCos32(x)
				sum += s + c
			}
		}
	})
	b.Run("math.Sincos", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				s, c := math.Sincos(x)
				sum += s + c
			}
		}
	})
	_ = sum
}
