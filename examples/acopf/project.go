package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/internal/cputime"
	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
)

// nearest solves the nearest-point problem of one sample with the
// reference solver (IPOPT under the build tag ipopt, ipopt.go); nil
// without it.
var nearest func(p *solvers.SparseNLP, init []float64) (*solvers.Result, error)

// batchResult is what one batch of projections measured.
type batchResult struct {
	samples             int
	pfBefore, pfAfter   float64 // max|c| of the power flow, p.u.
	limBefore, limAfter float64 // largest limit violation max(g, 0), p.u.
	meanDepth           float64
	depth, notConverged int
	elapsed, cpu        time.Duration
	peakRSS             int64 // bytes, -1 if unknown
	dist                float64
	xs, hats, finals    [][]float64 // the first samples' x, ŷ and ỹ
}

// project runs the -project mode: it perturbs the reference optimum of
// the case o.project times (or reads the points of -points), projects the
// points onto the power flow and the limits in batches, and prints what
// each batch measured. costErr, if not nil, says why the case has no
// objective (acopf.Case.PolynomialCosts): no reference solve then. It
// returns an error if no point converges.
func project(o options, m *acopf.Model, costErr error, stdout io.Writer) error {
	noise := acopf.Perturbation{Vm: o.noise, Va: o.noise, PQ: o.noise}
	x := m.Loads()
	var y0 []float64
	var what string
	var file *mat.Dense // -points: rows (x, ŷ)
	var err error
	if o.points != "" {
		if file, err = readPoints(o.points, m); err != nil {
			return err
		}
		n, _ := file.Dims()
		if o.project < 0 || o.project > n {
			o.project = n
		}
		what = "read from " + o.points
	} else if y0, what, err = baseOptimum(m, x, o.tol, costErr); err != nil {
		return err
	}
	eps := o.fbEps
	if eps == 0 {
		eps = acopf.FBEpsilon
	}
	con, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: eps})
	if err != nil {
		return err
	}
	s := enforce.Settings{Tol: o.projTol, MaxDepth: o.maxDepth, Path: o.path,
		LineSearch: o.lineSearch, MaxStep: o.maxStep, Damping: o.damping, StopWhenFeasible: o.stopFeasible}
	if o.float32 {
		s.Precision = enforce.Float32
	}
	a, err := enforce.NewAdaNP(con, s)
	if err != nil {
		return err
	}
	auto, err := enforce.NewAdaNP(con, enforce.Settings{})
	if err != nil {
		return err
	}
	var proj projector = a
	if o.interior {
		if o.lineSearch || o.maxStep != 0 || o.fbEps != 0 || o.path != enforce.PathSparse || o.damping != 0 || o.stopFeasible {
			return errors.New("-interior: -linesearch, -maxstep, -fbeps, -path, -damping and -stop-feasible set AdaNP's Fischer–Burmeister projection, which -interior replaces")
		}
		in, err := enforce.NewInterior(m.PowerFlow(), m.Box(), 0,
			enforce.Settings{Tol: o.projTol, MaxDepth: o.maxDepth, Path: enforce.PathSparse})
		if err != nil {
			return err
		}
		proj = in
	}
	pf := m.PowerFlow()
	nx, ny, npf := pf.Dims()
	_, nyExt, ncExt := con.Dims()
	rowPtr, _ := pf.Pattern()
	_, _, nlim := m.Inequalities().Dims()
	npin := 0
	if p := m.Pinned(); p != nil {
		_, _, npin = p.Dims()
	}
	if file != nil {
		fmt.Fprintf(stdout, "\nprojection of %d points %s (each with its own loads):\n", o.project, what)
	} else {
		fmt.Fprintf(stdout, "\nprojection of %d points perturbed %s (seed %d):\n", o.project, what, o.seed)
		fmt.Fprintf(stdout, "  Vm·(1+σξ), Va+σξ rad, Pg·(1+σξ), Qg·(1+σξ), ξ ~ N(0, 1), σ = %g\n", o.noise)
	}
	fmt.Fprintf(stdout, "onto the power flow (%d rows, %d nonzeros) and the limits (%d rows: %d pinned variables as equalities,\n",
		npf, rowPtr[npf], nlim, npin)
	fmt.Fprintf(stdout, "  %d bounds as Fischer–Burmeister rows, ε %g):\n", nlim-2*npin, eps)
	fmt.Fprintf(stdout, "  nc %d, ny %d + %d multipliers\n", ncExt, ny, nyExt-ny)
	if o.interior {
		fmt.Fprintf(stdout, "-interior: enforce.Interior instead, onto the power flow (%d rows) within the limits\n", npf)
		fmt.Fprintf(stdout, "  as bounds kept strictly (start margin %g): sparse path, tol %g, max depth %d; %d threads\n",
			enforce.DefaultInteriorMargin, o.projTol, o.maxDepth, runtime.GOMAXPROCS(0))
	} else {
		fmt.Fprintf(stdout, "AdaNP: %v (PathAuto: %v), tol %g, max depth %d, line search %v, max step %g; %d threads\n",
			a.Path(), auto.Path(), o.projTol, o.maxDepth, o.lineSearch, o.maxStep, runtime.GOMAXPROCS(0))
		if o.damping != 0 || o.stopFeasible {
			fmt.Fprintf(stdout, "  damping θ₀ %g, stop when feasible %v\n", o.damping, o.stopFeasible)
		}
		if info, ok := a.SparseInfo(); ok {
			fmt.Fprintf(stdout, "  G: nnz(L) %d, %.3g flops per factorisation; %d bound rows eliminated in closed form\n",
				info.NNZL, info.Flops, info.PairRows)
		}
	}
	fmt.Fprintf(stdout, "%5s %7s %10s %10s %10s %10s %6s %5s %5s %9s %9s %10s\n",
		"batch", "samples", "pf max|c|", "after", "max g⁺", "after", "depth", "max", "fails", "wall [s]", "CPU [s]", "peak RSS")

	rng := rand.New(rand.NewPCG(o.seed, 28))
	var total, first batchResult
	for b, done := 0, 0; done < o.project; b++ {
		rows := min(o.batch, o.project-done)
		xb, yb := mat.NewDense(rows, nx, nil), mat.NewDense(rows, ny, nil)
		for i := range rows {
			if file != nil {
				xb.SetRow(i, file.RawRowView(done + i)[:nx])
				yb.SetRow(i, file.RawRowView(done + i)[nx:])
				continue
			}
			xb.SetRow(i, x)
			m.Perturb(yb.RawRowView(i), y0, noise, rng)
		}
		r, err := projectBatch(m, proj, xb, yb, o.nearest)
		if err != nil {
			return err
		}
		if b == 0 {
			first = r
		}
		fmt.Fprintf(stdout, "%5d %7d %10.3g %10.3g %10.3g %10.3g %6.2f %5d %5d %9.2f %9.2f %10s\n",
			b+1, rows, r.pfBefore, r.pfAfter, r.limBefore, r.limAfter, r.meanDepth, r.depth, r.notConverged,
			r.elapsed.Seconds(), r.cpu.Seconds(), mib(r.peakRSS))
		total.pfBefore = math.Max(total.pfBefore, r.pfBefore)
		total.pfAfter = math.Max(total.pfAfter, r.pfAfter)
		total.limBefore = math.Max(total.limBefore, r.limBefore)
		total.limAfter = math.Max(total.limAfter, r.limAfter)
		total.meanDepth += r.meanDepth * float64(rows)
		total.depth = max(total.depth, r.depth)
		total.notConverged += r.notConverged
		total.peakRSS = max(total.peakRSS, r.peakRSS)
		total.elapsed += r.elapsed
		total.cpu += r.cpu
		done += rows
	}
	n := float64(o.project)
	wall, cpu := total.elapsed.Seconds()/n, total.cpu.Seconds()/n
	fmt.Fprintf(stdout, "all %d: power flow max|c| %.3g → %.3g p.u., max g⁺ %.3g → %.3g; depth mean %.2f, max %d\n",
		o.project, total.pfBefore, total.pfAfter, total.limBefore, total.limAfter, total.meanDepth/n, total.depth)
	fmt.Fprintf(stdout, "  %d not converged (max|c| > %g); per instance %.3g s wall, %.3g s CPU; peak RSS %s\n",
		total.notConverged, o.projTol, wall, cpu, mib(total.peakRSS))
	if total.notConverged == o.project {
		return fmt.Errorf("-project: none of the %d points converged (max|c| > -projtol %g after at most -maxdepth %d steps)", o.project, o.projTol, o.maxDepth)
	}
	if nearest == nil {
		fmt.Fprintln(stdout, "reference nearest point: build with -tags ipopt to time IPOPT on the same problem")
		return nil
	}
	var refWall, refCPU float64
	for k, yh := range first.hats {
		x := first.xs[k]
		p, err := m.NearestPointNLP(x, yh, nil)
		if err != nil {
			return err
		}
		c0 := cputime.Process()
		res, err := nearest(p, yh)
		c1 := cputime.Process()
		if err != nil {
			return err
		}
		refWall, refCPU = refWall+res.Runtime.Seconds(), refCPU+(c1-c0).Seconds()
		pfRes, limRes := feasibility(m, x, res.Y)
		dRef, dOurs := dist(res.Y, yh), dist(first.finals[k], yh)
		fmt.Fprintf(stdout, "IPOPT, nearest point of sample %d (min ½‖y−ŷ‖², same equalities and limits, from ŷ):\n", k+1)
		fmt.Fprintf(stdout, "  %v, %d iterations, %.3g s wall, %.3g s CPU; power flow max|c| %.2g p.u., max g⁺ %.2g\n",
			res.Status, res.Iterations, res.Runtime.Seconds(), (c1 - c0).Seconds(), pfRes, limRes)
		fmt.Fprintf(stdout, "  ‖y−ŷ‖ %.6g, AdaNP's %.6g (%+.2g %%)\n", dRef, dOurs, 100*(dOurs/dRef-1))
		if res.Status != solvers.Success {
			return fmt.Errorf("the nearest-point solve of sample %d ended with status %v", k+1, res.Status)
		}
	}
	nr := float64(len(first.hats))
	fmt.Fprintf(stdout, "IPOPT, mean of %d: %.3g s wall, %.3g s CPU; AdaNP per instance %.0f× faster (wall), %.0f× (CPU)\n",
		len(first.hats), refWall/nr, refCPU/nr, refWall/nr/wall, refCPU/nr/cpu)
	return nil
}

