package acopf

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Case is a power grid in per-unit quantities, as read from a MATPOWER
// case file by Parse or ReadFile: the in-service buses, generators and
// branches, renumbered 0, 1, … in file order. Powers are in per unit of
// BaseMVA, voltages in per unit of the bus's base voltage, angles in
// radians.
type Case struct {
	// Name identifies the case (the file name without extension).
	Name string
	// BaseMVA is the system's power base in MVA.
	BaseMVA float64
	// Buses, Gens and Branches are the in-service elements.
	Buses    []Bus
	Gens     []Gen
	Branches []Branch
	// Refs are the indices in Buses of the reference buses (type 3), in
	// file order: usually one; a grid of several islands, or a
	// distribution case fed at several points, has more. Each keeps the
	// voltage angle the file gives it (zero in PGLib-OPF's cases).
	Refs []int
	// Warnings name what Parse dropped from the file although the case
	// is usable without it and the grid it describes changes: isolated
	// buses (type 4) that carry load or in-service equipment, in-service
	// DC lines (mpc.dcline), and the OPF extensions mpc.A and mpc.N. A
	// program should show them to its user; nil when nothing was
	// dropped but out-of-service elements.
	Warnings []string
}

// Bus is a bus of a Case.
type Bus struct {
	// ID is the bus number in the file.
	ID int
	// Type is 1 (PQ), 2 (PV) or 3 (reference).
	Type int
	// Pd, Qd are the load and Gs, Bs the shunt conductance and
	// susceptance (drawn at V = 1 p.u.), in p.u.
	Pd, Qd, Gs, Bs float64
	// Vm, Va are the voltage magnitude (p.u.) and angle (radians) of the
	// file's operating point.
	Vm, Va float64
	// Vmin, Vmax bound the voltage magnitude (p.u.).
	Vmin, Vmax float64
	// BaseKV is the base voltage in kV.
	BaseKV float64
}

// Gen is an in-service generator of a Case.
type Gen struct {
	// Bus is the index in Case.Buses of the generator's bus.
	Bus int
	// Pg, Qg are the file's operating point (p.u.); Vg its voltage
	// set point (p.u.).
	Pg, Qg, Vg float64
	// Pmin ≤ Pg ≤ Pmax and Qmin ≤ Qg ≤ Qmax, in p.u.
	Pmin, Pmax, Qmin, Qmax float64
	// Cost is the generator's active-power cost (nil if the file has no
	// gencost) and QCost its reactive-power cost (nil unless the file
	// gives one).
	Cost, QCost *Cost
}

// Cost is a generator cost in $/h, as a function of the power in p.u.
type Cost struct {
	// Model is 2 for a polynomial and 1 for a piecewise-linear cost.
	Model int
	// Poly (model 2) holds the coefficients a_0, a_1, … of
	// cost(p) = Σ_k a_k p^k, p in p.u. (MATPOWER's coefficients of the
	// power in MW times BaseMVA^k).
	Poly []float64
	// Points (model 1) are the breakpoints (p, cost) with p in p.u.,
	// in increasing p (Parse checks it).
	Points [][2]float64
}

// Eval returns cost(p) and its first and second derivatives. A
// polynomial cost (any Model but 1) is Σ_k a_k p^k. A piecewise-linear
// cost (Model 1) is, as MATPOWER's totcost evaluates it, the line through
// the breakpoints (p_k, c_k) and (p_{k+1}, c_{k+1}) of the first segment k
// with p ≤ p_{k+1} (so at a breakpoint the segment to its left), the
// first segment extended below p_1 and the last above p_n; df is that
// segment's slope and d2f = 0. With one breakpoint the cost is its c_1,
// with none 0.
func (c *Cost) Eval(p float64) (f, df, d2f float64) {
	if c.Model == 1 {
		return c.evalPiecewise(p)
	}
	for k := len(c.Poly) - 1; k >= 0; k-- {
		d2f = d2f*p + 2*df
		df = df*p + f
		f = f*p + c.Poly[k]
	}
	return f, df, d2f
}

// evalPiecewise is Eval of a piecewise-linear cost.
func (c *Cost) evalPiecewise(p float64) (f, df, d2f float64) {
	pts := c.Points
	switch len(pts) {
	case 0:
		return 0, 0, 0
	case 1:
		return pts[0][1], 0, 0
	}
	k := 0
	for k < len(pts)-2 && p > pts[k+1][0] {
		k++
	}
	a, b := pts[k], pts[k+1]
	df = (b[1] - a[1]) / (b[0] - a[0])
	return a[1] + df*(p-a[0]), df, 0
}

