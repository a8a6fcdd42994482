// Command acopf loads a power grid (a case shipped in package
// problems/acopf, or any MATPOWER case file), reports its size and the
// power-flow residual max|c| at the file's operating point and at the flat
// start, and solves its ACOPF in PGLib-OPF's formulation, with IPOPT when
// built with -tags ipopt and otherwise with the pure-Go interior-point
// method (cases of at most 200 buses), and compares the optimum with the
// objective PGLib-OPF publishes (BASELINE.md):
//
//	go run ./examples/acopf -quick                        # case57, seconds
//	go run -tags ipopt ./examples/acopf -case pglib_opf_case1354_pegase
//	go run ./examples/acopf -case my_grid.m -nolinelimits
//
// At the reference optimum it checks the enforce constraints of the
// learning set-up (acopf.Model: the power flow and the voltage and
// generation limits) and prints the voltage profile that a power engineer
// reads first: the lowest and highest voltage magnitudes, the buses at a
// limit, and the generators at a limit. With -out it writes the profile
// as a figure (acopf_voltage.png) and a table (acopf_voltage.csv).
//
// With -project N it instead perturbs the case's reference optimum N
// times and projects the points onto the power flow and the voltage and
// generation limits (acopf.Model.Constraint) with AdaNP's sparse path, in
// batches of -batch, and prints per batch the power-flow residual max|c|
// and the largest limit violation before and after, the depth, the time
// and the peak resident memory; with -tags ipopt it also solves the
// nearest-point problem of the first point with IPOPT and compares:
//
//	go run ./examples/acopf -quick -project 10             # case57
//	go run -tags ipopt ./examples/acopf -case case10000_goc -project 100 -fbeps 1e-6
//
// The reference optimum is the one package acopf caches for the PGLib
// cases (acopf.ReferenceOptimum), else the reference solve. On the large
// grids, with the limits' default smoothing ε = 1e-8, full Gauss–Newton
// steps from σ = 1e-3 perturbations can take dozens of steps to settle
// the complementarity of the limits; -fbeps 1e-6
// (acopf.ProjectionFBEpsilon) makes them converge in at most 9 to 11 steps
// (docs/acopf.md). -points FILE projects the rows of a CSV file instead
// (loads and ŷ per row: a trained network's predictions, as
// examples/acopf-dc3 -predictions writes them), with IPOPT's nearest point
// of each of the first -nearest from the same ŷ and loads. -interior
// projects with enforce.Interior instead, onto
// the power flow with the limits kept strictly (acopf.Model.Box): it
// converges from larger perturbations (σ = 1e-2 on case1354), to a point
// farther from ŷ; -float32 factors in single precision. -project exits
// with status 1 when none of the points converges.
//
// The reader's warnings (acopf.Case.Warnings: isolated buses, DC lines and
// OPF extensions it dropped) are printed first. A case without polynomial
// costs (no gencost, or piecewise-linear costs) has no reference solve,
// which is an error, but -project works on it, perturbing the case file's
// operating point.
package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/examples/internal/report"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
)

// options are the command-line settings.
type options struct {
	caseName     string
	noLineLimits bool
	tol          float64
	out          string

	// The -project mode.
	project, batch, maxDepth int
	nearest                  int
	seed                     uint64
	noise, projTol, maxStep  float64
	fbEps                    float64
	lineSearch, interior     bool
	float32                  bool
	// path, damping and stopFeasible are AdaNP's Settings.Path,
	// Damping and StopWhenFeasible (-path, -damping, -stop-feasible).
	path         enforce.Path
	damping      float64
	stopFeasible bool
	points       string
}

// reference solves the ACOPF: IPOPT under the build tag ipopt (ipopt.go),
// otherwise the pure-Go interior-point method for cases of at most
// pureGoBuses buses; referenceName names it.
var (
	reference     = pureGo
	referenceName = "the pure-Go interior-point method solvers.SolveSparse"
)

