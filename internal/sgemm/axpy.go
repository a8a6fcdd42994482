package sgemm

// Add4x64 adds to y the combination of four columns a0 … a3 with the
// weights b0 … b3: y[i] += a0[i]·b0 + a1[i]·b1 + a2[i]·b2 + a3[i]·b3 for
// i < len(y), the inner loop of the small blocks of a sparse supernodal
// factorisation. Where the assembly kernels run (HasAsm) the sum is
// ((a0·b0 + a1·b1) + a2·b2) + a3·b3 by fused multiply–adds, four entries
// at a time; elsewhere it is the same sum in plain Go, unfused. The a's
// must hold at least len(y) values.
func Add4x64(y, a0, a1, a2, a3 []float64, b0, b1, b2, b3 float64) {
	n := len(y)
	if n == 0 {
		return
	}
	a0, a1, a2, a3 = a0[:n], a1[:n], a2[:n], a3[:n]
	if HasAsm {
		b := [4]float64{b0, b1, b2, b3}
		add4x64(n, &y[0], &a0[0], &a1[0], &a2[0], &a3[0], &b)
		return
	}
	add4Go(y, a0, a1, a2, a3, b0, b1, b2, b3)
}

// add4Go is Add4x64 and Add4x32 in plain Go, unfused.
func add4Go[T Real](y, a0, a1, a2, a3 []T, b0, b1, b2, b3 T) {
	a0, a1, a2, a3 = a0[:len(y)], a1[:len(y)], a2[:len(y)], a3[:len(y)]
	for i := range y {
		y[i] += a0[i]*b0 + a1[i]*b1 + a2[i]*b2 + a3[i]*b3
	}
}

// Add4x32 is Add4x64 in float32 (eight entries at a time in the assembly).
func Add4x32(y, a0, a1, a2, a3 []float32, b0, b1, b2, b3 float32) {
	n := len(y)
	if n == 0 {
		return
	}
	a0, a1, a2, a3 = a0[:n], a1[:n], a2[:n], a3[:n]
	if HasAsm {
		b := [4]float32{b0, b1, b2, b3}
		add4x32(n, &y[0], &a0[0], &a1[0], &a2[0], &a3[0], &b)
		return
	}
	add4Go(y, a0, a1, a2, a3, b0, b1, b2, b3)
}
