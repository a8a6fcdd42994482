package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/internal/gtest"
)

func TestFitStandardizer(t *testing.T) {
	data := mat.NewDense(4, 3, []float64{
		1, 10, 5,
		2, 20, 5,
		3, 30, 5,
		4, 40, 5,
	})
	s, err := FitStandardizer(data)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{2.5, 25, 5}, s.Mean, 1e-14)
	sd := math.Sqrt(1.25) // population std of 1, 2, 3, 4
	assert.InDeltaSlice(t, []float64{sd, 10 * sd, 1}, s.Std, 1e-14, "constant column gets Std 1")
	assert.Equal(t, 3, s.Dim())
	require.NoError(t, s.Validate())
	assert.ErrorContains(t, (&Standardizer{Mean: []float64{0}, Std: []float64{MinStd / 2}}).Validate(), "at least MinStd")

	for _, tc := range []struct {
		name string
		data *mat.Dense
		msg  string
	}{
		{"nil", nil, "empty data"},
		{"empty", &mat.Dense{}, "empty data"},
		{"NaN", mat.NewDense(2, 2, []float64{1, 2, math.NaN(), 4}), "non-finite value"},
		{"Inf", mat.NewDense(2, 2, []float64{1, math.Inf(-1), 3, 4}), "non-finite value"},
		{"std overflows", mat.NewDense(2, 1, []float64{1e308, -1e308}), "standard deviation of column 0 overflows"},
		{"mean overflows", mat.NewDense(3, 2, []float64{0, 1e308, 0, 1e308, 1, 1e308}), "mean of column 1 overflows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FitStandardizer(tc.data)
			assert.ErrorContains(t, err, tc.msg)
			assert.Nil(t, s)
		})
	}
}

// TestFitStandardizerFloor checks the floor at its edge: columns ±d have
// mean 0 and σ = d exactly, for d just below, at and just above 1e-5.
func TestFitStandardizerFloor(t *testing.T) {
	below := math.Nextafter(DefaultStdFloor, 0)
	above := math.Nextafter(DefaultStdFloor, 1)
	data := mat.NewDense(2, 5, []float64{
		-below, -DefaultStdFloor, -above, -1e-21, 0,
		below, DefaultStdFloor, above, 1e-21, 0,
	})
	s, err := FitStandardizerFloor(data, DefaultStdFloor)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, DefaultStdFloor, above, 1, 1}, s.Std, "σ < floor → 1, σ ⩾ floor kept")
	assert.Equal(t, []float64{0, 0, 0, 0, 0}, s.Mean)

	exact, err := FitStandardizer(data)
	require.NoError(t, err)
	assert.Equal(t, []float64{below, DefaultStdFloor, above, 1e-21, 1}, exact.Std, "no floor: only σ = 0 → 1")

	for _, floor := range []float64{-1e-5, math.NaN(), math.Inf(1)} {
		s, err := FitStandardizerFloor(data, floor)
		assert.ErrorContains(t, err, "must be finite and not negative", "floor %v", floor)
		assert.Nil(t, s)
	}
}

func TestStandardizerRoundTrip(t *testing.T) {
	const r, c = 7, 3
	src := mat.NewDense(r, c, randMatrix(4, r, c))
	src.Apply(func(_, j int, v float64) float64 { return 100*float64(j) + float64(j+1)*v }, src)
	s, err := FitStandardizer(src)
	require.NoError(t, err)

	z := mat.NewDense(r, c, nil)
	s.Transform(z, src)
	zs, err := FitStandardizer(z)
	require.NoError(t, err)
	assert.InDeltaSlice(t, make([]float64, c), zs.Mean, 1e-14)
	assert.InDeltaSlice(t, []float64{1, 1, 1}, zs.Std, 1e-14)

	back := mat.NewDense(r, c, nil)
	s.Inverse(back, z)
	assert.True(t, mat.EqualApprox(src, back, 1e-12))

	inPlace := mat.DenseCopyOf(src)
	s.Transform(inPlace, inPlace)
	assert.True(t, mat.Equal(z, inPlace), "dst may alias src")

	assert.Panics(t, func() { s.Transform(mat.NewDense(r, c, nil), mat.NewDense(r, c+1, nil)) })
	assert.Panics(t, func() { s.Inverse(mat.NewDense(r+1, c, nil), z) })
}