// pureGoBuses is the largest case the pure-Go method solves here: it
// forms the KKT matrix densely (case118: about 1 700 rows, a minute or
// two; case300: about 3 800).
const pureGoBuses = 200

// pureGo solves p with solvers.SolveSparse.
func pureGo(p *solvers.SparseNLP, init []float64, tol float64) (*solvers.Result, error) {
	return solvers.SolveSparse(p, init, &solvers.Settings{Tol: tol, FeasTol: 1e-8})
}

// flags registers the command line on o.
func flags(o *options) *harness.Flags {
	f := harness.New("acopf", "AC optimal power flow on a MATPOWER case: size, power-flow residuals, and the reference optimum (IPOPT with -tags ipopt, else pure Go up to 200 buses) against PGLib-OPF's published objective.")
	f.StringVar(&o.caseName, "case", o.caseName, "a shipped case ("+joinNames()+"; the prefix pglib_opf_ may be left out) or the path of a MATPOWER .m or .m.gz file")
	f.BoolVar(&o.noLineLimits, "nolinelimits", o.noLineLimits, "drop the thermal and angle-difference limits (DC3's formulation) from the reference solve")
	f.Float64Var(&o.tol, "tol", o.tol, "the reference solver's tolerance (IPOPT's tol; solvers.Settings.Tol for the pure-Go method)")
	f.IntVar(&o.project, "project", o.project, "perturb the case's reference optimum (the cached one, else the reference solve) this many times and project the points onto the power flow and limits with AdaNP's sparse path, instead of solving the ACOPF")
	f.StringVar(&o.points, "points", o.points, "-project: project the points of this CSV file instead of perturbations (-noise and -seed must then keep their defaults; each row the loads x then ŷ, nx + ny numbers, as examples/acopf-dc3 -predictions writes a network's predictions); -project N takes its first N rows, 0 all")
	f.IntVar(&o.batch, "batch", o.batch, "-project: points per batch")
	f.Uint64Var(&o.seed, "seed", o.seed, "-project: seed of the perturbations")
	f.Float64Var(&o.noise, "noise", o.noise, "-project: standard deviation σ of the perturbations: Vm·(1+σξ), Va+σξ (radians), Pg, Qg·(1+σξ), ξ ~ N(0, 1)")
	f.Float64Var(&o.projTol, "projtol", o.projTol, "-project: AdaNP's tolerance on max|c| (Settings.Tol)")
	f.IntVar(&o.maxDepth, "maxdepth", o.maxDepth, "-project: AdaNP's largest number of steps (Settings.MaxDepth)")
	f.BoolVar(&o.lineSearch, "linesearch", o.lineSearch, "-project: backtrack AdaNP's steps (Settings.LineSearch)")
	f.Float64Var(&o.maxStep, "maxstep", o.maxStep, "-project: bound on the length of AdaNP's steps, 0 for none (Settings.MaxStep)")
	f.Func("path", "-project: AdaNP's Settings.Path, \"sparse\" (PathSparse, the default: G = B·W⁻¹·Bᵀ factored) or \"augmented\" (PathAugmented: solves through the augmented system [W Bᵀ; B −δI]; the same steps up to rounding)", func(v string) error {
		var err error
		o.path, err = harness.ParseSparsePath(v)
		return err
	})
	f.Float64Var(&o.damping, "damping", o.damping, "-project: AdaNP's Levenberg–Marquardt damping θ₀ (Settings.Damping; 0: off, as every run recorded before 2026-12-08; enforce.DefaultDamping is 1e-3)")
	f.BoolVar(&o.stopFeasible, "stop-feasible", o.stopFeasible, "-project: stop each point once it meets the power flow and the limits to -projtol, its multipliers' complementarity not settled (Settings.StopWhenFeasible)")
	f.BoolVar(&o.float32, "float32", o.float32, "-project: single-precision factorisations (Settings.Precision Float32)")
	f.BoolVar(&o.interior, "interior", o.interior, "-project: project onto the power flow within the limits with enforce.Interior (affine-scaling Newton steps kept inside the bounds) instead of AdaNP with the limits' Fischer–Burmeister rows; -linesearch, -maxstep and -fbeps do not apply")
	f.IntVar(&o.nearest, "nearest", o.nearest, "-project with -tags ipopt: solve the nearest-point problems of this many of the first batch's points with IPOPT, and compare AdaNP's time per instance with their mean")
	f.Float64Var(&o.fbEps, "fbeps", o.fbEps, "-project: smoothing ε of the limits' Fischer–Burmeister rows, 0 for acopf.FBEpsilon (1e-8); 1e-6 (acopf.ProjectionFBEpsilon) converges in a few steps (acopf.ConstraintOptions.FBEps)")
	f.Out(&o.out)
	f.Quick("case", "pglib_opf_case57_ieee")
	return f
}

