//go:build cholmod

// Package cholmodbench is a small cgo harness around SuiteSparse CHOLMOD,
// used only to compare package sparse with CHOLMOD on the same matrices in
// the same benchmark run. It is built only with the build tag cholmod and
// needs Debian's libsuitesparse-dev (apt-get install -y libsuitesparse-dev).
//
// Licence: CHOLMOD's Core, Check and Cholesky modules are LGPL-2.1+, but its
// Supernodal module is GPL-2+; a binary built with the cholmod tag links
// all of libcholmod and is therefore GPL-2+. Nothing in the default build
// links it.
package cholmodbench

/*
#cgo CFLAGS: -I/usr/include/suitesparse
#cgo LDFLAGS: -lcholmod
#include <stdlib.h>
#include <cholmod.h>

static cholmod_common *cb_start(int supernodal) {
	cholmod_common *c = malloc(sizeof(cholmod_common));
	cholmod_start(c);
	c->nmethods = 1;
	c->method[0].ordering = CHOLMOD_AMD;
	c->postorder = 1;
	c->supernodal = supernodal ? CHOLMOD_SUPERNODAL : CHOLMOD_SIMPLICIAL;
	c->final_ll = supernodal ? 1 : 0;
	return c;
}

static cholmod_sparse *cb_sparse(size_t nrow, size_t ncol, size_t nnz, int stype, cholmod_common *c) {
	return cholmod_allocate_sparse(nrow, ncol, nnz, 1, 1, stype, CHOLMOD_REAL, c);
}

static int cb_factor(cholmod_sparse *A, cholmod_factor *L, double beta, cholmod_common *c) {
	double b[2] = {beta, 0};
	return cholmod_factorize_p(A, b, NULL, 0, L, c) && c->status == CHOLMOD_OK;
}

static void cb_finish(cholmod_common *c, cholmod_sparse *A, cholmod_factor *L,
		cholmod_dense *B, cholmod_dense *X, cholmod_dense *Y, cholmod_dense *E) {
	cholmod_free_sparse(&A, c);
	cholmod_free_factor(&L, c);
	cholmod_free_dense(&B, c);
	cholmod_free_dense(&X, c);
	cholmod_free_dense(&Y, c);
	cholmod_free_dense(&E, c);
	cholmod_finish(c);
	free(c);
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// Mode selects CHOLMOD's factorisation.
type Mode int

const (
	// Simplicial is CHOLMOD's simplicial (up-looking) LDLᵀ.
	Simplicial Mode = iota
	// Supernodal is CHOLMOD's supernodal LLᵀ (BLAS-3 on dense blocks).
	Supernodal
)

// Factor is a CHOLMOD matrix, its symbolic analysis (CHOLMOD's AMD,
// postordered) and numeric factor.
type Factor struct {
	c          *C.cholmod_common
	a          *C.cholmod_sparse
	l          *C.cholmod_factor
	b, x, y, e *C.cholmod_dense
	n          int
	nnz        int
}

// NewSym analyses the symmetric n×n matrix whose lower triangle is given in
// CSC form (colPtr, rowIdx).
func NewSym(n int, colPtr, rowIdx []int, mode Mode) (*Factor, error) {
	return newFactor(n, n, colPtr, rowIdx, -1, mode)
}

// NewGram analyses A·Aᵀ for the nrow×ncol matrix A in CSC form; Factor then
// factors A·Aᵀ + βI as CHOLMOD does for an unsymmetric A.
func NewGram(nrow, ncol int, colPtr, rowIdx []int, mode Mode) (*Factor, error) {
	return newFactor(nrow, ncol, colPtr, rowIdx, 0, mode)
}

func newFactor(nrow, ncol int, colPtr, rowIdx []int, stype int, mode Mode) (*Factor, error) {
	c := C.cb_start(C.int(mode))
	f := &Factor{c: c, n: nrow, nnz: len(rowIdx)}
	f.a = C.cb_sparse(C.size_t(nrow), C.size_t(ncol), C.size_t(len(rowIdx)), C.int(stype), c)
	if f.a == nil {
		f.Free()
		return nil, errors.New("cholmodbench: allocate")
	}
	p := unsafe.Slice((*C.int)(f.a.p), ncol+1)
	for j := range p {
		p[j] = C.int(colPtr[j])
	}
	ix := unsafe.Slice((*C.int)(f.a.i), len(rowIdx))
	for k := range ix {
		ix[k] = C.int(rowIdx[k])
	}
	f.l = C.cholmod_analyze(f.a, c)
	if f.l == nil || c.status != C.CHOLMOD_OK {
		f.Free()
		return nil, errors.New("cholmodbench: analyze")
	}
	f.b = C.cholmod_allocate_dense(C.size_t(nrow), 1, C.size_t(nrow), C.CHOLMOD_REAL, c)
	return f, nil
}

// Factor sets the values of the matrix (in rowIdx order) and factors it,
// plus beta·I.
func (f *Factor) Factor(vals []float64, beta float64) error {
	x := unsafe.Slice((*float64)(f.a.x), f.nnz)
	copy(x, vals)
	if C.cb_factor(f.a, f.l, C.double(beta), f.c) == 0 {
		return errors.New("cholmodbench: factorize failed or not positive definite")
	}
	return nil
}

// Solve overwrites x with A⁻¹x (or (A·Aᵀ+βI)⁻¹x).
func (f *Factor) Solve(x []float64) {
	bx := unsafe.Slice((*float64)(f.b.x), f.n)
	copy(bx, x)
	C.cholmod_solve2(C.CHOLMOD_A, f.l, f.b, nil, &f.x, nil, &f.y, &f.e, f.c)
	copy(x, unsafe.Slice((*float64)(f.x.x), f.n))
}

// NNZL returns CHOLMOD's nnz(L) from its analysis, strictly below the
// diagonal (supernodal amalgamation zeros excluded).
func (f *Factor) NNZL() int { return int(f.c.lnz) - f.n }

// Free releases the C memory.
func (f *Factor) Free() {
	C.cb_finish(f.c, f.a, f.l, f.b, f.x, f.y, f.e)
	f.c = nil
}
