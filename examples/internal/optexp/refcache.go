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
// test inputs it solved, one result per input, and the SHA-256 of the
// rest (checksum). The checksum sits beside the other fields, not around
// them, so a binary older than it still reads the file (the committed
// (200, 150) run folder is continued with one, see its README); a file
// written before it (version 1) has none, is read as before and rewritten
// with one.
type refFile struct {
	Solver  string
	Inputs  string
	Results []refResult
	SHA256  string `json:",omitempty"`
}

// checksum returns the hex SHA-256 (ckptfile.Checksum) of the JSON of f
// without its SHA256 field: the bytes a version 1 file holds.
func (f refFile) checksum() (string, error) {
	raw, err := json.Marshal(refFile{Solver: f.Solver, Inputs: f.Inputs, Results: f.Results})
	if err != nil {
		return "", err
	}
	return ckptfile.Checksum(raw)
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
// xTest, saying on progress whether it solves them or reads them. With a
// -resume folder the results are saved there (reference.json in the
// size's folder, with its checksum) and a later run with the same solver
// and the same inputs reads them instead of solving again: at (200, 150)
// on the quadratic benchmark the 833 solves take longer than many of the
// models. A saved file for other inputs or another solver is ignored and
// overwritten; a damaged or truncated one is an error that names it.
func referenceOptima(progress io.Writer, o Options, e Experiment, s Size, inst Instance, xTest *mat.Dense) ([]refResult, error) {
	var path string
	if dir := harness.RunDir(o.Resume, e.Name, s.NO, s.NC, "seed", o.Seed, "reference"); dir != "" {
		path = filepath.Join(dir, "reference.json")
	}
	want := refFile{Solver: reference.name, Inputs: inputsHash(xTest, o.NRef)}
	why := ""
	if path != "" {
		saved, legacy, err := readRef(path)
		switch {
		case err == nil && saved.Solver == want.Solver && saved.Inputs == want.Inputs && len(saved.Results) == o.NRef:
			fmt.Fprintf(progress, "[%d/%d] reference: reading %d optima (%s) from %s\n", s.NO, s.NC, o.NRef, saved.Solver, path)
			if legacy {
				if err := writeRef(path, saved); err != nil {
					return nil, fmt.Errorf("adding a checksum to the saved reference optima %s: %w", path, err)
				}
				fmt.Fprintf(progress, "[%d/%d] reference: %s had no checksum (written by an older version): rewritten with one\n", s.NO, s.NC, path)
			}
			return saved.Results, nil
		case err == nil:
			why = fmt.Sprintf(" (%s holds other inputs or another solver's)", path)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
	}
	fmt.Fprintf(progress, "[%d/%d] reference: solving %d instances with %s%s\n", s.NO, s.NC, o.NRef, reference.name, why)
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
			return nil, fmt.Errorf("saving the reference optima to %s: %w", path, err)
		}
	}
	return want.Results, nil
}

// readRef reads the saved reference at path and checks its checksum;
// legacy reports a version 1 file, which has none. An error other than a
// missing file names the file and says how to start again.
func readRef(path string) (f refFile, legacy bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return f, false, err
		}
		return f, false, fmt.Errorf("reading the saved reference optima: %w", err)
	}
	damaged := func(err error) error {
		return fmt.Errorf("the saved reference optima %s are damaged or truncated (%w); remove the file to solve them again", path, err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, false, damaged(err)
	}
	sum, err := f.checksum()
	if err != nil {
		return f, false, damaged(err)
	}
	if f.SHA256 == "" {
		return f, true, nil
	}
	if sum != f.SHA256 {
		return f, false, damaged(fmt.Errorf("its SHA-256 is %s, the file records %s", sum, f.SHA256))
	}
	return f, false, nil
}

// writeRef writes f to path with its checksum, atomically
// (ckptfile.WriteAtomic, as the model checkpoints are written).
func writeRef(path string, f refFile) error {
	sum, err := f.checksum()
	if err != nil {
		return err
	}
	f.SHA256 = sum
	return ckptfile.WriteAtomic(path, func(w io.Writer) error { return json.NewEncoder(w).Encode(f) })
}