func TestStandardizerNodes(t *testing.T) {
	const r, c = 5, 2
	s := &Standardizer{Mean: []float64{1, -3}, Std: []float64{2, 0.5}}
	xv := randMatrix(6, r, c)
	for _, tc := range []struct {
		dt  tensor.Dtype
		tol float64
	}{
		{tensor.Float64, 1e-14},
		{tensor.Float32, 1e-6},
	} {
		t.Run(tc.dt.String(), func(t *testing.T) {
			g := gorgonia.NewGraph()
			x := inputNode(g, tc.dt, "x", r, c, xv)
			z, err := s.TransformNode(g, x)
			require.NoError(t, err)
			back, err := s.InverseNode(g, z)
			require.NoError(t, err)
			y, err := s.InverseNode(g, x)
			require.NoError(t, err)
			total, err := gorgonia.Sum(y)
			require.NoError(t, err)
			_, err = gorgonia.Grad(total, x)
			require.NoError(t, err)
			// Intermediate values are overwritten by later in-place ops:
			// read them through gorgonia.Read, which copies.
			var zv, backv, yv gorgonia.Value
			gorgonia.Read(z, &zv)
			gorgonia.Read(back, &backv)
			gorgonia.Read(y, &yv)

			m := gorgonia.NewTapeMachine(g, gorgonia.BindDualValues(x))
			defer m.Close()
			require.NoError(t, m.RunAll())

			want := mat.NewDense(r, c, nil)
			s.Transform(want, mat.NewDense(r, c, xv))
			assert.InDeltaSlice(t, want.RawMatrix().Data, gtest.Float64s(zv), tc.tol)
			assert.InDeltaSlice(t, xv, gtest.Float64s(backv), tc.tol)
			s.Inverse(want, mat.NewDense(r, c, xv))
			assert.InDeltaSlice(t, want.RawMatrix().Data, gtest.Float64s(yv), tc.tol)

			// d/dx Σ (x·Std + Mean) = Std in every row.
			gx, err := x.Grad()
			require.NoError(t, err)
			assert.InDeltaSlice(t, []float64{2, 0.5, 2, 0.5, 2, 0.5, 2, 0.5, 2, 0.5}, gtest.Float64s(gx), tc.tol)
		})
	}
}

func TestStandardizerConstantsAreNotMerged(t *testing.T) {
	g := gorgonia.NewGraph()
	x := inputNode(g, tensor.Float64, "x", 1, 2, []float64{0, 0})
	a := &Standardizer{Mean: []float64{1, 2}, Std: []float64{1, 1}}
	b := &Standardizer{Mean: []float64{3, 4}, Std: []float64{1, 1}}
	ya, err := a.InverseNode(g, x)
	require.NoError(t, err)
	yb, err := b.InverseNode(g, x)
	require.NoError(t, err)
	m := gorgonia.NewTapeMachine(g)
	defer m.Close()
	require.NoError(t, m.RunAll())
	assert.Equal(t, []float64{1, 2}, gtest.Float64s(ya.Value()))
	assert.Equal(t, []float64{3, 4}, gtest.Float64s(yb.Value()))
}

func TestStandardizerNodeErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	good := &Standardizer{Mean: []float64{0, 0}, Std: []float64{1, 1}}
	x := inputNode(g, tensor.Float64, "x", 3, 2, make([]float64, 6))
	for _, tc := range []struct {
		name string
		s    *Standardizer
		g    *gorgonia.ExprGraph
		x    *gorgonia.Node
	}{
		{"nil standardizer", nil, g, x},
		{"length mismatch", &Standardizer{Mean: []float64{0, 0}, Std: []float64{1}}, g, x},
		{"zero std", &Standardizer{Mean: []float64{0, 0}, Std: []float64{1, 0}}, g, x},
		{"NaN mean", &Standardizer{Mean: []float64{math.NaN(), 0}, Std: []float64{1, 1}}, g, x},
		{"nil graph", good, nil, x},
		{"nil node", good, g, nil},
		{"other graph", good, gorgonia.NewGraph(), x},
		{"wrong columns", good, g, inputNode(g, tensor.Float64, "x3", 3, 3, make([]float64, 9))},
		{"vector", good, g, gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("v"))},
		{"int dtype", good, g, gorgonia.NewMatrix(g, tensor.Int, gorgonia.WithShape(3, 2), gorgonia.WithName("xi"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.s.TransformNode(tc.g, tc.x)
			assert.Error(t, err)
			_, err = tc.s.InverseNode(tc.g, tc.x)
			assert.Error(t, err)
		})
	}
}

