package enforce

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/hd"
)

// missedCase is a constraint and a batch of which the rows want miss the
// tolerance after one NP step (MinDepth = MaxDepth = 1) and the others
// meet it, through each of the three schedulers: per sample (Func),
// lockstep (Quadratic's EvalBatch) and batched linear (Linear, whose one
// regularised step cannot be exact).
type missedCase struct {
	name     string
	c        Constraint
	settings Settings
	x, y     *mat.Dense
	want     []int
}

func missedCases(t *testing.T) []missedCase {
	t.Helper()
	circle, err := Func(1, 2, 1, func(x, y, c []hd.Number) {
		c[0] = hd.Sub(hd.Add(hd.Square(y[0]), hd.Square(y[1])), hd.Square(x[0]))
	})
	require.NoError(t, err)
	// Rows 1 and 3 start far from the circle of radius x; 0 and 2 on it.
	x := mat.NewDense(4, 1, []float64{1, 2, 1.5, 1})
	y := mat.NewDense(4, 2, []float64{1, 0, 5, 4, 0, 1.5, -3, 2})

	A := []*mat.SymDense{mat.NewSymDense(2, []float64{1, 0, 0, 1})}
	quad, err := Quadratic(1, A, mat.NewDense(1, 2, nil), nil, func(x, r, jx []float64) {
		r[0] = x[0] * x[0]
		if jx != nil {
			jx[0] = 2 * x[0]
		}
	})
	require.NoError(t, err)
	require.NotNil(t, CapabilitiesOf(quad).EvalBatch, "Quadratic must take the lockstep path")

	lin, err := Linear(1, mat.NewDense(1, 2, []float64{1, 1}), func(x, r, jx []float64) {
		r[0] = x[0]
		if jx != nil {
			jx[0] = 1
		}
	})
	require.NoError(t, err)
	// y₁ + y₂ = x: rows 0 and 2 are feasible, 1 and 3 are not, and one
	// step with Reg 1 removes only two thirds of their residual.
	ly := mat.NewDense(4, 2, []float64{0.5, 0.5, 3, 3, 1, 0.5, 4, 0})

	one := Settings{MinDepth: 1, MaxDepth: 1}
	reg := one
	reg.Reg = 1
	return []missedCase{
		{"Func", circle, one, x, y, []int{1, 3}},
		{"Quadratic", quad, one, x, y, []int{1, 3}},
		{"Linear", lin, reg, x, ly, []int{1, 3}},
	}
}

// TestStatsMissed checks that Stats.Missed lists exactly the rows above
// the tolerance, in every scheduler, for Project, ProjectTrace and Check,
// and that each listed row's residual is above Tol and every other row's
// at most Tol.
func TestStatsMissed(t *testing.T) {
	for _, tc := range missedCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAdaNP(tc.c, tc.settings)
			require.NoError(t, err)
			out, st, err := a.Project(tc.x, tc.y)
			require.NoError(t, err)
			assert.Equal(t, tc.want, st.Missed)
			assert.Equal(t, len(st.Missed), st.NotConverged)
			after, err := a.Check(tc.x, out)
			require.NoError(t, err)
			assert.Equal(t, tc.want, after.Missed, "Check of the projection")

			var tr Trace
			dst := mat.NewDense(4, 2, nil)
			st2, err := a.ProjectTrace(dst, tc.x, tc.y, &tr)
			require.NoError(t, err)
			assert.Equal(t, tc.want, st2.Missed, "ProjectTrace")

			before, err := a.Check(tc.x, tc.y)
			require.NoError(t, err)
			assert.Equal(t, tc.want, before.Missed, "Check of ŷ")
		})
	}
}

// TestStatsMissedNilWhenConverged checks that Missed is nil when every
// sample meets the tolerance.
func TestStatsMissedNilWhenConverged(t *testing.T) {
	tc := missedCases(t)[0]
	a, err := NewAdaNP(tc.c, Settings{})
	require.NoError(t, err)
	_, st, err := a.Project(tc.x, tc.y)
	require.NoError(t, err)
	require.True(t, st.Converged())
	assert.Nil(t, st.Missed)
}

