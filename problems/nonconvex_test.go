package problems

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/enforce-nn/enforce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gaussNewton solves c(x, y) = 0 from y (overwritten) by least-norm
// Gauss–Newton steps y ← y − t·Bᵀ(BBᵀ)⁻¹c with backtracking on ‖c‖₂,
// and returns max|c| at the end.
func gaussNewton(t *testing.T, c enforce.Constraint, x, y []float64, maxIter int) float64 {
	t.Helper()
	_, ny, nc := c.Dims()
	r, jy, trial, rt := make([]float64, nc), make([]float64, nc*ny), make([]float64, ny), make([]float64, nc)
	c.Eval(x, y, r, jy)
	for range maxIter {
		if floats.Norm(r, math.Inf(1)) < 1e-12 {
			break
		}
		b := mat.NewDense(nc, ny, jy)
		var g mat.SymDense
		g.SymOuterK(1, b)
		var chol mat.Cholesky
		require.True(t, chol.Factorize(&g), "BBᵀ not positive definite")
		var mu, step mat.VecDense
		require.NoError(t, chol.SolveVecTo(&mu, mat.NewVecDense(nc, r)))
		step.MulVec(b.T(), &mu)
		norm := floats.Norm(r, 2)
		for s := 1.0; ; s /= 2 {
			for k := range y {
				trial[k] = y[k] - s*step.AtVec(k)
			}
			c.Eval(x, trial, rt, nil)
			if floats.Norm(rt, 2) < (1-1e-4*s)*norm || s < 1e-10 {
				break
			}
		}
		copy(y, trial)
		c.Eval(x, y, r, jy)
	}
	return floats.Norm(r, math.Inf(1))
}

// TestNonconvexQuadraticFeasible checks, for sampled x, that damped
// Gauss–Newton from y₀ reaches c(x, y) = 0 and that Complete exhibits a
// feasible point directly.
func TestNonconvexQuadraticFeasible(t *testing.T) {
	for _, tc := range []struct {
		nO, nC, samples int
		seed            uint64
	}{
		{6, 3, 50, 1},
		{12, 4, 50, 2},
		{100, 50, 20, 3},
		{200, 150, 4, 4},
	} {
		if tc.nO > 100 && testing.Short() {
			continue
		}
		start := time.Now()
		p, err := NewNonconvexQuadratic(tc.nO, tc.nC, tc.seed)
		require.NoError(t, err)
		t.Logf("(%d, %d): generated in %v, α = %.3f", tc.nO, tc.nC, time.Since(start), p.Scale)
		c := p.Equalities()
		r := make([]float64, tc.nC)
		c.Eval(make([]float64, tc.nC), p.Y0, r, nil)
		assert.Less(t, floats.Norm(r, math.Inf(1)), 1e-10, "y₀ is feasible at x = 0")

		xs := p.SampleX(tc.samples, tc.seed)
		for i := range tc.samples {
			x := xs.RawRowView(i)
			y := append([]float64(nil), p.Y0...)
			res := gaussNewton(t, c, x, y, 100)
			assert.Less(t, res, 1e-10, "(%d, %d) sample %d: Gauss–Newton from y₀", tc.nO, tc.nC, i)

			yc := make([]float64, tc.nO)
			p.Complete(x, p.Y0, yc)
			c.Eval(x, yc, r, nil)
			assert.Less(t, floats.Norm(r, math.Inf(1)), 1e-9, "(%d, %d) sample %d: Complete", tc.nO, tc.nC, i)
		}
	}
}