// PolynomialCosts returns nil when every generator of c has a polynomial
// cost (gencost model 2) of its active power, and a polynomial reactive
// cost where it has one: what Model's objective (NewModel, Objective,
// ObjectiveGrad, NLP) needs. Otherwise it returns an error naming the
// first generator without one and why: the file has no gencost matrix (a
// power-flow case), or the cost is piecewise linear (gencost model 1,
// which Cost.Eval evaluates but the reference solve does not support: its
// epigraph formulation is not implemented).
func (c *Case) PolynomialCosts() error {
	pwl, first := 0, -1
	for j, g := range c.Gens {
		if g.Cost == nil {
			return fmt.Errorf("case %q has no generation cost (no gencost matrix): the ACOPF objective needs a polynomial cost (gencost model 2) for every generator", c.Name)
		}
		if g.Cost.Model == 1 || g.QCost != nil && g.QCost.Model == 1 {
			pwl++
			if first < 0 {
				first = j
			}
		}
	}
	if first < 0 {
		return nil
	}
	g := c.Gens[first]
	what := "active"
	if g.Cost.Model != 1 {
		what = "reactive"
	}
	return fmt.Errorf("case %q: generator %d (bus %d) has a piecewise-linear %s-power cost (gencost model 1; %d of %d generators have one): the ACOPF objective (Model, its NLP) supports polynomial costs (gencost model 2) only; the epigraph formulation of piecewise-linear costs is not implemented",
		c.Name, first, c.Buses[g.Bus].ID, what, pwl, len(c.Gens))
}

// Branch is an in-service line or transformer of a Case, in the π model
// of MATPOWER: series admittance y_s = 1/(R + jX), total charging
// susceptance B, and an ideal transformer of complex ratio
// T = Tap·e^{j·Shift} at the From end.
type Branch struct {
	// From and To are indices in Case.Buses.
	From, To int
	// R, X, B are in p.u.
	R, X, B float64
	// RateA is the long-term apparent-power limit in p.u., +Inf when the
	// file gives 0 (no limit).
	RateA float64
	// Tap is the ratio (1 where the file gives 0) and Shift the phase
	// shift in radians.
	Tap, Shift float64
	// AngMin ≤ Va(From) − Va(To) ≤ AngMax in radians (±2π when the file
	// has no angle columns).
	AngMin, AngMax float64
}

// MATPOWER column indices (0-based) of the fields read.
const (
	busI, busType, busPd, busQd, busGs, busBs, busVm, busVa, busBaseKV, busVmax, busVmin = 0, 1, 2, 3, 4, 5, 7, 8, 9, 11, 12
	genBus, genPg, genQg, genQmax, genQmin, genVg, genStatus, genPmax, genPmin           = 0, 1, 2, 3, 4, 5, 7, 8, 9
	brF, brT, brR, brX, brB, brRateA, brTap, brShift, brStatus, brAngMin, brAngMax       = 0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12
)

// ReadFile reads a MATPOWER case file (gzip-compressed if its name ends
// in .gz) with Parse. The case is named after the file.
func ReadFile(path string) (*Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("acopf: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("acopf: %s: %w", path, err)
		}
		defer z.Close()
		r = z
	}
	c, err := Parse(r, path)
	if err != nil {
		return nil, err
	}
	c.Name = caseName(path)
	return c, nil
}

// caseName is the base name of path without .gz and .m.
func caseName(path string) string {
	b := filepath.Base(path)
	b = strings.TrimSuffix(b, ".gz")
	return strings.TrimSuffix(b, ".m")
}

