package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/layers"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/problems/acopf/dataset"
	"github.com/enforce-nn/enforce/train"
)

// TestBaselineRow runs the command on a small labelled set of case57
// (labelled by the reference solver of the build: pure Go by default) and
// checks the summary table's header and row.
func TestBaselineRow(t *testing.T) {
	if testing.Short() {
		t.Skip("labels two instances with the reference solver")
	}
	dir := t.TempDir()
	g, err := dataset.NewReference("pglib_opf_case57_ieee", 1, 2, dataset.LoadModel{CommonLo: 0.95, CommonHi: 1.05, Local: 0.05}, dataset.ReferenceOptions{})
	require.NoError(t, err)
	path := filepath.Join(dir, "test.tsv")
	_, err = g.Run(context.Background(), path, dataset.Shard{K: 0, Of: 1})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	code := cli([]string{"-data", path, "-ipopt", "0", "-out", ""}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	s := out.String()
	assert.Contains(t, s, "| grid | buses | method | gap % | max eq | max ineq | infeasible | ms per instance | IPOPT s per instance |")
	assert.Contains(t, s, "| pglib_opf_case57_ieee | 57 | case optimum + AdaNP (no training) |")
	assert.True(t, strings.Contains(s, "| 0 of 2 |"), "both instances feasible:\n%s", s)
}

// TestReferenceSolverNamed: the IPOPT column names the pure-Go solver
// where a build without -tags ipopt timed it, and -ipopt refuses that
// solver on a grid above pureGoMaxBuses buses (before solving anything).
func TestReferenceSolverNamed(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, writeTable(&out, "g", 3, []row{{method: "m", n: 1, ipoptSeconds: 1.5, pureGo: true}, {method: "i", n: 1, ipoptSeconds: 2.5}}))
	assert.Contains(t, out.String(), "| 1.50 (pure-Go solver, not IPOPT) |")
	assert.Contains(t, out.String(), "| 2.50 |")

	c, err := acopf.Load("pglib_opf_case1354_pegase")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	_, name, err := dataset.Reference(m, dataset.ReferenceOptions{})
	require.NoError(t, err)
	test := []dataset.Sample{{X: m.Loads()}}
	if strings.HasPrefix(name, "IPOPT") {
		t.Skip("this build's reference solver is IPOPT")
	}
	_, pureGo, err := timeReference(m, test, 1, io.Discard)
	assert.True(t, pureGo)
	assert.ErrorContains(t, err, "-tags ipopt")
	assert.ErrorContains(t, err, "-ipopt 0")
	secs, pureGo, err := timeReference(m, test, 0, io.Discard)
	assert.NoError(t, err)
	assert.True(t, math.IsNaN(secs) && !pureGo, "-ipopt 0 times nothing")
}

func TestNoData(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 1, cli([]string{"-out", ""}, &out, &errOut))
	assert.Contains(t, errOut.String(), "-data")
}

// TestAllInfeasibleFails: a table whose every instance is infeasible is
// an error (the command exits 1), one feasible instance is not.
func TestAllInfeasibleFails(t *testing.T) {
	var out bytes.Buffer
	bad := row{method: "m", n: 3, infeasible: 3, ipoptSeconds: math.NaN()}
	assert.Error(t, writeTable(&out, "g", 5, []row{bad}))
	assert.Contains(t, out.String(), "| 3 of 3 |")
	good := bad
	good.infeasible = 2
	assert.NoError(t, writeTable(&out, "g", 5, []row{bad, good}))
}

// TestFitRidge: the dual-form ridge regression reproduces a linear map
// from fewer samples than inputs on the span of its training inputs, its
// two factors have equal RMS entries, and λ is one of the grid's values.
func TestFitRidge(t *testing.T) {
	const n, nx, ny = 30, 50, 7
	rnd := rand.New(rand.NewPCG(1, 2))
	x, y := mat.NewDense(n, nx, nil), mat.NewDense(n, ny, nil)
	m := mat.NewDense(nx, ny, nil)
	for i := range nx {
		for j := range ny {
			m.Set(i, j, rnd.NormFloat64())
		}
	}
	for i := range n {
		for j := range nx {
			x.Set(i, j, 1+0.1*rnd.NormFloat64())
		}
	}
	y.Mul(x, m)
	tm, err := train.New(train.Config{Mode: train.MLP, Constraint: lineConstraint{nx, ny}, Standardize: true, OutputStdFloor: -1,
		Backbone: func(g *gorgonia.ExprGraph) (train.Backbone, error) {
			return layers.NewMLP(g, []int{nx, n, ny}, layers.Identity, layers.Identity)
		}})
	require.NoError(t, err)
	lambda, err := fitRidge(tm, x, y)
	require.NoError(t, err)
	assert.Greater(t, lambda, 0.0)
	w := tm.Weights()
	assert.InDelta(t, rms(w[0]), rms(w[2]), 1e-12*rms(w[0]))
	pred, err := tm.Backbone(x)
	require.NoError(t, err)
	var d mat.Dense
	d.Sub(pred, y)
	assert.Less(t, mat.Norm(&d, 2)/mat.Norm(y, 2), 0.05, "the fit on the training rows")
}

