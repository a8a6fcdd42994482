package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// biasSpecials are the values the bias kernels must treat as Go does:
// NaNs (quiet, signalling, negative, with payloads), infinities, signed
// zeros, denormals and the extremes of the normal range.
var biasSpecials = []float32{
	float32(math.NaN()),
	math.Float32frombits(0x7fc00123), math.Float32frombits(0xffc00456),
	math.Float32frombits(0x7f800001), math.Float32frombits(0xff812345),
	float32(math.Inf(1)), float32(math.Inf(-1)),
	0, float32(math.Copysign(0, -1)),
	math.Float32frombits(1), math.Float32frombits(0x80000001),
	math.Float32frombits(0x007fffff), math.Float32frombits(0x807fffff),
	math.MaxFloat32, -math.MaxFloat32,
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	1, -1, 1 << 24, 1 + 1.0/(1<<23), 0.1, -0.1,
}

// biasValues returns n values: mostly random of both signs and varied
// magnitudes (so that sums round and cancel), a third of them special.
func biasValues(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch rng.IntN(3) {
		case 0:
			v[i] = biasSpecials[rng.IntN(len(biasSpecials))]
		case 1:
			v[i] = float32(rng.NormFloat64())
		default:
			v[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(60)-30)))
		}
	}
	return v
}

