package vmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSinCos32 checks SinCos32 against math.Sin and math.Cos on float32
// arguments: random ones, those nearest to multiples of π/2 (where the
// result is small and the reduction matters), the quadrant edges ±π/4 + kπ/2,
// and special values. It also counts how often the float32 rounding differs
// from that of math's float64 results.
func TestSinCos32(t *testing.T) {
	var xs []float64
	rnd := rand.New(rand.NewPCG(9, 0))
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
		s, c := SinCos32(x)
		ws, wc := math.Sincos(x)
		if !(math.Abs(s-ws) <= 1e-10*math.Abs(ws)) || !(math.Abs(c-wc) <= 1e-10*math.Abs(wc)) {
			t.Fatalf("SinCos32(%v) = %v, %v; math: %v, %v", x, s, c, ws, wc)
		}
		for _, v := range [][2]float64{{s, ws}, {c, wc}} {
			if got, want := float32(v[0]), float32(v[1]); got != want {
				differ++
				if got != math.Nextafter32(want, got) {
					t.Errorf("SinCos32(%v) rounds to %v, math's to %v: more than one ulp apart", x, got, want)
				}
			}
		}
	}
	t.Logf("%d arguments, %d roundings to float32 differ from math's", len(xs), differ)
	assert.Less(t, differ, len(xs)/1000, "near-ties only")
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		s, c := SinCos32(x)
		assert.True(t, math.IsNaN(s) && math.IsNaN(c), "%v", x)
	}
}

// BenchmarkSinCos32 compares SinCos32 with math.Sincos on a batch of
// float32 arguments in (−10, 10).
func BenchmarkSinCos32(b *testing.B) {
	rnd := rand.New(rand.NewPCG(10, 0))
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = float64(float32(20*rnd.Float64() - 10))
	}
	var sum float64
	b.Run("sinCos32", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				s, c := SinCos32(x)
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

// TestSinCos32s requires SinCos32s to give SinCos32's bits, with the AVX2
// loop and without, on every length up to 40 and on arguments of every
// kind: random ones of magnitudes 1e-8 to 1e7, those nearest to multiples
// of π/4, ±0, the limit 2²⁰ and its neighbours, beyond it, ±Inf and NaN.
func TestSinCos32s(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	var xs []float64
	for range 100000 {
		xs = append(xs, float64(float32((2*rnd.Float64()-1)*math.Pow(10, -8+15*rnd.Float64()))))
	}
	for k := -40; k <= 40; k++ {
		v := float32(float64(k) * math.Pi / 4)
		xs = append(xs, float64(v), float64(math.Nextafter32(v, 10)), float64(math.Nextafter32(v, -10)))
	}
	xs = append(xs, 0, math.Copysign(0, -1), Limit, -Limit, math.Nextafter(Limit, 0), math.Nextafter(-Limit, 0),
		math.Nextafter(Limit, math.Inf(1)), 3e9, -1e30, math.Inf(1), math.Inf(-1), math.NaN())
	rnd.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	hasAsm := useAsm
	defer func() { useAsm = hasAsm }()
	for _, asm := range []bool{false, true} {
		useAsm = asm && hasAsm
		for n := 0; n <= 40; n++ {
			check(t, xs[:n])
		}
		check(t, xs)
	}
	assert.Panics(t, func() { SinCos32s(make([]float64, 2), make([]float64, 2), make([]float64, 1)) })
}

func check(t *testing.T, xs []float64) {
	t.Helper()
	sin, cos := make([]float64, len(xs)), make([]float64, len(xs))
	SinCos32s(xs, sin, cos)
	for i, x := range xs {
		s, c := SinCos32(x)
		if math.Float64bits(s) != math.Float64bits(sin[i]) && !(math.IsNaN(s) && math.IsNaN(sin[i])) ||
			math.Float64bits(c) != math.Float64bits(cos[i]) && !(math.IsNaN(c) && math.IsNaN(cos[i])) {
			t.Fatalf("x = %v (asm %v): SinCos32s %v, %v; SinCos32 %v, %v", x, useAsm, sin[i], cos[i], s, c)
		}
	}
}

// BenchmarkSinCos32s times SinCos32s on 20,000 float32 arguments in
// (−10, 10), with the AVX2 loop and without.
func BenchmarkSinCos32s(b *testing.B) {
	rnd := rand.New(rand.NewPCG(10, 0))
	xs := make([]float64, 20000)
	for i := range xs {
		xs[i] = float64(float32(20*rnd.Float64() - 10))
	}
	sin, cos := make([]float64, len(xs)), make([]float64, len(xs))
	defer func(saved bool) { useAsm = saved }(useAsm)
	for _, asm := range []bool{useAsm, false} {
		name := "go"
		if asm {
			name = "asm"
		}
		b.Run(name, func(b *testing.B) {
			useAsm = asm
			for b.Loop() {
				SinCos32s(xs, sin, cos)
			}
		})
	}
}
