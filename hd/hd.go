package hd

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/num/hyperdual"
)

// Number is a hyperdual number a + b·ϵ₁ + c·ϵ₂ + d·ϵ₁ϵ₂, the type
// enforce.Func evaluates constraints on; it is gonum's hyperdual.Number.
type Number = hyperdual.Number

// Const returns the constant v: v with every dual part zero.
func Const(v float64) Number { return Number{Real: v} }

// Add returns the sum of terms, or 0 if there are none.
func Add(terms ...Number) Number {
	var s Number
	for _, t := range terms {
		s.Real += t.Real
		s.E1mag += t.E1mag
		s.E2mag += t.E2mag
		s.E1E2mag += t.E1E2mag
	}
	return s
}

// Sub returns a − b.
func Sub(a, b Number) Number {
	return Number{
		Real:    a.Real - b.Real,
		E1mag:   a.E1mag - b.E1mag,
		E2mag:   a.E2mag - b.E2mag,
		E1E2mag: a.E1E2mag - b.E1E2mag,
	}
}

// Neg returns −a.
func Neg(a Number) Number { return Scale(-1, a) }

// Scale returns k·a. A zero dual part of a stays zero for every k,
// infinite or NaN included.
func Scale(k float64, a Number) Number {
	return Number{Real: k * a.Real, E1mag: part(k, a.E1mag), E2mag: part(k, a.E2mag), E1E2mag: part(k, a.E1E2mag)}
}

// Mul returns the product of factors, or 1 if there are none.
func Mul(factors ...Number) Number {
	if len(factors) == 0 {
		return Const(1)
	}
	p := factors[0]
	for _, f := range factors[1:] {
		p = hyperdual.Mul(p, f)
	}
	if hasNaNPart(p) { // a NaN part, once made, stays NaN to the end
		p = factors[0]
		for _, f := range factors[1:] {
			p = mulParts(p, f)
		}
	}
	return p
}

// mulParts returns a·b with each product that has a zero dual part as a
// factor taken as 0, so that a product of constants is a constant even
// when one of them is infinite or NaN (hyperdual.Mul gives ∞·0 = NaN
// parts). Mul, Square and Dot use hyperdual.Mul and call mulParts only when
// that gives a NaN part, so other products keep hyperdual.Mul's bits.
func mulParts(a, b Number) Number {
	return Number{
		Real:    a.Real * b.Real,
		E1mag:   part(a.Real, b.E1mag) + part(b.Real, a.E1mag),
		E2mag:   part(a.Real, b.E2mag) + part(b.Real, a.E2mag),
		E1E2mag: part(a.Real, b.E1E2mag) + both(a.E1mag, b.E2mag) + both(a.E2mag, b.E1mag) + part(b.Real, a.E1E2mag),
	}
}

// hasNaNPart reports whether a dual part of n is NaN, or whether two are
// infinite with opposite signs (then the careful formula, which gives the
// same parts, is taken for nothing): one test of their sum.
func hasNaNPart(n Number) bool {
	s := n.E1mag + n.E2mag + n.E1E2mag
	return s != s
}

// Div returns a/b. It divides by b's real part, never by its square, so
// the result is accurate whenever its parts are within the float64 range;
// parts beyond it overflow to ±Inf. If b's real part is 0 the real part is
// ±Inf (NaN for 0/0) and the dual parts along directions a or b depends on
// are ±Inf or NaN; a dual part along which neither depends is zero, so the
// quotient of two constants is a constant: Div(Const(1), Const(0)) is +Inf
// with zero dual parts.
func Div(a, b Number) Number {
	q := a.Real / b.Real
	q1 := (a.E1mag - part(q, b.E1mag)) / b.Real
	q2 := (a.E2mag - part(q, b.E2mag)) / b.Real
	q12 := (a.E1E2mag - part(q1, b.E2mag) - part(q2, b.E1mag) - part(q, b.E1E2mag)) / b.Real
	d := Number{Real: q, E1mag: q1, E2mag: q2, E1E2mag: q12}
	if hasNaNPart(d) {
		return divParts(a, b)
	}
	return d
}

