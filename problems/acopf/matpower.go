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
}

// readMATPOWER runs a MATPOWER case file as the small part of MATLAB that
// case files use, and returns what it assigns. It reads
//
//   - matrices `mpc.name = [ rows ];` (the "mpc." prefix is optional, for
//     version 1 files), rows ended by `;` or a line break, elements
//     separated by blanks or commas as MATLAB separates them (`1 -2` is
//     two elements, `1 - 2` one), each a number or an expression;
//   - scalars `mpc.name = expression;` and variables `name = expression;`
//     (a variable whose expression is not supported is an error where it
//     is used);
//   - indexed assignments `mpc.name(rows, columns) = expression;` to a
//     matrix read before them, with MATPOWER's named columns (PD, BR_R,
//     PMIN, … of idx_bus, idx_gen, idx_brch and idx_cost), `:`, `end`,
//     ranges a:b and a:s:b, lists [a b] and logical masks as indices;
//   - `if`, `elseif`, `else` and `end`, running the branch whose
//     condition holds (case8387pegase's `if fixed … end` with fixed = 0);
//
// where an expression is built of numbers, Inf, NaN, pi, variables, the
// named columns, `mpc.baseMVA`, selections `mpc.name(rows, columns)`, the
// operators + - * / ^ .* ./ .^ (element by element, matrix products
// excepted), comparisons, ~ & | && ||, and the functions sqrt, abs, exp,
// log, log10, sin, cos, tan, asin, acos, atan, sind, cosd, round, floor,
// ceil, fix, isinf, isnan and find. Statements may be continued with
// `...` and separated by `;` or `,`; comments start with `%`; strings,
// cell arrays `{ … }`, other statements without `=` (define_constants,
// …) and other assignments to variables are skipped. It is an error, naming
// the line, when a statement that could change the data is not
// supported: an indexed assignment or an assignment to mpc that it
// cannot run, a loop (for, while), switch or try in code that runs, a
// division by zero, or a NaN written into a matrix. name is quoted in
// errors.
func readMATPOWER(r io.Reader, name string) (*rawCase, error) {
	rd := &reader{
		name: name,
		rc:   &rawCase{scalars: map[string]float64{}, scalarLines: map[string]int{}, matrices: map[string]*rawMatrix{}},
		vars: map[string]value{}, bad: map[string]int{},
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	for sc.Scan() {
		rd.line++
		if err := rd.feed(stripComment(sc.Text())); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	switch {
	case rd.cur != nil:
		return nil, fmt.Errorf("%s:%d: matrix %s opened on line %d is not closed by ]", name, rd.line, rd.curName, rd.cur.start)
	case rd.pending != "":
		return nil, fmt.Errorf("%s:%d: the statement continued with ... on line %d does not end", name, rd.line, rd.pendingLine)
	case len(rd.blocks) > 0:
		b := rd.blocks[len(rd.blocks)-1]
		return nil, fmt.Errorf("%s:%d: %s opened on line %d is not closed by end", name, rd.line, b.kind, b.line)
	}
	return rd.rc, nil
}

// scalarNames are the scalar assignments whose value must be a number.
var scalarNames = map[string]struct{}{"baseMVA": {}}

// requiredColumns is the least number of columns of each matrix read
// (MATPOWER's caseformat: bus 13, gen 10, branch 11, gencost 4 + its
// coefficients).
var requiredColumns = map[string]int{"bus": 13, "gen": 10, "branch": 11, "gencost": 4}

// namedColumns are MATPOWER's named constants (idx_bus, idx_gen,
// idx_brch, idx_cost and the bus types), which case files use as column
// indices.
var namedColumns = map[string]float64{
	// idx_bus
	"PQ": 1, "PV": 2, "REF": 3, "NONE": 4,
	"BUS_I": 1, "BUS_TYPE": 2, "PD": 3, "QD": 4, "GS": 5, "BS": 6, "BUS_AREA": 7, "VM": 8, "VA": 9,
	"BASE_KV": 10, "ZONE": 11, "VMAX": 12, "VMIN": 13, "LAM_P": 14, "LAM_Q": 15, "MU_VMAX": 16, "MU_VMIN": 17,
	// idx_gen
	"GEN_BUS": 1, "PG": 2, "QG": 3, "QMAX": 4, "QMIN": 5, "VG": 6, "MBASE": 7, "GEN_STATUS": 8, "PMAX": 9,
	"PMIN": 10, "PC1": 11, "PC2": 12, "QC1MIN": 13, "QC1MAX": 14, "QC2MIN": 15, "QC2MAX": 16,
	"RAMP_AGC": 17, "RAMP_10": 18, "RAMP_30": 19, "RAMP_Q": 20, "APF": 21,
	"MU_PMAX": 22, "MU_PMIN": 23, "MU_QMAX": 24, "MU_QMIN": 25,
	// idx_brch
	"F_BUS": 1, "T_BUS": 2, "BR_R": 3, "BR_X": 4, "BR_B": 5, "RATE_A": 6, "RATE_B": 7, "RATE_C": 8,
	"TAP": 9, "SHIFT": 10, "BR_STATUS": 11, "ANGMIN": 12, "ANGMAX": 13, "PF": 14, "QF": 15, "PT": 16,
	"QT": 17, "MU_SF": 18, "MU_ST": 19, "MU_ANGMIN": 20, "MU_ANGMAX": 21,
	// idx_cost
	"PW_LINEAR": 1, "POLYNOMIAL": 2, "MODEL": 1, "STARTUP": 2, "SHUTDOWN": 3, "NCOST": 4, "COST": 5,
}

// reader is the state of readMATPOWER.
type reader struct {
	name string
	line int
	rc   *rawCase

	cur     *rawMatrix // the matrix being read, if any
	curName string
	row     []float64
	braces  int // depth of an open cell array being skipped

	pending     string // a statement continued with ...
	pendingLine int
	blocks      []block

	vars map[string]value // variables and mpc scalars, by name as written
	bad  map[string]int   // variables whose value is not supported: line
}

// block is an open if (or, in code that does not run, a loop, switch or
// try) block.
type block struct {
	kind   string
	line   int
	active bool // its statements run
	taken  bool // a branch of the if has run or is running
}

// active reports whether the statements read now run.
func (rd *reader) active() bool {
	return len(rd.blocks) == 0 || rd.blocks[len(rd.blocks)-1].active
}

// errorf returns an error naming the file and the current line.
func (rd *reader) errorf(format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", rd.name, rd.line, fmt.Sprintf(format, a...))
}

// feed reads one line without its comment.
func (rd *reader) feed(text string) error {
	if rd.braces > 0 {
		rd.braces += strings.Count(text, "{") - strings.Count(text, "}")
		return nil
	}
	if rd.cur != nil {
		return rd.matrixLine(text)
	}
	stmt := strings.TrimSpace(text)
	if s, ok := strings.CutSuffix(stmt, "..."); ok {
		if rd.pending == "" {
			rd.pendingLine = rd.line
		}
		rd.pending += s + " "
		return nil
	}
	stmt, rd.pending = rd.pending+stmt, ""
	for _, part := range splitStatements(stmt) {
		if err := rd.statement(part); err != nil {
			return err
		}
		if rd.cur != nil || rd.braces > 0 {
			break // a matrix or cell array opened and takes the rest of the line
		}
	}
	return nil
}

// splitStatements splits a line at the `;` and `,` outside brackets,
// parentheses, braces and strings. A statement that opens a bracket or
// brace it does not close takes the rest of the line.
func splitStatements(s string) []string {
	var parts []string
	depth, start, quote := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\'':
			quote = !quote
		case quote:
		case ch == '(' || ch == '[' || ch == '{':
			depth++
		case ch == ')' || ch == ']' || ch == '}':
			depth--
		case (ch == ';' || ch == ',') && depth == 0:
			if p := strings.TrimSpace(s[start:i]); p != "" {
				parts = append(parts, p)
			}
			start = i + 1
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		parts = append(parts, p)
	}
	return parts
}

// statement runs one statement.
func (rd *reader) statement(stmt string) error {
	switch word := leadingWord(stmt); word {
	case "function":
		return nil
	case "if", "elseif", "else", "end", "for", "parfor", "while", "switch", "try":
		return rd.control(word, stmt)
	}
	if !rd.active() {
		return nil
	}
	lhs, rhs, ok := cutAssignment(stmt)
	if !ok {
		return nil // define_constants, a function call, …
	}
	key := strings.TrimSpace(lhs)
	rhs = strings.TrimSpace(rhs)
	if key == "mpc" {
		return rd.errorf("unsupported statement %q (it replaces the whole case)", stmt)
	}
	if isName(key) {
		short := strings.TrimPrefix(key, "mpc.")
		_, isScalar := scalarNames[short]
		switch {
		case strings.HasPrefix(rhs, "{"):
			rd.braces = strings.Count(rhs, "{") - strings.Count(rhs, "}")
			return nil
		case strings.HasPrefix(rhs, "[") && !isScalar:
			if _, dup := rd.rc.matrices[short]; dup {
				return rd.errorf("matrix %s assigned twice", short)
			}
			rd.cur, rd.curName = &rawMatrix{start: rd.line}, short
			return rd.matrixLine(rhs[1:])
		case strings.HasPrefix(rhs, "'") || strings.HasPrefix(rhs, "\""):
			return nil
		}
		if _, read := requiredColumns[short]; read {
			return rd.errorf("unsupported statement %q (%s is read from a matrix [ … ] only)", stmt, short)
		}
		v, err := rd.eval(rhs)
		if err != nil {
			if isScalar {
				return rd.errorf("%s = %q: %v", short, rhs, err)
			}
			delete(rd.vars, key)
			rd.bad[key] = rd.line
			return nil
		}
		delete(rd.bad, key)
		rd.vars[key] = v
		if isScalar || strings.HasPrefix(key, "mpc.") {
			if v.r != 1 || v.c != 1 {
				return rd.errorf("%s = %q is a %d×%d matrix, want a number", short, rhs, v.r, v.c)
			}
			rd.rc.scalars[short], rd.rc.scalarLines[short] = v.v[0], rd.line
		}
		return nil
	}
	base, args, ok := cutCall(key)
	if !ok {
		return nil // [a, b] = idx_bus; mpc.bus_name{3} = …
	}
	short := strings.TrimPrefix(base, "mpc.")
	m, known := rd.rc.matrices[short]
	_, read := requiredColumns[short]
	switch {
	case !known && read:
		return rd.errorf("unsupported statement %q: matrix %s is not defined before it", stmt, short)
	case !known:
		return nil
	}
	if err := rd.assign(m, args, rhs); err != nil {
		if !read {
			return nil // a matrix this package does not read
		}
		return rd.errorf("unsupported statement %q: %v", stmt, err)
	}
	return nil
}

// control runs a block keyword.
func (rd *reader) control(word, stmt string) error {
	n := len(rd.blocks)
	switch word {
	case "if":
		if !rd.active() {
			rd.blocks = append(rd.blocks, block{kind: word, line: rd.line, taken: true})
			return nil
		}
		ok, err := rd.condition(stmt[len(word):])
		if err != nil {
			return rd.errorf("unsupported statement %q: %v", stmt, err)
		}
		rd.blocks = append(rd.blocks, block{kind: word, line: rd.line, active: ok, taken: ok})
	case "elseif", "else":
		if n == 0 || rd.blocks[n-1].kind != "if" {
			return rd.errorf("%s without if", word)
		}
		b := &rd.blocks[n-1]
		parent := n < 2 || rd.blocks[n-2].active
		switch {
		case !parent || b.taken:
			b.active = false
		case word == "else":
			b.active, b.taken = true, true
		default:
			ok, err := rd.condition(stmt[len(word):])
			if err != nil {
				return rd.errorf("unsupported statement %q: %v", stmt, err)
			}
			b.active, b.taken = ok, ok
		}
	case "end":
		if n > 0 {
			rd.blocks = rd.blocks[:n-1]
		}
	default: // loops, switch, try
		if rd.active() {
			return rd.errorf("unsupported statement %q (loops, switch and try are not read)", stmt)
		}
		rd.blocks = append(rd.blocks, block{kind: word, line: rd.line, taken: true})
	}
	return nil
}

// condition evaluates an if's condition: true when it is not empty and
// every element is nonzero, as in MATLAB.
func (rd *reader) condition(expr string) (bool, error) {
	v, err := rd.eval(expr)
	if err != nil {
		return false, err
	}
	for _, x := range v.v {
		if x == 0 {
			return false, nil
		}
	}
	return len(v.v) > 0, nil
}

// matrixLine reads a line inside a matrix: its elements, row ends and
// the closing bracket.
func (rd *reader) matrixLine(text string) error {
	if strings.Contains(text, "=") {
		return rd.errorf("matrix %s opened on line %d is not closed by ] before this assignment", rd.curName, rd.cur.start)
	}
	body, closed := text, false
	if i := strings.IndexByte(text, ']'); i >= 0 {
		body, closed = text[:i], true
		if rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text[i+1:]), ";")); rest != "" {
			return rd.errorf("unexpected %q after the end of matrix %s", rest, rd.curName)
		}
	}
	for k, seg := range strings.Split(body, ";") {
		if k > 0 {
			if err := rd.endRow(); err != nil {
				return err
			}
		}
		if err := rd.elements(seg); err != nil {
			return err
		}
	}
	// A line break ends a row too (a row continued with "..." is rare
	// in case files and not supported).
	if err := rd.endRow(); err != nil {
		return err
	}
	if closed {
		rd.rc.matrices[rd.curName] = rd.cur
		rd.cur = nil
	}
	return nil
}

