package enforce

import (
	"math"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestFloat32GraphMatMul checks that a float32 gorgonia graph's matrix
// products (forward and both gradients, which use transposed operands)
// agree with float64 arithmetic under the BLAS this package installs.
func TestFloat32GraphMatMul(t *testing.T) {
	const m, k, n = 50, 70, 40
	a32, b32 := make([]float32, m*k), make([]float32, k*n)
	for i := range a32 {
		a32[i] = float32(math.Sin(float64(i)))
	}
	for i := range b32 {
		b32[i] = float32(math.Cos(float64(3 * i)))
	}
	g := gorgonia.NewGraph()
	a := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(m, k), gorgonia.WithName("a"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(m, k), tensor.WithBacking(a32))))
	b := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(k, n), gorgonia.WithName("b"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(k, n), tensor.WithBacking(b32))))
	c := gorgonia.Must(gorgonia.Mul(a, b))
	cost := gorgonia.Must(gorgonia.Sum(c))
	if _, err := gorgonia.Grad(cost, a, b); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	cv := c.Value().Data().([]float32)
	ga, _ := a.Grad()
	gb, _ := b.Grad()
	gav, gbv := ga.Data().([]float32), gb.Data().([]float32)
	for i := range m {
		for j := range n {
			var want float64
			for kk := range k {
				want += float64(a32[i*k+kk]) * float64(b32[kk*n+j])
			}
			if d := math.Abs(float64(cv[i*n+j]) - want); d > 1e-4 {
				t.Fatalf("C[%d,%d] = %g, want %g", i, j, cv[i*n+j], want)
			}
		}
	}
	// d sum(A·B)/dA[i,kk] = Σ_j B[kk,j]; d/dB[kk,j] = Σ_i A[i,kk].
	for i := range m {
		for kk := range k {
			var want float64
			for j := range n {
				want += float64(b32[kk*n+j])
			}
			if d := math.Abs(float64(gav[i*k+kk]) - want); d > 1e-4 {
				t.Fatalf("dA[%d,%d] = %g, want %g", i, kk, gav[i*k+kk], want)
			}
		}
	}
	for kk := range k {
		for j := range n {
			var want float64
			for i := range m {
				want += float64(a32[i*k+kk])
			}
			if d := math.Abs(float64(gbv[kk*n+j]) - want); d > 1e-4 {
				t.Fatalf("dB[%d,%d] = %g, want %g", kk, j, gbv[kk*n+j], want)
			}
		}
	}
}
