//go:build openblas

package enforce

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas/blas64"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
	"gorgonia.org/gorgonia"
)

// With the openblas build tag, gonum's BLAS (used by the projection and,
// through gonum's pure-Go LAPACK, by its factorisations) and gorgonia's BLAS
// (used by graph operations) call OpenBLAS through cgo. It needs
// libopenblas-dev (Debian) at build time; netlib's LAPACK wrapper is not
// used because it does not match gonum v0.15's lapack interface.
//
// OpenBLAS is set to one thread per call: the projection already runs the
// samples of a batch in parallel on all cores, and OpenBLAS threads that
// spin beside those goroutines only slow both down.
func init() {
	C.openblas_set_num_threads(1)
	blas64.Use(blasnetlib.Implementation{})
	gorgonia.Use(blasnetlib.Implementation{})
	batchGemm = true
}

// BLASImplementation names the BLAS in use.
const BLASImplementation = "OpenBLAS (cgo, openblas build tag)"
