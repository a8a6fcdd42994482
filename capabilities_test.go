package enforce

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/num/hyperdual"
)

// The table test of the constraint surface: every constraint kind (Func,
// Linear, Quadratic, a hand-written one, one with Eval alone), wrapped in
// Stack and WithInequalities, alone, with other parts and nested, keeps
// every capability the rules of Capabilities promise, and projects and
// differentiates as its reference does. References are built without the
// wrappers' synthesised methods: capTest's capHide keeps only a part's
// per-sample derivatives and capConcat is a plain per-sample Stack, so a
// wrapper's batched (and single-precision) methods are checked against
// the per-sample arithmetic they replace.

// capHand is a hand-written constraint (nx = 2, ny = 4, nc = 1) with every
// derivative, including a mixed one:
//
//	c = y1·y2 + x1·y3 + y4 − x2² − 0.3.
type capHand struct{}

func (capHand) Dims() (nx, ny, nc int) { return 2, 4, 1 }

func (capHand) Eval(x, y, c, jy []float64) {
	c[0] = y[0]*y[1] + x[0]*y[2] + y[3] - x[1]*x[1] - 0.3
	if jy != nil {
		jy[0], jy[1], jy[2], jy[3] = y[1], y[0], x[0], 1
	}
}

func (h capHand) Capabilities() Capabilities {
	return Capabilities{
		JacobianX: func(x, y, jx []float64) { jx[0], jx[1] = y[2], -2*x[1] },
		HessVec: func(x, y, w, v, out []float64) {
			out[0], out[1], out[2], out[3] = w[0]*v[1], w[0]*v[0], 0, 0
		},
		MixedHessVec: func(x, y, w, v, out []float64) { out[0], out[1] = w[0]*v[2], 0 },
	}
}

// capBare is capHand with Eval alone.
type capBare struct{}

func (capBare) Dims() (nx, ny, nc int)     { return 2, 4, 1 }
func (capBare) Eval(x, y, c, jy []float64) { capHand{}.Eval(x, y, c, jy) }

// capHide presents a constraint's per-sample derivatives only, so that
// AdaNP and the wrappers take their per-sample paths.
type capHide struct{ c Constraint }

func (h capHide) Dims() (nx, ny, nc int)     { return h.c.Dims() }
func (h capHide) Eval(x, y, c, jy []float64) { h.c.Eval(x, y, c, jy) }
func (h capHide) Capabilities() Capabilities {
	k := CapabilitiesOf(h.c)
	return Capabilities{JacobianX: k.JacobianX, HessVec: k.HessVec, MixedHessVec: k.MixedHessVec}
}

// capConcat is a plain Stack, one sample at a time: the reference for
// Stack's arithmetic.
type capConcat struct{ parts []Constraint }

func (s capConcat) Dims() (nx, ny, nc int) {
	for _, p := range s.parts {
		var m int
		nx, ny, m = p.Dims()
		nc += m
	}
	return nx, ny, nc
}

func (s capConcat) Eval(x, y, c, jy []float64) {
	_, ny, _ := s.Dims()
	off := 0
	for _, p := range s.parts {
		_, _, m := p.Dims()
		var jp []float64
		if jy != nil {
			jp = jy[off*ny : (off+m)*ny]
		}
		p.Eval(x, y, c[off:off+m], jp)
		off += m
	}
}

func (s capConcat) Capabilities() Capabilities {
	nx, _, _ := s.Dims()
	var k Capabilities
	all := true
	for _, p := range s.parts {
		pk := CapabilitiesOf(p)
		all = all && pk.JacobianX != nil && pk.HessVec != nil && pk.MixedHessVec != nil
	}
	if !all {
		return k
	}
	k.JacobianX = func(x, y, jx []float64) {
		off := 0
		for _, p := range s.parts {
			_, _, m := p.Dims()
			CapabilitiesOf(p).JacobianX(x, y, jx[off*nx:(off+m)*nx])
			off += m
		}
	}
	sum := func(x, y, w, v, out []float64, f func(Capabilities) func(x, y, w, v, out []float64)) {
		clear(out)
		tmp := make([]float64, len(out))
		off := 0
		for _, p := range s.parts {
			_, _, m := p.Dims()
			f(CapabilitiesOf(p))(x, y, w[off:off+m], v, tmp)
			for i, t := range tmp {
				out[i] += t
			}
			off += m
		}
	}
	k.HessVec = func(x, y, w, v, out []float64) {
		sum(x, y, w, v, out, func(k Capabilities) func(x, y, w, v, out []float64) { return k.HessVec })
	}
	k.MixedHessVec = func(x, y, w, v, out []float64) {
		sum(x, y, w, v, out, func(k Capabilities) func(x, y, w, v, out []float64) { return k.MixedHessVec })
	}
	return k
}