// Parse reads a MATPOWER case file (format version 2, or version 1
// without the "mpc." prefix) from r; name is quoted in errors, which give
// the file line. It runs the part of MATLAB that case files use: matrices
// whose elements may be expressions (135/sqrt(3)), scalars, variables,
// indexed assignments such as mpc.gen(3, PMAX) = 100 or
// mpc.bus(:, [PD, QD]) = mpc.bus(:, [PD, QD]) / 1e3, and if blocks; a
// statement that could change the data and that it cannot run (a loop, an
// unknown function) is an error naming it. It takes baseMVA and the bus,
// gen and branch matrices (required) and gencost (optional: a power-flow
// case has none), and
//
//   - converts to per unit of baseMVA and angles to radians;
//   - drops out-of-service generators and branches (status ≤ 0) and
//     isolated buses (type 4) with the generators and branches at them,
//     as MATPOWER does, with a warning (Case.Warnings) where an isolated
//     bus carried load or in-service equipment;
//   - drops in-service DC lines (mpc.dcline) and the OPF extensions
//     mpc.A and mpc.N, which it does not model, with a warning each;
//   - maps bus numbers, in any order and with gaps, to indices in file
//     order;
//   - takes a transformer ratio of 0 as 1 (a line) and a RATE_A of 0 as
//     no limit;
//   - reads polynomial (model 2) and piecewise-linear (model 1) costs;
//     with 2·ng gencost rows the second ng are reactive-power costs.
//
// It returns an error naming the line for a missing matrix, too few
// columns, rows of unequal length, a token that is not a number, an
// unknown or duplicate bus number, a non-finite value where a finite one
// is needed, an unknown bus type or cost model, Vmin > Vmax, Pmin > Pmax
// or Qmin > Qmax, a branch impedance |R + jX| below MinImpedance, and
// piecewise-linear breakpoints whose powers do not increase; and an error
// for a case without a reference bus among the in-service buses, without
// an in-service generator, or with an island of the in-service grid (a
// bus without an in-service branch among them) that lacks a reference
// bus or a generator.
func Parse(r io.Reader, name string) (*Case, error) {
	rc, err := readMATPOWER(r, name)
	if err != nil {
		return nil, fmt.Errorf("acopf: %w", err)
	}
	c, err := build(rc, name)
	if err != nil {
		return nil, fmt.Errorf("acopf: %w", err)
	}
	c.Name = caseName(name)
	return c, nil
}