// elements appends the elements of a part of a matrix row to rd.row:
// numbers, or else expressions. A matrix this package does not read
// (dcline, areas, a table with named constants, …) gets NaN for what is
// not a number.
func (rd *reader) elements(seg string) error {
	fields := strings.FieldsFunc(seg, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '\r' })
	n := len(rd.row)
	for _, tok := range fields {
		if tok == "..." {
			continue
		}
		f, err := parseValue(tok)
		if err != nil {
			rd.row = rd.row[:n]
			break
		}
		rd.row = append(rd.row, f)
	}
	if len(rd.row) > n || len(fields) == 0 {
		return nil
	}
	vals, err := rd.evalList(strings.ReplaceAll(seg, "...", " "))
	if err == nil {
		rd.row = append(rd.row, vals...)
		return nil
	}
	if _, read := requiredColumns[rd.curName]; read {
		return rd.errorf("matrix %s: %v", rd.curName, err)
	}
	for _, tok := range fields {
		if tok != "..." {
			f, err := parseValue(tok)
			if err != nil {
				f = math.NaN()
			}
			rd.row = append(rd.row, f)
		}
	}
	return nil
}

// endRow ends the current matrix row, if it has elements.
func (rd *reader) endRow() error {
	if len(rd.row) == 0 {
		return nil
	}
	if _, read := requiredColumns[rd.curName]; read {
		if n := len(rd.cur.rows); n > 0 && len(rd.cur.rows[0]) != len(rd.row) {
			return rd.errorf("%s row %d has %d columns, the first row has %d", rd.curName, n+1, len(rd.row), len(rd.cur.rows[0]))
		}
	}
	rd.cur.rows = append(rd.cur.rows, rd.row)
	rd.cur.lines = append(rd.cur.lines, rd.line)
	rd.row = nil
	return nil
}

