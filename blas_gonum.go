//go:build !openblas

package enforce

// BLASImplementation names the BLAS in use: pure Go by default, OpenBLAS
// with the openblas build tag.
const BLASImplementation = "gonum (pure Go)"