// projector is an *enforce.AdaNP or an *enforce.Interior.
type projector interface {
	Project(x, yhat *mat.Dense) (*mat.Dense, enforce.Stats, error)
}

// projectBatch projects the rows of yb and measures the batch, keeping ŷ
// and ỹ of its first keep samples.
func projectBatch(m *acopf.Model, a projector, xb, yb *mat.Dense, keep int) (batchResult, error) {
	rows, _ := yb.Dims()
	r := batchResult{samples: rows}
	for i := range rows {
		pfc, lim := feasibility(m, xb.RawRowView(i), yb.RawRowView(i))
		r.pfBefore, r.limBefore = math.Max(r.pfBefore, pfc), math.Max(r.limBefore, lim)
	}
	runtime.GC()
	resetPeakRSS()
	start, c0 := time.Now(), cputime.Process()
	proj, st, err := a.Project(xb, yb)
	r.elapsed, r.cpu = time.Since(start), cputime.Process()-c0
	r.peakRSS = peakRSS()
	if err != nil {
		return r, err
	}
	for i := range rows {
		pfc, lim := feasibility(m, xb.RawRowView(i), proj.RawRowView(i))
		r.pfAfter, r.limAfter = math.Max(r.pfAfter, pfc), math.Max(r.limAfter, lim)
	}
	r.meanDepth, r.depth, r.notConverged = st.MeanDepth, st.Depth, st.NotConverged
	for i := range min(keep, rows) {
		r.xs = append(r.xs, append([]float64(nil), xb.RawRowView(i)...))
		r.hats = append(r.hats, append([]float64(nil), yb.RawRowView(i)...))
		r.finals = append(r.finals, append([]float64(nil), proj.RawRowView(i)...))
	}
	return r, nil
}