// fitColumnwise is FitStandardizerFloor as first written, column by column
// (data.At down each column): the reference for its row-by-row loops.
func fitColumnwise(data *mat.Dense, floor float64) (*Standardizer, error) {
	r, c := data.Dims()
	s := &Standardizer{Mean: make([]float64, c), Std: make([]float64, c)}
	for j := range c {
		var sum float64
		for i := range r {
			v := data.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("layers: FitStandardizer: non-finite value %v at (%d, %d)", v, i, j)
			}
			sum += v
		}
		mean := sum / float64(r)
		if math.IsInf(mean, 0) {
			return nil, fmt.Errorf("layers: FitStandardizer: the mean of column %d overflows float64 (the values are too large; rescale the column)", j)
		}
		var ss float64
		for i := range r {
			d := data.At(i, j) - mean
			ss += d * d
		}
		std := math.Sqrt(ss / float64(r))
		switch {
		case math.IsInf(std, 0) || math.IsNaN(std):
			return nil, fmt.Errorf("layers: FitStandardizer: the standard deviation of column %d overflows float64 (the values are too large; rescale the column)", j)
		case std == 0 || std < floor:
			std = 1
		}
		s.Mean[j], s.Std[j] = mean, std
	}
	return s, nil
}

// TestFitStandardizerRowOrder checks that FitStandardizerFloor gives the
// bits of the column-by-column loops it replaced, on columns of very
// different scales (and a view with a stride), and the same error where
// several columns are bad: the first column's first problem in their
// order (its non-finite values, its mean, its standard deviation).
func TestFitStandardizerRowOrder(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	big := mat.NewDense(301, 9, nil)
	for i := range 301 {
		for j := range 9 {
			big.Set(i, j, math.Pow(10, float64(j-4))*(rnd.NormFloat64()+float64(j)))
		}
	}
	view := big.Slice(1, 300, 2, 7).(*mat.Dense)
	for _, data := range []*mat.Dense{big, view} {
		for _, floor := range []float64{0, DefaultStdFloor, 0.5} {
			want, err := fitColumnwise(data, floor)
			require.NoError(t, err)
			got, err := FitStandardizerFloor(data, floor)
			require.NoError(t, err)
			for j := range want.Mean {
				require.Equal(t, math.Float64bits(want.Mean[j]), math.Float64bits(got.Mean[j]), "mean %d", j)
				require.Equal(t, math.Float64bits(want.Std[j]), math.Float64bits(got.Std[j]), "std %d", j)
			}
		}
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		data *mat.Dense
	}{
		{"non-finite in two columns", mat.NewDense(3, 3, []float64{1, 2, 3, 4, 5, nan, 7, inf, 9})},
		{"two in one column", mat.NewDense(3, 2, []float64{1, inf, 2, nan, 3, 4})},
		{"mean before a later NaN", mat.NewDense(3, 2, []float64{1e308, 1, 1e308, nan, 1e308, 2})},
		{"std before a later NaN", mat.NewDense(2, 2, []float64{1e308, 1, -1e308, nan})},
		{"NaN before a later std", mat.NewDense(2, 2, []float64{nan, 1e308, 1, -1e308})},
	} {
		_, want := fitColumnwise(tc.data, 0)
		_, got := FitStandardizerFloor(tc.data, 0)
		require.Error(t, want, tc.name)
		require.EqualError(t, got, want.Error(), tc.name)
	}
}

// BenchmarkFitStandardizer times FitStandardizerFloor on the §5.3 training
// inputs' shape (8334×50) against the column-by-column loops it replaced.
func BenchmarkFitStandardizer(b *testing.B) {
	rnd := rand.New(rand.NewPCG(9, 10))
	data := mat.NewDense(8334, 50, nil)
	for i := range 8334 {
		for j := range 50 {
			data.Set(i, j, rnd.NormFloat64())
		}
	}
	for _, f := range []struct {
		name string
		fit  func(*mat.Dense, float64) (*Standardizer, error)
	}{{"rows", FitStandardizerFloor}, {"columns", fitColumnwise}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := f.fit(data, DefaultStdFloor); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