// assign runs m(args) = rhs.
func (rd *reader) assign(m *rawMatrix, args, rhs string) error {
	p, err := rd.parser(args)
	if err != nil {
		return err
	}
	rows, cols, err := p.indices(m)
	if err != nil {
		return err
	}
	if p.pos < len(p.toks) {
		return fmt.Errorf("unexpected %q in the indices", p.toks[p.pos].text)
	}
	v, err := rd.eval(rhs)
	if err != nil {
		return err
	}
	nr, nc := len(rows), len(cols)
	switch {
	case v.r == 1 && v.c == 1:
	case v.r == nr && v.c == nc:
	case (v.r == 1 || v.c == 1) && (nr == 1 || nc == 1) && len(v.v) == nr*nc:
	default:
		return fmt.Errorf("a %d×%d value assigned to %d×%d elements", v.r, v.c, nr, nc)
	}
	for a, i := range rows {
		for b, j := range cols {
			x := v.v[0]
			switch {
			case v.r == nr && v.c == nc:
				x = v.v[a*nc+b]
			case len(v.v) > 1:
				x = v.v[a*nc+b] // a vector: nr or nc is 1
			}
			if math.IsNaN(x) {
				return fmt.Errorf("it writes NaN into row %d, column %d", i+1, j+1)
			}
			m.rows[i][j] = x
		}
	}
	return nil
}