func joinNames() string {
	s := ""
	for i, n := range acopf.Names() {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// cli runs the command with the arguments args and returns its exit status.
var cli = harness.Command(defaults, flags, func(o options, stdout, progress io.Writer) error {
	if err := run(o, stdout, progress); err != nil {
		return trimmed{err}
	}
	return nil
})

// trimmed is an error of run without the prefix "acopf: " that package
// acopf's errors carry, which the program's name, printed before it,
// already gives.
type trimmed struct{ error }

func (e trimmed) Error() string { return strings.TrimPrefix(e.error.Error(), "acopf: ") }

func (e trimmed) Unwrap() error { return e.error }

func main() { os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr)) }

// defaults: case118 with PGLib's formulation.
func defaults() options {
	return options{caseName: "pglib_opf_case118_ieee", tol: 1e-8, out: harness.DefaultOut("acopf"),
		batch: 100, seed: 1, noise: 1e-3, projTol: 1e-6, maxDepth: 100, nearest: 1, path: enforce.PathSparse}
}

func run(o options, stdout, progress io.Writer) error {
	if !(o.tol > 0) || math.IsInf(o.tol, 1) {
		return fmt.Errorf("-tol %v must be positive and finite", o.tol)
	}
	if o.points != "" {
		if d := defaults(); o.noise != d.noise || o.seed != d.seed {
			return fmt.Errorf("-points projects the file's rows as they are; -noise and -seed set the perturbations it replaces (got -noise %v -seed %d)", o.noise, o.seed)
		}
		if o.project == 0 {
			o.project = -1 // every row of the file
		}
	}
	if o.project < -1 || o.project == -1 && o.points == "" || o.project != 0 && (o.batch < 1 || o.maxDepth < 1 || o.nearest < 1 || !(o.noise >= 0) || math.IsInf(o.noise, 1) ||
		!(o.projTol > 0) || !(o.maxStep >= 0) || math.IsInf(o.maxStep, 1) || !(o.fbEps >= 0) || math.IsInf(o.fbEps, 1)) {
		return fmt.Errorf("-project %d needs -batch ≥ 1, -maxdepth ≥ 1, -nearest ≥ 1, -projtol > 0, finite -noise ≥ 0, -maxstep ≥ 0 and -fbeps ≥ 0 (got %d, %d, %v, %v, %v, %v)",
			o.project, o.batch, o.maxDepth, o.projTol, o.noise, o.maxStep, o.fbEps)
	}
	c, err := acopf.Load(o.caseName)
	if err != nil {
		return err
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(stdout, "WARNING: %s: %s\n", c.Name, w)
	}
	// The projection and the residuals need no objective: a case without
	// polynomial costs gets zero costs for them, and no reference solve.
	costErr := c.PolynomialCosts()
	if costErr != nil {
		c = withoutCosts(c)
	}
	m, err := acopf.NewModel(c)
	if err != nil {
		return err
	}
	pf := m.PowerFlow()
	nx, ny, nc := pf.Dims()
	_, col := pf.Pattern()
	var load, qload float64
	for _, b := range c.Buses {
		load += b.Pd
		qload += b.Qd
	}
	refs := make([]int, len(c.Refs))
	for k, r := range c.Refs {
		refs[k] = c.Buses[r].ID
	}
	fmt.Fprintf(stdout, "case %s: %d buses, %d generators, %d branches (in service), base %g MVA, reference bus %v\n",
		c.Name, len(c.Buses), len(c.Gens), len(c.Branches), c.BaseMVA, refs)
	fmt.Fprintf(stdout, "load %.1f MW, %.1f MVAr at %d load buses\n", load*c.BaseMVA, qload*c.BaseMVA, nx/2)
	fmt.Fprintf(stdout, "enforce problem: nx = %d (Pd, Qd), ny = %d (Vm, Va, Pg, Qg), %d power-flow equations, %d limits\n",
		nx, ny, nc, limitRows(m))
	fmt.Fprintf(stdout, "  ∂c/∂y of the power flow: %d nonzeros, %.2g%% dense\n", len(col), 100*float64(len(col))/float64(nc)/float64(ny))

	x := m.Loads()
	cv := make([]float64, nc)
	residual := func(y []float64) float64 {
		pf.Eval(x, y, cv, nil)
		return maxAbs(cv)
	}
	fmt.Fprintf(stdout, "power-flow residual max|c| [p.u.]: %.3g at the file's operating point, %.3g at the flat start\n",
		residual(m.OperatingPoint()), residual(m.FlatStart()))
	if o.project != 0 {
		return project(o, m, costErr, stdout)
	}
	if costErr != nil {
		return fmt.Errorf("no reference ACOPF: %w", costErr)
	}

	y := m.OperatingPoint()
	what := "the file's operating point"
	if referenceName != "IPOPT" && len(c.Buses) > pureGoBuses {
		fmt.Fprintf(stdout, "reference solve: more than %d buses: build with -tags ipopt (IPOPT) to solve the ACOPF\n", pureGoBuses)
	} else {
		form := acopf.Formulation{NoFlowLimits: o.noLineLimits, NoAngleLimits: o.noLineLimits}
		p, err := m.NLP(x, form)
		if err != nil {
			return err
		}
		res, err := reference(p, m.FlatStart(), o.tol)
		if err != nil {
			return err
		}
		name := "PGLib-OPF's formulation (thermal and angle-difference limits)"
		if o.noLineLimits {
			name = "without line limits (DC3's formulation)"
		}
		fmt.Fprintf(stdout, "\nreference ACOPF, %s, %s from the flat start (tol %g):\n", name, referenceName, o.tol)
		fmt.Fprintf(stdout, "  status %v after %d iterations, %.3f s; objective %.6e $/h; max violation %.2g\n",
			res.Status, res.Iterations, res.Runtime.Seconds(), res.Objective, res.MaxViolation)
		if pub, ok := acopf.Published[c.Name]; ok && !o.noLineLimits {
			fmt.Fprintf(stdout, "  PGLib-OPF BASELINE.md: %.4e $/h; relative difference %.2e\n", pub, math.Abs(res.Objective-pub)/pub)
		}
		if res.Status != solvers.Success {
			return fmt.Errorf("the reference solve ended with status %v", res.Status)
		}
		y, what = res.Y, "the reference optimum"
		g := make([]float64, limitRows(m))
		m.Inequalities().Eval(x, y, g, nil)
		fmt.Fprintf(stdout, "  enforce constraints there: power flow max|c| %.2g p.u., limits max g⁺ %.2g\n",
			residual(y), math.Max(0, maxOf(g)))
	}
	profile(stdout, m, y, what)
	if o.out != "" {
		if err := writeProfile(o.out, m, y, what); err != nil {
			return err
		}
	}
	return nil
}