// build turns the raw matrices into a Case.
func build(rc *rawCase, name string) (*Case, error) {
	base, ok := rc.scalars["baseMVA"]
	if !ok {
		return nil, fmt.Errorf("%s: no baseMVA", name)
	}
	if !(base > 0) || math.IsInf(base, 0) {
		return nil, fmt.Errorf("%s:%d: baseMVA = %v, want a positive finite number", name, rc.scalarLines["baseMVA"], base)
	}
	for _, m := range []string{"bus", "gen", "branch"} {
		if _, ok := rc.matrices[m]; !ok {
			return nil, fmt.Errorf("%s: no %s matrix", name, m)
		}
	}
	for m, want := range requiredColumns {
		mat, ok := rc.matrices[m]
		if !ok || len(mat.rows) == 0 {
			continue
		}
		if got := len(mat.rows[0]); got < want {
			return nil, fmt.Errorf("%s:%d: %s has %d columns, want at least %d", name, mat.lines[0], m, got, want)
		}
	}
	c := &Case{BaseMVA: base}
	deg := math.Pi / 180

	// Buses.
	bm := rc.matrices["bus"]
	if len(bm.rows) == 0 {
		return nil, fmt.Errorf("%s:%d: bus matrix is empty", name, bm.start)
	}
	index := make(map[int]int, len(bm.rows)) // bus number → index, -1 if isolated
	var iso isolated
	for k, row := range bm.rows {
		line := bm.lines[k]
		if err := finiteCols(row, name, line, "bus", busI, busType, busPd, busQd, busGs, busBs, busVm, busVa, busBaseKV, busVmax, busVmin); err != nil {
			return nil, err
		}
		id, err := integer(row[busI], name, line, "bus number")
		if err != nil {
			return nil, err
		}
		if _, dup := index[id]; dup {
			return nil, fmt.Errorf("%s:%d: bus number %d appears twice", name, line, id)
		}
		typ, err := integer(row[busType], name, line, "bus type")
		if err != nil {
			return nil, err
		}
		if typ < 1 || typ > 4 {
			return nil, fmt.Errorf("%s:%d: bus %d has type %d, want 1, 2, 3 or 4", name, line, id, typ)
		}
		if typ == 4 {
			index[id] = -1
			iso.note(id, row[busPd], row[busQd])
			continue
		}
		if row[busVmin] > row[busVmax] {
			return nil, fmt.Errorf("%s:%d: bus %d has Vmin %v > Vmax %v", name, line, id, row[busVmin], row[busVmax])
		}
		if typ == 3 {
			c.Refs = append(c.Refs, len(c.Buses))
		}
		index[id] = len(c.Buses)
		c.Buses = append(c.Buses, Bus{
			ID: id, Type: typ,
			Pd: row[busPd] / base, Qd: row[busQd] / base, Gs: row[busGs] / base, Bs: row[busBs] / base,
			Vm: row[busVm], Va: row[busVa] * deg, Vmin: row[busVmin], Vmax: row[busVmax], BaseKV: row[busBaseKV],
		})
	}
	if len(c.Refs) == 0 {
		return nil, fmt.Errorf("%s:%d: no in-service reference bus (type 3)", name, bm.start)
	}
	lookup := func(v float64, line int, what string) (int, bool, error) {
		id, err := integer(v, name, line, what)
		if err != nil {
			return 0, false, err
		}
		i, ok := index[id]
		if !ok {
			return 0, false, fmt.Errorf("%s:%d: %s %d is not in the bus matrix", name, line, what, id)
		}
		return i, i >= 0, nil
	}

	// Generators, with their costs.
	gm := rc.matrices["gen"]
	ng := len(gm.rows)
	var costs, qcosts []*Cost
	if cm, ok := rc.matrices["gencost"]; ok {
		switch len(cm.rows) {
		case ng, 2 * ng:
		default:
			return nil, fmt.Errorf("%s:%d: gencost has %d rows, want ng = %d or 2·ng", name, cm.start, len(cm.rows), ng)
		}
		for k, row := range cm.rows {
			cost, err := readCost(row, base, name, cm.lines[k])
			if err != nil {
				return nil, err
			}
			if k < ng {
				costs = append(costs, cost)
			} else {
				qcosts = append(qcosts, cost)
			}
		}
	}
	for k, row := range gm.rows {
		line := gm.lines[k]
		if err := finiteCols(row, name, line, "gen", genBus, genPg, genQg, genVg, genStatus); err != nil {
			return nil, err
		}
		if err := notNaN(row, name, line, "gen", genQmax, genQmin, genPmax, genPmin); err != nil {
			return nil, err
		}
		i, live, err := lookup(row[genBus], line, "generator bus")
		if err != nil {
			return nil, err
		}
		if row[genStatus] <= 0 {
			continue
		}
		if !live {
			iso.gens++
			continue
		}
		g := Gen{
			Bus: i, Pg: row[genPg] / base, Qg: row[genQg] / base, Vg: row[genVg],
			Pmin: row[genPmin] / base, Pmax: row[genPmax] / base, Qmin: row[genQmin] / base, Qmax: row[genQmax] / base,
		}
		if g.Pmin > g.Pmax || g.Qmin > g.Qmax {
			return nil, fmt.Errorf("%s:%d: generator at bus %d has Pmin > Pmax or Qmin > Qmax", name, line, c.Buses[i].ID)
		}
		if costs != nil {
			g.Cost = costs[k]
		}
		if qcosts != nil {
			g.QCost = qcosts[k]
		}
		c.Gens = append(c.Gens, g)
	}

	// Branches.
	brm := rc.matrices["branch"]
	hasAngles := len(brm.rows) > 0 && len(brm.rows[0]) > brAngMax
	for k, row := range brm.rows {
		line := brm.lines[k]
		if err := finiteCols(row, name, line, "branch", brF, brT, brR, brX, brB, brTap, brShift, brStatus); err != nil {
			return nil, err
		}
		if err := notNaN(row, name, line, "branch", brRateA); err != nil {
			return nil, err
		}
		f, fLive, err := lookup(row[brF], line, "branch from-bus")
		if err != nil {
			return nil, err
		}
		t, tLive, err := lookup(row[brT], line, "branch to-bus")
		if err != nil {
			return nil, err
		}
		if row[brStatus] <= 0 {
			continue
		}
		if !fLive || !tLive {
			iso.branches++
			continue
		}
		if z := math.Hypot(row[brR], row[brX]); z < MinImpedance {
			return nil, fmt.Errorf("%s:%d: branch %d–%d has impedance |R + jX| = %v p.u., below MinImpedance = %v p.u.", name, line, c.Buses[f].ID, c.Buses[t].ID, z, MinImpedance)
		}
		b := Branch{
			From: f, To: t, R: row[brR], X: row[brX], B: row[brB],
			RateA: row[brRateA] / base, Tap: row[brTap], Shift: row[brShift] * deg,
			AngMin: -2 * math.Pi, AngMax: 2 * math.Pi,
		}
		if b.RateA <= 0 {
			b.RateA = math.Inf(1)
		}
		if b.Tap == 0 {
			b.Tap = 1
		}
		if hasAngles {
			if err := notNaN(row, name, line, "branch", brAngMin, brAngMax); err != nil {
				return nil, err
			}
			b.AngMin, b.AngMax = math.Max(row[brAngMin]*deg, -2*math.Pi), math.Min(row[brAngMax]*deg, 2*math.Pi)
			if row[brAngMin] == 0 && row[brAngMax] == 0 {
				b.AngMin, b.AngMax = -2*math.Pi, 2*math.Pi // MATPOWER: both 0 means unbounded
			}
		}
		c.Branches = append(c.Branches, b)
	}
	if err := c.checkIslands(name); err != nil {
		return nil, err
	}
	if w := iso.warning(base); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	c.Warnings = append(c.Warnings, dropped(rc)...)
	return c, nil
}