// eval evaluates an expression.
func (rd *reader) eval(expr string) (value, error) {
	p, err := rd.parser(expr)
	if err != nil {
		return value{}, err
	}
	if p.pos == len(p.toks) {
		return value{}, fmt.Errorf("no expression")
	}
	v, err := p.or()
	if err != nil {
		return value{}, err
	}
	if p.pos < len(p.toks) {
		return value{}, fmt.Errorf("unexpected %q", p.toks[p.pos].text)
	}
	return v, nil
}

// evalList evaluates the elements of a row of a matrix, separated as
// MATLAB separates them inside brackets.
func (rd *reader) evalList(seg string) ([]float64, error) {
	p, err := rd.parser(seg)
	if err != nil {
		return nil, err
	}
	p.ctx = append(p.ctx, '[')
	var out []float64
	for p.pos < len(p.toks) {
		if p.peek(",") {
			p.pos++
			continue
		}
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		out = append(out, v.v...)
	}
	return out, nil
}

// value is a matrix of r rows and c columns, row-major; logical when it
// holds the result of a comparison (an index mask).
type value struct {
	r, c    int
	v       []float64
	logical bool
}

func scalar(x float64) value { return value{r: 1, c: 1, v: []float64{x}} }

// token is a lexical token of an expression: a number, a name (which
// may be dotted, as mpc.bus) or an operator; space tells whether blanks
// precede it.
type token struct {
	kind  byte // 'n' number, 'i' name, 'o' operator
	text  string
	num   float64
	space bool
}