// withoutCosts returns a copy of c whose generators have the zero
// polynomial cost.
func withoutCosts(c *acopf.Case) *acopf.Case {
	d := *c
	d.Gens = append([]acopf.Gen(nil), c.Gens...)
	for j := range d.Gens {
		d.Gens[j].Cost, d.Gens[j].QCost = &acopf.Cost{Model: 2}, nil
	}
	return &d
}

// limitRows returns the number of rows of the model's limits.
func limitRows(m *acopf.Model) int {
	_, _, n := m.Inequalities().Dims()
	return n
}

// profile prints the voltage profile and the generators at a limit.
func profile(w io.Writer, m *acopf.Model, y []float64, what string) {
	c := m.Case
	nb, ng := len(c.Buses), len(c.Gens)
	const tol = 1e-4
	lo, hi := 0, 0
	atMin, atMax := 0, 0
	for i, b := range c.Buses {
		if y[i] < y[lo] {
			lo = i
		}
		if y[i] > y[hi] {
			hi = i
		}
		if y[i] <= b.Vmin+tol {
			atMin++
		}
		if y[i] >= b.Vmax-tol {
			atMax++
		}
	}
	var pAt, qAt int
	var pg float64
	for j, g := range c.Gens {
		p, q := y[2*nb+j], y[2*nb+ng+j]
		pg += p
		if p <= g.Pmin+tol || p >= g.Pmax-tol {
			pAt++
		}
		if q <= g.Qmin+tol || q >= g.Qmax-tol {
			qAt++
		}
	}
	fmt.Fprintf(w, "\nvoltage profile at %s:\n", what)
	fmt.Fprintf(w, "  Vm from %.4f p.u. (bus %d) to %.4f p.u. (bus %d); %d buses at Vmin, %d at Vmax (within %g)\n",
		y[lo], c.Buses[lo].ID, y[hi], c.Buses[hi].ID, atMin, atMax, tol)
	fmt.Fprintf(w, "  generation %.1f MW; %d of %d generators at a P limit, %d at a Q limit\n", pg*c.BaseMVA, pAt, ng, qAt)
}

