package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/benchcases"
	"github.com/enforce-nn/enforce/examples/internal/harness/harnesstest"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/problems"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		assert.Equal(t, tc.want, median(tc.xs), "%v", tc.xs)
	}
}

func TestRaiseCeiling(t *testing.T) {
	c, i := raiseCeiling(10, []float64{3, 0, 9})
	assert.Equal(t, 10.0, c)
	assert.Equal(t, -1, i)
	c, i = raiseCeiling(2.6, []float64{3, 7.2, 0, 5})
	assert.Equal(t, 7.2, c, "the ceiling never falls below an achieved rate")
	assert.Equal(t, 1, i)
}

func TestLoad(t *testing.T) {
	l, err := parseLoadAvg("1.17 0.40 0.14 1/234 5678\n")
	require.NoError(t, err)
	assert.Equal(t, [3]float64{1.17, 0.40, 0.14}, l)
	_, err = parseLoadAvg("1.0 2.0")
	assert.Error(t, err)
	_, err = parseLoadAvg("a b c")
	assert.Error(t, err)

	for _, tc := range []struct {
		before, after float64
		cpus          int
		want          bool
	}{
		{0.2, 2.1, 2, false}, // quiet: the bench's own two threads
		{1.5, 2.5, 2, true},  // others running before
		{0.1, 3.5, 2, true},  // others started during the run
		{3, 10, 16, false},
	} {
		assert.Equal(t, tc.want, busy([3]float64{tc.before}, [3]float64{tc.after}, tc.cpus), "%+v", tc)
	}
}

// TestMeasureCase runs one small case end to end.
func TestMeasureCase(t *testing.T) {
	cases, err := benchcases.Cases(100)
	require.NoError(t, err)
	for _, c := range []benchcases.Case{cases[0], cases[1]} {
		for _, p := range []enforce.Precision{enforce.Float64, enforce.Float32} {
			r, err := measureCase(c, 3, p)
			require.NoError(t, err)
			assert.Len(t, r.steps, 3)
			for _, v := range append([]float64{r.step, r.fwd1, r.train}, r.steps...) {
				assert.GreaterOrEqual(t, v, 0.0)
			}
			assert.Positive(t, r.fwd1)
			assert.Positive(t, r.train)
			assert.Positive(t, r.full)
			assert.GreaterOrEqual(t, r.fullDepth, 1.0)
			assert.Equal(t, p, r.prec)
		}
	}
	var d dgemm
	assert.Positive(t, d.rate())
}

// TestMemoryTable runs the program at a small scale and checks that its
// memory table has each of the fitting and quadratic cases once (three
// depths each): it once listed (833, 100, 50) twice and never
// (833, 200, 150), because it took the first three rows of the time table,
// where Float32 repeats a case.
func TestMemoryTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(options{reps: 1, scale: 100, precision: "both"}, &out))
	text := out.String()
	i := strings.Index(text, "Trace memory per training step")
	require.Positive(t, i, text)
	mem := text[i:]
	for _, name := range []string{"fitting (10, 2, 1)", "quadratic (8, 100, 50)", "quadratic (8, 200, 150)"} {
		assert.Equal(t, 3, strings.Count(mem, name+" "), "%s: depths 1, 3 and 5 in\n%s", name, mem)
	}
	assert.NotContains(t, mem, "distillation")
	assert.Regexp(t, `(?s)Func against analytic, distillation: a step takes .+ with Func .+ analytic`, text[:i])
	// Every block of the time table (report.MaxWidth) starts with the
	// case and its precision.
	f64 := regexp.MustCompile(`(?m)^\s*quadratic \(8, 200, 150\)\s+float64\s`).FindAllString(text[:i], -1)
	f32 := regexp.MustCompile(`(?m)^\s*quadratic \(8, 200, 150\)\s+float32\s`).FindAllString(text[:i], -1)
	assert.NotEmpty(t, f64, "the time table has the case in float64")
	assert.Equal(t, len(f64), len(f32), "and in float32, in every block")
	for line := range strings.Lines(text) {
		assert.LessOrEqual(t, len(strings.TrimSuffix(line, "\n")), report.MaxWidth, "bytes of %q", line)
	}
}

