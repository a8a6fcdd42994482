//go:build !openblas

package enforce

import (
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/internal/fastblas"
)

// BLASImplementation names the BLAS in use: pure Go by default, OpenBLAS
// with the openblas build tag.
const BLASImplementation = "gonum (pure Go) with enforce's float32 and float64 matrix products"

// In the default (pure-Go) build, gorgonia's BLAS is gonum's except for
// the matrix products, Sgemm and Dgemm, which run on enforce's kernels
// (internal/fastblas: AVX-512 or AVX2/FMA Go assembly, split over the
// cores; 7–18× gonum's Sgemm and 5.1–6.4× its Dgemm at a 200-wide layer on 833
// inputs in BenchmarkSgemm and BenchmarkDgemm). This speeds up every
// gorgonia graph in a program that imports enforce, float32 and float64.
// Results do not depend on GOMAXPROCS; they differ from gonum's in
// rounding (fused multiply–adds).
func init() {
	gorgonia.Use(fastblas.Implementation{})
}