// TestNonconvexQuadraticStructure checks the construction: symmetric A_i
// supported on null(C), and a Jacobian whose smallest singular value is
// at least σ_min(C) everywhere.
func TestNonconvexQuadraticStructure(t *testing.T) {
	p, err := NewNonconvexQuadratic(20, 8, 4)
	require.NoError(t, err)
	q, err := NewNonconvexQuadratic(20, 8, 4)
	require.NoError(t, err)
	other, err := NewNonconvexQuadratic(20, 8, 5)
	require.NoError(t, err)
	assert.True(t, mat.Equal(p.C, q.C) && mat.Equal(p.A[3], q.A[3]) && floats.Equal(p.D, q.D), "deterministic")
	assert.False(t, mat.Equal(p.A[0], other.A[0]))
	ystar, _ := p.Minimizer()
	assert.Equal(t, ystar, p.Y0, "y₀ is the unconstrained minimiser")
	assert.InDelta(t, 0.5*math.Sqrt(20.0/13), p.Scale, 1e-15)

	for i, a := range p.A {
		var ac mat.Dense
		ac.Mul(a, p.C.T())
		assert.Less(t, mat.Norm(&ac, math.Inf(1)), 1e-12, "A_%d Cᵀ = 0", i)
	}
	var svd mat.SVD
	require.True(t, svd.Factorize(p.C, mat.SVDNone))
	sc := svd.Values(nil)
	sminC := sc[len(sc)-1]
	rnd := newRand(1, 0)
	jy := make([]float64, 8*20)
	for range 20 {
		x, y := make([]float64, 8), make([]float64, 20)
		for k := range y {
			y[k] = 5 * rnd.NormFloat64()
		}
		p.Equalities().Eval(x, y, make([]float64, 8), jy)
		require.True(t, svd.Factorize(mat.NewDense(8, 20, jy), mat.SVDNone))
		sb := svd.Values(nil)
		assert.GreaterOrEqual(t, sb[len(sb)-1], sminC*(1-1e-12))
	}

	_, err = NewNonconvexQuadratic(5, 5, 1)
	assert.Error(t, err)
	_, err = NewNonconvexLinear(5, 6, 1)
	assert.Error(t, err)
	_, err = NewNonconvexLinear(5, 0, 1)
	assert.Error(t, err)
}

func TestNonconvexLinear(t *testing.T) {
	p, err := NewNonconvexLinear(12, 5, 3)
	require.NoError(t, err)
	xs := p.SampleX(200, 1)
	raw := xs.RawMatrix().Data
	assert.GreaterOrEqual(t, floats.Min(raw), -5.0)
	assert.Less(t, floats.Max(raw), 5.0)
	assert.Greater(t, floats.Max(raw)-floats.Min(raw), 9.5)
	assert.True(t, mat.Equal(xs, p.SampleX(200, 1)))
	for _, v := range p.Q {
		assert.True(t, v >= 0 && v < 1)
	}

	// The least-norm solution of Cy = x is feasible.
	x := xs.RawRowView(0)
	var y mat.VecDense
	require.NoError(t, y.SolveVec(p.C, mat.NewVecDense(5, x)))
	r := make([]float64, 5)
	p.Equalities().Eval(x, y.RawVector().Data, r, nil)
	assert.Less(t, floats.Norm(r, math.Inf(1)), 1e-12)
	assert.NotNil(t, enforce.CapabilitiesOf(p.Equalities()).ConstantJacobian)
	assert.Panics(t, func() { p.SampleX(0, 1) })
	assert.Panics(t, func() { p.Examples(0) })
	_, err = NewNonconvexLinear(12, 5, 1<<32)
	assert.Error(t, err, "NumPy takes seeds below 2³²")
}

// TestNonconvexLinearPaper checks NewNonconvexLinear(·, ·, PaperSeed) and
// PaperData against NumPy's run of DC3's recipe with x ~ U(−5, 5) at the
// paper's three sizes (internal/nprand/testdata/gen.py): three entries of
// the first test row bit for bit, the sums of Q, p, C and X to within the
// difference between NumPy's pairwise summation and a plain loop (the
// entries themselves are checked bit for bit in package nprand), and the
// split 8334/833/833 with the test set starting at row 9167.
func TestNonconvexLinearPaper(t *testing.T) {
	b, err := os.ReadFile("internal/nprand/testdata/numpy-1.24.2.json")
	require.NoError(t, err)
	var fx map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &fx))
	hexf := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		return v
	}
	sizes := [][2]int{{100, 50}, {100, 70}, {200, 150}}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, sz := range sizes {
		var want struct {
			QSum     string   `json:"Q_sum"`
			PSum     string   `json:"p_sum"`
			ASum     string   `json:"A_sum"`
			XSum     string   `json:"X_sum"`
			XRow9167 []string `json:"X_row9167"`
		}
		require.NoError(t, json.Unmarshal(fx[fmt.Sprintf("dc3_%d_%d", sz[0], sz[1])], &want))
		p, err := NewNonconvexLinear(sz[0], sz[1], PaperSeed)
		require.NoError(t, err)
		assert.InDelta(t, hexf(want.QSum), sum(p.Q), 1e-12, "%v: Q", sz)
		assert.InDelta(t, hexf(want.PSum), sum(p.P), 1e-12, "%v: p", sz)
		assert.InDelta(t, hexf(want.ASum), sum(p.C.RawMatrix().Data), 1e-12, "%v: C", sz)
		train, val, test := p.PaperData()
		require.Equal(t, []int{8334, 833, 833}, []int{train.Len(), val.Len(), test.Len()})
		assert.Nil(t, train.Y)
		all := p.Examples(PaperExamples)
		assert.InDelta(t, hexf(want.XSum), sum(all.RawMatrix().Data), 1e-8, "%v: X", sz)
		for j, w := range want.XRow9167 {
			assert.Equal(t, hexf(w), test.X.At(0, j), "%v: first test row", sz)
		}
		assert.True(t, mat.Equal(p.Examples(3), all.Slice(0, 3, 0, sz[1])), "the first rows do not depend on n")
	}
}

