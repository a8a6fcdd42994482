package problems

import (
	"math"
	"testing"

	"github.com/enforce-nn/enforce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// maxAbsResidual returns max over rows and constraints of |c(x, y)|.
func maxAbsResidual(c enforce.Constraint, d Dataset) float64 {
	_, _, nc := c.Dims()
	r := make([]float64, nc)
	var worst float64
	for i := range d.Len() {
		c.Eval(d.X.RawRowView(i), d.Y.RawRowView(i), r, nil)
		for _, v := range r {
			worst = math.Max(worst, math.Abs(v))
		}
	}
	return worst
}

func TestSampledLabelsAreFeasible(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    enforce.Constraint
		d    Dataset
	}{
		{"fitting f=5", FittingEquality{}.Equalities(), FittingEquality{}.Sample(1000, 1)},
		{"fitting f=2", FittingEquality{Freq: 2}.Equalities(), FittingEquality{Freq: 2}.Sample(1000, 2)},
		{"cusp", Cusp{}.Equalities(), Cusp{}.Sample(1000, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, 1000, tc.d.Len())
			assert.LessOrEqual(t, maxAbsResidual(tc.c, tc.d), 1e-12)
			xs := mat.Col(nil, 0, tc.d.X)
			assert.GreaterOrEqual(t, floats.Min(xs), -2.0)
			assert.Less(t, floats.Max(xs), 2.0)
			assert.Less(t, floats.Min(xs), -1.9, "x should cover [−2, 2]")
			assert.Greater(t, floats.Max(xs), 1.9, "x should cover [−2, 2]")
		})
	}
}

func TestFittingEqualityTruth(t *testing.T) {
	y := make([]float64, 2)
	FittingEquality{}.Truth(0.3, y)
	assert.InDelta(t, 2*math.Sin(1.5), y[0], 1e-15)
	assert.InDelta(t, -math.Pow(math.Sin(1.5), 2)-0.09, y[1], 1e-15)
	FittingEquality{Freq: 1}.Truth(0.3, y)
	assert.InDelta(t, 2*math.Sin(0.3), y[0], 1e-15)
	Cusp{}.Truth(-1, y)
	assert.InDelta(t, math.Sin(-1), y[0], 1e-15)
	assert.InDelta(t, math.Pow(math.Sin(-1)*math.Sin(-1), 1.0/3), y[1], 1e-15)
}

func TestSampleDeterministic(t *testing.T) {
	a, b, c := FittingEquality{}.Sample(50, 7), FittingEquality{}.Sample(50, 7), FittingEquality{}.Sample(50, 8)
	assert.True(t, mat.Equal(a.X, b.X) && mat.Equal(a.Y, b.Y), "same seed, same data")
	assert.False(t, mat.Equal(a.X, c.X), "different seeds, different data")
	assert.Equal(t, 0, FittingEquality{}.Sample(0, 1).Len())
	assert.Panics(t, func() { Cusp{}.Sample(-1, 1) })
}

func TestFittingInequality(t *testing.T) {
	p := FittingInequality{}
	test := p.Sample(300, 1)
	train := p.SampleNoisy(1200, 1)
	require.Equal(t, 300, test.Len())
	require.Equal(t, 1200, train.Len())
	g := p.Inequalities()
	r := make([]float64, 2)
	for i := range test.Len() {
		x, y := test.X.At(i, 0), test.Y.At(i, 0)
		require.True(t, x >= 0 && x < 3*math.Pi)
		assert.InDelta(t, (1+x*x/(3*math.Pi*math.Pi))*math.Sin(x), y, 1e-15)
		g.Eval([]float64{x}, []float64{y}, r, nil)
		assert.LessOrEqual(t, r[0], 0.0)
		assert.LessOrEqual(t, r[1], 0.0)
	}
	// The noise residual y − f(x) − β·sign(f) has mean ≈ 0 and std ≈ σ,
	// and some noisy labels leave the envelope.
	var sum, sumSq float64
	violations := 0
	for i := range train.Len() {
		x, y := train.X.At(i, 0), train.Y.At(i, 0)
		f := p.Truth(x)
		e := y - f - math.Copysign(DefaultIneqBias, f)
		sum += e
		sumSq += e * e
		if math.Abs(y) > p.Envelope(x) {
			violations++
		}
	}
	n := float64(train.Len())
	mean := sum / n
	assert.InDelta(t, 0, mean, 4*DefaultIneqSigma/math.Sqrt(n))
	assert.InDelta(t, DefaultIneqSigma, math.Sqrt(sumSq/n-mean*mean), 0.03)
	assert.Greater(t, violations, 50)

	quiet := FittingInequality{Bias: 1, Sigma: 1e-12}.SampleNoisy(100, 2)
	for i := range quiet.Len() {
		x, y := quiet.X.At(i, 0), quiet.Y.At(i, 0)
		assert.InDelta(t, p.Truth(x)+math.Copysign(1, p.Truth(x)), y, 1e-9)
	}
}
