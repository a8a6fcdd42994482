// Package vmath evaluates sin and cos of float32 values, in float64, one at
// a time (SinCos32) or four at a time with AVX2 (SinCos32s), with the same
// bits both ways. Package problems' §5.3 objective spends most of its time
// here.
package vmath

import "math"

// Limit bounds the arguments of the polynomial path: beyond it, and for
// infinities and NaN, the functions return math.Sincos's values.
const Limit = 0x1p20

// SinCos32 returns sin x and cos x for x a float32 value (converted to
// float64), to a relative error below about 1e-10, far below float32's
// 6e-8: rounded to float32 they are those of math.Sin and math.Cos but
// for about 4 in 10⁴ near-ties, one ulp apart (TestSinCos32), and more
// accurate than math32's. It is about 3.5× faster than math.Sincos
// (BenchmarkSinCos32). It is the method of musl's sinf and cosf
// (FreeBSD's k_sinf.c, k_cosf.c and e_rem_pio2f.c): x is reduced
// to y ∈ [−π/4, π/4] by the nearest multiple nπ/2, with π/2 split into a
// 25-bit and a 53-bit part, and sin y and cos y are polynomials of minimax
// error 2⁻³⁷·⁵ (sin y / y) and 2⁻³⁴·¹ (cos y) evaluated in float64. Both
// are computed and the quadrant is applied without branches, which the
// random quadrants of a batch would mispredict. Arguments with
// |x| ≥ Limit, infinities and NaN go to math.Sincos.
func SinCos32(x float64) (sin, cos float64) {
	const (
		toint   = 1.5 / 0x1p-52              // adding and subtracting it rounds to an integer
		invPiO2 = 6.36619772367581382433e-01 // 2/π
		piO2Hi  = 1.57079631090164184570e+00 // the first 25 bits of π/2
		piO2Lo  = 1.58932547735281966916e-08 // π/2 − piO2Hi
		s1      = -0x15555554cbac77.0p-55    // −0.166666666416265235595
		s2      = 0x111110896efbb2.0p-59     // 0.0083333293858894631756
		s3      = -0x1a00f9e2cae774.0p-65    // −0.000198393348360966317347
		s4      = 0x16cd878c3b46a7.0p-71     // 0.0000027183114939898219064
		c0      = -0x1ffffffd0c5e81.0p-54    // −0.499999997251031003120
		c1      = 0x155553e1053a42.0p-57     // 0.0416666233237390631894
		c2      = -0x16c087e80f1e27.0p-62    // −0.00138867637746099294692
		c3      = 0x199342e0ee5069.0p-68     // 0.0000243904487962774090654
	)
	if !(math.Abs(x) < Limit) {
		return math.Sincos(x)
	}
	fn := float64(float64(x*invPiO2)+toint) - toint
	n := uint64(int64(fn))
	// Every product is converted to float64, which rounds it: no
	// compiler may fuse it into a multiply-add (GOAMD64=v3 could), so the
	// bits are those of the AVX2 loop on every build.
	y := float64(x-float64(fn*piO2Hi)) - float64(fn*piO2Lo)

	z := y * y
	w := z * z
	s := z * y
	sy := float64(y+float64(s*float64(s1+float64(z*s2)))) + float64(float64(s*w)*float64(s3+float64(z*s4)))
	cy := float64(float64(1+float64(z*c0))+float64(w*c1)) + float64(float64(w*z)*float64(c2+float64(z*c3)))

	// Quadrant n mod 4: sin x = sin y, cos y, −sin y, −cos y and
	// cos x = cos y, −sin y, −cos y, sin y.
	sb, cb := math.Float64bits(sy), math.Float64bits(cy)
	odd := -(n & 1) // all ones in odd quadrants
	sinBits := (sb &^ odd) | (cb & odd)
	cosBits := (cb &^ odd) | (sb & odd)
	sinBits ^= (n & 2) << 62
	cosBits ^= ((n + 1) & 2) << 62
	return math.Float64frombits(sinBits), math.Float64frombits(cosBits)
}

// SinCos32s sets sin[i], cos[i] = SinCos32(x[i]) for every i, four at a
// time with AVX2 where the CPU has it (sincos_amd64.s: the same operations
// in the same order, so the same bits). The slices have one length.
func SinCos32s(x, sin, cos []float64) {
	n := len(x)
	if len(sin) != n || len(cos) != n {
		panic("vmath: SinCos32s of slices of different lengths")
	}
	v := 0
	if useAsm && n >= 4 {
		v = n &^ 3
		sinCos4(&x[0], &sin[0], &cos[0], v)
		for i, t := range x[:v] {
			if !(math.Abs(t) < Limit) { // rare: the lanes the polynomial does not serve
				sin[i], cos[i] = math.Sincos(t)
			}
		}
	}
	for i := v; i < n; i++ {
		sin[i], cos[i] = SinCos32(x[i])
	}
}