// sum adds v left to right.
func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func TestDC3Split(t *testing.T) {
	s := DC3Split(10000)
	assert.Equal(t, []int{8334, 833, 833}, []int{len(s.Train), len(s.Val), len(s.Test)})
	assert.Equal(t, 0, s.Train[0])
	assert.Equal(t, 8334, s.Val[0])
	assert.Equal(t, 9167, s.Test[0])
	assert.Equal(t, 9999, s.Test[832])
	s = DC3Split(0)
	assert.Empty(t, s.Train)
	assert.Panics(t, func() { DC3Split(-1) })
}

func TestObjective(t *testing.T) {
	o := SineQuadratic{Q: []float64{0.5, 0}, P: []float64{1, 2}}
	y := []float64{1, -2}
	assert.InDelta(t, 0.25+math.Sin(1)+2*math.Sin(-2), o.Objective(nil, y), 1e-15)
	g := make([]float64, 2)
	o.ObjectiveGrad(nil, y, g)
	assert.InDeltaSlice(t, []float64{0.5 + math.Cos(1), 2 * math.Cos(-2)}, g, 1e-15)
	assert.Panics(t, func() { o.Objective(nil, []float64{1}) })
}

// TestObjectiveNode compares the gorgonia objective and its gradient
// with the plain-Go Objective and ObjectiveGrad.
func TestObjectiveNode(t *testing.T) {
	p, err := NewNonconvexQuadratic(10, 4, 7)
	require.NoError(t, err)
	const batch = 5
	rnd := newRand(2, 0)
	data := make([]float64, batch*p.NO)
	for i := range data {
		data[i] = 3 * rnd.NormFloat64()
	}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		t.Run(dt.String(), func(t *testing.T) {
			tol := 1e-12
			var backing any = append([]float64(nil), data...)
			if dt == tensor.Float32 {
				tol = 1e-5
				d32 := make([]float32, len(data))
				for i, v := range data {
					d32[i] = float32(v)
				}
				backing = d32
			}
			g := gorgonia.NewGraph()
			y := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(batch, p.NO), gorgonia.WithName("y"),
				gorgonia.WithValue(tensor.New(tensor.WithShape(batch, p.NO), tensor.WithBacking(backing))))
			f, err := p.ObjectiveNode(y)
			require.NoError(t, err)
			assert.Equal(t, tensor.Shape{batch}, f.Shape())
			cost, err := gorgonia.Sum(f)
			require.NoError(t, err)
			grads, err := gorgonia.Grad(cost, y)
			require.NoError(t, err)
			vm := gorgonia.NewTapeMachine(g)
			defer vm.Close()
			require.NoError(t, vm.RunAll())

			fv, gv := toFloat64(f.Value().Data()), toFloat64(grads[0].Value().Data())
			grad := make([]float64, p.NO)
			for i := range batch {
				yi := data[i*p.NO : (i+1)*p.NO]
				assert.InDelta(t, p.Objective(nil, yi), fv[i], tol*(1+math.Abs(fv[i])))
				p.ObjectiveGrad(nil, yi, grad)
				assertClose(t, grad, gv[i*p.NO:(i+1)*p.NO], tol, "∇f")
			}
		})
	}

	g := gorgonia.NewGraph()
	v := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(p.NO), gorgonia.WithName("v"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(p.NO), tensor.WithBacking(append([]float64(nil), data[:p.NO]...)))))
	f, err := p.ObjectiveNode(v)
	require.NoError(t, err)
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	require.NoError(t, vm.RunAll())
	assert.InDelta(t, p.Objective(nil, data[:p.NO]), f.Value().Data().(float64), 1e-12)

	bad := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, p.NO+1), gorgonia.WithName("bad"))
	_, err = p.ObjectiveNode(bad)
	assert.Error(t, err)
}

