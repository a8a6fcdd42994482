package problems

import (
	"fmt"
	"testing"

	"github.com/enforce-nn/enforce"
)

// BenchmarkDistillation compares the analytic distillation constraint with
// the hyperdual one from DistillationFunc, per call of each method.
func BenchmarkDistillation(b *testing.B) {
	fc, err := DistillationFunc()
	if err != nil {
		b.Fatal(err)
	}
	x := []float64{0.39, 1.44, 3.4}
	y := []float64{0.12, 1.7, 0.05, 0.95, 1e-20, 0.16, 0.004, 0.84, 0.41}
	w := []float64{1, -0.5, 0.25, 2, -1, 0.3}
	v := []float64{0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8, 0.9}
	c, jy, jx := make([]float64, 6), make([]float64, 54), make([]float64, 18)
	hv, mv := make([]float64, 9), make([]float64, 3)
	for _, impl := range []struct {
		name string
		c    enforce.Constraint
	}{{"analytic", Distillation{}.Equalities()}, {"func", fc}} {
		b.Run(impl.name+"/Eval", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				impl.c.Eval(x, y, c, jy)
			}
		})
		b.Run(impl.name+"/JacobianX", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				enforce.CapabilitiesOf(impl.c).JacobianX(x, y, jx)
			}
		})
		b.Run(impl.name+"/HessVec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				enforce.CapabilitiesOf(impl.c).HessVec(x, y, w, v, hv)
			}
		})
		b.Run(impl.name+"/MixedHessVec", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				enforce.CapabilitiesOf(impl.c).MixedHessVec(x, y, w, v, mv)
			}
		})
	}
}

// BenchmarkNewNonconvexQuadratic measures instance generation.
func BenchmarkNewNonconvexQuadratic(b *testing.B) {
	for _, sz := range []struct{ nO, nC int }{{100, 50}, {200, 150}} {
		b.Run(fmt.Sprintf("%dx%d", sz.nO, sz.nC), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewNonconvexQuadratic(sz.nO, sz.nC, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
