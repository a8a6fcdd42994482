//go:build !openblas

package enforce

import (
	"testing"

	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/internal/fastblas"
)

// TestDefaultBLAS checks that importing enforce installs fastblas as
// gorgonia's BLAS in the default build.
func TestDefaultBLAS(t *testing.T) {
	if _, ok := gorgonia.WhichBLAS().(fastblas.Implementation); !ok {
		t.Fatalf("gorgonia's BLAS is %T, want fastblas.Implementation", gorgonia.WhichBLAS())
	}
}