// toFloat64 converts a float64 or float32 slice to []float64.
func toFloat64(v any) []float64 {
	switch v := v.(type) {
	case []float64:
		return v
	case []float32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	panic("unexpected type")
}

// TestNonconvexQuadraticAdaNP projects y₀ onto the constraints for sampled
// x with AdaNP's default (inference) settings.
func TestNonconvexQuadraticAdaNP(t *testing.T) {
	p, err := NewNonconvexQuadratic(100, 50, 3)
	require.NoError(t, err)
	const n = 20
	xs := p.SampleX(n, 5)
	yhat := mat.NewDense(n, p.NO, nil)
	for i := range n {
		yhat.SetRow(i, p.Y0)
	}
	adanp, err := enforce.NewAdaNP(p.Equalities(), enforce.Settings{})
	require.NoError(t, err)
	_, stats, err := adanp.Project(xs, yhat)
	require.NoError(t, err)
	assert.True(t, stats.Converged(), "%+v", stats)
	assert.LessOrEqual(t, stats.After.Max, 1e-6)
	t.Logf("AdaNP from y₀: depth %d (mean %.1f), max|c| %.1e → %.1e", stats.Depth, stats.MeanDepth, stats.Before.Max, stats.After.Max)
}

// TestSineQuadraticMinimizer checks the unconstrained minimiser against a
// fine grid over [−10, 10] for every coordinate, and that it is
// stationary.
func TestSineQuadraticMinimizer(t *testing.T) {
	p, err := NewNonconvexLinear(30, 5, 7)
	require.NoError(t, err)
	p.Q[0], p.P[1] = 0, 0 // edge cases: no quadratic term; no sine term
	y, f := p.Minimizer()
	assert.InDelta(t, p.Objective(nil, y), f, 1e-15)
	grad := make([]float64, len(y))
	p.ObjectiveGrad(nil, y, grad)
	assert.Less(t, floats.Norm(grad, math.Inf(1)), 1e-12, "stationary")
	for k := range y {
		fk := func(s float64) float64 { return 0.5*p.Q[k]*s*s + p.P[k]*math.Sin(s) }
		for s := -10.0; s <= 10; s += 1e-3 {
			require.GreaterOrEqual(t, fk(s), fk(y[k])-1e-12, "coordinate %d: grid point %g is lower", k, s)
		}
	}
}

// TestDC3Partial compares DC3Partial with NumPy 1.24.2's choice after the
// draws of DC3's generator (np.random.seed(17); Q, p, A, X = uniform(−5,
// 5, (10000, N_C)), G = normal(0, 1, (nIneq, N_O)) when nIneq > 0; then
// np.random.choice(N_O, N_O − N_C, replace=False)).
func TestDC3Partial(t *testing.T) {
	for _, c := range []struct {
		nO, nC, nIneq int
		want          []int
	}{
		{100, 50, 0, []int{70, 49, 80, 35, 23, 98, 15, 45, 40, 46, 47, 91, 11, 30, 81, 65, 5, 69, 4, 93, 72, 66, 19, 75, 7, 20, 58, 96, 85, 27, 13, 12, 31, 89, 87, 61, 88, 90, 26, 43, 51, 67, 73, 50, 78, 52, 37, 63, 71, 38}},
		{100, 50, DC3Ineq, []int{69, 93, 3, 5, 44, 8, 46, 60, 79, 88, 13, 55, 51, 28, 21, 66, 31, 41, 86, 18, 98, 2, 23, 36, 30, 22, 0, 73, 58, 19, 71, 50, 56, 27, 78, 74, 81, 70, 67, 12, 99, 1, 84, 87, 25, 32, 62, 75, 38, 92}},
		{200, 150, DC3Ineq, []int{63, 132, 54, 143, 72, 48, 34, 29, 13, 52, 77, 117, 26, 141, 134, 16, 147, 182, 130, 194, 148, 30, 73, 111, 156, 186, 195, 153, 103, 70, 126, 155, 142, 95, 150, 50, 15, 181, 110, 27, 35, 62, 81, 157, 119, 198, 185, 2, 183, 113}},
	} {
		p, err := NewNonconvexLinear(c.nO, c.nC, PaperSeed)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.DC3Partial(c.nIneq)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("(%d, %d), nIneq %d: DC3Partial = %v, NumPy %v", c.nO, c.nC, c.nIneq, got, c.want)
		}
		// The instance's state is not consumed: a second call agrees.
		if again, _ := p.DC3Partial(c.nIneq); !slices.Equal(again, got) {
			t.Errorf("(%d, %d): a second call gave %v", c.nO, c.nC, again)
		}
	}
	p, _ := NewNonconvexLinear(100, 50, PaperSeed)
	if _, err := p.DC3Partial(-1); err == nil {
		t.Error("nIneq −1: no error")
	}
	if _, err := new(NonconvexLinear).DC3Partial(0); err == nil {
		t.Error("zero NonconvexLinear: no error")
	}
}
