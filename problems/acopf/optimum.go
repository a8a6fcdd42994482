package acopf

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
)

// Optimum is a cached optimum of a case's ACOPF: the operating point y
// (laid out as for PowerFlow) with where it came from. The package ships
// the optima of its large PGLib cases (ReferenceOptimum), so that runs
// without IPOPT can start from them.
type Optimum struct {
	// Case is the case's name and CaseSHA256 the SHA-256 (hex) of its
	// uncompressed MATPOWER file.
	Case, CaseSHA256 string
	// Formulation says which ACOPF was solved and Solver by what.
	Formulation, Solver string
	// Objective is the cost at Y in $/h.
	Objective float64
	// Y is the operating point.
	Y []float64
}

// The header keys of an optimum file, in the order WriteTo writes them.
var optimumKeys = []string{"case", "case-sha256", "formulation", "solver", "objective", "ny"}

// WriteTo writes o in the text format ReadOptimum reads: header lines
// "# key: value" (case, case-sha256, formulation, solver, objective, ny)
// and then the ny entries of Y, one per line, each with the 17
// significant digits that give its float64 back exactly.
func (o *Optimum) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	vals := []string{o.Case, o.CaseSHA256, o.Formulation, o.Solver,
		strconv.FormatFloat(o.Objective, 'g', 17, 64), strconv.Itoa(len(o.Y))}
	var n int64
	for i, k := range optimumKeys {
		if strings.ContainsAny(vals[i], "\n\r") {
			return n, fmt.Errorf("acopf: Optimum.WriteTo: %s %q holds a line break", k, vals[i])
		}
		m, _ := fmt.Fprintf(bw, "# %s: %s\n", k, vals[i])
		n += int64(m)
	}
	for _, v := range o.Y {
		m, _ := bw.WriteString(strconv.FormatFloat(v, 'g', 17, 64) + "\n")
		n += int64(m)
	}
	return n, bw.Flush()
}

// ReadOptimum reads an optimum in WriteTo's format. Errors name the line.
func ReadOptimum(r io.Reader) (*Optimum, error) {
	sc := bufio.NewScanner(r)
	o := &Optimum{}
	ny := -1
	line := 0
	for i, k := range optimumKeys {
		line++
		if !sc.Scan() {
			return nil, fmt.Errorf("acopf: ReadOptimum: line %d: missing header %q: %w", line, k, scanErr(sc))
		}
		v, ok := strings.CutPrefix(sc.Text(), "# "+k+": ")
		if !ok {
			return nil, fmt.Errorf("acopf: ReadOptimum: line %d: want header %q, got %q", line, "# "+k+": …", sc.Text())
		}
		switch i {
		case 0:
			o.Case = v
		case 1:
			o.CaseSHA256 = v
		case 2:
			o.Formulation = v
		case 3:
			o.Solver = v
		case 4:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("acopf: ReadOptimum: line %d: objective %q is not a finite number", line, v)
			}
			o.Objective = f
		case 5:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("acopf: ReadOptimum: line %d: ny %q is not a positive integer", line, v)
			}
			ny = n
		}
	}
	o.Y = make([]float64, 0, ny)
	for sc.Scan() {
		line++
		f, err := strconv.ParseFloat(strings.TrimSpace(sc.Text()), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("acopf: ReadOptimum: line %d: %q is not a finite number", line, sc.Text())
		}
		if len(o.Y) == ny {
			return nil, fmt.Errorf("acopf: ReadOptimum: line %d: more than ny = %d entries", line, ny)
		}
		o.Y = append(o.Y, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("acopf: ReadOptimum: after line %d: %w", line, err)
	}
	if len(o.Y) != ny {
		return nil, fmt.Errorf("acopf: ReadOptimum: %d entries, header says ny = %d", len(o.Y), ny)
	}
	return o, nil
}

func scanErr(sc *bufio.Scanner) error {
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// optimumFile is the name in data/ of the cached optimum of a case.
func optimumFile(name string) string { return "optimum_" + name + ".txt.gz" }

// ReferenceOptimum returns the cached reference optimum of a shipped case
// (name as for Load), for the cases that have one: the optimum of
// PGLib-OPF's formulation (Model.NLP with the zero Formulation) that IPOPT
// reached from FlatStart (tol 1e-8, ReferenceOptions), stored in
// data/optimum_<case>.txt.gz (data/README.md gives its provenance). Its
// objective is within 0.1 % of Published and it satisfies the power flow to
// 1e-6 p.u. and the limits to 1e-8 relative (TestReferenceOptimum). It
// returns an error wrapping fs.ErrNotExist for a case without a cached
// optimum.
func ReferenceOptimum(name string) (*Optimum, error) {
	for _, n := range []string{name, "pglib_opf_" + name} {
		f, err := shipped.Open("data/" + optimumFile(n))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("acopf: ReferenceOptimum: %w", err)
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("acopf: ReferenceOptimum: %s: %w", optimumFile(n), err)
		}
		defer z.Close()
		o, err := ReadOptimum(z)
		if err != nil {
			return nil, fmt.Errorf("acopf: ReferenceOptimum: %s: %w", optimumFile(n), err)
		}
		return o, nil
	}
	return nil, fmt.Errorf("acopf: ReferenceOptimum: no cached optimum of %q: %w", name, fs.ErrNotExist)
}

// caseSHA256 returns the SHA-256 (hex) of the uncompressed file of a
// shipped case.
func caseSHA256(name string) (string, error) {
	for _, file := range []string{name + ".m", name + ".m.gz"} {
		f, err := shipped.Open("data/" + file)
		if err != nil {
			continue
		}
		defer f.Close()
		var r io.Reader = f
		if strings.HasSuffix(file, ".gz") {
			z, err := gzip.NewReader(f)
			if err != nil {
				return "", err
			}
			defer z.Close()
			r = z
		}
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	return "", fmt.Errorf("acopf: no shipped case %q", name)
}
