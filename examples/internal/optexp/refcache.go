package optexp

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/solvers"
)

// refResult is what the tables use of one reference solve.
type refResult struct {
	Objective    float64
	MaxViolation float64
	Status       solvers.Status
	Runtime      time.Duration
}

// refFile is the saved reference of one table: the solver, a hash of the
// test inputs it solved, and one result per input.
type refFile struct {
	Solver  string
	Inputs  string
	Results []refResult
}

// inputsHash is an FNV-1a hash of the bits of the first n rows of x, so
// that a saved reference is only reused for the same inputs.
func inputsHash(x *mat.Dense, n int) string {
	h := fnv.New64a()
	var b [8]byte
	for i := 0; i < n; i++ {
		for _, v := range x.RawRowView(i) {
			u := math.Float64bits(v)
			for k := range b {
				b[k] = byte(u >> (8 * k))
			}
			h.Write(b[:])
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// referenceOptima solves the reference NLPs of the first nref rows of
// xTest. With a -resume folder the results are saved there
// (reference.json in the size's folder) and a later run with the same
// solver and the same inputs reads them instead of solving again: at
// (200, 150) on the quadratic benchmark the 833 solves take longer than
// many of the models. A saved file for other inputs or another solver is
// ignored and overwritten.
func referenceOptima(o Options, e Experiment, s Size, inst Instance, xTest *mat.Dense) ([]refResult, error) {
	var path string
	if dir := harness.RunDir(o.Resume, e.Name, s.NO, s.NC, "seed", o.Seed, "reference"); dir != "" {
		path = filepath.Join(dir, "reference.json")
	}
	want := refFile{Solver: reference.name, Inputs: inputsHash(xTest, o.NRef)}
	if path != "" {
		if saved, err := readRef(path); err == nil && saved.Solver == want.Solver && saved.Inputs == want.Inputs && len(saved.Results) == o.NRef {
			return saved.Results, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading the saved reference optima: %w", err)
		}
	}
	ref, err := solvers.SolveAll(reference.method, o.NRef, 0, func(i int) (solvers.NLP, []float64, error) {
		p := inst.NLP(xTest.RawRowView(i))
		y0, err := solvers.LeastNormStart(p)
		return p, y0, err
	})
	if err != nil {
		return nil, err
	}
	want.Results = make([]refResult, len(ref))
	for i, r := range ref {
		want.Results[i] = refResult{Objective: r.Objective, MaxViolation: r.MaxViolation, Status: r.Status, Runtime: r.Runtime}
	}
	if path != "" {
		if err := writeRef(path, want); err != nil {
			return nil, fmt.Errorf("saving the reference optima: %w", err)
		}
	}
	return want.Results, nil
}

func readRef(path string) (refFile, error) {
	var f refFile
	b, err := os.ReadFile(path)
	if err != nil {
		return f, err
	}
	return f, json.Unmarshal(b, &f)
}

// writeRef writes f to path through a temporary file and a rename, so
// that an interrupted write leaves no half file behind.
func writeRef(path string, f refFile) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
