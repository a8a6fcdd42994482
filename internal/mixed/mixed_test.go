package mixed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAxpy checks Axpy, with the AVX2 loop where the machine has it and
// without, against the scalar definition (the product rounded to float64,
// then added) bit for bit, on lengths around the loop's eight, with
// values of very different sizes, signed zeros, infinities and NaN, and
// that dst beyond len(x) stays untouched.
func TestAxpy(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32}
	asm := useAsm
	defer func() { useAsm = asm }()
	for _, use := range loops(asm) {
		useAsm = use
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 64, 101} {
			for _, a := range []float64{0, 1, -2.5, 1e-300, 3e300, math.Pi} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(rnd.NormFloat64() * math.Pow(10, float64(rnd.IntN(20)-10)))
					if rnd.IntN(8) == 0 {
						x[i] = special[rnd.IntN(len(special))]
					}
				}
				dst := make([]float64, n+3)
				for i := range dst {
					dst[i] = rnd.NormFloat64() * math.Pow(10, float64(rnd.IntN(20)-10))
				}
				want := append([]float64(nil), dst...)
				for i, v := range x {
					p := float64(v) * a
					want[i] = want[i] + p
				}
				Axpy(dst, a, x)
				for i := range dst {
					if math.Float64bits(dst[i]) != math.Float64bits(want[i]) && !(math.IsNaN(dst[i]) && math.IsNaN(want[i])) {
						t.Fatalf("asm %v n %d a %g: dst[%d] = %v, want %v", use, n, a, i, dst[i], want[i])
					}
				}
			}
		}
	}
}

// loops lists the settings of useAsm to test: the scalar loop, and the
// AVX2 one where the machine has it.
func loops(asm bool) []bool {
	if asm {
		return []bool{false, true}
	}
	return []bool{false}
}

// BenchmarkAxpy times Axpy at the length of a (100, 50) Jacobian, with
// the scalar loop and the AVX2 one.
func BenchmarkAxpy(b *testing.B) {
	x := make([]float32, 5000)
	dst := make([]float64, 5000)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	asm := useAsm
	defer func() { useAsm = asm }()
	for _, use := range loops(asm) {
		useAsm = use
		name := "go"
		if use {
			name = "avx2"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Axpy(dst, 1e-3, x)
			}
		})
	}
}
