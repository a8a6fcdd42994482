package nprand

import "math"

// dd is an unevaluated sum hi + lo of two float64 with |lo| ≤ ulp(hi)/2
// (double-double, about 106 bits).
type dd struct{ hi, lo float64 }

// ln2 is ln 2 to double-double precision.
var ln2 = dd{0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56}

// twoSum returns s = fl(a + b) and the exact error e = a + b − s.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

// quickTwoSum is twoSum for |a| ≥ |b|.
func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func (x dd) add(y dd) dd {
	s, e := twoSum(x.hi, y.hi)
	t, f := twoSum(x.lo, y.lo)
	e += t
	r := quickTwoSum(s, e)
	r.lo += f
	return quickTwoSum(r.hi, r.lo)
}

func (x dd) mul(y dd) dd {
	p := x.hi * y.hi
	e := math.FMA(x.hi, y.hi, -p)
	e += x.hi*y.lo + x.lo*y.hi
	return quickTwoSum(p, e)
}

func (x dd) div(y dd) dd {
	q1 := x.hi / y.hi
	r := x.add(y.mul(dd{-q1, 0}))
	q2 := r.hi / y.hi
	r = r.add(y.mul(dd{-q2, 0}))
	q3 := r.hi / y.hi
	return quickTwoSum(q1, q2).add(dd{q3, 0})
}

// log returns ln x for a finite x > 0, correctly rounded except for
// arguments within about 2⁻¹⁰⁰ relative of a rounding boundary: with
// x = 2ᵉm, m ∈ [√½, √2), ln x = e·ln 2 + 2·atanh((m − 1)/(m + 1)), the
// series summed in double-double until its terms fall below 2⁻¹¹².
func log(x float64) float64 {
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	hi, lo := twoSum(m, 1)
	s := dd{m - 1, 0}.div(dd{hi, lo}) // m − 1 is exact for m ∈ [½, 2]
	s2 := s.mul(s)
	sum, term := s, s
	for k := 3.0; ; k += 2 {
		term = term.mul(s2)
		t := term.div(dd{k, 0})
		sum = sum.add(t)
		if math.Abs(t.hi) <= 0x1p-112*math.Abs(sum.hi) {
			break
		}
	}
	r := sum.add(sum).add(dd{float64(e), 0}.mul(ln2))
	return r.hi + r.lo
}