// lineConstraint is a placeholder constraint of the right dimensions for
// the supervised model of TestFitRidge (c = y_0 − x_0).
type lineConstraint struct{ nx, ny int }

func (l lineConstraint) Dims() (nx, ny, nc int) { return l.nx, l.ny, 1 }
func (l lineConstraint) Eval(x, y, c, jy []float64) {
	c[0] = y[0] - x[0]
	if jy != nil {
		clear(jy)
		jy[0] = 1
	}
}

// TestTrainRecipe runs the training recipe on small labelled sets of
// case57 (labelled by the build's reference solver): the ridge warm start,
// one epoch of the cost through AdaNP with every batch projected, both
// rows in the table; a second run with the same -checkpoint folder resumes
// the finished run and prints the same trained row; a training set with the
// test set's seed is refused.
func TestTrainRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("labels 16 instances with the reference solver")
	}
	dir := t.TempDir()
	label := func(seed uint64, n int) string {
		g, err := dataset.NewReference("pglib_opf_case57_ieee", seed, n, dataset.LoadModel{CommonLo: 0.95, CommonHi: 1.05, Local: 0.05}, dataset.ReferenceOptions{})
		require.NoError(t, err)
		path := filepath.Join(dir, fmt.Sprintf("seed%d.tsv", seed))
		_, err = g.Run(context.Background(), path, dataset.Shard{K: 0, Of: 1})
		require.NoError(t, err)
		return path
	}
	testSet, trainSet := label(1, 4), label(2, 12)
	ckpt := filepath.Join(dir, "ckpt")
	args := []string{"-data", testSet, "-train", trainSet, "-ipopt", "0", "-out", "", "-epochs", "1", "-batch", "6", "-train-tol", "1e-6", "-checkpoint", ckpt}
	trained := func() string {
		var out, errOut bytes.Buffer
		code := cli(args, &out, &errOut)
		require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		s := out.String()
		assert.Contains(t, s, "| pglib_opf_case57_ieee | 57 | ridge (")
		assert.Contains(t, s, "projected 100%")
		for _, line := range strings.Split(s, "\n") {
			if strings.Contains(line, "| ENFORCE: ridge") {
				f := strings.Split(line, "|")
				return strings.Join(f[:len(f)-3], "|") // without the times
			}
		}
		t.Fatalf("no trained row:\n%s", s)
		return ""
	}
	first := trained()
	assert.Equal(t, first, trained(), "the resumed run's row")

	// -model-path augmented: a checkpoint trained through PathSparse does
	// not resume (its settings differ); in a folder of its own the recipe
	// trains through PathAugmented.
	var o1, e1 bytes.Buffer
	augArgs := append(append([]string(nil), args...), "-model-path", "augmented")
	assert.Equal(t, 1, cli(augArgs, &o1, &e1), "stdout:\n%s", o1.String())
	assert.Contains(t, e1.String(), "checkpoint")
	augArgs[len(augArgs)-3] = filepath.Join(dir, "ckpt-augmented")
	args = augArgs
	assert.NotEmpty(t, trained())

	var out, errOut bytes.Buffer
	assert.Equal(t, 1, cli([]string{"-data", testSet, "-train", testSet, "-out", ""}, &out, &errOut))
	assert.Contains(t, errOut.String(), "test set's seed")
}

