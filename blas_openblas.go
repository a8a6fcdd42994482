//go:build openblas

package enforce

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
void dpotrf_(char *uplo, int *n, double *a, int *lda, int *info);
void spotrf_(char *uplo, int *n, float *a, int *lda, int *info);

// By value, so that no Go variable escapes to the heap at each call.
static int dpotrf_upper(int n, double *a) { char u = 'U'; int lda = n, info = 0; dpotrf_(&u, &n, a, &lda, &info); return info; }
static int spotrf_upper(int n, float *a) { char u = 'U'; int lda = n, info = 0; spotrf_(&u, &n, a, &lda, &info); return info; }
*/
import "C"

import (
	"unsafe"

	"gonum.org/v1/gonum/blas/blas64"
	blasnetlib "gonum.org/v1/netlib/blas/netlib"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce/internal/dense"
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
	dense.Potrf32 = openblasSpotrf
	dense.Potrf = openblasPotrf
	dense.BLASGram = true
}

// openblasPotrf factors the row-major a, whose lower triangle is the upper
// triangle of the same matrix read column-major, with LAPACK's dpotrf.
func openblasPotrf(a []float64, n int) bool {
	return C.dpotrf_upper(C.int(n), (*C.double)(unsafe.Pointer(&a[0]))) == 0
}

// openblasSpotrf is openblasPotrf in single precision, for Float32.
func openblasSpotrf(a []float32, n int) bool {
	return C.spotrf_upper(C.int(n), (*C.float)(unsafe.Pointer(&a[0]))) == 0
}

// BLASImplementation names the BLAS in use.
const BLASImplementation = "OpenBLAS (cgo, openblas build tag)"
