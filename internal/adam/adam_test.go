package adam

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// valueGrad is a learnable for gorgonia's solvers: a value and its gradient.
type valueGrad struct{ w, g *tensor.Dense }

func (p valueGrad) Value() gorgonia.Value { return p.w }

func (p valueGrad) Grad() (gorgonia.Value, error) { return p.g, nil }

// TestAdamMatchesGorgonia runs Solver and gorgonia's AdamSolver side
// by side for 3000 steps on three learnables, from the same weights and
// with the same random gradients (magnitudes from 1e-12 to 1e3, some exact
// zeros, signs mixed), and requires the same weight bits after every step
// and zeroed gradients: the solver a checkpoint saves takes exactly the
// steps gorgonia's would.
func TestAdamMatchesGorgonia(t *testing.T) {
	for _, eta := range []float64{1e-3, 0.05} {
		rng := rand.New(rand.NewPCG(7, 8))
		sizes := []int{12, 4, 1}
		mine := &Solver{Eta: eta}
		theirs := gorgonia.NewAdamSolver(gorgonia.WithLearnRate(eta))
		w := make([][]float64, len(sizes))
		g := make([][]float64, len(sizes))
		model := make([]gorgonia.ValueGrad, len(sizes))
		for i, n := range sizes {
			w[i], g[i] = make([]float64, n), make([]float64, n)
			tw := make([]float64, n)
			for j := range w[i] {
				w[i][j] = rng.NormFloat64()
				tw[j] = w[i][j]
			}
			model[i] = valueGrad{
				w: tensor.New(tensor.WithShape(n), tensor.WithBacking(tw)),
				g: tensor.New(tensor.WithShape(n), tensor.WithBacking(make([]float64, n))),
			}
		}
		for step := 1; step <= 3000; step++ {
			for i := range sizes {
				tg := model[i].(valueGrad).g.Data().([]float64)
				for j := range g[i] {
					v := rng.NormFloat64() * math.Pow(10, -12+15*rng.Float64())
					if rng.IntN(10) == 0 {
						v = 0
					}
					g[i][j], tg[j] = v, v
				}
			}
			require.NoError(t, mine.Step(anys(w), anys(g)))
			require.NoError(t, theirs.Step(model))
			for i := range sizes {
				tw := model[i].(valueGrad).w.Data().([]float64)
				for j := range w[i] {
					if math.Float64bits(w[i][j]) != math.Float64bits(tw[j]) {
						require.Failf(t, "weights differ", "η %g, step %d, learnable %d[%d]: ours %v, gorgonia %v", eta, step, i, j, w[i][j], tw[j])
					}
				}
				assert.Equal(t, make([]float64, len(g[i])), g[i], "step zeroes the gradient")
			}
		}
		assert.Equal(t, 3000, mine.Iter())
	}
}

// TestAdamShapeErrors checks that a step with gradients that do not fit
// the weights or the moments is an error, not a panic.
func TestAdamShapeErrors(t *testing.T) {
	a := &Solver{Eta: 1e-3}
	assert.Error(t, a.Step(anys([][]float64{{1, 2}}), anys(nil)))
	assert.Error(t, a.Step(anys([][]float64{{1, 2}}), anys([][]float64{{1}})))
	require.NoError(t, a.Step(anys([][]float64{{1, 2}}), anys([][]float64{{1, 1}})))
	assert.Error(t, a.Step(anys([][]float64{{1, 2}, {3}}), anys([][]float64{{1, 1}, {1}})), "more learnables than moments")
	assert.Error(t, a.Step(anys([][]float64{{1, 2, 3}}), anys([][]float64{{1, 1, 1}})), "a learnable of another size")
	assert.Equal(t, 1, a.Iter(), "a failed step does not count")
}

