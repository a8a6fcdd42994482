package enforce

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// PatternEntry is one entry of ∂c/∂y at which a sparse constraint's
// declared Jacobian disagrees with CheckSparse's reference.
type PatternEntry struct {
	Row, Col int
	// Declared reports whether (Row, Col) is in the declared pattern: an
	// undeclared entry is a dependence the pattern misses, a declared one
	// a wrong value.
	Declared bool
	// Got is the declared Jacobian's value (0 where undeclared), Want the
	// reference's.
	Got, Want float64
}

// PatternError reports a sparse Jacobian (Capabilities.Sparse) that
// disagrees with the constraint it declares, found by one of two checks.
//
// CheckSparse's full check fills Entries: the entries of ∂c/∂y where the
// declared sparse Jacobian and the reference differ by more than the
// tolerance, the largest differences first (at most maxPatternEntries =
// 10), and Count, how many there are in all.
//
// The cheap check that AdaNP runs at its first projection (see
// ProjectTo) fills Rows instead: the rows i whose product ∂c_i/∂y·u with
// random vectors u, computed without the pattern, differs from the
// declared Jacobian's (the first 10, in increasing order), Count, how
// many there are in all, and Sample, the row of the batch at which they
// were found; it does not locate the columns (run CheckSparse there).
// Detected is set when the pattern was not declared but detected by
// NewAdaNP for a Func constraint.
type PatternError struct {
	Entries  []PatternEntry
	Count    int
	Rows     []int
	Sample   int
	Detected bool
}

// maxPatternEntries bounds PatternError.Entries.
const maxPatternEntries = 10

// Error lists the entries, or the rows.
func (e *PatternError) Error() string {
	if e.Rows != nil {
		return e.firstProjectionMessage()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "enforce: CheckSparse: %d entries of ∂c/∂y disagree with the declared sparse Jacobian", e.Count)
	for _, p := range e.Entries {
		if p.Declared {
			fmt.Fprintf(&b, "; (%d, %d) declared with value %g, reference %g", p.Row, p.Col, p.Got, p.Want)
		} else {
			fmt.Fprintf(&b, "; (%d, %d) = %g is not in the pattern", p.Row, p.Col, p.Want)
		}
	}
	if e.Count > len(e.Entries) {
		b.WriteString("; …")
	}
	return b.String()
}

