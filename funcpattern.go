package enforce

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// The pattern detection of a Func (detectPattern).
const (
	// funcDetectMinRows: PathAuto detects the pattern of a Func with at
	// least this many equations (PathSparse at any size).
	funcDetectMinRows = 16
	// detectPoints probe points are united; detectTries points are drawn
	// at most to find them (c must be finite at a probe point).
	detectPoints = 2
	detectTries  = 6
	// detectClasses is the number of classes of the first round;
	// detectMaxRounds bounds the rounds before the column-by-column
	// fallback.
	detectClasses   = 16
	detectMaxRounds = 24
	// detectTolZero: a class's residual is zero when it is at most this
	// much of the magnitudes summed into it; detectTolIndex: the relative
	// distance of a ratio from an output's index that identifies it.
	detectTolZero  = 1e-10
	detectTolIndex = 1e-7
)

// funcPattern caches a Func's detected pattern: every AdaNP built on the
// constraint shares one detection.
type funcPattern struct {
	once   sync.Once
	sf     *sparseFunc // nil if the detection failed
	passes int         // evaluations of f it took
}

// detectPattern returns fc as a sparseFunc with the pattern of ∂c/∂y
// detected by hyperdual probes, or nil if f is not finite at any of the
// probe points drawn or panics. The first call detects; later calls
// return the same result.
//
// The pattern is the union of the nonzero entries of ∂c/∂y at
// detectPoints random points, x and y with independent entries uniform in
// [0.5, 1.5] (points at which c is not finite are skipped, up to
// detectTries draws). At each point the entries are found by group
// testing, without the nc×ny Jacobian: in each round the outputs are
// split at random into m classes, and one evaluation of f per class seeds
// ϵ₁ = w_j and ϵ₂ = (j+1)·w_j on the outputs j of the class (w_j random
// in [1, 2]). For a row i, once the contributions of its entries found so
// far are subtracted, the parts left are Σ J_ij·w_j and Σ J_ij·w_j·(j+1)
// over its entries not yet found in the class: both zero if there are
// none, and with exactly one, j, their ratio is j+1, which identifies j
// and its value. A row is complete after a round in which no class of it
// leaves anything (which also verifies the values found: an entry found
// in error, from a ratio that was an index by chance, leaves a residual,
// and the row starts again). m doubles while more than half of the open
// rows meet two unknown entries in a class; rows still open after
// detectMaxRounds, or when the next round would bring the evaluations at
// the point to ⌈ny/2⌉, are read off one output at a time (⌈ny/2⌉ more
// evaluations, two outputs each, as Func's Jacobian), so that a point
// never takes more than about ny evaluations. For a
// pattern with at most k entries per row this takes about
// (rounds + 1)·m evaluations of f per point, rounds ≈ 3 to 5 for k ≤ 6,
// O(nnz + nc + ny) memory, and never forms an nc×ny matrix.
//
// An entry is missed if it is exactly zero at every probe point while not
// zero elsewhere: an output read only in a branch that the probes do not
// take (an if on y's value, max or min, a piecewise law), a factor that
// vanishes at the probes (y_j − 1 at y_j = 1 is not a risk at random
// points, but a branch at y_j > 2 is), or an entry smaller than
// detectTolZero of the row's other entries of its class.
func (fc *funcConstraint) detectPattern() *sparseFunc {
	fc.detect.once.Do(func() {
		fc.detect.sf, fc.detect.passes = fc.runDetection()
	})
	return fc.detect.sf
}

// detectEntry is an entry of ∂c/∂y found at a probe point: its output
// and its value there.
type detectEntry struct {
	j int32
	v float64
}

// runDetection is detectPattern's detection; it also returns the number
// of evaluations of f.
func (fc *funcConstraint) runDetection() (sf *sparseFunc, passes int) {
	defer func() {
		if recover() != nil { // the projection reports the panic
			sf = nil
		}
	}()
	rng := rand.New(rand.NewPCG(56, 2))
	x, y := make([]float64, fc.nx), make([]float64, fc.ny)
	union := make([][]int32, fc.nc)
	points := 0
	for try := 0; try < detectTries && points < detectPoints; try++ {
		for k := range x {
			x[k] = 0.5 + rng.Float64()
		}
		for j := range y {
			y[j] = 0.5 + rng.Float64()
		}
		known, n, ok := fc.detectAt(x, y, rng)
		passes += n
		if !ok {
			continue
		}
		points++
		for i, row := range known {
			for _, e := range row {
				union[i] = append(union[i], e.j)
			}
		}
	}
	if points == 0 {
		return nil, passes
	}
	rowPtr := make([]int, fc.nc+1)
	var col []int
	for i, row := range union {
		slices.Sort(row)
		for p, j := range row {
			if p == 0 || row[p-1] != j {
				col = append(col, int(j))
			}
		}
		rowPtr[i+1] = len(col)
	}
	sf = newSparseFunc(fc.nx, fc.ny, fc.nc, fc.f, rowPtr, col)
	sf.detected = true
	return sf, passes
}

