package main

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/solvers"
)

// DC3's data recipe (locuslab/DC3, datasets/acopf/matlab_datasets/
// GenerateSamples.m and make_dataset.py; utils.py ACOPFProblem).
const (
	// maxChange is the largest relative change of a load (±70 %).
	maxChange = 0.7
	// corrCoeff is the correlation of two load factors.
	corrCoeff = 0.5
	// minPF and maxPF bound the power factor of a sample's loads.
	minPF, maxPF = 0.8, 1.0
	// dc3Samples is the size of DC3's data set; the first dc3Train are
	// its training set, the next dc3Valid its validation set and the
	// rest its test set (DC3's fractions 1 − 2·0.0833, 0.0833, 0.0833 of
	// 1200, truncated as DC3 truncates them).
	dc3Samples, dc3Train, dc3Valid = 1200, 1000, 100
	// objScale is DC3's scaling of the generation cost: the cost in $/h
	// divided by the square of the generators' mean MVA base (100 MVA for
	// every generator of MATPOWER's case57).
	objScale = 1e4
	// dc3Case is DC3's grid: MATPOWER 6.0's case57 (the default -case).
	dc3Case = "matpower6_case57"
	// minAccept is the least acceptance rate of the joint rejection
	// sampler of the load factors (DC3's) at which sampleLoads uses it;
	// below it (grids with many loads) it draws the same law by
	// conditioning on the common factor (factorDraw).
	minAccept = 0.01
)

// sigma is the standard deviation of a load factor: ±70 % is its 95th
// percentile (GenerateSamples.m: ScaleSigma = 0.7/1.645).
var sigma = maxChange / 1.645

// sampleLoads draws n load vectors x (as acopf.PowerFlow's x) of model m
// by DC3's recipe from seed: at every bus with a positive base load Pd,
// Pd = Pd₀·f with (f_1, …, f_L) from the normal distribution of mean 1
// and covariance σ²(ρ·11ᵀ + (1−ρ)I), ρ = 0.5, truncated to the box
// (0.3, 1.7) by rejection (DC3's mvnrnd_trn), and Qd = Pd·tan(acos(pf))·
// sign(Qd₀) with pf ~ U(0.8, 1) drawn per bus; other loads stay at the
// case's values.
func sampleLoads(m *acopf.Model, n int, seed uint64) ([][]float64, error) {
	c := m.Case
	lb := m.PowerFlow().LoadBuses()
	nl := len(lb)
	base := m.Loads()
	var scaled []int // positions in lb of the buses DC3 scales
	for k, i := range lb {
		if c.Buses[i].Pd > 0 {
			scaled = append(scaled, k)
		}
	}
	if len(scaled) == 0 {
		return nil, errors.New("the case has no bus with a positive load")
	}
	rng := rand.New(rand.NewPCG(seed, 0x64633361636f7066))
	a, b := math.Sqrt(corrCoeff), math.Sqrt(1-corrCoeff)
	f := make([]float64, len(scaled))
	joint := acceptance(len(scaled)) >= minAccept
	out := make([][]float64, 0, n)
	for tries := 0; len(out) < n; tries++ {
		if tries > 1000*n+100000 {
			return nil, errors.New("rejection sampling of the load factors does not accept")
		}
		if joint {
			common := rng.NormFloat64()
			ok := true
			for k := range f {
				f[k] = 1 + sigma*(a*common+b*rng.NormFloat64())
				if f[k] <= 1-maxChange || f[k] >= 1+maxChange {
					ok = false
				}
			}
			if !ok {
				continue
			}
		} else if !factorDraw(rng, f) {
			continue
		}
		x := append([]float64(nil), base...)
		for k, j := range scaled {
			i := lb[j]
			pd := c.Buses[i].Pd * f[k]
			pf := minPF + (maxPF-minPF)*rng.Float64()
			x[j] = pd
			x[nl+j] = pd * math.Tan(math.Acos(pf)) * sign(c.Buses[i].Qd)
		}
		out = append(out, x)
	}
	return out, nil
}

// The load factors are f_k = 1 + σ(√ρ·c + √(1−ρ)·z_k) with c and the z_k
// independent standard normals (the covariance σ²(ρ·11ᵀ + (1−ρ)I)), and
// the truncation keeps a draw when every |√ρ·c + √(1−ρ)·z_k| < maxChange/σ.
// Given c the z_k are independent, each inside the interval boundsGiven
// returns, with probability pGiven(c).

// boundsGiven returns the interval (lo, hi) that each z_k must lie in,
// given the common factor c.
func boundsGiven(c float64) (lo, hi float64) {
	t := maxChange / sigma
	a, b := math.Sqrt(corrCoeff), math.Sqrt(1-corrCoeff)
	return (-t - a*c) / b, (t - a*c) / b
}

