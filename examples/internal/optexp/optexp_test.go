package optexp

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/dc3"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/internal/ckptfile"
	"github.com/enforce-nn/enforce/problems"
	"github.com/enforce-nn/enforce/solvers"
	"github.com/enforce-nn/enforce/train"
)

func TestFlags(t *testing.T) {
	var o Options
	f := Flags(Experiment{Name: "linear", DC3: true}, &o)
	require.NoError(t, f.Parse([]string{"-quick", "-epochs", "5", "-float32"}))
	require.NoError(t, o.finish())
	assert.Equal(t, 5, o.Epochs, "an explicit flag keeps its value")
	assert.Equal(t, 400, o.NTrain)
	assert.Equal(t, "0", o.Sizes)
	assert.Equal(t, []float64{1}, o.Soft)
	assert.True(t, o.DC3, "the experiment's default")
	assert.Equal(t, enforce.Float32, o.Precision)
	assert.Equal(t, "seed", o.DC3Partial, "no DC3 generator: per seed")
	f = Flags(Experiment{Name: "linear", DC3: true, DC3Generator: true}, &o)
	require.NoError(t, f.Parse(nil))
	require.NoError(t, o.finish())
	assert.Equal(t, "dc3-noineq", o.DC3Partial, "DC3's generator: DC3's choice on it")

	f = Flags(Experiment{Name: "quadratic"}, &o)
	require.NoError(t, f.Parse(nil))
	require.NoError(t, o.finish())
	assert.Equal(t, []float64{5, 1, 0.1}, o.Soft)
	assert.False(t, o.DC3)
	assert.Equal(t, 1000, o.Epochs)
	assert.Equal(t, 2, o.Layers, "the paper's two hidden layers")
	assert.Equal(t, []int{50, 200, 200, 100}, hiddenSizes(50, o.Width, o.Layers, 100))
	assert.Equal(t, []int{50, 200, 200, 200, 100}, hiddenSizes(50, 200, 3, 100), "-layers 3: the reference's code")
	assert.ErrorContains(t, Run(io.Discard, io.Discard, Experiment{Name: "linear"}, Options{Seeds: 1, NTest: 1, NTrain: 1, Batch: 1, Width: 8}), "-layers")

	// -warmup: within -epochs.
	f = Flags(Experiment{Name: "quadratic"}, &o)
	require.NoError(t, f.Parse([]string{"-epochs", "5", "-warmup", "4"}))
	require.NoError(t, o.finish())
	assert.Equal(t, 4, o.Warmup)
	for _, bad := range []string{"5", "-1"} {
		f = Flags(Experiment{Name: "quadratic"}, &o)
		require.NoError(t, f.Parse([]string{"-epochs", "5", "-warmup", bad}))
		assert.ErrorContains(t, o.finish(), "bad -warmup "+bad)
	}

	f = Flags(Experiment{Name: "quadratic"}, &o)
	require.NoError(t, f.Parse([]string{"-soft", "1,x"}))
	assert.ErrorContains(t, o.finish(), "bad -soft")

	// -softpenalty: the default keeps the tables' form and row names.
	f = Flags(Experiment{Name: "quadratic"}, &o)
	require.NoError(t, f.Parse(nil))
	require.NoError(t, o.finish())
	assert.Equal(t, train.SquaredNorm, o.SoftPenalty)
	assert.Equal(t, "Soft (λ_C=5)", softName(o.SoftPenalty, 5))
	for arg, want := range map[string]train.Penalty{"norm": train.Norm, "squarednormmeanabs": train.SquaredNormMeanAbs} {
		f = Flags(Experiment{Name: "quadratic"}, &o)
		require.NoError(t, f.Parse([]string{"-softpenalty", arg}))
		require.NoError(t, o.finish())
		assert.Equal(t, want, o.SoftPenalty)
	}
	assert.Equal(t, "Soft SquaredNormMeanAbs (λ_C=0.1)", softName(train.SquaredNormMeanAbs, 0.1))
	assert.Equal(t, "Soft (λ_C=0.1)", paperKey(softName(train.SquaredNormMeanAbs, 0.1)), "beside the paper's Soft row")
	assert.Equal(t, "Soft (λ_C=5)", paperKey("Soft (λ_C=5)"))
	assert.Equal(t, "ENFORCE", paperKey("ENFORCE"))
	f = Flags(Experiment{Name: "quadratic"}, &o)
	require.NoError(t, f.Parse([]string{"-softpenalty", "squaredhinge"}))
	assert.ErrorContains(t, o.finish(), `bad -softpenalty "squaredhinge"`)
}