// MinImpedance is the smallest branch impedance |R + jX| in p.u. that
// Parse accepts: a branch's admittance enters the balance of its buses in
// terms of size |y| = 1/|R + jX| that cancel, so their rounding error
// |y|·ε reaches 1e-6 p.u. (the tolerance of a projection) near
// |R + jX| = 1e-10, and its squares overflow near 1e-154. MATPOWER's
// case16am, whose zero reactance its authors set to 1e-8 ohm
// (6.2e-10 p.u.), is the smallest of MATPOWER's cases.
const MinImpedance = 1e-10

// isolated counts what Parse drops with the isolated buses (type 4).
type isolated struct {
	ids            []int
	pd, qd         float64 // their load, MW and MVAr
	gens, branches int     // in-service generators and branches at them
}

func (s *isolated) note(id int, pd, qd float64) {
	s.ids = append(s.ids, id)
	s.pd += math.Abs(pd)
	s.qd += math.Abs(qd)
}

// warning describes what was dropped, or returns "" when the isolated
// buses carried no load and no in-service equipment.
func (s *isolated) warning(base float64) string {
	if s.pd == 0 && s.qd == 0 && s.gens == 0 && s.branches == 0 {
		return ""
	}
	return fmt.Sprintf("dropped %d isolated buses (type 4: %s) with %.6g MW and %.6g MVAr of load (absolute), %d in-service generators and %d in-service branches at them",
		len(s.ids), listIDs(s.ids), s.pd, s.qd, s.gens, s.branches)
}

// listIDs lists bus numbers, the first ten of them.
func listIDs(ids []int) string {
	const most = 10
	var b strings.Builder
	for k, id := range ids[:min(len(ids), most)] {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, id)
	}
	if len(ids) > most {
		fmt.Fprintf(&b, ", … (%d in all)", len(ids))
	}
	return b.String()
}

// dropped returns the warnings about the matrices of the file that Parse
// does not model: in-service DC lines and the OPF extensions A and N.
func dropped(rc *rawCase) []string {
	var w []string
	if m, ok := rc.matrices["dcline"]; ok {
		var live []string
		for _, row := range m.rows {
			// MATPOWER's dcline columns: F_BUS, T_BUS, BR_STATUS, PF (MW), …
			if len(row) > 3 && row[2] > 0 {
				d := fmt.Sprintf("%v–%v (PF %v MW", row[0], row[1], row[3])
				if len(row) > 10 {
					d += fmt.Sprintf(", Pmin %v, Pmax %v MW", row[9], row[10])
				}
				live = append(live, d+")")
			}
		}
		if len(live) > 0 {
			w = append(w, fmt.Sprintf("line %d: mpc.dcline: in-service DC lines are not modelled and were dropped, %d of them (%s): the power they carry is missing from the balance of their buses",
				m.start, len(live), strings.Join(live, ", ")))
		}
	}
	for _, k := range []string{"A", "N"} {
		if m, ok := rc.matrices[k]; ok && len(m.rows) > 0 {
			w = append(w, fmt.Sprintf("line %d: mpc.%s (an OPF extension: user constraints or costs) is not modelled and was dropped", m.start, k))
		}
	}
	return w
}

