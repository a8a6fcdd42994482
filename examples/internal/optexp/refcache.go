package optexp

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/internal/ckptfile"
	"github.com/enforce-nn/enforce/solvers"
)

// refResult is what the tables use of one reference solve.
type refResult struct {
	Objective    jsonFloat
	MaxViolation jsonFloat
	Status       solvers.Status
	Runtime      time.Duration
}

// jsonFloat is a float64 that JSON holds as a number when it is finite
// and as the string "NaN", "+Inf" or "-Inf" otherwise (a failed solve may
// end at a non-finite objective, which encoding/json refuses to write).
type jsonFloat float64

// MarshalJSON implements json.Marshaler.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	var v float64
	if err := json.Unmarshal(b, &v); err == nil {
		*f = jsonFloat(v)
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return err
	}
	v, err := strconv.ParseFloat(str, 64)
	*f = jsonFloat(v)
	return err
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
		want.Results[i] = refResult{Objective: jsonFloat(r.Objective), MaxViolation: jsonFloat(r.MaxViolation), Status: r.Status, Runtime: r.Runtime}
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

// writeRef writes f to path atomically (ckptfile.WriteAtomic, as the
// model checkpoints are written).
func writeRef(path string, f refFile) error {
	return ckptfile.WriteAtomic(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(f) })
}