// TestNewDC3Resumes checks what -resume promises for DC3: the model
// checkpoints into its folder, a finished run is not trained again and
// predicts the same, a checkpoint of another configuration is an error,
// and without -resume nothing is written.
func TestNewDC3Resumes(t *testing.T) {
	p, err := problems.NewNonconvexLinear(12, 4, 1)
	require.NoError(t, err)
	inst := Instance{
		DC3:       func(cfg dc3.Config) (*dc3.Model, error) { return dc3.New(p, cfg) },
		DC3Resume: func(dir string, cfg dc3.Config) (*dc3.Model, error) { return dc3.Resume(dir, p, cfg) },
	}
	x := p.SampleX(100, 2)
	cfg := dc3.Config{Hidden: []int{8, 8}, LearnRate: 1e-3, BatchSize: 50, Epochs: 3, Seed: 2, Quiet: true}
	run := func(cfg dc3.Config, dir string) ([]dc3.Epoch, *mat.Dense, error) {
		m, err := newDC3(inst, cfg, dir)
		if err != nil {
			return nil, nil, err
		}
		defer m.Close()
		hist, err := m.Fit(x)
		if err != nil {
			return nil, nil, err
		}
		y, err := m.Predict(x)
		return hist, y, err
	}
	plainHist, plainY, err := run(cfg, "")
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "DC3-seed2")
	hist, y, err := run(cfg, dir)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, dc3.CheckpointFile))
	require.NoError(t, err, "a checkpoint was written")
	assert.Equal(t, plainHist, hist, "checkpointing does not change training")
	assert.True(t, mat.Equal(plainY, y))

	again, y2, err := run(cfg, dir)
	require.NoError(t, err)
	assert.Equal(t, hist, again, "a finished run is returned")
	assert.True(t, mat.Equal(y, y2))

	other := cfg
	other.LearnRate = 2e-3
	_, _, err = run(other, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another Config")

	_, err = newDC3(Instance{DC3: inst.DC3}, cfg, dir)
	assert.Error(t, err, "an instance that cannot resume DC3")
}

// countingMethod counts the solves of the SQP method it wraps.
type countingMethod struct{ n *int }

func (c countingMethod) Solve(p solvers.NLP, init []float64) (*solvers.Result, error) {
	*c.n++
	return solvers.SQP{}.Solve(p, init)
}

// TestReferenceOptimaSaved checks what -resume promises for the reference
// optima: they are saved in the folder, a second run with the same inputs
// and solver reads them (no solve) and gets the same numbers, other
// inputs or another solver solve again, and without -resume nothing is
// written.
func TestReferenceOptimaSaved(t *testing.T) {
	p, err := problems.NewNonconvexLinear(12, 4, 1)
	require.NoError(t, err)
	inst := Instance{NLP: func(x []float64) solvers.NLP { return solvers.Linear(p, x) }}
	x := p.SampleX(5, 3)
	var solves int
	old := reference
	t.Cleanup(func() { reference = old })
	reference.method = countingMethod{&solves}

	dir := t.TempDir()
	e, s := Experiment{Name: "linear"}, Size{12, 4}
	o := Options{NRef: 4, Resume: dir, Seed: 1}
	var log strings.Builder
	first, err := referenceOptima(&log, o, e, s, inst, x)
	require.NoError(t, err)
	assert.Equal(t, 4, solves)
	assert.Equal(t, "[12/4] reference: solving 4 instances with "+reference.name+"\n", log.String())
	require.Len(t, first, 4)
	for _, r := range first {
		assert.Equal(t, solvers.Success, r.Status)
	}
	path := filepath.Join(harness.RunDir(dir, "linear", 12, 4, "seed", 1, "reference"), "reference.json")
	log.Reset()
	again, err := referenceOptima(&log, o, e, s, inst, x)
	require.NoError(t, err)
	assert.Equal(t, 4, solves, "read from the folder, not solved again")
	assert.Equal(t, first, again)
	assert.Equal(t, "[12/4] reference: reading 4 optima ("+reference.name+") from "+path+"\n", log.String())

	x.Set(0, 0, x.At(0, 0)+1)
	_, err = referenceOptima(&log, o, e, s, inst, x)
	require.NoError(t, err)
	assert.Equal(t, 8, solves, "other inputs: solved again")

	reference.name = "another solver"
	_, err = referenceOptima(&log, o, e, s, inst, x)
	require.NoError(t, err)
	assert.Equal(t, 12, solves, "another solver: solved again")

	o.Resume = ""
	empty := t.TempDir()
	_, err = referenceOptima(&log, o, e, s, inst, x)
	require.NoError(t, err)
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, entries)
	assert.Equal(t, 16, solves)

	o.Resume = dir
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o644))
	_, err = referenceOptima(&log, o, e, s, inst, x)
	assert.ErrorContains(t, err, "saved reference optima "+path+" are damaged or truncated", "a damaged file is an error, not silently replaced")
}