// TestProjectionWeights checks the "spread" weights against their
// definition (the median spread over each output's, floored at a tenth
// of the median), "unit", and the errors.
func TestProjectionWeights(t *testing.T) {
	// Columns with spreads 1, 2, 4 (population σ of ±σ) and 0.
	y := mat.NewDense(2, 4, []float64{
		1, 5, -4, 7,
		-1, 1, 4, 7,
	})
	w, err := projectionWeights("spread", y)
	if err != nil {
		t.Fatal(err)
	}
	// σ = (1, 2, 4, 0), median (the upper of the middle two) 2; the
	// zero spread is floored at 0.2.
	want := []float64{2, 1, 0.5, 10}
	for j := range want {
		if math.Abs(w[j]-want[j]) > 1e-12 {
			t.Errorf("spread: w = %v, want %v", w, want)
			break
		}
	}
	same, err := projectionWeights("spread:0.1:1", y)
	if err != nil || !slices.Equal(same, w) {
		t.Errorf("spread:0.1:1 = %v, %v; want spread's %v", same, err, w)
	}
	// Floor 0.5 (σ floored at 1), power 2.
	sq, err := projectionWeights("spread:0.5:2", y)
	want = []float64{4, 1, 0.25, 4}
	for j := range want {
		if err != nil || math.Abs(sq[j]-want[j]) > 1e-12 {
			t.Errorf("spread:0.5:2: w = %v, %v; want %v", sq, err, want)
			break
		}
	}
	for _, bad := range []string{"spread:0:1", "spread:2:1", "spread:0.1:0", "spread:0.1:NaN", "spread:0.1", "spread:a:1", "spread:0.1:1:1"} {
		if _, err := projectionWeights(bad, y); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	u, err := projectionWeights("unit", y)
	if err != nil || u[0] != 1 || u[3] != 1 {
		t.Errorf("unit: %v, %v", u, err)
	}
	if _, err := projectionWeights("sigma", y); err == nil {
		t.Error("an unknown kind was accepted")
	}
	if _, err := projectionWeights("spread", mat.NewDense(2, 3, []float64{1, 1, 1, 1, 1, 1})); err == nil {
		t.Error("labels without spread were accepted")
	}
}

// TestSmoothingLadderFlag: -smoothing-ladder parses to the rows'
// Settings.SmoothingLadder, and a value NewAdaNP rejects is an error.
func TestSmoothingLadderFlag(t *testing.T) {
	got, err := parseLadder(" 1e-5, 1e-4 ")
	require.NoError(t, err)
	assert.Equal(t, []float64{1e-5, 1e-4}, got)
	got, err = parseLadder("")
	require.NoError(t, err)
	assert.Nil(t, got)
	_, err = parseLadder("1e-4,x")
	assert.Error(t, err)
	o := defaults()
	assert.ErrorContains(t, flags(&o).Parse([]string{"-smoothing-ladder", "1e-4,x"}), "-smoothing-ladder")
	require.NoError(t, flags(&o).Parse([]string{"-smoothing-ladder", "1e-5,1e-4"}))
	assert.Equal(t, []float64{1e-5, 1e-4}, o.ladder)

	c, err := acopf.Load("pglib_opf_case57_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	o = defaults()
	k, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbeps, BranchLimits: true})
	require.NoError(t, err)
	a, err := rowProjection(o, k, nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{1e-4}, a.Settings().SmoothingLadder, "the default")
	o.ladder = []float64{0.5} // above Smoothing
	_, err = rowProjection(o, k, nil)
	assert.ErrorContains(t, err, "SmoothingLadder")
}

// TestRowIntFlags: -smoothing-nonmonotone and -smoothing-patience set
// the rows' Settings.SmoothingNonmonotone and SmoothingPatience (zero by
// default) and not the models' own projections; a value NewAdaNP rejects
// is an error naming the setting.
func TestRowIntFlags(t *testing.T) {
	c, err := acopf.Load("pglib_opf_case57_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	for _, tc := range []struct {
		flag, setting string
		value, bad    int
		opt           func(*options) *int
		get           func(enforce.Settings) int
	}{
		{"-smoothing-nonmonotone", "SmoothingNonmonotone", 5, 99,
			func(o *options) *int { return &o.smNonmonotone }, func(s enforce.Settings) int { return s.SmoothingNonmonotone }},
		{"-smoothing-patience", "SmoothingPatience", 3, -1,
			func(o *options) *int { return &o.smPatience }, func(s enforce.Settings) int { return s.SmoothingPatience }},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			o := defaults()
			k, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbeps, BranchLimits: true})
			require.NoError(t, err)
			a, err := rowProjection(o, k, nil)
			require.NoError(t, err)
			assert.Zero(t, tc.get(a.Settings()), "the default")
			require.NoError(t, flags(&o).Parse([]string{tc.flag, fmt.Sprint(tc.value)}))
			assert.Equal(t, tc.value, *tc.opt(&o))
			a, err = rowProjection(o, k, nil)
			require.NoError(t, err)
			assert.Equal(t, tc.value, tc.get(a.Settings()))
			assert.Zero(t, tc.get(projection(o, nil, 0, 0)), "not the models' settings")
			*tc.opt(&o) = tc.bad
			_, err = rowProjection(o, k, nil)
			assert.ErrorContains(t, err, tc.setting)
		})
	}
}