// operators of the expressions, the two-character ones first.
var operators = []string{".*", "./", ".^", "==", "~=", "<=", ">=", "&&", "||",
	"+", "-", "*", "/", "^", "(", ")", "[", "]", ",", ":", "<", ">", "~", "&", "|"}

// lex splits an expression into tokens.
func lex(s string) ([]token, error) {
	var toks []token
	space := false
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			space = true
			i++
			continue
		case ch >= '0' && ch <= '9' || ch == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					for j = k; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
					}
				}
			}
			f, err := strconv.ParseFloat(s[i:j], 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a number", s[i:j])
			}
			toks = append(toks, token{kind: 'n', text: s[i:j], num: f, space: space})
			i = j
		case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(s) {
				c := s[j]
				if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
					c == '.' && j+1 < len(s) && (s[j+1] == '_' || s[j+1] >= 'a' && s[j+1] <= 'z' || s[j+1] >= 'A' && s[j+1] <= 'Z') {
					j++
					continue
				}
				break
			}
			toks = append(toks, token{kind: 'i', text: s[i:j], space: space})
			i = j
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, fmt.Errorf("unsupported character %q", s[i:i+1])
			}
			toks = append(toks, token{kind: 'o', text: op, space: space})
			i += len(op)
		}
		space = false
	}
	return toks, nil
}

// parser evaluates expressions by recursive descent, with MATLAB's
// precedence: || && | & comparisons + - (* / .* ./) unary (^ .^).
type parser struct {
	rd    *reader
	toks  []token
	pos   int
	ctx   []byte // '[' inside brackets (blanks separate elements), '(' inside parentheses
	ends  []int  // the size of the dimension being indexed, for end
	depth int    // of nested operands, bounded by maxDepth
}

// maxDepth bounds the nesting of an expression's operands.
const maxDepth = 200

func (rd *reader) parser(s string) (*parser, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	return &parser{rd: rd, toks: toks}, nil
}

// peek reports whether the next token is the operator op.
func (p *parser) peek(op string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == 'o' && p.toks[p.pos].text == op
}

// expect consumes the operator op.
func (p *parser) expect(op string) error {
	if !p.peek(op) {
		if p.pos < len(p.toks) {
			return fmt.Errorf("want %q, found %q", op, p.toks[p.pos].text)
		}
		return fmt.Errorf("want %q at the end", op)
	}
	p.pos++
	return nil
}

// inList reports whether blanks separate elements here.
func (p *parser) inList() bool { return len(p.ctx) > 0 && p.ctx[len(p.ctx)-1] == '[' }

// binary parses a left-associative level: operands by next, joined by
// the operators ops.
func (p *parser) binary(next func() (value, error), ops ...string) (value, error) {
	a, err := next()
	if err != nil {
		return value{}, err
	}
	for p.pos < len(p.toks) {
		t := p.toks[p.pos]
		op := ""
		for _, o := range ops {
			if t.kind == 'o' && t.text == o {
				op = o
			}
		}
		if op == "" {
			break
		}
		// Inside brackets, "a -b" is two elements and "a - b" one.
		if (op == "+" || op == "-") && p.inList() && t.space && p.pos+1 < len(p.toks) && !p.toks[p.pos+1].space {
			break
		}
		p.pos++
		b, err := next()
		if err != nil {
			return value{}, err
		}
		if a, err = apply(op, a, b); err != nil {
			return value{}, err
		}
	}
	return a, nil
}