// anys returns the slices of s as the []any that Step takes.
func anys(s [][]float64) []any {
	if s == nil {
		return nil
	}
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestSetMomentsResumes requires a solver restored from another's Iter
// and Moments, float64 or float32, to take the same steps as the
// original, bit for bit.
func TestSetMomentsResumes(t *testing.T) {
	t.Run("float64", func(t *testing.T) { testResume[float64](t, false) })
	t.Run("float32", func(t *testing.T) { testResume[float32](t, true) })
}

func testResume[T float32 | float64](t *testing.T, f32 bool) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{5, 2}
	w := make([][]T, len(sizes))
	for i, n := range sizes {
		w[i] = make([]T, n)
		for j := range w[i] {
			w[i][j] = T(rng.NormFloat64())
		}
	}
	grads := func() []any {
		g := make([]any, len(sizes))
		for i, n := range sizes {
			gi := make([]T, n)
			for j := range gi {
				gi[j] = T(rng.NormFloat64())
			}
			g[i] = gi
		}
		return g
	}
	weights := func(w [][]T) []any {
		out := make([]any, len(w))
		for i := range w {
			out[i] = w[i]
		}
		return out
	}
	a := &Solver{Eta: 0.01}
	m0, v0 := a.Moments()
	assert.Nil(t, m0)
	assert.Nil(t, v0)
	for range 5 {
		require.NoError(t, a.Step(weights(w), grads()))
	}
	m, v := a.Moments()
	b := &Solver{Eta: 0.01}
	b.SetMoments(a.Iter(), m, v, f32)
	w2 := make([][]T, len(w))
	for i := range w {
		w2[i] = append([]T(nil), w[i]...)
	}
	for range 5 {
		g := grads()
		g2 := make([]any, len(g))
		for i := range g {
			g2[i] = append([]T(nil), g[i].([]T)...)
		}
		require.NoError(t, a.Step(weights(w), g))
		require.NoError(t, b.Step(weights(w2), g2))
	}
	assert.Equal(t, w, w2)
	assert.Equal(t, 10, b.Iter())
}

// TestStep32Asm requires the AVX2 float32 loop to give the Go loop's bits
// (weights, moments, zeroed gradients; a NaN where the other has a NaN,
// whatever its payload) over 200 steps of learnables of
// every length from 1 to 40 (vector loop, tail, both), with gradients
// from 1e-30 to 1e30, exact zeros, and an occasional NaN or infinity.
func TestStep32Asm(t *testing.T) {
	if !useAsm {
		t.Skip("no AVX2 loop on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	sizes := make([]int, 40)
	for i := range sizes {
		sizes[i] = i + 1
	}
	mk := func() [][]float32 {
		w := make([][]float32, len(sizes))
		for i, n := range sizes {
			w[i] = make([]float32, n)
		}
		return w
	}
	wa, wg := mk(), mk()
	for i := range wa {
		for j := range wa[i] {
			wa[i][j] = float32(rng.NormFloat64())
			wg[i][j] = wa[i][j]
		}
	}
	a, b := &Solver{Eta: 1e-3}, &Solver{Eta: 1e-3}
	defer func(saved bool) { useAsm = saved }(useAsm)
	for step := 1; step <= 200; step++ {
		ga, gb := mk(), mk()
		for i := range ga {
			for j := range ga[i] {
				v := float32(rng.NormFloat64() * math.Pow(10, -30+60*rng.Float64()))
				switch rng.IntN(50) {
				case 0:
					v = 0
				case 1:
					if step > 150 {
						v = float32(math.NaN())
					}
				case 2:
					if step > 150 {
						v = float32(math.Inf(1 - 2*rng.IntN(2)))
					}
				}
				ga[i][j], gb[i][j] = v, v
			}
		}
		useAsm = true
		require.NoError(t, a.Step(anys32(wa), anys32(ga)))
		useAsm = false
		require.NoError(t, b.Step(anys32(wg), anys32(gb)))
		same := func(x, y [][]float32, what string) {
			for i := range x {
				for j := range x[i] {
					nan := x[i][j] != x[i][j] && y[i][j] != y[i][j] // which NaN x86 keeps follows the compiler's operand order
					if !nan && math.Float32bits(x[i][j]) != math.Float32bits(y[i][j]) {
						require.Failf(t, what+" differ", "step %d, learnable %d[%d]: asm %v, Go %v", step, i, j, x[i][j], y[i][j])
					}
				}
			}
		}
		same(wa, wg, "weights")
		same(a.m32, b.m32, "first moments")
		same(a.v32, b.v32, "second moments")
		same(ga, mk(), "gradients (zeroed)")
	}
}

// anys32 returns the slices of s as the []any that Step takes.
func anys32(s [][]float32) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// BenchmarkStep32 times one float32 step over the 2×200 MLP's weights of
// §5.3 (50-200-200-100: 70,500 values), AVX2 against the Go loop.
func BenchmarkStep32(b *testing.B) {
	sizes := []int{50 * 200, 200, 200 * 200, 200, 200 * 100, 100}
	w, g := make([]any, len(sizes)), make([]any, len(sizes))
	for i, n := range sizes {
		w[i], g[i] = make([]float32, n), make([]float32, n)
	}
	defer func(saved bool) { useAsm = saved }(useAsm)
	for _, asm := range []bool{true, false} {
		if asm && !useAsm {
			continue
		}
		name := "go"
		if asm {
			name = "asm"
		}
		b.Run(name, func(b *testing.B) {
			useAsm = asm
			s := &Solver{Eta: 1e-3}
			for b.Loop() {
				if err := s.Step(w, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