// divParts is Div with each dual part whose numerator is exactly 0 taken
// as 0.
func divParts(a, b Number) Number {
	q := a.Real / b.Real
	q1 := over(a.E1mag-part(q, b.E1mag), b.Real)
	q2 := over(a.E2mag-part(q, b.E2mag), b.Real)
	q12 := over(a.E1E2mag-part(q1, b.E2mag)-part(q2, b.E1mag)-part(q, b.E1E2mag), b.Real)
	return Number{Real: q, E1mag: q1, E2mag: q2, E1E2mag: q12}
}

// over returns n/d, or 0 if n is 0: the dual part of a quotient along a
// direction that neither operand depends on, even where d is 0 or NaN.
func over(n, d float64) float64 {
	if n == 0 {
		return 0
	}
	return n / d
}

// Inv returns 1/a, with Div's behaviour near zero: Inv(Const(0)) is +Inf
// and Inv(Const(-0)) is −Inf, with zero dual parts.
func Inv(a Number) Number { return Div(Const(1), a) }

// Square returns a².
func Square(a Number) Number {
	p := hyperdual.Mul(a, a)
	if hasNaNPart(p) {
		return mulParts(a, a)
	}
	return p
}

// Abs returns |a|, with derivative sign(a₀) and second derivative 0 away
// from a real part a₀ of 0. At a₀ = 0 (either sign of zero), where |·|
// has no derivative, every dual part is 0: the derivative taken there is
// 0, the mean of the one-sided derivatives ±1 (the subgradient of least
// norm). A constraint through Abs has a Jacobian entry 0 where the
// argument is exactly 0; SignedSquare, which is differentiable there, is
// the better form of a flow law such as Δp = k·q|q|. Abs(±Inf) is +Inf
// with derivative ±1; at a NaN real part the value and the parts along
// directions a depends on are NaN.
func Abs(a Number) Number {
	s := sign(a.Real)
	return chain(a, math.Abs(a.Real), s, 0*s) // 0·s: NaN at NaN
}

// SignedSquare returns a|a|, the signed square of a pressure drop
// k·q|q| or of a turbulent flow law, with derivative 2|a₀| and second
// derivative 2·sign(a₀). Its first derivative is continuous, so it is
// exact at a₀ = 0 too (0); its second derivative jumps from −2 to 2 at 0,
// where it is taken as 0, their mean (the curvature that HessVec and
// Unrolled or Implicit gradients see at exactly 0).
func SignedSquare(a Number) Number {
	r := a.Real
	return chain(a, r*math.Abs(r), 2*math.Abs(r), 2*sign(r))
}

// sign returns −1, 0 or 1 for r < 0, r = 0 (either sign) and r > 0, and
// NaN for NaN.
func sign(r float64) float64 {
	switch {
	case r > 0:
		return 1
	case r < 0:
		return -1
	case r == 0:
		return 0
	}
	return r
}

// Pow returns a^p. For a negative real part p must be an integer, else
// the real part and the dual parts along which a varies are NaN (the others
// stay zero). At a real part of 0, along directions a depends on,
// first derivatives are ±Inf for p < 1 and second derivatives for p < 2,
// except for p = 0 and p = 1, whose derivatives are exact everywhere.
func Pow(a Number, p float64) Number {
	r := a.Real
	if r < 0 && p != math.Trunc(p) {
		return nan(a)
	}
	var d1, d2 float64
	if p != 0 {
		d1 = p * math.Pow(r, p-1)
		if p != 1 {
			d2 = p * (p - 1) * math.Pow(r, p-2)
		}
	}
	return chain(a, math.Pow(r, p), d1, d2)
}

// Sqrt returns √a: NaN in the real part and in the dual parts along which
// a varies if a's real part is negative, and infinite derivatives at 0
// along directions a depends on.
func Sqrt(a Number) Number {
	if a.Real < 0 {
		return nan(a)
	}
	s := math.Sqrt(a.Real)
	return chain(a, s, 0.5/s, -0.25/(s*a.Real))
}

// Exp returns eᵃ.
func Exp(a Number) Number {
	e := math.Exp(a.Real)
	return chain(a, e, e, e)
}