// TestSmoothingFromAttemptFlag: -smoothing-from-attempt sets the rows'
// Settings.SmoothingFromAttempt (false by default), not the models' own.
func TestSmoothingFromAttemptFlag(t *testing.T) {
	c, err := acopf.Load("pglib_opf_case57_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	o := defaults()
	k, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbeps, BranchLimits: true})
	require.NoError(t, err)
	a, err := rowProjection(o, k, nil)
	require.NoError(t, err)
	assert.False(t, a.Settings().SmoothingFromAttempt, "the default")
	require.NoError(t, flags(&o).Parse([]string{"-smoothing-from-attempt"}))
	a, err = rowProjection(o, k, nil)
	require.NoError(t, err)
	assert.True(t, a.Settings().SmoothingFromAttempt)
	assert.False(t, projection(o, nil, 0, 0).SmoothingFromAttempt, "not the models' settings")
}

// TestModelLadderFlag: -model-ladder sets the models' own projections
// (training's and inference's), none by default.
func TestModelLadderFlag(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-model-ladder", "1e-4,1e-3"}))
	assert.Equal(t, []float64{1e-4, 1e-3}, o.recipe.ladder)
	assert.Equal(t, []float64{1e-4, 1e-3}, projection(o, nil, 1e-6, 0).SmoothingLadder)
	d := defaults()
	require.NoError(t, flags(&d).Parse(nil))
	assert.Nil(t, projection(d, nil, 0, 0).SmoothingLadder, "none by default: earlier checkpoints resume")
	assert.Error(t, flags(&d).Parse([]string{"-model-ladder", "x"}))
}

// TestModelPathFlag: -model-path sets the models' own projections'
// Settings.Path (training's and inference's), PathSparse by default, and
// not the rows' (-path).
func TestModelPathFlag(t *testing.T) {
	d := defaults()
	require.NoError(t, flags(&d).Parse(nil))
	assert.Equal(t, enforce.PathSparse, projection(d, nil, 1e-6, 0).Path, "sparse by default: earlier checkpoints resume")
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-model-path", "augmented"}))
	assert.Equal(t, enforce.PathAugmented, projection(o, nil, 1e-6, 0).Path)
	assert.Equal(t, enforce.PathAugmented, projection(o, nil, 0, 0).Path)
	assert.Equal(t, enforce.PathSparse, o.rowPath, "-path is the rows'")
	assert.ErrorContains(t, flags(&o).Parse([]string{"-model-path", "dense"}), "-model-path")
}

// TestPathFlag: -path sets the rows' projection's Settings.Path (sparse by
// default, augmented on request), projects case57_ieee's optimum
// perturbed to the same point on both paths, and rejects other values.
func TestPathFlag(t *testing.T) {
	o := defaults()
	assert.Equal(t, enforce.PathSparse, o.rowPath)
	assert.ErrorContains(t, flags(&o).Parse([]string{"-path", "dense"}), "-path")
	require.NoError(t, flags(&o).Parse([]string{"-path", "augmented"}))
	assert.Equal(t, enforce.PathAugmented, o.rowPath)

	c, err := acopf.Load("pglib_opf_case57_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	k, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbeps, BranchLimits: true})
	require.NoError(t, err)
	opt, err := acopf.ReferenceOptimum(c.Name)
	require.NoError(t, err)
	nx, ny := m.Dims()
	x, y := mat.NewDense(4, nx, nil), mat.NewDense(4, ny, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 4 {
		x.SetRow(i, m.Loads())
		m.Perturb(y.RawRowView(i), opt.Y, acopf.Perturbation{Vm: 1e-2, Va: 1e-2, PQ: 1e-2}, rng)
	}
	var outs [2]*mat.Dense
	for i, p := range []enforce.Path{enforce.PathSparse, enforce.PathAugmented} {
		o.rowPath = p
		a, err := rowProjection(o, k, nil)
		require.NoError(t, err)
		assert.Equal(t, p, a.Path())
		var st enforce.Stats
		outs[i], st, err = a.Project(x, y)
		require.NoError(t, err)
		assert.True(t, st.Converged(), "%v: %v", p, st)
	}
	for i, v := range outs[0].RawMatrix().Data {
		assert.InDelta(t, v, outs[1].RawMatrix().Data[i], 1e-7)
	}
}