// capKinds returns the constraint kinds (nx = 2, ny = 4) with the
// capabilities each declares.
func capKinds(t *testing.T) []struct {
	name string
	c    Constraint
	caps []string
} {
	t.Helper()
	rnd := rand.New(rand.NewPCG(91, 92))
	f, err := Func(2, 4, 1, func(x, y, c []hyperdual.Number) {
		mul := hyperdual.Mul
		// c = y1² + y2·y3 + sin(x1)·y4 − x2 − 0.5
		c[0] = hyperdual.Sub(hyperdual.Add(hyperdual.Add(mul(y[0], y[0]), mul(y[1], y[2])),
			mul(hyperdual.Sin(x[0]), y[3])), hyperdual.Add(x[1], hyperdual.Number{Real: 0.5}))
	})
	require.NoError(t, err)
	l, err := Linear(2, mat.NewDense(1, 4, []float64{1, -0.5, 0.25, 2}), ctSinRHS)
	require.NoError(t, err)
	A := []*mat.SymDense{ctRandSym(rnd, 4), ctRandSym(rnd, 4)}
	for _, a := range A {
		a.ScaleSym(0.2, a)
	}
	q, err := Quadratic(2, A, mat.NewDense(2, 4, []float64{2, 0, 1, 0, 0, 2, 0, -1}), []float64{-0.2, 0.1}, ctSinRHS)
	require.NoError(t, err)
	derivs := []string{"JacobianX", "HessVec", "MixedHessVec"}
	return []struct {
		name string
		c    Constraint
		caps []string
	}{
		{"Func", f, derivs},
		{"Linear", l, append(slices.Clone(derivs), "ConstantJacobian")},
		{"Quadratic", q, append(slices.Clone(derivs), "EvalBatch", "HessVecBatch", "EvalBatch32", "HessVecBatch32")},
		{"hand-written", capHand{}, derivs},
		{"Eval only", capBare{}, nil},
	}
}

// capStackRule returns the capabilities Stack promises for parts with the
// given capabilities (see Stack).
func capStackRule(parts ...[]string) []string {
	all := func(name string) bool {
		for _, p := range parts {
			if !slices.Contains(p, name) {
				return false
			}
		}
		return true
	}
	anyOf := func(names ...string) bool {
		for _, p := range parts {
			for _, n := range names {
				if slices.Contains(p, n) {
					return true
				}
			}
		}
		return false
	}
	var caps []string
	for _, n := range []string{"JacobianX", "HessVec", "MixedHessVec", "ConstantJacobian"} {
		if all(n) {
			caps = append(caps, n)
		}
	}
	if anyOf("EvalBatch", "EvalBatch32") {
		caps = append(caps, "EvalBatch")
	}
	if all("HessVec") && anyOf("HessVecBatch", "HessVecBatch32") {
		caps = append(caps, "HessVecBatch")
	}
	if anyOf("EvalBatch32") {
		caps = append(caps, "EvalBatch32")
	}
	if all("HessVec") && anyOf("HessVecBatch32") {
		caps = append(caps, "HessVecBatch32")
	}
	return caps
}

// capIneqRule returns the capabilities WithInequalities promises for eq
// (nil for none) and g with the given capabilities (see WithInequalities).
func capIneqRule(eq, g []string, hasEq bool) []string {
	has := func(c []string, n string) bool { return slices.Contains(c, n) }
	eqHas := func(n string) bool { return !hasEq || has(eq, n) }
	var caps []string
	if eqHas("JacobianX") && has(g, "JacobianX") {
		caps = append(caps, "JacobianX")
	}
	hv := eqHas("HessVec") && has(g, "HessVec")
	if hv {
		caps = append(caps, "HessVec")
	}
	if eqHas("MixedHessVec") && has(g, "JacobianX") && has(g, "MixedHessVec") {
		caps = append(caps, "MixedHessVec")
	}
	caps = append(caps, "Latent")
	anyOf := func(names ...string) bool {
		for _, n := range names {
			if has(g, n) || (hasEq && has(eq, n)) {
				return true
			}
		}
		return false
	}
	if anyOf("EvalBatch", "EvalBatch32") {
		caps = append(caps, "EvalBatch")
	}
	if hv && anyOf("HessVecBatch", "HessVecBatch32") {
		caps = append(caps, "HessVecBatch")
	}
	if anyOf("EvalBatch32") {
		caps = append(caps, "EvalBatch32")
	}
	if hv && anyOf("HessVecBatch32") {
		caps = append(caps, "HessVecBatch32")
	}
	return caps
}

// capCase is one wrapping of a kind: the wrapped constraint, the
// capabilities it must have, and a reference to project and differentiate
// as it does.
type capCase struct {
	name     string
	c, ref   Constraint
	caps     []string
	refExact bool // the reference is the unwrapped kind: projections agree to the last bit
}

