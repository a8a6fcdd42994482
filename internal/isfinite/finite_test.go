package isfinite

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// modes runs f with the assembly (where there is one) and with the Go loop.
func modes(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	saved := useAsm
	defer func() { useAsm = saved }()
	for _, asm := range []bool{saved, false} {
		useAsm = asm
		f(t)
	}
}

// TestFloats puts one NaN, +Inf or −Inf at every position of slices of
// every length up to 70 (the vector loop, the tail and both together)
// and checks that it is found, and that large finite values (the largest
// float, whose v−v is still 0) and −0 pass.
func TestFloats(t *testing.T) {
	modes(t, func(t *testing.T) {
		bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
		for n := 0; n <= 70; n++ {
			x64 := make([]float64, n)
			x32 := make([]float32, n)
			for i := range x64 {
				x64[i] = float64(i%7-3) * 1e300
				x32[i] = float32(i%7-3) * 1e37
			}
			if n > 0 {
				x64[n-1], x32[n-1] = math.MaxFloat64, math.MaxFloat32
				x64[0], x32[0] = math.Copysign(0, -1), float32(math.Copysign(0, -1))
			}
			assert.True(t, Float64s(x64), "n=%d asm=%v", n, useAsm)
			assert.True(t, Float32s(x32), "n=%d asm=%v", n, useAsm)
			for i := range n {
				for _, b := range bad {
					s64, s32 := x64[i], x32[i]
					x64[i], x32[i] = b, float32(b)
					assert.False(t, Float64s(x64), "n=%d i=%d %v asm=%v", n, i, b, useAsm)
					assert.False(t, Float32s(x32), "n=%d i=%d %v asm=%v", n, i, b, useAsm)
					x64[i], x32[i] = s64, s32
				}
			}
		}
	})
}

func BenchmarkFloat32s(b *testing.B) {
	x := make([]float32, 70000)
	modes(&testing.T{}, func(*testing.T) {
		name := "go"
		if useAsm {
			name = "asm"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Float32s(x)
			}
		})
	})
}
