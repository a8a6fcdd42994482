//go:build !openblas

package enforce

import (
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/internal/fastblas"
)

// BLASImplementation names the BLAS in use: pure Go by default, OpenBLAS
// with the openblas build tag.
const BLASImplementation = "gonum (pure Go) with enforce's float32 matrix product"

// In the default (pure-Go) build, gorgonia's BLAS is gonum's except for
// the single-precision matrix product, which runs on enforce's kernels
// (internal/fastblas: AVX-512 or AVX2/FMA Go assembly, split over the
// cores; 7–18× gonum's Sgemm at a 200-wide layer on 833 inputs in BenchmarkSgemm). This
// speeds up every float32 gorgonia graph in a program that imports
// enforce; float64 graphs are unchanged. Results do not depend on
// GOMAXPROCS.
func init() {
	gorgonia.Use(fastblas.Implementation{})
}
