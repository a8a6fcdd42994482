package enforce

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestQuadraticFloat32 checks EvalBatch32 and HessVecBatch32 against the
// float64 methods, with and without C, d and r, at sizes that exercise
// partial blocks of samples and columns.
func TestQuadraticFloat32(t *testing.T) {
	rnd := rand.New(rand.NewPCG(41, 42))
	for _, sz := range []struct{ nx, ny, nc, rows int }{{1, 3, 2, 1}, {3, 7, 5, 50}, {2, 40, 45, 97}} {
		for _, full := range []bool{false, true} {
			A := make([]*mat.SymDense, sz.nc)
			for i := range A {
				A[i] = ctRandSym(rnd, sz.ny)
			}
			var C *mat.Dense
			var d []float64
			var r RHS
			if full {
				C, d = ctRandDense(rnd, sz.nc, sz.ny), ctRandVec(rnd, sz.nc, -1, 1)
				r = func(x, r, jx []float64) {
					for i := range r {
						r[i] = x[i%len(x)] * float64(i+1)
					}
				}
			}
			q, err := Quadratic(sz.nx, A, C, d, r)
			if err != nil {
				t.Fatal(err)
			}
			k := CapabilitiesOf(q)
			rows := sz.rows
			x, y := ctRandVec(rnd, rows*sz.nx, -1, 1), ctRandVec(rnd, rows*sz.ny, -2, 2)
			c64, j64 := make([]float64, rows*sz.nc), make([]float64, rows*sz.nc*sz.ny)
			c32, j32 := make([]float64, rows*sz.nc), make([]float32, rows*sz.nc*sz.ny)
			k.EvalBatch(rows, x, y, c64, j64)
			k.EvalBatch32(rows, x, y, c32, j32)
			scale := 4 * float64(sz.ny) // |yᵀA_i y| ≲ ny·|y|²·|A|
			for i := range c64 {
				if math.Abs(c32[i]-c64[i]) > 1e-6*scale {
					t.Fatalf("%v full=%v: c[%d] = %v, float64 %v", sz, full, i, c32[i], c64[i])
				}
			}
			for i := range j64 {
				if math.Abs(float64(j32[i])-j64[i]) > 1e-6*scale {
					t.Fatalf("%v full=%v: J[%d] = %v, float64 %v", sz, full, i, j32[i], j64[i])
				}
			}
			w, v := ctRandVec(rnd, rows*sz.nc, -1, 1), ctRandVec(rnd, rows*sz.ny, -1, 1)
			w[0] = 0
			h64, h32 := make([]float64, rows*sz.ny), make([]float64, rows*sz.ny)
			CapabilitiesOf(q).HessVecBatch(rows, x, y, w, v, h64)
			k.HessVecBatch32(rows, x, y, w, v, h32)
			for i := range h64 {
				if math.Abs(h32[i]-h64[i]) > 1e-6*scale {
					t.Fatalf("%v full=%v: HessVec[%d] = %v, float64 %v", sz, full, i, h32[i], h64[i])
				}
			}
		}
	}
}

// TestQuadraticFloat32Overflow: a Jacobian entry beyond float32's range
// makes its sample's residual from EvalBatch32 not finite (AdaNP checks
// only c for Quadratic), for a y too large for float32 and for a C too
// large for it (which takes the float64 products); the other samples are
// unaffected.
func TestQuadraticFloat32Overflow(t *testing.T) {
	rnd := rand.New(rand.NewPCG(43, 44))
	ny, nc, rows := 7, 3, 4
	A := make([]*mat.SymDense, nc)
	for i := range A {
		A[i] = ctRandSym(rnd, ny)
	}
	C := ctRandDense(rnd, nc, ny)
	Cbig := mat.DenseCopyOf(C)
	Cbig.Set(1, 2, 1e39)
	for name, tc := range map[string]struct {
		c   *mat.Dense
		big float64 // y[2] of sample 2
	}{"y beyond float32": {C, 1e39}, "C beyond float32": {Cbig, 0.5}} {
		q, err := Quadratic(0, A, tc.c, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		y := ctRandVec(rnd, rows*ny, -1, 1)
		y[2*ny+2] = tc.big
		c, jy := make([]float64, rows*nc), make([]float32, rows*nc*ny)
		CapabilitiesOf(q).EvalBatch32(rows, nil, y, c, jy)
		for s := range rows {
			overflows := !allFinite(jy[s*nc*ny : (s+1)*nc*ny])
			if overflows && allFinite(c[s*nc:(s+1)*nc]) {
				t.Errorf("%s: sample %d has a non-finite float32 Jacobian but a finite residual %v", name, s, c[s*nc:(s+1)*nc])
			}
			if wantOverflow := name == "C beyond float32" || s == 2; overflows != wantOverflow {
				t.Errorf("%s: sample %d: Jacobian overflows = %v, want %v", name, s, overflows, wantOverflow)
			}
		}
	}
}