// checkIslands returns an error unless the case has an in-service
// generator and every island of its in-service grid (the buses connected
// by in-service branches) has a reference bus and an in-service
// generator: an island without a reference bus has undetermined angles
// (a bus without a branch is such an island, unless it is a reference
// bus), and one without a generator cannot serve its load.
func (c *Case) checkIslands(name string) error {
	if len(c.Gens) == 0 {
		return fmt.Errorf("%s: no in-service generator (every generator is out of service, status ≤ 0, or at an isolated bus)", name)
	}
	nb := len(c.Buses)
	parent := make([]int, nb)
	for i := range parent {
		parent[i] = i
	}
	var root func(int) int
	root = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, br := range c.Branches {
		parent[root(br.From)] = root(br.To)
	}
	members := map[int][]int{} // root → bus numbers, in file order
	var order []int
	for i, b := range c.Buses {
		r := root(i)
		if _, ok := members[r]; !ok {
			order = append(order, r)
		}
		members[r] = append(members[r], b.ID)
	}
	hasRef, hasGen := map[int]bool{}, map[int]bool{}
	for _, i := range c.Refs {
		hasRef[root(i)] = true
	}
	for _, g := range c.Gens {
		hasGen[root(g.Bus)] = true
	}
	for _, r := range order {
		ids := members[r]
		switch {
		case len(ids) == 1 && !hasRef[r]:
			return fmt.Errorf("%s: bus %d has no in-service branch (an isolated bus: its voltage angle is undetermined; MATPOWER drops it if its type is 4)", name, ids[0])
		case !hasRef[r]:
			return fmt.Errorf("%s: an island of %d buses (%s) has no in-service branch to the rest of the grid and no reference bus (type 3): its voltage angles are undetermined", name, len(ids), listIDs(ids))
		case !hasGen[r]:
			return fmt.Errorf("%s: the island of %d buses (%s) has no in-service generator: its load cannot be served", name, len(ids), listIDs(ids))
		}
	}
	return nil
}

// readCost reads one gencost row.
func readCost(row []float64, base float64, name string, line int) (*Cost, error) {
	if err := finiteCols(row, name, line, "gencost", 0, 3); err != nil {
		return nil, err
	}
	model, err := integer(row[0], name, line, "cost model")
	if err != nil {
		return nil, err
	}
	n, err := integer(row[3], name, line, "number of cost coefficients")
	if err != nil {
		return nil, err
	}
	width := n
	if model == 1 {
		width = 2 * n
	}
	if n < 0 || 4+width > len(row) {
		return nil, fmt.Errorf("%s:%d: gencost row gives %d coefficients but has %d columns", name, line, n, len(row))
	}
	vals := row[4 : 4+width]
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s:%d: gencost has a non-finite coefficient %v", name, line, v)
		}
	}
	switch model {
	case 2:
		// MATPOWER: c_{n-1} … c_0 for P in MW; here a_k for p in p.u.
		poly := make([]float64, n)
		for k := range n {
			poly[k] = vals[n-1-k] * math.Pow(base, float64(k))
		}
		return &Cost{Model: 2, Poly: poly}, nil
	case 1:
		pts := make([][2]float64, n)
		for k := range n {
			pts[k] = [2]float64{vals[2*k] / base, vals[2*k+1]}
			if k > 0 && !(vals[2*k] > vals[2*k-2]) {
				return nil, fmt.Errorf("%s:%d: piecewise-linear gencost: breakpoint %d at %v MW does not follow breakpoint %d at %v MW (the powers must increase)", name, line, k+1, vals[2*k], k, vals[2*k-2])
			}
		}
		return &Cost{Model: 1, Points: pts}, nil
	}
	return nil, fmt.Errorf("%s:%d: cost model %d, want 1 (piecewise linear) or 2 (polynomial)", name, line, model)
}

// finiteCols returns an error unless the given columns of row are finite.
func finiteCols(row []float64, name string, line int, what string, cols ...int) error {
	for _, j := range cols {
		if v := row[j]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s:%d: %s column %d is %v, want a finite number", name, line, what, j+1, v)
		}
	}
	return nil
}

// notNaN returns an error if one of the given columns of row is NaN
// (limits may be ±Inf).
func notNaN(row []float64, name string, line int, what string, cols ...int) error {
	for _, j := range cols {
		if math.IsNaN(row[j]) {
			return fmt.Errorf("%s:%d: %s column %d is NaN", name, line, what, j+1)
		}
	}
	return nil
}

// integer returns v as an int, or an error if it is not a whole number.
func integer(v float64, name string, line int, what string) (int, error) {
	if v != math.Trunc(v) || math.Abs(v) > 1<<52 {
		return 0, fmt.Errorf("%s:%d: %s %v is not an integer", name, line, what, v)
	}
	return int(v), nil
}