func capCases(t *testing.T) []capCase {
	t.Helper()
	must := func(c Constraint, err error) Constraint {
		t.Helper()
		require.NoError(t, err)
		return c
	}
	// other: y4 = 0.1·x1 + 0.2, a second part for Stack; g: the inequality
	// y1 + y2 ≤ 1 + x1², and a Quadratic one, for WithInequalities.
	other := must(Linear(2, mat.NewDense(1, 4, []float64{0, 0, 0.5, 1}), func(x, r, jx []float64) {
		r[0] = 0.1*x[0] + 0.2
		if jx != nil {
			jx[0], jx[1] = 0.1, 0
		}
	}))
	otherCaps := []string{"JacobianX", "HessVec", "MixedHessVec", "ConstantJacobian"}
	g := must(Func(2, 4, 1, func(x, y, c []hyperdual.Number) {
		c[0] = hyperdual.Sub(hyperdual.Add(y[0], y[1]), hyperdual.Add(hyperdual.Number{Real: 1}, hyperdual.Mul(x[0], x[0])))
	}))
	gCaps := []string{"JacobianX", "HessVec", "MixedHessVec"}
	var cases []capCase
	for _, kind := range capKinds(t) {
		c, kc := kind.c, kind.caps
		add := func(name string, w, ref Constraint, caps []string, exact bool) {
			cases = append(cases, capCase{name: kind.name + "/" + name, c: w, ref: ref, caps: caps, refExact: exact})
		}
		add("itself", c, c, kc, true)
		add("Stack(c)", must(Stack(c)), c, capStackRule(kc), true)
		add("Stack(Stack(c))", must(Stack(must(Stack(c)))), c, capStackRule(kc), true)
		withOther := capStackRule(kc, otherCaps)
		add("Stack(c, other)", must(Stack(c, other)), capConcat{[]Constraint{capHide{c}, other}}, withOther, false)
		add("Stack(other, Stack(c))", must(Stack(other, must(Stack(c)))), capConcat{[]Constraint{other, capHide{c}}}, withOther, false)
		add("WithInequalities(c, g)", must(WithInequalities(c, g, 0)),
			must(WithInequalities(capHide{c}, g, 0)), capIneqRule(kc, gCaps, true), false)
		add("WithInequalities(nil, c)", must(WithInequalities(nil, c, 0)),
			must(WithInequalities(nil, capHide{c}, 0)), capIneqRule(nil, kc, false), false)
		add("WithInequalities(Stack(c, other), c)", must(WithInequalities(must(Stack(c, other)), c, 0)),
			must(WithInequalities(capConcat{[]Constraint{capHide{c}, other}}, capHide{c}, 0)),
			capIneqRule(withOther, kc, true), false)
	}
	return cases
}

func TestCapabilitiesSurviveWrapping(t *testing.T) {
	for _, tc := range capCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.caps, ctCaps(tc.c), "capabilities")
			refCaps := CapabilitiesOf(tc.ref)
			k := CapabilitiesOf(tc.c)
			assert.Equal(t, refCaps.Latent, k.Latent, "latent variables")
		})
	}
}