// baseOptimum returns the point to perturb and what it is: the cached
// reference optimum where the case has one, else the reference solve where
// the case has an objective (costErr nil) and this build can do it, else
// the case file's operating point.
func baseOptimum(m *acopf.Model, x []float64, tol float64, costErr error) ([]float64, string, error) {
	opt, err := acopf.ReferenceOptimum(m.Case.Name)
	switch {
	case err == nil:
		return opt.Y, "around the cached optimum (" + strings.SplitN(opt.Solver, ",", 2)[0] + ")", nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", err
	}
	if costErr != nil {
		return m.OperatingPoint(), "around the case file's operating point (no cached optimum; no reference solve: the case has no polynomial costs)", nil
	}
	if referenceName != "IPOPT" && len(m.Case.Buses) > pureGoBuses {
		return m.OperatingPoint(), "around the case file's operating point (no cached optimum; -tags ipopt solves)", nil
	}
	p, err := m.NLP(x, acopf.Formulation{})
	if err != nil {
		return nil, "", err
	}
	res, err := reference(p, m.FlatStart(), tol)
	if err != nil {
		return nil, "", err
	}
	if res.Status != solvers.Success {
		return nil, "", fmt.Errorf("the reference solve ended with status %v", res.Status)
	}
	return res.Y, "around the reference optimum of " + referenceName, nil
}