func sameBits32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %v (%#08x), want %v (%#08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

func sameBits64(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: [%d] = %v (%#016x), want %v (%#016x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// TestBiasMatchesGo checks the bias epilogues, with the assembly where the
// CPU has it, bit for bit against the Go loops, for every width 1..40 (so
// every tail of the 8-wide loop), 0..4 whole rows, a partial last row
// (left alone) and random and special values; the float64 forms also
// leave dst past the rows alone. Without the assembly it checks the Go
// loops against the scalar definition, element by element.
func TestBiasMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for w := 1; w <= 40; w++ {
		for rows := 0; rows <= 4; rows++ {
			for _, extra := range []int{0, w / 2} {
				b := biasValues(rng, w)
				h := biasValues(rng, rows*w+extra)
				n := rows * w
				// The scalar definition.
				relu := make([]float32, len(h))
				add := make([]float32, len(h))
				copy(relu, h)
				copy(add, h)
				for i := 0; i < n; i++ {
					relu[i] = max(h[i]+b[i%w], 0)
					add[i] = h[i] + b[i%w]
				}
				relu64 := make([]float64, len(h)+3)
				add64 := make([]float64, len(h)+3)
				for i := range relu64 {
					relu64[i], add64[i] = -7, -7
				}
				for i := 0; i < n; i++ {
					relu64[i] = float64(relu[i])
					add64[i] = float64(add[i])
				}
				for _, asm := range []bool{false, true} {
					if asm && !biasAsm {
						continue
					}
					func() {
						asm0 := biasAsm
						defer func() { biasAsm = asm0 }()
						biasAsm = asm
						g := append([]float32(nil), h...)
						BiasReLU(g, b)
						sameBits32(t, "BiasReLU", g, relu)
						g = append(g[:0], h...)
						BiasAdd(g, b)
						sameBits32(t, "BiasAdd", g, add)
						d := make([]float64, len(h)+3)
						for i := range d {
							d[i] = -7
						}
						BiasReLU64(d, h, b)
						sameBits64(t, "BiasReLU64", d, relu64)
						for i := range d {
							d[i] = -7
						}
						BiasAdd64(d, h, b)
						sameBits64(t, "BiasAdd64", d, add64)
					}()
				}
			}
		}
	}
}

// TestBiasReLUSpecials pins the ReLU of the special sums: −0 and negative
// values to +0, +Inf kept, −Inf to +0, a NaN kept (sign cleared, as Go's
// max does on amd64), with the assembly and without.
func TestBiasReLUSpecials(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan := math.Float32frombits(0xffc00456)
	h := []float32{negZero, -3, float32(math.Inf(1)), float32(math.Inf(-1)), nan, 0, 2, math.Float32frombits(0x80000001), 1}
	b := []float32{negZero, 1, 0, 5, 0, negZero, 0.5, 0, math.Float32frombits(0x7fc00123)}
	want := []float32{0, 0, float32(math.Inf(1)), 0, math.Float32frombits(0x7fc00456), 0, 2.5, 0, math.Float32frombits(0x7fc00123)}
	// The same values twice per row, so that the 8-wide loop sees them.
	h2 := append(append([]float32(nil), h...), h...)
	b2 := append(append([]float32(nil), b...), b...)
	want2 := append(append([]float32(nil), want...), want...)
	for _, asm := range []bool{false, biasAsm} {
		asm0 := biasAsm
		biasAsm = asm
		g := append([]float32(nil), h2...)
		BiasReLU(g, b2)
		biasAsm = asm0
		sameBits32(t, "BiasReLU", g, want2)
		if math.Signbit(float64(g[0])) {
			t.Fatal("ReLU(−0) is −0")
		}
	}
}

// BenchmarkBias compares the Go loops and the assembly on a block of
// 833×200 values (the MLP benchmark's hidden layer), for each epilogue.
func BenchmarkBias(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	bias := make([]float32, 200)
	for i := range bias {
		bias[i] = float32(rng.NormFloat64())
	}
	h := make([]float32, 833*200)
	for i := range h {
		h[i] = float32(rng.NormFloat64())
	}
	dst := make([]float64, len(h))
	ops := []struct {
		name string
		f    func()
	}{
		{"ReLU", func() { BiasReLU(h, bias) }},
		{"Add", func() { BiasAdd(h, bias) }},
		{"ReLU64", func() { BiasReLU64(dst, h, bias) }},
		{"Add64", func() { BiasAdd64(dst, h, bias) }},
	}
	for _, op := range ops {
		for _, asm := range []bool{false, true} {
			if asm && !biasAsm {
				continue
			}
			name := op.name + "/go"
			if asm {
				name = op.name + "/asm"
			}
			b.Run(name, func(b *testing.B) {
				asm0 := biasAsm
				defer func() { biasAsm = asm0 }()
				biasAsm = asm
				b.SetBytes(int64(4 * len(h)))
				for b.Loop() {
					op.f()
				}
			})
		}
	}
}

// TestReLUGradColSum requires the assembly's bits from ReLUGrad and
// ColSum on every length and width up to 70 (the vector loops and the
// tails), with special values: y of both signs, ±0, NaN and ±Inf, and
// gradients with NaN payloads.
func TestReLUGradColSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00123), math.Float32frombits(0xffc00456), math.Float32frombits(1), math.Float32frombits(0x80000001)}
	draw := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			if rng.IntN(6) == 0 {
				s[i] = specials[rng.IntN(len(specials))]
			} else {
				s[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(9)-4)))
			}
		}
		return s
	}
	hasAsm := biasAsm
	defer func() { biasAsm = hasAsm }()
	for n := 0; n <= 70; n++ {
		y, g := draw(n), draw(n)
		want := make([]float32, n)
		reluGradGo(want, y, g)
		for _, asm := range []bool{false, true} {
			biasAsm = asm && hasAsm
			got := make([]float32, n)
			ReLUGrad(got, y, g)
			sameBits32(t, fmt.Sprintf("ReLUGrad n=%d asm=%v", n, biasAsm), got, want)
			inPlace := append([]float32(nil), g...)
			ReLUGrad(inPlace, y, inPlace)
			sameBits32(t, "ReLUGrad in place", inPlace, want)
		}
	}
	for w := 1; w <= 70; w++ {
		for _, rows := range []int{0, 1, 2, 7, 40} {
			h := draw(rows*w + rng.IntN(w)) // a partial last row, ignored
			start := draw(w)
			want := append([]float32(nil), start...)
			colSumGo(want, h)
			for _, asm := range []bool{false, true} {
				biasAsm = asm && hasAsm
				got := append([]float32(nil), start...)
				ColSum(got, h)
				sameBits32(t, fmt.Sprintf("ColSum w=%d rows=%d asm=%v", w, rows, biasAsm), got, want)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ReLUGrad of slices of different lengths did not panic")
		}
	}()
	ReLUGrad(make([]float32, 2), make([]float32, 3), make([]float32, 2))
}