func (p *parser) or() (value, error)   { return p.binary(p.and, "||") }
func (p *parser) and() (value, error)  { return p.binary(p.elor, "&&") }
func (p *parser) elor() (value, error) { return p.binary(p.eland, "|") }
func (p *parser) eland() (value, error) {
	return p.binary(p.compare, "&")
}
func (p *parser) compare() (value, error) {
	return p.binary(p.add, "==", "~=", "<", "<=", ">", ">=")
}
func (p *parser) add() (value, error) { return p.binary(p.mul, "+", "-") }
func (p *parser) mul() (value, error) { return p.binary(p.unary, "*", "/", ".*", "./") }

func (p *parser) unary() (value, error) {
	if p.depth++; p.depth > maxDepth {
		return value{}, fmt.Errorf("the expression nests more than %d deep", maxDepth)
	}
	defer func() { p.depth-- }()
	if p.peek("-") || p.peek("+") || p.peek("~") {
		op := p.toks[p.pos].text
		p.pos++
		v, err := p.unary()
		if err != nil {
			return value{}, err
		}
		switch op {
		case "-":
			return apply("*", scalar(-1), v)
		case "~":
			return apply("==", v, scalar(0))
		}
		return v, nil
	}
	return p.power()
}

func (p *parser) power() (value, error) {
	a, err := p.primary()
	if err != nil {
		return value{}, err
	}
	for p.peek("^") || p.peek(".^") {
		op := p.toks[p.pos].text
		p.pos++
		sign := 1.0
		if p.peek("-") || p.peek("+") {
			if p.toks[p.pos].text == "-" {
				sign = -1
			}
			p.pos++
		}
		b, err := p.primary()
		if err != nil {
			return value{}, err
		}
		if b, err = apply("*", scalar(sign), b); err != nil {
			return value{}, err
		}
		if a, err = apply(op, a, b); err != nil {
			return value{}, err
		}
	}
	return a, nil
}

func (p *parser) primary() (value, error) {
	if p.pos == len(p.toks) {
		return value{}, fmt.Errorf("the expression ends early")
	}
	t := p.toks[p.pos]
	p.pos++
	switch {
	case t.kind == 'n':
		return scalar(t.num), nil
	case t.kind == 'o' && t.text == "(":
		p.ctx = append(p.ctx, '(')
		v, err := p.or()
		p.ctx = p.ctx[:len(p.ctx)-1]
		if err != nil {
			return value{}, err
		}
		return v, p.expect(")")
	case t.kind == 'o' && t.text == "[":
		p.ctx = append(p.ctx, '[')
		var vals []float64
		for !p.peek("]") {
			if p.pos == len(p.toks) {
				return value{}, fmt.Errorf("[ is not closed")
			}
			if p.peek(",") {
				p.pos++
				continue
			}
			v, err := p.or()
			if err != nil {
				return value{}, err
			}
			vals = append(vals, v.v...)
		}
		p.pos++
		p.ctx = p.ctx[:len(p.ctx)-1]
		return value{r: 1, c: len(vals), v: vals}, nil
	case t.kind == 'i':
		if p.peek("(") {
			return p.call(t.text)
		}
		return p.name(t.text)
	}
	return value{}, fmt.Errorf("unexpected %q", t.text)
}

// name returns the value of a name: end inside an index, a variable, a
// constant or a named column.
func (p *parser) name(n string) (value, error) {
	if n == "end" && len(p.ends) > 0 {
		return scalar(float64(p.ends[len(p.ends)-1])), nil
	}
	if v, ok := p.rd.vars[n]; ok {
		return v, nil
	}
	if line, ok := p.rd.bad[n]; ok {
		return value{}, fmt.Errorf("%s: its value (line %d) is not supported", n, line)
	}
	switch n {
	case "pi":
		return scalar(math.Pi), nil
	case "Inf", "inf":
		return scalar(math.Inf(1)), nil
	case "NaN", "nan":
		return scalar(math.NaN()), nil
	case "true":
		return scalar(1), nil
	case "false":
		return scalar(0), nil
	}
	if c, ok := namedColumns[n]; ok {
		return scalar(c), nil
	}
	return value{}, fmt.Errorf("unknown name %q", n)
}

