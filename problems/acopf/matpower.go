package acopf

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// rawMatrix is a numeric matrix of a MATPOWER file with the file line on
// which each of its rows ends.
type rawMatrix struct {
	rows  [][]float64
	lines []int
	start int // line of the assignment
}

// rawCase is what a MATPOWER file assigns: scalars and matrices by name
// (without the "mpc." prefix).
type rawCase struct {
	scalars     map[string]float64
	scalarLines map[string]int
	matrices    map[string]*rawMatrix
	// ohms, if not zero, is the line of MATPOWER's conversion of branch
	// R and X from ohms to per unit (see readMATPOWER).
	ohms int
	// loadScale divides the loads Pd, Qd when not zero (the line is
	// loadLine).
	loadScale float64
	loadLine  int
}

// Statements of MATPOWER's distribution cases (case33bw, …) that rescale
// the matrices after they are given, with blanks removed.
const (
	stmtVbase   = "Vbase=mpc.bus(1,BASE_KV)*1e3;"
	stmtSbase   = "Sbase=mpc.baseMVA*1e6;"
	stmtOhms    = "mpc.branch(:,[BR_RBR_X])=mpc.branch(:,[BR_RBR_X])/(Vbase^2/Sbase);"
	stmtLoadsKW = "mpc.bus(:,[PD,QD])=mpc.bus(:,[PD,QD])/"
)

// readMATPOWER parses the assignments of a MATPOWER case file: lines
// `mpc.name = number;` and `mpc.name = [ rows ];` (the "mpc." prefix is
// optional, for version 1 files), with `%` comments, rows ended by `;` or
// a line break, values separated by blanks or commas, and the matrix
// spread over any number of lines. Other statements (the function line,
// strings, cell arrays `{ … }`) are skipped, except the two rescalings of
// MATPOWER's distribution cases, which are recorded (branch impedances in
// ohms converted with Vbase = the first bus's BASE_KV and Sbase = baseMVA,
// and loads given in kW divided by a number); any other assignment to
// part of bus, gen, branch or gencost is an error. name is quoted in
// errors.
func readMATPOWER(r io.Reader, name string) (*rawCase, error) {
	rc := &rawCase{scalars: map[string]float64{}, scalarLines: map[string]int{}, matrices: map[string]*rawMatrix{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	var (
		cur     *rawMatrix // the matrix being read, if any
		curName string
		row     []float64
		braces  int // depth of an open cell array being skipped
	)
	// A matrix this package does not read (dcline, areas, a table with
	// named constants, …) is kept with NaN for what is not a number, and
	// its rows may differ in length.
	endRow := func(line int) error {
		if len(row) == 0 {
			return nil
		}
		if _, read := requiredColumns[curName]; read {
			if n := len(cur.rows); n > 0 && len(cur.rows[0]) != len(row) {
				return fmt.Errorf("%s:%d: %s row %d has %d columns, the first row has %d", name, line, curName, n+1, len(row), len(cur.rows[0]))
			}
		}
		cur.rows = append(cur.rows, row)
		cur.lines = append(cur.lines, line)
		row = nil
		return nil
	}
	line := 0
	for sc.Scan() {
		line++
		text := stripComment(sc.Text())
		if braces > 0 {
			braces += strings.Count(text, "{") - strings.Count(text, "}")
			continue
		}
		if cur == nil {
			stmt := strings.TrimSpace(text)
			if stmt == "" {
				continue
			}
			compact := strings.Join(strings.Fields(stmt), "")
			switch {
			case compact == stmtVbase || compact == stmtSbase:
				continue
			case compact == stmtOhms:
				rc.ohms = line
				continue
			case strings.HasPrefix(compact, stmtLoadsKW) && strings.HasSuffix(compact, ";"):
				d, err := parseValue(strings.TrimSuffix(strings.TrimPrefix(compact, stmtLoadsKW), ";"))
				if err != nil || !(d > 0) || math.IsInf(d, 1) {
					return nil, fmt.Errorf("%s:%d: unsupported statement %q (the loads must be divided by a positive number)", name, line, stmt)
				}
				rc.loadScale, rc.loadLine = d, line
				continue
			}
			lhs, rhs, ok := strings.Cut(stmt, "=")
			if !ok {
				continue
			}
			key := strings.TrimSpace(lhs)
			key = strings.TrimPrefix(key, "mpc.")
			rhs = strings.TrimSpace(rhs)
			if !isIdent(key) {
				// An indexed assignment such as mpc.gen(:, 2) = …
				// would change the data after the matrix: refuse it.
				base, _, _ := strings.Cut(key, "(")
				if _, known := requiredColumns[strings.TrimSpace(base)]; known {
					return nil, fmt.Errorf("%s:%d: unsupported statement %q (only literal matrices are read)", name, line, stmt)
				}
				continue
			}
			switch {
			case strings.HasPrefix(rhs, "{"):
				braces = strings.Count(rhs, "{") - strings.Count(rhs, "}")
				continue
			case strings.HasPrefix(rhs, "["):
				if _, dup := rc.matrices[key]; dup {
					return nil, fmt.Errorf("%s:%d: matrix %s assigned twice", name, line, key)
				}
				cur, curName = &rawMatrix{start: line}, key
				text = rhs[1:]
			case strings.HasPrefix(rhs, "'") || strings.HasPrefix(rhs, "\""):
				continue
			default:
				v := strings.TrimSpace(strings.TrimSuffix(rhs, ";"))
				f, err := parseScalar(v)
				if err != nil {
					if _, known := scalarNames[key]; known {
						return nil, fmt.Errorf("%s:%d: %s = %q: %w", name, line, key, v, err)
					}
					continue
				}
				rc.scalars[key], rc.scalarLines[key] = f, line
				continue
			}
		}
		// Inside a matrix: tokens, row ends and the closing bracket.
		if strings.Contains(text, "=") {
			return nil, fmt.Errorf("%s:%d: matrix %s opened on line %d is not closed by ] before this assignment", name, line, curName, cur.start)
		}
		body, closed := text, false
		if i := strings.IndexByte(text, ']'); i >= 0 {
			body, closed = text[:i], true
			if rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text[i+1:]), ";")); rest != "" {
				return nil, fmt.Errorf("%s:%d: unexpected %q after the end of matrix %s", name, line, rest, curName)
			}
		}
		for k, seg := range strings.Split(body, ";") {
			if k > 0 {
				if err := endRow(line); err != nil {
					return nil, err
				}
			}
			for _, tok := range strings.FieldsFunc(seg, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' }) {
				if tok == "..." {
					continue
				}
				f, err := parseValue(tok)
				if err != nil {
					if _, read := requiredColumns[curName]; read {
						return nil, fmt.Errorf("%s:%d: matrix %s: token %q: %w", name, line, curName, tok, err)
					}
					f = math.NaN()
				}
				row = append(row, f)
			}
		}
		// A line break ends a row too (a row continued with "..." is
		// rare in case files and not supported).
		if err := endRow(line); err != nil {
			return nil, err
		}
		if closed {
			rc.matrices[curName] = cur
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: matrix %s opened on line %d is not closed by ]", name, line, curName, cur.start)
	}
	return rc, nil
}

