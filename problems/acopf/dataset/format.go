package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"
)

// FormatVersion names the file format (the package documentation) in
// every header.
const FormatVersion = "enforce-acopf-dataset/1"

// Spec is what a data set is: the header of its files. Two shards belong
// to the same data set exactly when their Specs are equal.
type Spec struct {
	// Case is the case's name (acopf.Case.Name) and CaseSHA256 the
	// SHA-256 (hex) of its uncompressed MATPOWER file (CaseSHA256).
	Case, CaseSHA256 string
	// Formulation names the ACOPF the labels solve (FormulationName).
	Formulation string
	// Seed and the sample index fix each sample's loads (LoadModel.Draw).
	Seed uint64
	// Count is the number of samples, indices 0, …, Count−1.
	Count int
	// Load is the law of the loads.
	Load LoadModel
	// Solver describes the solver, its options and starts, and Tol is
	// its tolerance.
	Solver string
	Tol    float64
	// NX and NY are the lengths of x (the loads) and y (the label).
	NX, NY int
}

// headerKeys are the header's keys, in order.
var headerKeys = []string{"format", "case", "case-sha256", "formulation", "seed", "count", "load-model", "solver", "tol", "nx", "ny", "shard"}

// Validate returns an error for a Spec that no file can hold: an empty
// or multi-line text field, Count or NX or NY < 1, odd NX, a Tol that is
// not positive and finite, an invalid load model.
func (s Spec) Validate() error {
	for _, f := range [][2]string{{"case", s.Case}, {"case-sha256", s.CaseSHA256}, {"formulation", s.Formulation}, {"solver", s.Solver}} {
		if f[1] == "" || strings.ContainsAny(f[1], "\n\r") {
			return fmt.Errorf("dataset: Spec: %s %q must be one non-empty line", f[0], f[1])
		}
	}
	if s.Count < 1 || s.NX < 1 || s.NY < 1 || s.NX%2 != 0 {
		return fmt.Errorf("dataset: Spec: count %d, nx %d, ny %d: want positive, nx even", s.Count, s.NX, s.NY)
	}
	if !(s.Tol > 0) || math.IsInf(s.Tol, 1) {
		return fmt.Errorf("dataset: Spec: tol %v, want positive and finite", s.Tol)
	}
	return s.Load.Validate()
}

// values returns the header values of a file of shard sh of s.
func (s Spec) values(sh Shard) []string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return []string{FormatVersion, s.Case, s.CaseSHA256, s.Formulation, strconv.FormatUint(s.Seed, 10),
		strconv.Itoa(s.Count), s.Load.String(), s.Solver, g(s.Tol), strconv.Itoa(s.NX), strconv.Itoa(s.NY), sh.String()}
}

// header returns the header of a file of shard sh of s.
func (s Spec) header(sh Shard) []byte {
	var b []byte
	for i, v := range s.values(sh) {
		b = append(b, "# "+headerKeys[i]+": "+v+"\n"...)
	}
	return b
}

// diff names the first header key in which a and b differ, or "".
func diff(a, b Spec) string {
	va, vb := a.values(Shard{0, 1}), b.values(Shard{0, 1})
	for i := range va {
		if va[i] != vb[i] {
			return fmt.Sprintf("%s %q against %q", headerKeys[i], va[i], vb[i])
		}
	}
	return ""
}

// readHeader reads a file's header from br and returns its Spec, its
// shard and the header's length in bytes.
func readHeader(br *bufio.Reader) (Spec, Shard, int64, error) {
	var s Spec
	var sh Shard
	var n int64
	for i, k := range headerKeys {
		line, err := br.ReadString('\n')
		n += int64(len(line))
		if err != nil {
			return s, sh, n, fmt.Errorf("header line %d (%s): %w", i+1, k, noEOF(err))
		}
		v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "# "+k+": ")
		if !ok {
			return s, sh, n, fmt.Errorf("header line %d: want %q, got %q", i+1, "# "+k+": …", strings.TrimSuffix(line, "\n"))
		}
		bad := func(e error) error { return fmt.Errorf("header line %d: %s %q: %w", i+1, k, v, e) }
		switch k {
		case "format":
			if v != FormatVersion {
				return s, sh, n, bad(fmt.Errorf("want %s", FormatVersion))
			}
		case "case":
			s.Case = v
		case "case-sha256":
			s.CaseSHA256 = v
		case "formulation":
			s.Formulation = v
		case "seed":
			if s.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
				return s, sh, n, bad(err)
			}
		case "count":
			if s.Count, err = strconv.Atoi(v); err != nil {
				return s, sh, n, bad(err)
			}
		case "load-model":
			if s.Load, err = ParseLoadModel(v); err != nil {
				return s, sh, n, bad(err)
			}
		case "solver":
			s.Solver = v
		case "tol":
			if s.Tol, err = strconv.ParseFloat(v, 64); err != nil {
				return s, sh, n, bad(err)
			}
		case "nx":
			if s.NX, err = strconv.Atoi(v); err != nil {
				return s, sh, n, bad(err)
			}
		case "ny":
			if s.NY, err = strconv.Atoi(v); err != nil {
				return s, sh, n, bad(err)
			}
		case "shard":
			if sh, err = ParseShard(v); err != nil {
				return s, sh, n, bad(err)
			}
		}
	}
	if err := s.Validate(); err != nil {
		return s, sh, n, err
	}
	return s, sh, n, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Sample is one sample of a data set.
