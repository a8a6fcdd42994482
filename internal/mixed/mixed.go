// Package mixed holds a loop of the projection step that mixes
// precisions: adding a multiple of a float32 vector to a float64 one, as
// Bᵀ·μ with a float32 Jacobian and the curvature sums of Quadratic's
// single-precision products do. It runs eight values at a time with AVX2
// where the CPU has it, one at a time elsewhere, with the same bits: each
// product is rounded to float64 and then added (no fused multiply–add).
package mixed

// Axpy adds a·x[t], the float32 x[t] converted to float64, to dst[t] for
// every t < len(x): dst[t] = dst[t] + float64(float64(x[t])·a), the
// product rounded before the sum. dst must be at least as long as x.
func Axpy(dst []float64, a float64, x []float32) {
	n := len(x)
	dst = dst[:n]
	m := 0
	if useAsm && n >= 8 {
		m = n &^ 7
		axpyAsm(&dst[0], a, &x[0], m)
	}
	for t := m; t < n; t++ {
		dst[t] += float64(float64(x[t]) * a)
	}
}