// functions are the element-wise functions of the expressions.
var functions = map[string]func(float64) float64{
	"sqrt": math.Sqrt, "abs": math.Abs, "exp": math.Exp, "log": math.Log, "log10": math.Log10,
	"sin": math.Sin, "cos": math.Cos, "tan": math.Tan, "asin": math.Asin, "acos": math.Acos, "atan": math.Atan,
	"sind":  func(x float64) float64 { return math.Sin(x * math.Pi / 180) },
	"cosd":  func(x float64) float64 { return math.Cos(x * math.Pi / 180) },
	"round": func(x float64) float64 { return math.Round(x) }, "floor": math.Floor, "ceil": math.Ceil, "fix": math.Trunc,
	"isinf": func(x float64) float64 { return b2f(math.IsInf(x, 0)) },
	"isnan": func(x float64) float64 { return b2f(math.IsNaN(x)) },
}

// call evaluates name(…): a function, or a selection from a matrix.
func (p *parser) call(n string) (value, error) {
	p.pos++ // (
	p.ctx = append(p.ctx, '(')
	defer func() { p.ctx = p.ctx[:len(p.ctx)-1] }()
	if f, ok := functions[n]; ok || n == "find" {
		a, err := p.or()
		if err != nil {
			return value{}, err
		}
		if err := p.expect(")"); err != nil {
			return value{}, err
		}
		if n == "find" {
			var idx []float64
			for k, x := range a.v {
				if x != 0 {
					idx = append(idx, float64(k+1))
				}
			}
			return value{r: len(idx), c: 1, v: idx}, nil
		}
		out := value{r: a.r, c: a.c, v: make([]float64, len(a.v)), logical: n == "isinf" || n == "isnan"}
		for k, x := range a.v {
			out.v[k] = f(x)
		}
		return out, nil
	}
	m, ok := p.rd.rc.matrices[strings.TrimPrefix(n, "mpc.")]
	if !ok {
		return value{}, fmt.Errorf("unknown function or matrix %q", n)
	}
	rows, cols, err := p.indices(m)
	if err != nil {
		return value{}, err
	}
	if err := p.expect(")"); err != nil {
		return value{}, err
	}
	out := value{r: len(rows), c: len(cols)}
	for _, i := range rows {
		for _, j := range cols {
			out.v = append(out.v, m.rows[i][j])
		}
	}
	return out, nil
}

// indices reads the two indices of a selection from m (0-based rows and
// columns).
func (p *parser) indices(m *rawMatrix) (rows, cols []int, err error) {
	nr, nc := len(m.rows), 0
	if nr > 0 {
		nc = len(m.rows[0])
		for _, r := range m.rows {
			nc = min(nc, len(r))
		}
	}
	if rows, err = p.index(nr, "row"); err != nil {
		return nil, nil, err
	}
	if err := p.expect(","); err != nil {
		return nil, nil, fmt.Errorf("want two indices (rows, columns): %w", err)
	}
	if cols, err = p.index(nc, "column"); err != nil {
		return nil, nil, err
	}
	return rows, cols, nil
}