func TestPlan(t *testing.T) {
	cases, err := benchcases.Cases(100)
	require.NoError(t, err)
	both, err := precisions("both")
	require.NoError(t, err)
	var names []string
	for _, m := range plan(cases, both) {
		names = append(names, m.tc.Name+" "+m.prec.String())
	}
	assert.Equal(t, []string{
		"fitting (10, 2, 1) float64",
		"quadratic (8, 100, 50) float64", "quadratic (8, 100, 50) float32",
		"quadratic (8, 200, 150) float64", "quadratic (8, 200, 150) float32",
		"distillation, Func (10, 9, 6) float64", "distillation, analytic (10, 9, 6) float64",
	}, names, "Float32 only for the cases large enough")
	_, err = precisions("half")
	assert.ErrorContains(t, err, `-precision "half"`)
	assert.Error(t, run(options{reps: 0, scale: 1, precision: "both"}, io.Discard))
}

// TestFlags checks the examples' command-line convention and that -quick
// divides the batches by 8.
func TestFlags(t *testing.T) {
	harnesstest.CheckConvention(t, cli, "quick", "reps", "scale", "precision", "items", "inner", "instances")
	o := options{reps: 3, scale: 1, precision: "both"}
	require.NoError(t, flags(&o).Parse([]string{"-quick"}))
	assert.Equal(t, 8, o.scale)
}

// TestItems runs the -items protocol at a small scale: a header, then one
// JSON answer per request, an error for an unknown item.
func TestItems(t *testing.T) {
	req := strings.Join(append(slices.Clone(itemNames), "no-such-item", itemStep100), "\n") + "\n\nignored\n"
	var out bytes.Buffer
	require.NoError(t, serveItems(strings.NewReader(req), &out, 100, 1))
	dec := json.NewDecoder(&out)
	var h itemHeader
	require.NoError(t, dec.Decode(&h))
	assert.Equal(t, itemNames, h.Items)
	assert.Positive(t, h.GOMAXPROCS)
	assert.Equal(t, 100, h.Scale)
	var got []itemResult
	for dec.More() {
		var r itemResult
		require.NoError(t, dec.Decode(&r))
		got = append(got, r)
	}
	require.Len(t, got, len(itemNames)+2, "reading stops at the empty line")
	for i, name := range itemNames {
		assert.Equal(t, name, got[i].Item)
		assert.Empty(t, got[i].Error, name)
		assert.GreaterOrEqual(t, got[i].Sec, 0.0, name)
		assert.NotEmpty(t, got[i].Note, name)
	}
	assert.Contains(t, got[len(itemNames)].Error, `unknown item "no-such-item"`)
	assert.Equal(t, itemStep100, got[len(itemNames)+1].Item, "a prepared item answers again")
	assert.Contains(t, got[len(itemNames)+2-1].Note, "(8, 100, 50)")
}

// TestInstances checks -instances: every array the reference side reads,
// with a file of 8 bytes per element of its shape, and the quadratic
// instance's data equal to the generator's.
func TestInstances(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, cli([]string{"-instances", dir, "-scale", "100"}, &stdout, &stderr), stderr.String())
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err)
	var m struct {
		Scale  int
		Names  []string
		Arrays map[string]arrayInfo
	}
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, 100, m.Scale)
	for _, name := range []string{"lin.C", "lin.Q", "lin.P", "lin.train", "lin.test",
		"quad.A", "quad.C", "quad.D", "quad.Q", "quad.P", "quad.train", "quad.test",
		"step100.A", "step100.x", "step100.y", "step200.A", "step200.C", "step200.D", "step200.x", "step200.y"} {
		info, ok := m.Arrays[name]
		if !assert.True(t, ok, name) {
			continue
		}
		n := 1
		for _, d := range info.Shape {
			n *= d
		}
		st, err := os.Stat(filepath.Join(dir, info.File))
		require.NoError(t, err, name)
		assert.Equal(t, int64(8*n), st.Size(), name)
	}
	assert.Equal(t, []int{50, 100, 100}, m.Arrays["quad.A"].Shape)
	assert.Equal(t, []int{83, 50}, m.Arrays["lin.train"].Shape, "8334 inputs / 100")
	q, err := problems.NewNonconvexQuadratic(100, 50, quadraticSeed)
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(dir, m.Arrays["quad.A"].File))
	require.NoError(t, err)
	at := func(i, r, c int) float64 {
		return math.Float64frombits(binary.LittleEndian.Uint64(raw[8*((i*100+r)*100+c):]))
	}
	assert.Equal(t, q.A[3].At(7, 11), at(3, 7, 11))
	assert.Equal(t, q.A[49].At(99, 0), at(49, 99, 0))
}