// TestWrappedProjectionsAndGradients: every wrapping projects as its
// reference does, in Float64 and Float32 precision, and gives the same
// gradients with respect to ŷ and x in every gradient mode.
func TestWrappedProjectionsAndGradients(t *testing.T) {
	if testing.Short() {
		t.Skip("projects every wrapping of every kind in every mode")
	}
	const rows = 24
	rnd := rand.New(rand.NewPCG(93, 94))
	x := randDense(rnd, rows, 2, 0.5)
	yhat := randDense(rnd, rows, 4, 0.6)
	upstream := randDense(rnd, rows, 4, 1)
	for _, tc := range capCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			k := CapabilitiesOf(tc.c)
			tol := 1e-9
			if tc.refExact {
				tol = 0
			}
			for _, prec := range []Precision{Float64, Float32} {
				s := Settings{Tol: 1e-10, Precision: prec}
				a, err := NewAdaNP(tc.c, s)
				require.NoError(t, err)
				if prec == Float32 {
					// The single-precision evaluations reach every
					// constraint with EvalBatch32, wrapped or not.
					assert.Equal(t, k.EvalBatch32 != nil, a.eval32 != nil, "Float32 path")
				}
				ref, err := NewAdaNP(tc.ref, Settings{Tol: 1e-10})
				require.NoError(t, err)
				got, st, err := a.Project(x, yhat)
				require.NoError(t, err)
				want, stRef, err := ref.Project(x, yhat)
				require.NoError(t, err)
				assert.Equal(t, stRef.NotConverged, st.NotConverged, "%v: non-converged samples", prec)
				ptol := tol
				if prec == Float32 && k.EvalBatch32 != nil {
					// Both meet Tol in float64, along different paths:
					// the projection is not the nearest point, and near
					// an active Fischer–Burmeister pair two paths end
					// about 1e-7 apart.
					ptol = 1e-5
				}
				capAssertClose(t, want.RawMatrix().Data, got.RawMatrix().Data, ptol, "%v: projection", prec)
			}
			for _, mode := range []GradMode{Unrolled, Implicit, Projector, FinalProjector} {
				s := Settings{Tol: 1e-10, Grad: mode}
				a, err := NewAdaNP(tc.c, s)
				require.NoError(t, err)
				ref, err := NewAdaNP(tc.ref, s)
				require.NoError(t, err)
				gy, gx := capVJP(t, a, x, yhat, upstream, k.JacobianX != nil)
				ry, rx := capVJP(t, ref, x, yhat, upstream, k.JacobianX != nil)
				capAssertClose(t, ry, gy, tol, "%v: ∂/∂ŷ", mode)
				capAssertClose(t, rx, gx, tol, "%v: ∂/∂x", mode)
			}
			if k.EvalBatch32 != nil {
				// Float32: the curvature products in single precision
				// (HessVecBatch32) too.
				a, err := NewAdaNP(tc.c, Settings{Tol: 1e-10, Precision: Float32})
				require.NoError(t, err)
				ref, err := NewAdaNP(tc.ref, Settings{Tol: 1e-10})
				require.NoError(t, err)
				gy, gx := capVJP(t, a, x, yhat, upstream, k.JacobianX != nil)
				ry, rx := capVJP(t, ref, x, yhat, upstream, k.JacobianX != nil)
				capAssertClose(t, ry, gy, 1e-4, "Float32: ∂/∂ŷ")
				capAssertClose(t, rx, gx, 1e-4, "Float32: ∂/∂x")
			}
		})
	}
}

// capVJP returns the gradients of ⟨upstream, ỹ⟩ with respect to ŷ and, if
// withX, x.
func capVJP(t *testing.T, a *AdaNP, x, yhat, upstream *mat.Dense, withX bool) (gy, gx []float64) {
	t.Helper()
	rows, ny := yhat.Dims()
	var tr Trace
	_, err := a.ProjectTrace(mat.NewDense(rows, ny, nil), x, yhat, &tr)
	require.NoError(t, err)
	gym := mat.NewDense(rows, ny, nil)
	var gxm *mat.Dense
	if withX {
		gxm = mat.NewDense(rows, 2, nil)
	}
	require.NoError(t, a.VJP(&tr, upstream, gym, gxm))
	if gxm != nil {
		gx = gxm.RawMatrix().Data
	}
	return gym.RawMatrix().Data, gx
}

// capAssertClose checks |got − want| ≤ tol·max(1, |want|) elementwise.
func capAssertClose(t *testing.T, want, got []float64, tol float64, format string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want), format, args)
	for i := range want {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*math.Max(1, math.Abs(want[i]))) {
			assert.Fail(t, fmt.Sprintf(format, args...), "element %d: %v, want %v (tolerance %g)", i, got[i], want[i], tol)
			return
		}
	}
}

// TestWrappedBatchesDoNotAllocate: a Stack and a WithInequalities holding a
// Quadratic and a Func project and back-propagate through their
// synthesised batched methods, in Float64 and Float32, without allocating
// once warm.
func TestWrappedBatchesDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	kinds := capKinds(t)
	f, q := kinds[0].c, kinds[2].c
	s, err := Stack(q, f)
	require.NoError(t, err)
	fb, err := WithInequalities(q, f, 0)
	require.NoError(t, err)
	rnd := rand.New(rand.NewPCG(95, 96))
	const rows = 40
	x, yhat, grad := randDense(rnd, rows, 2, 0.5), randDense(rnd, rows, 4, 0.6), randDense(rnd, rows, 4, 1)
	out, gy, gx := mat.NewDense(rows, 4, nil), mat.NewDense(rows, 4, nil), mat.NewDense(rows, 2, nil)
	for _, c := range []Constraint{s, fb} {
		for _, prec := range []Precision{Float64, Float32} {
			a, err := NewAdaNP(c, Settings{Precision: prec})
			require.NoError(t, err)
			require.NotNil(t, a.k.EvalBatch)
			var tr Trace
			run := func() {
				_, err := a.ProjectTrace(out, x, yhat, &tr)
				require.NoError(t, err)
				require.NoError(t, a.VJP(&tr, grad, gy, gx))
			}
			run()
			assert.Zero(t, testing.AllocsPerRun(10, run), "%T %v", c, prec)
		}
	}
}