// feasibility returns the power flow's max|c| and the largest limit
// violation max(g, 0) at y.
func feasibility(m *acopf.Model, x, y []float64) (pf, lim float64) {
	_, _, npf := m.PowerFlow().Dims()
	_, _, nl := m.Inequalities().Dims()
	c, g := make([]float64, npf), make([]float64, nl)
	m.PowerFlow().Eval(x, y, c, nil)
	m.Inequalities().Eval(x, y, g, nil)
	return floats.Norm(c, math.Inf(1)), math.Max(0, floats.Max(g))
}

func dist(a, b []float64) float64 { return floats.Distance(a, b, 2) }

// resetPeakRSS resets the process's peak resident set size (Linux: VmHWM,
// by writing 5 to /proc/self/clear_refs); elsewhere it does nothing.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS returns the process's peak resident set size in bytes since the
// last resetPeakRSS (Linux's VmHWM), or -1 where /proc does not give it.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n << 10
				}
			}
		}
	}
	return -1
}

// mib formats a byte count in MiB, or "n/a" when negative.
func mib(n int64) string {
	if n < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// readPoints reads the CSV file name of -points: one point per row, the
// loads x (nx numbers) then ŷ (ny numbers) of m, all finite. A row of
// another length or a number that does not parse is an error naming the
// line.
func readPoints(name string, m *acopf.Model) (*mat.Dense, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	nx, ny := m.Dims()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	var data []float64
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("-points %s: %w", name, err)
		}
		if len(rec) != nx+ny {
			return nil, fmt.Errorf("-points %s: line %d has %d numbers, want nx + ny = %d + %d for %s", name, line, len(rec), nx, ny, m.Case.Name)
		}
		for j, v := range rec {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("-points %s: line %d, column %d: %q is not a finite number", name, line, j+1, v)
			}
			data = append(data, f)
		}
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("-points %s: no points", name)
	}
	return mat.NewDense(len(data)/(nx+ny), nx+ny, data), nil
}