// detectAt finds the nonzero entries of ∂c/∂y at (x, y) by the rounds of
// detectPattern. It returns them by row, the number of evaluations of f,
// and false if c is not finite at the point.
func (fc *funcConstraint) detectAt(x, y []float64, rng *rand.Rand) (known [][]detectEntry, passes int, ok bool) {
	s := fc.get(x, y)
	defer fc.pool.Put(s)
	fc.call(s)
	passes++
	for _, ci := range s.c {
		if math.IsNaN(ci.Real) || math.IsInf(ci.Real, 0) {
			return nil, passes, false
		}
	}
	nc, ny := fc.nc, fc.ny
	known = make([][]detectEntry, nc)
	open := make([]int32, nc) // the rows not yet complete
	for i := range open {
		open[i] = int32(i)
	}
	class := make([]int32, ny)
	w := make([]float64, ny)
	members := make([][]int32, 0, detectClasses)
	clean := make([]bool, nc) // no class of the row left anything this round
	hit := make([]bool, nc)   // a class of the row held two unknown entries
	m := detectClasses
	for round := 0; len(open) > 0; round++ {
		if passes+m >= (ny+1)/2 || round == detectMaxRounds {
			return known, passes + fc.detectColumns(s, known, open), true
		}
		members = members[:0]
		for range m {
			members = append(members, nil)
		}
		for j := range ny {
			c := int32(rng.IntN(m))
			class[j], w[j] = c, 1+rng.Float64()
			members[c] = append(members[c], int32(j))
		}
		for _, i := range open {
			clean[i], hit[i] = true, false
		}
		collided := 0
		for c, mem := range members {
			for _, j := range mem {
				s.y[j].E1mag, s.y[j].E2mag = w[j], w[j]*float64(j+1)
			}
			fc.call(s)
			passes++
			for _, j := range mem {
				s.y[j].E1mag, s.y[j].E2mag = 0, 0
			}
			for _, i := range open {
				switch fc.detectRow(known, i, int32(c), s.c[i].E1mag, s.c[i].E2mag, class, w) {
				case classEmpty:
				case classFound:
					clean[i] = false
				case classCollision:
					if !hit[i] {
						collided++
					}
					clean[i], hit[i] = false, true
				}
			}
		}
		n := len(open)
		open = slices.DeleteFunc(open, func(i int32) bool { return clean[i] })
		if 2*collided > n {
			m *= 2
		}
	}
	return known, passes, true
}

// What one evaluation tells of a row (detectRow).
const (
	classEmpty     = iota // no unknown entry in the class
	classFound            // one, now known
	classCollision        // more than one, or a known entry was wrong
)

// detectRow takes row i's ϵ₁ and ϵ₂ parts r1, r2 of one evaluation
// seeded on class c. It subtracts the contributions of the row's entries
// known in the class and reports what is left: nothing, one unknown
// entry (which it adds), or more (a collision). If the ratio names an
// entry already known, the row's entries are dropped (one was found in
// error or with a wrong value) and found again in later rounds.
func (fc *funcConstraint) detectRow(known [][]detectEntry, i int32, c int32, r1, r2 float64, class []int32, w []float64) int {
	m1, m2 := math.Abs(r1), math.Abs(r2)
	for _, e := range known[i] {
		if class[e.j] != c {
			continue
		}
		t1 := e.v * w[e.j]
		t2 := t1 * float64(e.j+1)
		r1 -= t1
		r2 -= t2
		m1 += math.Abs(t1)
		m2 += math.Abs(t2)
	}
	if math.Abs(r1) <= detectTolZero*m1 && math.Abs(r2) <= detectTolZero*m2 {
		return classEmpty
	}
	t := r2 / r1
	idx := math.Round(t) - 1
	if r1 == 0 || math.IsNaN(t) || idx < 0 || idx >= float64(fc.ny) || class[int(idx)] != c ||
		math.Abs(t-(idx+1)) > detectTolIndex*(idx+1) {
		return classCollision
	}
	j := int32(idx)
	if slices.ContainsFunc(known[i], func(e detectEntry) bool { return e.j == j }) {
		known[i] = known[i][:0]
		return classCollision
	}
	known[i] = append(known[i], detectEntry{j: j, v: r1 / w[j]})
	return classFound
}

// detectColumns replaces the entries of the rows open by the nonzero
// entries of ∂c/∂y read one output at a time (ϵ₁ = e_j, ϵ₂ = e_{j+1};
// a NaN part counts as nonzero), and returns the number of evaluations
// of f.
func (fc *funcConstraint) detectColumns(s *funcScratch, known [][]detectEntry, open []int32) int {
	for _, i := range open {
		known[i] = known[i][:0]
	}
	passes := 0
	for j := 0; j < fc.ny; j += 2 {
		s.y[j].E1mag = 1
		if j+1 < fc.ny {
			s.y[j+1].E2mag = 1
		}
		fc.call(s)
		passes++
		s.y[j].E1mag = 0
		if j+1 < fc.ny {
			s.y[j+1].E2mag = 0
		}
		for _, i := range open {
			if e := s.c[i].E1mag; e != 0 {
				known[i] = append(known[i], detectEntry{j: int32(j), v: e})
			}
			if e := s.c[i].E2mag; j+1 < fc.ny && e != 0 {
				known[i] = append(known[i], detectEntry{j: int32(j + 1), v: e})
			}
		}
	}
	return passes
}
