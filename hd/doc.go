// Package hd writes constraints for enforce.Func so that they read like
// their formulas: arithmetic, powers and elementary functions of hyperdual
// numbers, with constants as plain float64 values.
//
// enforce.Func differentiates a constraint by evaluating it on hyperdual
// numbers a + b·ϵ₁ + c·ϵ₂ + d·ϵ₁ϵ₂ (ϵ₁² = ϵ₂² = 0): the ϵ₁ and ϵ₂ parts of
// the result carry first derivatives and the ϵ₁ϵ₂ part carries second
// derivatives, exact to rounding. Written with gonum's num/hyperdual alone,
// the vapour–liquid equilibrium y = αx/(1 + (α−1)x) reads
//
//	c[0] = hyperdual.Sub(y[1], hyperdual.Mul(
//		hyperdual.Scale(alpha, y[0]),
//		hyperdual.Inv(hyperdual.Add(hyperdual.Number{Real: 1}, hyperdual.Scale(alpha-1, y[0])))))
//
// and with this package
//
//	c[0] = hd.Sub(y[1], hd.Div(hd.Scale(alpha, y[0]), hd.Add(hd.Const(1), hd.Scale(alpha-1, y[0]))))
//
// Add and Mul take any number of terms, so the balance F·z = V·y + L·x is
// hd.Sub(hd.Mul(F, z), hd.Add(hd.Mul(V, y), hd.Mul(L, x))); Dot and
// WeightedSum write Σ aᵢbᵢ and Σ wᵢaᵢ over slices (component balances,
// stoichiometry, Σ xᵢ = 1). Number is gonum's hyperdual.Number, so
// func(x, y, c []hd.Number) is the function type enforce.Func takes and the
// two packages mix freely.
//
// # Derivatives and special values
//
// Every function applies the chain rule
//
//	f(a) = f(a₀) + f′(a₀)(a₁ϵ₁ + a₂ϵ₂) + (f′(a₀)a₁₂ + f″(a₀)a₁a₂)ϵ₁ϵ₂
//
// with f′ and f″ in closed form, at every point including zero: Sin, Tanh
// and Atan here keep the f′(0)·a₁₂ term that gonum's versions drop when the
// real part is exactly zero (for example the curvature of sin(y²) at y = 0).
//
// Abs and SignedSquare (a|a|, as in the pressure drop k·q|q| of a pipe
// whose flow q may reverse) are not twice differentiable at 0; there
// each takes the mean of its one-sided derivatives: Abs has derivative 0
// at 0, SignedSquare has derivative 0 (exact: a|a| is continuously
// differentiable) and second derivative 0 (between −2 and 2). Everywhere
// else both are exact.
//
// A dual part that is zero in every argument is zero in the result, so a
// constant stays a constant: every function of constants returns exactly
// zero dual parts, whatever its value, never NaN ones. Sqrt(Const(0)) is 0;
// Inv(Const(0)) and Div(Const(1), Const(0)) are +Inf (Inv(Const(-0)) is
// −Inf, Div(Const(0), Const(0)) NaN); Log(Const(0)) is −Inf; Sqrt(Const(-1))
// is NaN; Mul(Const(Inf), Const(2)) is +Inf: each with zero dual parts
// (TestConstantsStayConstant tries every function on constants). Where a derivative is genuinely infinite along a direction a
// depends on (Sqrt or Log at 0; Pow(a, p) at 0, the first derivative for
// p < 1 and the second for p < 2, except p = 0 and p = 1) the part is
// ±Inf, and outside a function's domain (Sqrt or Log of a negative number,
// Pow of a negative number to a non-integer power) the real part and the
// parts along directions a depends on are NaN. Div(a, b) divides by b's
// real part directly, never by its square, so it is accurate for |b| down
// to the smallest normal numbers; parts whose closed form exceeds the
// float64 range overflow to ±Inf, as the formula does; and Div(a, b) with
// b's real part exactly 0 returns ±Inf or NaN in its real part and in the
// parts along directions a or b depends on. enforce reports a constraint
// value or Jacobian that is not finite at the prediction as an error naming
// the sample, and stops a sample's iteration before a step that would make
// them non-finite, so none of these values turn silently into a projected
// output. A ratio constraint u/v = r is better written multiplied out,
// u − r·v = 0, when v can approach zero.
//
// The functions do not allocate, so a constraint written with them keeps
// enforce.Func's promise of no allocation in steady state.
package hd