type Sample struct {
	// Index is the sample's index.
	Index int
	// X is the loads (len NX) and Y the label (len NY, nil when the
	// solver did not solve the sample).
	X, Y []float64
	// Objective is the generation cost at Y in $/h (0 when Y is nil).
	Objective float64
	// Failure is the reason why Y is nil (ErrNoSolution's message), or "".
	Failure string
}

// castagnoli is the CRC-32C table of the lines' checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendLine appends s's line (with its newline) to dst.
func appendLine(dst []byte, s *Sample) []byte {
	start := len(dst)
	dst = strconv.AppendInt(dst, int64(s.Index), 10)
	if s.Y == nil {
		dst = append(dst, "\tfailed\t"...)
		dst = append(dst, oneLine(s.Failure)...)
	} else {
		dst = append(dst, "\tok\t"...)
		dst = strconv.AppendFloat(dst, s.Objective, 'g', -1, 64)
		for _, v := range [][]float64{s.X, s.Y} {
			dst = append(dst, '\t')
			for k, f := range v {
				if k > 0 {
					dst = append(dst, ',')
				}
				dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
			}
		}
	}
	sum := crc32.Checksum(dst[start:], castagnoli)
	dst = append(dst, '\t')
	dst = append(dst, fmt.Sprintf("%08x", sum)...)
	return append(dst, '\n')
}

// oneLine replaces tabs and line breaks by spaces (a failure's reason is
// one field).
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// parseLine parses and checks one sample line of a file of spec (without
// its newline).
func parseLine(line string, spec Spec) (Sample, error) {
	var s Sample
	cut := strings.LastIndexByte(line, '\t')
	if cut < 0 {
		return s, errors.New("no checksum field")
	}
	want := fmt.Sprintf("%08x", crc32.Checksum([]byte(line[:cut]), castagnoli))
	if line[cut+1:] != want {
		return s, fmt.Errorf("checksum %q, the line's bytes give %q (the line is damaged)", line[cut+1:], want)
	}
	f := strings.Split(line[:cut], "\t")
	idx, err := strconv.Atoi(f[0])
	if err != nil || idx < 0 || idx >= spec.Count || strconv.Itoa(idx) != f[0] {
		return s, fmt.Errorf("index %q is not one of 0, …, %d", f[0], spec.Count-1)
	}
	s.Index = idx
	switch {
	case len(f) == 3 && f[1] == "failed":
		s.Failure = f[2]
		if s.Failure == "" {
			return s, errors.New("a failed sample without a reason")
		}
		return s, nil
	case len(f) == 5 && f[1] == "ok":
	default:
		return s, errors.New("want the fields: index, ok, objective, x, y or index, failed, reason")
	}
	if s.Objective, err = parseFinite(f[2]); err != nil {
		return s, fmt.Errorf("objective: %w", err)
	}
	if s.X, err = parseVector(f[3], spec.NX); err != nil {
		return s, fmt.Errorf("x: %w", err)
	}
	if s.Y, err = parseVector(f[4], spec.NY); err != nil {
		return s, fmt.Errorf("y: %w", err)
	}
	return s, nil
}

func parseFinite(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s is not finite", s)
	}
	return v, nil
}

func parseVector(s string, n int) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("%d entries, want %d", len(parts), n)
	}
	v := make([]float64, n)
	for k, p := range parts {
		var err error
		if v[k], err = parseFinite(p); err != nil {
			return nil, fmt.Errorf("entry %d: %w", k+1, err)
		}
	}
	return v, nil
}