// Log returns the natural logarithm of a: NaN in the real part and in the
// dual parts along which a varies if a's real part is negative, −Inf at 0
// with infinite derivatives along directions a depends on.
func Log(a Number) Number {
	if a.Real < 0 {
		return nan(a)
	}
	return chain(a, math.Log(a.Real), 1/a.Real, -1/(a.Real*a.Real))
}

// Log10 returns the base-10 logarithm of a (as in Antoine's vapour-pressure
// equation), with Log's behaviour at and below 0.
func Log10(a Number) Number {
	if a.Real < 0 {
		return nan(a)
	}
	return chain(a, math.Log10(a.Real), 1/(math.Ln10*a.Real), -1/(math.Ln10*a.Real*a.Real))
}

// Sin returns the sine of a.
func Sin(a Number) Number {
	s, c := math.Sincos(a.Real)
	return chain(a, s, c, -s)
}

// Cos returns the cosine of a.
func Cos(a Number) Number {
	s, c := math.Sincos(a.Real)
	return chain(a, c, -s, -c)
}

// Tanh returns the hyperbolic tangent of a.
func Tanh(a Number) Number {
	t := math.Tanh(a.Real)
	d := 1 - t*t
	return chain(a, t, d, -2*t*d)
}

// Atan returns the arctangent of a.
func Atan(a Number) Number {
	if math.IsInf(a.Real, 0) {
		return Const(math.Atan(a.Real))
	}
	d := 1 / (1 + a.Real*a.Real)
	return chain(a, math.Atan(a.Real), d, -2*a.Real*d*d)
}

// Dot returns Σᵢ aᵢ·bᵢ. It panics if a and b differ in length.
func Dot(a, b []Number) Number {
	if len(a) != len(b) {
		panic(fmt.Sprintf("hd: Dot: len(a) = %d, len(b) = %d", len(a), len(b)))
	}
	var s Number
	for i, ai := range a {
		s = addTo(s, hyperdual.Mul(ai, b[i]))
	}
	if hasNaNPart(s) { // a NaN part, once made, stays NaN to the end
		s = Number{}
		for i, ai := range a {
			s = addTo(s, mulParts(ai, b[i]))
		}
	}
	return s
}

// WeightedSum returns Σᵢ wᵢ·aᵢ. It panics if w and a differ in length.
func WeightedSum(w []float64, a []Number) Number {
	if len(w) != len(a) {
		panic(fmt.Sprintf("hd: WeightedSum: len(w) = %d, len(a) = %d", len(w), len(a)))
	}
	var s Number
	for i, ai := range a {
		s = addTo(s, Scale(w[i], ai))
	}
	return s
}

// addTo returns s + t.
func addTo(s, t Number) Number {
	return Number{Real: s.Real + t.Real, E1mag: s.E1mag + t.E1mag, E2mag: s.E2mag + t.E2mag, E1E2mag: s.E1E2mag + t.E1E2mag}
}

// chain returns f(a) from f's value f0 and derivatives d1 = f′ and
// d2 = f″ at a's real part.
func chain(a Number, f0, d1, d2 float64) Number {
	return Number{
		Real:    f0,
		E1mag:   part(d1, a.E1mag),
		E2mag:   part(d1, a.E2mag),
		E1E2mag: part(d1, a.E1E2mag) + part(d2, a.E1mag*a.E2mag),
	}
}

// part returns d·e, or 0 if e is 0: a direction the argument does not
// depend on contributes nothing, even where the derivative d is infinite
// or NaN.
func part(d, e float64) float64 {
	if e == 0 {
		return 0
	}
	return d * e
}

// both returns the product e·f of two dual parts, or 0 if either is 0: the
// ϵ₁ϵ₂ term of a direction one factor does not depend on.
func both(e, f float64) float64 {
	if e == 0 || f == 0 {
		return 0
	}
	return e * f
}

// nan returns the result of a function outside its domain at a: NaN in
// the real part and in the dual parts along which a depends, zero in the
// others (so a constant stays a constant).
func nan(a Number) Number {
	n := math.NaN()
	return chain(a, n, n, n)
}