// TestInstancesTableB checks -tableb-ntrain: the (200, 150) instance and
// the inputs examples/nonconvex-quadratic draws at -seed 1 (training at
// seed 101, test at seed 201), unscaled by -scale, and that the flag wants
// -instances.
func TestInstancesTableB(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, cli([]string{"-instances", dir, "-scale", "100", "-tableb-ntrain", "7"}, &stdout, &stderr), stderr.String())
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err)
	var m struct{ Arrays map[string]arrayInfo }
	require.NoError(t, json.Unmarshal(b, &m))
	q, err := problems.NewNonconvexQuadratic(200, 150, 1)
	require.NoError(t, err)
	read := func(name string, shape ...int) []float64 {
		info, ok := m.Arrays[name]
		require.True(t, ok, name)
		require.Equal(t, shape, info.Shape, name)
		raw, err := os.ReadFile(filepath.Join(dir, info.File))
		require.NoError(t, err, name)
		v := make([]float64, len(raw)/8)
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return v
	}
	assert.Equal(t, q.SampleX(7, 101).RawMatrix().Data, read("tableb.train", 7, 150))
	assert.Equal(t, q.SampleX(833, 201).RawMatrix().Data, read("tableb.test", 833, 150))
	a := read("tableb.A", 150, 200, 200)
	assert.Equal(t, q.A[149].At(199, 3), a[(149*200+199)*200+3])
	assert.Equal(t, q.D, read("tableb.D", 150))
	assert.Equal(t, q.Q, read("tableb.Q", 200))

	assert.NotEqual(t, 0, cli([]string{"-tableb-ntrain", "7"}, &stdout, &stderr), "without -instances")
	assert.NotEqual(t, 0, cli([]string{"-instances", dir, "-tableb-ntrain", "-1"}, &stdout, &stderr))
}

// TestTableBTrain checks -tableb-train's flags and runs one epoch on one
// batch with every reference setting switched on: a line per seed, with
// every prediction feasible to the inference tolerance.
func TestTableBTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a (200, 150) model")
	}
	var stdout, stderr bytes.Buffer
	for _, bad := range [][]string{
		{"-tableb-train", "x"},
		{"-tableb-train", "1", "-tableb-set", "nosuch"},
		{"-tableb-train", "1", "-tableb-ntrain", "100"},
		{"-tableb-train", "1", "-tableb-epochs", "0"},
		{"-tableb-train", "1", "-tableb-epochs", "1", "-tableb-set", "warmup"}, // no epoch left to project
		{"-tableb-train", "1", "-tableb-epochs", "5", "-tableb-set", "warmup=5"},
		{"-tableb-train", "1", "-tableb-set", "meandisp=3"},
	} {
		assert.NotEqual(t, 0, cli(bad, &stdout, &stderr), "%v", bad)
	}
	stdout.Reset()
	require.Equal(t, 0, cli([]string{"-tableb-train", "3", "-tableb-ntrain", "200", "-tableb-epochs", "1",
		"-tableb-set", "standardize,always,nores,float32,meandisp"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "standardize, always, nores, float32, meandisp")
	assert.Contains(t, stdout.String(), "[tableb seed 3] test: obj.")
	assert.Contains(t, stdout.String(), "0 of 833 above 1e-3")
	stdout.Reset()
	stderr.Reset()
	require.Equal(t, 0, cli([]string{"-tableb-train", "3", "-tableb-ntrain", "200", "-tableb-epochs", "2",
		"-tableb-set", "warmup=1,nodisp"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "warmup=1, nodisp")
	assert.Contains(t, stderr.String(), "epoch 1/2", "the warm-up epoch")
	assert.Contains(t, stderr.String(), "projected   0%", "the warm-up epoch projects nothing")
	assert.Contains(t, stderr.String(), "projected 100%", "the second epoch does")
	assert.Contains(t, stdout.String(), "0 of 833 above 1e-3")
}

// TestTableBScriptWithoutReference runs reference/tableb.py, where python3
// is installed, without a reference checkout: it must say so and exit with
// status 0, as compare.py does.
func TestTableBScriptWithoutReference(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	cmd := exec.Command(py, filepath.Join("reference", "tableb.py"))
	cmd.Env = append(os.Environ(), "ENFORCE_REFERENCE=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "nothing trained")
}

// TestCompareScriptWithoutReference runs reference/compare.py, where
// python3 is installed, without a reference checkout: it must say so and
// exit with status 0 (CI has neither torch nor the reference).
func TestCompareScriptWithoutReference(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	cmd := exec.Command(py, filepath.Join("reference", "compare.py"))
	cmd.Env = append(os.Environ(), "ENFORCE_REFERENCE=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "nothing measured")
}