// TestRefFileChecksum checks the saved reference's SHA-256: a truncated
// file and a changed digit are errors that name the file, and a file
// written before the checksum (version 1) is read with the same results
// and rewritten with it, which an older binary still reads (the fields it
// knows are unchanged).
func TestRefFileChecksum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reference.json")
	f := refFile{Solver: "IPOPT", Inputs: "93d768697ed506ab", Results: []refResult{
		{Objective: -31.021593295810153, MaxViolation: 1.5937189346004743e-9, Status: solvers.Success, Runtime: 718709085},
		{Objective: -36.17784663755549, MaxViolation: 8.100187187665142e-13, Status: solvers.Success, Runtime: 661128992},
	}}
	require.NoError(t, writeRef(path, f))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"SHA256":"`)
	got, legacy, err := readRef(path)
	require.NoError(t, err)
	assert.False(t, legacy)
	assert.Equal(t, f.Results, got.Results)

	var old struct {
		Solver, Inputs string
		Results        []refResult
	}
	require.NoError(t, json.Unmarshal(data, &old), "an older binary reads it")
	assert.Equal(t, f.Results, old.Results)

	for name, bad := range map[string][]byte{
		"truncated":      data[:len(data)/2],
		"changed digit":  []byte(strings.Replace(string(data), "-31.02", "-31.03", 1)),
		"changed status": []byte(strings.Replace(string(data), `"Status":0`, `"Status":1`, 1)),
	} {
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		_, _, err := readRef(path)
		assert.ErrorContains(t, err, path, name)
		assert.ErrorContains(t, err, "damaged or truncated", name)
	}

	// A version 1 file: the same JSON without the checksum.
	v1, err := json.Marshal(old)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(v1, '\n'), 0o644))
	got, legacy, err = readRef(path)
	require.NoError(t, err)
	assert.True(t, legacy)
	assert.Equal(t, f.Results, got.Results)
	sum, err := f.checksum()
	require.NoError(t, err)
	want, err := ckptfile.Checksum(v1)
	require.NoError(t, err)
	assert.Equal(t, want, sum, "the checksum is that of the version 1 bytes")
}

// TestReferenceOptimaMigrates checks that referenceOptima reads a version
// 1 file without solving, says so, and rewrites it with its checksum.
func TestReferenceOptimaMigrates(t *testing.T) {
	p, err := problems.NewNonconvexLinear(12, 4, 1)
	require.NoError(t, err)
	inst := Instance{NLP: func(x []float64) solvers.NLP { return solvers.Linear(p, x) }}
	x := p.SampleX(3, 3)
	var solves int
	old := reference
	t.Cleanup(func() { reference = old })
	reference.method = countingMethod{&solves}
	dir := t.TempDir()
	e, s := Experiment{Name: "linear"}, Size{12, 4}
	o := Options{NRef: 3, Resume: dir, Seed: 1}
	path := filepath.Join(harness.RunDir(dir, "linear", 12, 4, "seed", 1, "reference"), "reference.json")
	results := []refResult{{Objective: -1}, {Objective: -2}, {Objective: -3}}
	v1, err := json.Marshal(refFile{Solver: reference.name, Inputs: inputsHash(x, 3), Results: results})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, v1, 0o644))
	var log strings.Builder
	got, err := referenceOptima(&log, o, e, s, inst, x)
	require.NoError(t, err)
	assert.Equal(t, 0, solves)
	assert.Equal(t, results, got)
	assert.Contains(t, log.String(), "reading 3 optima")
	assert.Contains(t, log.String(), "no checksum")
	assert.NotContains(t, log.String(), "solving")
	_, legacy, err := readRef(path)
	require.NoError(t, err)
	assert.False(t, legacy, "rewritten with its checksum")
}

