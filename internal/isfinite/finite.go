// Package isfinite tells whether every value of a float slice is finite,
// eight float32 or four float64 values at a time with AVX2 where the CPU
// has it, one at a time elsewhere. The training loop runs it on every
// gradient and weight after every step, where a scalar loop cost about 6 %
// of an MLP epoch.
package isfinite

// Float32s reports whether no value of x is a NaN or an infinity.
func Float32s(x []float32) bool {
	n := 0
	if useAsm && len(x) >= 32 {
		n = len(x) &^ 31
		if !float32sAsm(&x[0], n) {
			return false
		}
	}
	for _, v := range x[n:] {
		if v-v != 0 { // NaN for a NaN or an infinity, 0 otherwise
			return false
		}
	}
	return true
}

// Float64s reports whether no value of x is a NaN or an infinity.
func Float64s(x []float64) bool {
	n := 0
	if useAsm && len(x) >= 16 {
		n = len(x) &^ 15
		if !float64sAsm(&x[0], n) {
			return false
		}
	}
	for _, v := range x[n:] {
		if v-v != 0 {
			return false
		}
	}
	return true
}
