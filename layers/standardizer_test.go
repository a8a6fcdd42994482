package layers

import (
	"math"
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