// index reads one index into a dimension of size n: `:`, a ranged or
// listed set of positions, or a logical mask.
func (p *parser) index(n int, what string) ([]int, error) {
	if p.peek(":") {
		p.pos++
		idx := make([]int, n)
		for k := range idx {
			idx[k] = k
		}
		return idx, nil
	}
	p.ends = append(p.ends, n)
	defer func() { p.ends = p.ends[:len(p.ends)-1] }()
	v, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek(":") { // a:b or a:s:b
		p.pos++
		b, err := p.or()
		if err != nil {
			return nil, err
		}
		step := scalar(1)
		if p.peek(":") {
			p.pos++
			step = b
			if b, err = p.or(); err != nil {
				return nil, err
			}
		}
		if len(v.v) != 1 || len(b.v) != 1 || len(step.v) != 1 {
			return nil, fmt.Errorf("a range's bounds and step must be numbers")
		}
		a, s, e := v.v[0], step.v[0], b.v[0]
		count := math.Floor((e-a)/s) + 1
		if !(count <= float64(n)) && !(count <= 0) { // NaN too
			return nil, fmt.Errorf("the range %v:%v:%v is longer than the %d %ss", a, s, e, n, what)
		}
		var r []float64
		for k := 0; k < int(count); k++ {
			r = append(r, a+float64(k)*s)
		}
		v = value{r: 1, c: len(r), v: r}
	}
	if v.logical {
		if len(v.v) != n {
			return nil, fmt.Errorf("a mask of %d elements indexes %d %ss", len(v.v), n, what)
		}
		var idx []int
		for k, x := range v.v {
			if x != 0 {
				idx = append(idx, k)
			}
		}
		return idx, nil
	}
	idx := make([]int, len(v.v))
	for k, x := range v.v {
		if x != math.Trunc(x) || x < 1 || x > float64(n) {
			return nil, fmt.Errorf("%s index %v is not in 1…%d", what, x, n)
		}
		idx[k] = int(x) - 1
	}
	return idx, nil
}

// apply applies a binary operator element by element (a scalar operand
// is broadcast; * and / need one, ^ two).
func apply(op string, a, b value) (value, error) {
	sa, sb := len(a.v) == 1 && a.r == 1, len(b.v) == 1 && b.r == 1
	switch {
	case (op == "*" || op == "/") && !sb && !(op == "*" && sa):
		return value{}, fmt.Errorf("%s of a %d×%d and a %d×%d matrix (matrix products are not supported; use .%s)", op, a.r, a.c, b.r, b.c, op)
	case op == "^" && !(sa && sb):
		return value{}, fmt.Errorf("^ of matrices (use .^)")
	case !sa && !sb && (a.r != b.r || a.c != b.c):
		return value{}, fmt.Errorf("%s of a %d×%d and a %d×%d matrix", op, a.r, a.c, b.r, b.c)
	}
	out := a
	if sa {
		out = b
	}
	out = value{r: out.r, c: out.c, v: make([]float64, len(out.v))}
	for k := range out.v {
		x, y := a.v[0], b.v[0]
		if !sa {
			x = a.v[k]
		}
		if !sb {
			y = b.v[k]
		}
		switch op {
		case "+":
			out.v[k] = x + y
		case "-":
			out.v[k] = x - y
		case "*", ".*":
			out.v[k] = x * y
		case "/", "./":
			if y == 0 {
				return value{}, fmt.Errorf("division by zero")
			}
			out.v[k] = x / y
		case "^", ".^":
			out.v[k] = math.Pow(x, y)
		default:
			out.logical = true
			out.v[k] = b2f(compare(op, x, y))
		}
	}
	return out, nil
}

// compare applies a comparison or logical operator.
func compare(op string, x, y float64) bool {
	switch op {
	case "==":
		return x == y
	case "~=":
		return x != y
	case "<":
		return x < y
	case "<=":
		return x <= y
	case ">":
		return x > y
	case ">=":
		return x >= y
	case "&", "&&":
		return x != 0 && y != 0
	}
	return x != 0 || y != 0 // | and ||
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// leadingWord returns the name a statement starts with.
func leadingWord(s string) string {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return s[:i]
		}
	}
	return s
}

// cutAssignment splits a statement at its assignment's =, the first
// outside brackets that is not part of ==, ~=, <= or >=.
func cutAssignment(s string) (lhs, rhs string, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '\'':
			return "", "", false // a string before any =: not an assignment this reader runs
		case '=':
			if depth != 0 {
				continue
			}
			if i+1 < len(s) && s[i+1] == '=' {
				i++
				continue
			}
			if i > 0 && strings.IndexByte("~<>=", s[i-1]) >= 0 {
				continue
			}
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// cutCall splits name(args) into name and args.
func cutCall(s string) (name, args string, ok bool) {
	i := strings.IndexByte(s, '(')
	if i <= 0 || !strings.HasSuffix(s, ")") {
		return "", "", false
	}
	name = strings.TrimSpace(s[:i])
	return name, s[i+1 : len(s)-1], isName(name)
}

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

// isName reports whether s is a MATLAB identifier, or two joined by a
// dot (mpc.bus).
func isName(s string) bool {
	a, b, dotted := strings.Cut(s, ".")
	return isIdent(a) && (!dotted || isIdent(b))
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