// CheckSparse checks the sparse Jacobian that a constraint declares
// (Capabilities.Sparse) at one point (x, y): that every entry of ∂c/∂y
// that is not zero there lies in the declared pattern, and that the
// declared values are right. It returns a *PatternError listing the
// entries that are not, nil if all are, or another error for a constraint
// without Capabilities.Sparse, arguments of the wrong lengths, or a panic
// or a non-finite value in the constraint's code.
//
// A declared pattern that misses a dependence is an error that the
// sparse path's steps cannot see: SparseFunc then assigns the missing
// derivative to another output of the same colour or drops it, a
// hand-written SparseJacobian.Eval has nowhere to put it, and the
// projection converges slowly or not at all, with wrong gradients. AdaNP's
// first projection runs a cheap check by random products (see ProjectTo),
// which finds the rows but not the columns and sees only the entries not
// zero at one sample; CheckSparse is the full test to run once on a new
// constraint, at a point where every dependence shows (a generic point:
// not y = 0 if c is bilinear in y, say).
//
// The reference is exact for a SparseFunc: one hyperdual evaluation of its
// function per two outputs, seeded column by column without the colouring,
// compared with tolerance tol (1e-12 when tol ≤ 0). For any other
// constraint it is central finite differences of SparseJacobian.Eval's c,
// two evaluations per output with steps 6e-6·max(1, |y_j|) (a column that
// disagrees is differenced again with steps down to 1/65536 of that, so
// that a steep smoothed kink is not mistaken for a wrong entry), compared with
// tol (1e-6 when tol ≤ 0) relative to 1 + |reference| + the scale of c; a
// finite difference cannot tell a dependence smaller than that tolerance
// from zero. Entries differ when |got − want| > tol·(1 + |want|) (plus the
// scale of c for finite differences). The cost is ny evaluations of c's
// code (ny/2 for a SparseFunc): a check, not for every step.
func CheckSparse(c Constraint, x, y []float64, tol float64) (err error) {
	sj := CapabilitiesOf(c).Sparse
	if sj == nil {
		return fmt.Errorf("enforce: CheckSparse: %T declares no Capabilities.Sparse", c)
	}
	nx, ny, nc := c.Dims()
	if len(x) != nx || len(y) != ny {
		return fmt.Errorf("enforce: CheckSparse: len(x), len(y) = %d, %d, want nx, ny = %d, %d", len(x), len(y), nx, ny)
	}
	if err := sj.check(ny, nc); err != nil {
		return fmt.Errorf("enforce: CheckSparse: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("enforce: CheckSparse: the constraint's code panicked: %v", r)
		}
	}()
	cv := make([]float64, nc)
	vals := make([]float64, sj.nnz())
	sj.Eval(x, y, cv, vals)
	scale := 0.0
	for _, v := range cv {
		scale = math.Max(scale, math.Abs(v))
	}
	for _, v := range append(vals, cv...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("enforce: CheckSparse: c or its declared Jacobian is not finite at the point")
		}
	}
	// The pattern by columns: declared[j] lists (row, position) pairs.
	type decl struct{ row, q int }
	declared := make([][]decl, ny)
	for i := range nc {
		for q := sj.RowPtr[i]; q < sj.RowPtr[i+1]; q++ {
			declared[sj.Col[q]] = append(declared[sj.Col[q]], decl{i, q})
		}
	}
	sf, exact := c.(*sparseFunc)
	if tol <= 0 {
		tol = 1e-6
		if exact {
			tol = 1e-12
		}
	}
	slack := 0.0 // the finite differences' round-off, relative to c's scale
	if !exact {
		slack = scale
	}
	var found []PatternEntry
	count := 0
	inPattern := make([]bool, nc)
	// compare checks column j against the reference ref; with record
	// false it only reports whether an entry disagrees.
	compare := func(j int, ref []float64, record bool) (bad bool, err error) {
		for _, d := range declared[j] {
			inPattern[d.row] = true
		}
		defer func() {
			for _, d := range declared[j] {
				inPattern[d.row] = false
			}
		}()
		for _, d := range declared[j] {
			got, want := vals[d.q], ref[d.row]
			if math.Abs(got-want) > tol*(1+math.Abs(want)+slack) {
				bad = true
				if record {
					count++
					found = append(found, PatternEntry{Row: d.row, Col: j, Declared: true, Got: got, Want: want})
				}
			}
		}
		for i, want := range ref {
			if math.IsNaN(want) || math.IsInf(want, 0) {
				return bad, fmt.Errorf("enforce: CheckSparse: the reference ∂c_%d/∂y_%d is not finite", i, j)
			}
			if !inPattern[i] && math.Abs(want) > tol*(1+slack) {
				bad = true
				if record {
					count++
					found = append(found, PatternEntry{Row: i, Col: j, Want: want})
				}
			}
		}
		if len(found) > 4*maxPatternEntries {
			found = largest(found, maxPatternEntries)
		}
		return bad, nil
	}
	ref := make([]float64, nc)
	if exact {
		s := sf.get(x, y)
		defer sf.pool.Put(s)
		ref2 := make([]float64, nc)
		for j := 0; j < ny; j += 2 {
			s.y[j].E1mag = 1
			if j+1 < ny {
				s.y[j+1].E2mag = 1
			}
			sf.call(s)
			s.y[j].E1mag = 0
			if j+1 < ny {
				s.y[j+1].E2mag = 0
			}
			for i := range ref {
				ref[i], ref2[i] = s.c[i].E1mag, s.c[i].E2mag
			}
			if _, err := compare(j, ref, true); err != nil {
				return err
			}
			if j+1 < ny {
				if _, err := compare(j+1, ref2, true); err != nil {
					return err
				}
			}
		}
	} else {
		yp := append([]float64(nil), y...)
		cp, cm, ref2 := make([]float64, nc), make([]float64, nc), make([]float64, nc)
		for j := range ny {
			// A column that disagrees is differenced again with shorter
			// steps: a steep smoothed kink (a Fischer–Burmeister row with a
			// large ∂g/∂y near g = 0) is crossed by the first; a wrong entry
			// disagrees at every step.
			// An entry wrong at every step is reported with the first
			// step's reference, the least affected by rounding.
			good := false
			for k, step := range checkSparseSteps {
				h := step * math.Max(1, math.Abs(y[j]))
				yp[j] = y[j] + h
				sj.Eval(x, yp, cp, nil)
				yp[j] = y[j] - h
				sj.Eval(x, yp, cm, nil)
				yp[j] = y[j]
				r := ref
				if k > 0 {
					r = ref2
				}
				for i := range r {
					r[i] = (cp[i] - cm[i]) / (2 * h)
				}
				bad, err := compare(j, r, false)
				if err != nil {
					return err
				}
				if !bad {
					good = true
					break
				}
			}
			if !good {
				if _, err := compare(j, ref, true); err != nil {
					return err
				}
			}
		}
	}
	if count == 0 {
		return nil
	}
	return &PatternError{Entries: largest(found, maxPatternEntries), Count: count}
}

// checkSparseSteps are CheckSparse's finite-difference steps, relative to
// max(1, |y_j|): the first for every column, the others for a column that
// disagrees at the previous one.
var checkSparseSteps = [...]float64{6e-6, 6e-6 / 16, 6e-6 / 256, 6e-6 / 4096, 6e-6 / 65536}

// largest returns the n entries of e with the largest |Got − Want|, in
// decreasing order.
func largest(e []PatternEntry, n int) []PatternEntry {
	sort.SliceStable(e, func(a, b int) bool { return math.Abs(e[a].Got-e[a].Want) > math.Abs(e[b].Got-e[b].Want) })
	return e[:min(n, len(e))]
}
