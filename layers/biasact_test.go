package layers

import (
	"math"
	"math/rand/v2"
	"testing"
)

// biasAct32Loop and biasAct64Loop are biasAct32 and biasAct64 as they were
// before ReLU and the identity moved to sgemm's bias epilogues.
func biasAct32Loop(h, b []float32, a Activation) {
	w := len(b)
	for ; len(h) >= w; h = h[w:] {
		row := h[:w:w]
		switch a {
		case ReLU:
			for j, v := range row {
				row[j] = max(v+b[j], 0)
			}
		case Identity:
			for j, v := range row {
				row[j] = v + b[j]
			}
		default:
			for j, v := range row {
				row[j] = float32(a.value(float64(v + b[j])))
			}
		}
	}
}

func biasAct64Loop(dst []float64, h, b []float32, a Activation) {
	w := len(b)
	for ; len(h) >= w; h, dst = h[w:], dst[w:] {
		row, out := h[:w:w], dst[:w:w]
		switch a {
		case Identity:
			for j, v := range row {
				out[j] = float64(v + b[j])
			}
		case ReLU:
			for j, v := range row {
				out[j] = float64(max(v+b[j], 0))
			}
		default:
			for j, v := range row {
				out[j] = float64(float32(a.value(float64(v + b[j]))))
			}
		}
	}
}

// TestBiasActMatchesLoop checks biasAct32 and biasAct64 bit for bit
// against the Go loops for every activation, widths 1..40, 1..3 rows and
// random and special values (NaNs with payloads and signs, ±Inf, ±0,
// denormals). With the assembly (the default build on an AVX2 machine) it
// checks the assembly; with the purego tag, the Go fallback.
func TestBiasActMatchesLoop(t *testing.T) {
	specials := []float32{
		float32(math.NaN()), math.Float32frombits(0xffc00456), math.Float32frombits(0x7f800001),
		float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
		math.Float32frombits(1), math.Float32frombits(0x807fffff), math.MaxFloat32, -math.MaxFloat32,
	}
	rng := rand.New(rand.NewPCG(5, 6))
	vals := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			if rng.IntN(4) == 0 {
				v[i] = specials[rng.IntN(len(specials))]
			} else {
				v[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20)))
			}
		}
		return v
	}
	for _, a := range []Activation{ReLU, Identity, Tanh, Sigmoid} {
		for w := 1; w <= 40; w++ {
			for rows := 1; rows <= 3; rows++ {
				b, h := vals(w), vals(rows*w)
				got, want := append([]float32(nil), h...), append([]float32(nil), h...)
				biasAct32(got, b, a)
				biasAct32Loop(want, b, a)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !bothNaN(float64(got[i]), float64(want[i])) {
						t.Fatalf("biasAct32 %v w=%d: [%d] = %#08x, want %#08x", a, w, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
					}
				}
				got64, want64 := make([]float64, len(h)), make([]float64, len(h))
				biasAct64(got64, h, b, a)
				biasAct64Loop(want64, h, b, a)
				for i := range want64 {
					if math.Float64bits(got64[i]) != math.Float64bits(want64[i]) && !bothNaN(got64[i], want64[i]) {
						t.Fatalf("biasAct64 %v w=%d: [%d] = %#016x, want %#016x", a, w, i, math.Float64bits(got64[i]), math.Float64bits(want64[i]))
					}
				}
			}
		}
	}
}

// bothNaN reports whether a and b are both NaN. Where v and b are both NaN,
// which payload v+b keeps follows the operand order the Go compiler picks
// for the loop (the race detector's build picks the other one), so the
// payloads of NaN results are not compared.
func bothNaN(a, b float64) bool { return a != a && b != b }