// writeProfile writes the voltage magnitude of every bus, sorted by bus
// number, with its limits, as acopf_voltage.csv and acopf_voltage.png.
func writeProfile(dir string, m *acopf.Model, y []float64, what string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c := m.Case
	idx := make([]int, len(c.Buses))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return c.Buses[idx[a]].ID < c.Buses[idx[b]].ID })
	var xs, vm, vmin, vmax []float64
	for k, i := range idx {
		xs = append(xs, float64(k+1))
		vm = append(vm, y[i])
		vmin = append(vmin, c.Buses[i].Vmin)
		vmax = append(vmax, c.Buses[i].Vmax)
	}
	err := report.WriteFile(filepath.Join(dir, "acopf_voltage.csv"), func(w io.Writer) error {
		if _, err := fmt.Fprintln(w, "bus,vm,va_deg,vmin,vmax"); err != nil {
			return err
		}
		for _, i := range idx {
			b := c.Buses[i]
			if _, err := fmt.Fprintf(w, "%d,%.6f,%.4f,%g,%g\n", b.ID, y[i], y[len(c.Buses)+i]*180/math.Pi, b.Vmin, b.Vmax); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fig := report.Figure{Title: fmt.Sprintf("%s: voltage magnitudes at %s", c.Name, what), XLabel: "bus (sorted by number)", YLabel: "Vm [p.u.]"}
	return report.SavePlot(filepath.Join(dir, "acopf_voltage.png"), fig,
		report.Series{Label: "Vm", X: xs, Y: vm, Points: true},
		report.Series{Label: "Vmin", X: xs, Y: vmin, Dashed: true},
		report.Series{Label: "Vmax", X: xs, Y: vmax, Dashed: true})
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}