// TestRequireTol checks that with Settings.RequireTol a projection that
// misses the tolerance fails with a *ToleranceError listing the rows (and
// Project returns no output), that ProjectTo has written its destination
// anyway, that Check does not fail, and that a batch that converges does
// not fail.
func TestRequireTol(t *testing.T) {
	for _, tc := range missedCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.settings
			s.RequireTol = true
			a, err := NewAdaNP(tc.c, s)
			require.NoError(t, err)
			out, st, err := a.Project(tc.x, tc.y)
			require.Error(t, err)
			assert.Nil(t, out)
			assert.Equal(t, tc.want, st.Missed)
			var te *ToleranceError
			require.True(t, errors.As(err, &te), "%v", err)
			assert.Equal(t, tc.want, te.Samples)
			assert.Equal(t, 4, te.Rows)
			assert.Equal(t, a.Settings().Tol, te.Tol)
			assert.Equal(t, MaxAbs, te.Measure)
			assert.Contains(t, err.Error(), "2 of 4 samples missed the tolerance max|c| ≤ 1e-06")
			assert.Contains(t, err.Error(), "rows 1, 3")

			dst := mat.NewDense(4, 2, nil)
			_, err = a.ProjectTo(dst, tc.x, tc.y)
			require.ErrorAs(t, err, &te)
			lax, err := NewAdaNP(tc.c, tc.settings)
			require.NoError(t, err)
			want, _, err := lax.Project(tc.x, tc.y)
			require.NoError(t, err)
			assert.Equal(t, want.RawMatrix().Data, dst.RawMatrix().Data, "ProjectTo writes dst")

			var tr Trace
			_, err = a.ProjectTrace(dst, tc.x, tc.y, &tr)
			require.ErrorAs(t, err, &te)

			chk, err := a.Check(tc.x, tc.y)
			require.NoError(t, err, "Check reports without failing")
			assert.Equal(t, tc.want, chk.Missed)
		})
	}
	tc := missedCases(t)[0]
	a, err := NewAdaNP(tc.c, Settings{RequireTol: true})
	require.NoError(t, err)
	_, st, err := a.Project(tc.x, tc.y)
	require.NoError(t, err, "a batch that converges")
	assert.Nil(t, st.Missed)
}

// TestToleranceErrorMessage checks that the message lists at most ten rows
// and says how many more there are.
func TestToleranceErrorMessage(t *testing.T) {
	e := &ToleranceError{Samples: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Rows: 20, Tol: 1e-4, Measure: MeanAbs}
	assert.Equal(t, "enforce: 12 of 20 samples missed the tolerance mean|c| ≤ 0.0001 (Settings.RequireTol): rows 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … (2 more)", e.Error())
}

// TestOpMissedAndRequireTol checks the graph Op: its Stats list the
// missed rows, and with RequireTol the machine's run fails with a
// *ToleranceError.
func TestOpMissedAndRequireTol(t *testing.T) {
	tc := missedCases(t)[0]
	for _, require_ := range []bool{false, true} {
		t.Run(fmt.Sprint("RequireTol=", require_), func(t *testing.T) {
			s := tc.settings
			s.RequireTol = require_
			a, err := NewAdaNP(tc.c, s)
			require.NoError(t, err)
			g := G.NewGraph()
			x := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 1), G.WithName("x"),
				G.WithValue(tensor.New(tensor.WithShape(4, 1), tensor.WithBacking(append([]float64(nil), tc.x.RawMatrix().Data...)))))
			y := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 2), G.WithName("y"),
				G.WithValue(tensor.New(tensor.WithShape(4, 2), tensor.WithBacking(append([]float64(nil), tc.y.RawMatrix().Data...)))))
			out, err := a.Apply(x, y)
			require.NoError(t, err)
			op, ok := OpOf(out)
			require.True(t, ok)
			m := G.NewTapeMachine(g)
			defer m.Close()
			err = m.RunAll()
			if !require_ {
				require.NoError(t, err)
				assert.Equal(t, tc.want, op.Stats().Missed)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "2 of 4 samples missed the tolerance")
			assert.Equal(t, tc.want, op.Stats().Missed, "Stats of the failed pass")
		})
	}
}