// TestRefFileNonFinite checks that a saved reference keeps non-finite
// results (a failed solve) and still reads files of plain numbers.
func TestRefFileNonFinite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reference.json")
	f := refFile{Solver: "s", Inputs: "h", Results: []refResult{
		{Objective: jsonFloat(math.NaN()), MaxViolation: jsonFloat(math.Inf(1)), Status: solvers.NumericalFailure},
		{Objective: -1.5, MaxViolation: 1e-9},
	}}
	require.NoError(t, writeRef(path, f))
	got, _, err := readRef(path)
	require.NoError(t, err)
	require.Len(t, got.Results, 2)
	assert.True(t, math.IsNaN(float64(got.Results[0].Objective)))
	assert.True(t, math.IsInf(float64(got.Results[0].MaxViolation), 1))
	assert.Equal(t, f.Results[1], got.Results[1])
	require.NoError(t, os.WriteFile(path, []byte(`{"Solver":"s","Inputs":"h","Results":[{"Objective":-31.5,"MaxViolation":9e-9,"Status":0,"Runtime":5}]}`), 0o644))
	got, _, err = readRef(path)
	require.NoError(t, err)
	assert.Equal(t, jsonFloat(-31.5), got.Results[0].Objective)
}

// TestWarmStart checks -warmstart's report: solved from the reference's
// own optima, the local optima are those optima (none worse); from a start
// that is not feasible (zero) the solves still converge and are reported;
// a reference optimum far below the local one counts as worse; a count
// beyond -nref, and -warmstart without an ENFORCE model, are refused by
// the flags.
func TestWarmStart(t *testing.T) {
	p, err := problems.NewNonconvexLinear(12, 4, 1)
	require.NoError(t, err)
	inst := Instance{Objective: p.SineQuadratic, NLP: func(x []float64) solvers.NLP { return solvers.Linear(p, x) }}
	x := p.SampleX(3, 3)
	y := mat.NewDense(3, 12, nil)
	refObj := make([]float64, 3)
	for i := range 3 {
		nlp := inst.NLP(x.RawRowView(i))
		y0, err := solvers.LeastNormStart(nlp)
		require.NoError(t, err)
		r, err := solvers.SQP{}.Solve(nlp, y0)
		require.NoError(t, err)
		require.Equal(t, solvers.Success, r.Status)
		y.SetRow(i, r.Y)
		refObj[i] = r.Objective
	}
	var log strings.Builder
	require.NoError(t, warmStart(&log, inst, 3, x, y, refObj))
	assert.Contains(t, log.String(), "first 3 test inputs")
	assert.Contains(t, log.String(), "on the 3 that converged; 0 of them worse")

	log.Reset()
	require.NoError(t, warmStart(&log, inst, 3, x, mat.NewDense(3, 12, nil), refObj))
	assert.Contains(t, log.String(), "predictions 0;")
	assert.Contains(t, log.String(), "on the 3 that converged")

	// A reference optimum set far below what any start reaches: counted worse.
	refObj[1] -= 100
	log.Reset()
	require.NoError(t, warmStart(&log, inst, 3, x, y, refObj))
	assert.Contains(t, log.String(), "1 of them worse")

	var o Options
	f := Flags(Experiment{Name: "linear"}, &o)
	require.NoError(t, f.Parse([]string{"-nref", "5", "-warmstart", "6"}))
	assert.ErrorContains(t, o.finish(), "bad -warmstart 6")
	require.NoError(t, f.Parse([]string{"-nref", "5", "-warmstart", "5"}))
	assert.NoError(t, o.finish())
	for _, only := range []string{"-dc3-only", "-soft-only"} {
		f := Flags(Experiment{Name: "linear"}, &o)
		require.NoError(t, f.Parse([]string{"-nref", "5", "-warmstart", "5", only}))
		assert.ErrorContains(t, o.finish(), "-warmstart starts from ENFORCE's predictions", only)
	}
}