// pGiven is the probability that one z_k lies in boundsGiven(c).
func pGiven(c float64) float64 {
	lo, hi := boundsGiven(c)
	return normCDF(hi) - normCDF(lo)
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// acceptance returns the probability that DC3's joint rejection sampler
// accepts a draw of L load factors, E_c[pGiven(c)^L], by the trapezoidal
// rule on c ∈ [−8, 8] (step 10⁻³): 0.16 for case57's 42 loads (TestFactorDraw
// measures it), 4·10⁻⁷ for case1354_pegase's 621.
func acceptance(l int) float64 {
	const h = 1e-3
	var s float64
	for c := -8.0; c <= 8; c += h {
		s += math.Exp(-c*c/2) / math.Sqrt(2*math.Pi) * math.Pow(pGiven(c), float64(l))
	}
	return s * h
}

// factorDraw draws the load factors f (len(f) = L) from the same truncated
// normal law as DC3's joint rejection sampler, for grids with many loads
// where that sampler would almost never accept: it draws the common factor
// c from its law under the truncation, density ∝ φ(c)·pGiven(c)^L, by
// rejection from φ with acceptance (pGiven(c)/pGiven(0))^L (pGiven is
// largest at c = 0), and then each z_k from the standard normal truncated
// to boundsGiven(c) by inverting its distribution function. It reports
// false when c is rejected (the caller draws again).
func factorDraw(rng *rand.Rand, f []float64) bool {
	c := rng.NormFloat64()
	if rng.Float64() >= math.Pow(pGiven(c)/pGiven(0), float64(len(f))) {
		return false
	}
	a, b := math.Sqrt(corrCoeff), math.Sqrt(1-corrCoeff)
	lo, hi := boundsGiven(c)
	plo, phi := normCDF(lo), normCDF(hi)
	for k := range f {
		for {
			u := plo + (phi-plo)*rng.Float64()
			z := math.Sqrt2 * math.Erfinv(2*u-1)
			f[k] = 1 + sigma*(a*c+b*z)
			if f[k] > 1-maxChange && f[k] < 1+maxChange {
				break // rounding at an end of the interval: draw again
			}
		}
	}
	return true
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// dataset is the regenerated data: loads X and reference optima Y
// (acopf.Model's layouts), the reference objective (DC3-scaled) and
// solve time of each sample.
type dataset struct {
	// Index[i] is the position of sample i among the draws of
	// sampleLoads (draws without an ACOPF solution are dropped).
	Index []int
	X, Y  [][]float64
	Obj   []float64
	Secs  []float64
	// Drawn is the number of load draws it took to keep len(X).
	Drawn  int
	Solver string
}

// provenance describes a cached data set.
type provenance struct {
	Recipe   string  `json:"recipe"`
	Case     string  `json:"case"`
	Seed     uint64  `json:"seed"`
	Samples  int     `json:"samples"`
	Solver   string  `json:"solver"`
	Tol      float64 `json:"tol"`
	Columns  string  `json:"columns"`
	File     string  `json:"file"`
	SHA256   string  `json:"sha256"`
	Created  string  `json:"created"`
	MeanObj  float64 `json:"mean_objective_dc3_scaled"`
	TestObj  float64 `json:"test_mean_objective_dc3_scaled"`
	SolveCPU float64 `json:"mean_solve_seconds"`
	Drawn    int     `json:"draws"`
}

const recipe = "DC3 (locuslab/DC3 datasets/acopf/matlab_datasets/GenerateSamples.m): Pd = Pd0*f at buses with Pd0 > 0, f ~ N(1, sigma^2(0.5*11'+0.5*I)), sigma = 0.7/1.645, truncated to (0.3, 1.7) by rejection; Qd = Pd*tan(acos(pf))*sign(Qd0), pf ~ U(0.8, 1); optima of the ACOPF without line limits (DC3's formulation); x, y in acopf.Model's layouts (p.u.)"

// cacheNames returns the paths of the data set's files in dir.
func cacheNames(dir, name string, seed uint64, n int) (partial, final, meta string) {
	stem := filepath.Join(dir, fmt.Sprintf("dc3-%s-seed%d-n%d", name, seed, n))
	return stem + ".partial.csv", stem + ".csv.gz", stem + ".json"
}

// shard is a share of the reference solves for parallel generation: the
// draws i < Upto with i mod Of = K, solved into their own partial file,
// which a later run without a shard reads with the others.
type shard struct{ K, Of, Upto int }

func (s shard) partialName(dir, name string, seed uint64, n int) string {
	p, _, _ := cacheNames(dir, name, seed, n)
	if s.Of == 0 {
		return p
	}
	return strings.TrimSuffix(p, ".csv") + fmt.Sprintf("-%dof%d.csv", s.K, s.Of)
}

// loadOrGenerate returns the data set of n samples from seed: read from
// the cache in dir when it is there and its checksum matches, otherwise
// generated and cached. As DC3 keeps only the samples whose ACOPF
// MATPOWER solves, the loads are drawn in sequence (sampleLoads) and each
// draw's ACOPF is solved with the reference solver, from the case's own
// operating point (MATPOWER's start) and then from the flat start; a draw
// that neither solve solves is dropped, until n are kept. An interrupted
// generation resumes from its partial file. dir "" caches nothing.
func loadOrGenerate(m *acopf.Model, name string, n int, seed uint64, tol float64, maxIter int, dir string, sh shard, progress io.Writer) (*dataset, error) {
	pool, err := sampleLoads(m, 3*n, seed)
	if err != nil {
		return nil, err
	}
	if dir != "" {
		_, final, meta := cacheNames(dir, name, seed, n)
		d, err := readCache(final, meta, pool)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	_, ny := m.Dims()
	ys, secs := make([][]float64, len(pool)), make([]float64, len(pool))
	failed := make([]bool, len(pool))
	var part *os.File
	if dir != "" {
		pname, _, _ := cacheNames(dir, name, seed, n)
		parts, err := filepath.Glob(strings.TrimSuffix(pname, ".csv") + "*.csv")
		if err != nil {
			return nil, err
		}
		for _, name := range parts {
			if err := readPartial(name, ys, secs, failed, ny); err != nil {
				return nil, err
			}
		}
		part, err = os.OpenFile(sh.partialName(dir, name, seed, n), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		defer part.Close()
	}
	starts := [][]float64{m.OperatingPoint(), m.FlatStart()}
	d := &dataset{Solver: referenceName}
	solved := 0
	for i := 0; len(d.X) < n; i++ {
		if sh.Of > 0 && i >= sh.Upto {
			return nil, nil
		}
		if sh.Of > 0 && i%sh.Of != sh.K {
			continue
		}
		if i == len(pool) {
			return nil, fmt.Errorf("only %d of %d drawn load samples have an ACOPF solution, need %d", len(d.X), len(pool), n)
		}
		if ys[i] == nil && !failed[i] {
			p, err := m.NLP(pool[i], acopf.Formulation{NoFlowLimits: true, NoAngleLimits: true})
			if err != nil {
				return nil, err
			}
			t0 := time.Now()
			failed[i] = true
			for _, s := range starts {
				res, err := reference(p, s, tol, maxIter)
				if err != nil {
					return nil, fmt.Errorf("draw %d: %w", i, err)
				}
				if res.Status == solvers.Success {
					ys[i], failed[i] = res.Y, false
					break
				}
			}
			secs[i] = time.Since(t0).Seconds()
			if part != nil {
				line := strconv.Itoa(i) + ",infeasible"
				if !failed[i] {
					line = partialLine(i, secs[i], ys[i])
				}
				if _, err := fmt.Fprintln(part, line); err != nil {
					return nil, err
				}
			}
			solved++
			if solved%100 == 0 {
				fmt.Fprintf(progress, "reference solves: %d kept of %d drawn (%s)\n", len(d.X), i+1, referenceName)
			}
		}
		if !failed[i] {
			d.Index = append(d.Index, i)
			d.X, d.Y, d.Secs = append(d.X, pool[i]), append(d.Y, ys[i]), append(d.Secs, secs[i])
		}
	}
	for _, y := range d.Y {
		d.Obj = append(d.Obj, m.Objective(y)/objScale)
	}
	d.Drawn = len(d.Index)
	if len(d.Index) > 0 {
		d.Drawn = d.Index[len(d.Index)-1] + 1
	}
	if dir != "" {
		if err := writeCache(dir, name, seed, tol, d); err != nil {
			return nil, err
		}
		pname, _, _ := cacheNames(dir, name, seed, n)
		parts, _ := filepath.Glob(strings.TrimSuffix(pname, ".csv") + "*.csv")
		for _, name := range parts {
			os.Remove(name)
		}
	}
	return d, nil
}

func partialLine(i int, secs float64, y []float64) string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(i))
	sb.WriteByte(',')
	sb.WriteString(strconv.FormatFloat(secs, 'g', 6, 64))
	for _, v := range y {
		sb.WriteByte(',')
		sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return sb.String()
}

// readPartial reads the solves of an interrupted run (lines
// "i,seconds,y…" or "i,infeasible"); a truncated last line is ignored.
func readPartial(name string, ys [][]float64, secs []float64, failed []bool, ny int) error {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		i, err := strconv.Atoi(fields[0])
		if err != nil || i < 0 || i >= len(ys) {
			continue
		}
		if len(fields) == 2 && fields[1] == "infeasible" {
			failed[i] = true
			continue
		}
		if len(fields) != ny+2 {
			continue
		}
		v, err := parseFloats(fields[1:])
		if err != nil {
			continue
		}
		secs[i], ys[i] = v[0], v[1:]
	}
	return sc.Err()
}

func parseFloats(fields []string) ([]float64, error) {
	v := make([]float64, len(fields))
	for k, s := range fields {
		var err error
		if v[k], err = strconv.ParseFloat(s, 64); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// writeCache writes d as a gzip'd CSV (one line per sample: the draw's
// index, x, y and the solve's seconds) and
// its provenance with the CSV's SHA-256.
func writeCache(dir, name string, seed uint64, tol float64, d *dataset) error {
	_, final, meta := cacheNames(dir, name, seed, len(d.X))
	var raw strings.Builder
	for i := range d.X {
		raw.WriteString(strconv.Itoa(d.Index[i]))
		for _, v := range append(append([]float64(nil), d.X[i]...), d.Y[i]...) {
			raw.WriteByte(',')
			raw.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		raw.WriteString("," + strconv.FormatFloat(d.Secs[i], 'g', 4, 64) + "\n")
	}
	sum := sha256.Sum256([]byte(raw.String()))
	tmp := final + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	zw.ModTime = time.Time{}
	if _, err := io.WriteString(zw, raw.String()); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	var secs float64
	for _, s := range d.Secs {
		secs += s
	}
	p := provenance{
		Recipe: recipe, Case: caseDescription(name), Seed: seed, Samples: len(d.X),
		Solver: d.Solver, Tol: tol,
		Columns: fmt.Sprintf("index of the draw, x (%d: Pd, Qd of the load buses, p.u.), y (%d: Vm, Va, Pg, Qg, p.u./rad), reference solve seconds", len(d.X[0]), len(d.Y[0])),
		File:    filepath.Base(final), SHA256: hex.EncodeToString(sum[:]), Created: time.Now().UTC().Format(time.RFC3339),
		MeanObj: mean(d.Obj), SolveCPU: secs / float64(len(d.Secs)),
	}
	nTr, nVa := split(len(d.Obj))
	p.TestObj = mean(d.Obj[nTr+nVa:])
	p.Drawn = d.Drawn
	js, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(meta, append(js, '\n'), 0o644)
}

// readCache reads a cached data set and checks its checksum and that its
// loads are the ones the recipe draws (pool).
func readCache(final, meta string, pool [][]float64) (*dataset, error) {
	js, err := os.ReadFile(meta)
	if err != nil {
		return nil, err
	}
	var p provenance
	if err := json.Unmarshal(js, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", meta, err)
	}
	f, err := os.Open(final)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", final, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", final, err)
	}
	sum := sha256.Sum256(raw)
	if hex.EncodeToString(sum[:]) != p.SHA256 {
		return nil, fmt.Errorf("%s: checksum mismatch (the file is damaged or not the one %s describes)", final, meta)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	nx := len(pool[0])
	d := &dataset{Solver: p.Solver, Drawn: p.Drawn}
	for i, l := range lines {
		v, err := parseFloats(strings.Split(l, ","))
		if err != nil || len(v) <= nx+2 || v[0] != math.Trunc(v[0]) || v[0] < 0 || int(v[0]) >= len(pool) {
			return nil, fmt.Errorf("%s: line %d is malformed", final, i+1)
		}
		j := int(v[0])
		v = v[1:]
		for k := range nx {
			if math.Abs(v[k]-pool[j][k]) > 1e-12*(1+math.Abs(pool[j][k])) {
				return nil, fmt.Errorf("%s: line %d: the loads differ from those the recipe draws from seed %d", final, i+1, p.Seed)
			}
		}
		d.Index = append(d.Index, j)
		d.X = append(d.X, pool[j])
		d.Y = append(d.Y, v[nx:len(v)-1])
		d.Secs = append(d.Secs, v[len(v)-1])
	}
	return d, nil
}

// caseDescription names the grid of a data set in its provenance.
func caseDescription(name string) string {
	if name == dc3Case {
		return name + " (MATPOWER 6.0 data/case57.m, problems/acopf/data)"
	}
	return name + " (acopf.Load)"
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