// scalarNames are the scalar assignments whose value must be a number.
var scalarNames = map[string]struct{}{"baseMVA": {}}

// requiredColumns is the least number of columns of each matrix read
// (MATPOWER's caseformat: bus 13, gen 10, branch 11, gencost 4 + its
// coefficients).
var requiredColumns = map[string]int{"bus": 13, "gen": 10, "branch": 11, "gencost": 4}

// stripComment removes a % comment, ignoring % inside a quoted string.
func stripComment(s string) string {
	inQuote := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			inQuote = !inQuote
		case '%':
			if !inQuote {
				return s[:i]
			}
		}
	}
	return s
}

// isIdent reports whether s is a MATLAB identifier.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// parseScalar parses a scalar assignment's value: a number, or the
// quotient or product of two numbers (case533mt's baseMVA = 50/3).
func parseScalar(s string) (float64, error) {
	for _, op := range []string{"/", "*"} {
		if a, b, ok := strings.Cut(s, op); ok {
			x, err := parseValue(strings.TrimSpace(a))
			if err != nil {
				return 0, err
			}
			y, err := parseValue(strings.TrimSpace(b))
			if err != nil {
				return 0, err
			}
			if op == "/" {
				return x / y, nil
			}
			return x * y, nil
		}
	}
	return parseValue(s)
}

// parseValue parses a number as MATLAB writes it, including Inf, -Inf
// and NaN (which the caller rejects where it matters).
func parseValue(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number")
	}
	return f, nil
}
