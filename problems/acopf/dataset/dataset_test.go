package dataset

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/problems/acopf"
)

// fakeGenerator returns a Generator of count samples of case57 whose
// Solver is a cheap deterministic function of x that reports no solution
// when the total load exceeds the case's by more than 5 %; calls counts
// its calls.
func fakeGenerator(t *testing.T, count int, calls *int) *Generator {
	t.Helper()
	c, err := acopf.Load("pglib_opf_case57_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	nx, ny := m.Dims()
	base := m.Loads()
	var total float64
	for _, v := range base {
		total += v
	}
	solve := func(x []float64) ([]float64, float64, error) {
		*calls++
		var s float64
		for _, v := range x {
			s += v
		}
		if s > 1.05*total {
			return nil, 0, fmt.Errorf("%w: total load %.4g p.u.\tover the fake's limit", ErrNoSolution, s)
		}
		y := make([]float64, ny)
		var obj float64
		for j := range y {
			y[j] = math.Sin(x[j%nx]*float64(j+1)) / 3
			obj += y[j]
		}
		return y, obj, nil
	}
	return &Generator{
		Spec: Spec{Case: c.Name, CaseSHA256: shippedSHA256[c.Name], Formulation: "pglib", Seed: 7, Count: count,
			Load: DefaultLoadModel, Solver: "fake", Tol: 1e-8, NX: nx, NY: ny},
		Base: base, Solve: solve,
	}
}

// runShards runs every shard of of into dir and returns their paths.
func runShards(t *testing.T, g *Generator, dir string, of int) []string {
	t.Helper()
	var paths []string
	for k := range of {
		p := filepath.Join(dir, fmt.Sprintf("shard-%d-of-%d.tsv", k, of))
		rep, err := g.Run(context.Background(), p, Shard{k, of})
		require.NoError(t, err)
		require.Equal(t, rep.Size, rep.Solved)
		paths = append(paths, p)
	}
	return paths
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func TestLoadModelDraw(t *testing.T) {
	base := []float64{1, 2, 0, -0.5, 0.25, 3}
	l := LoadModel{CommonLo: 0.8, CommonHi: 1.2, Local: 0.1}
	a, err := l.Draw(make([]float64, 6), base, 3, 5)
	require.NoError(t, err)
	b, err := l.Draw(make([]float64, 6), base, 3, 5)
	require.NoError(t, err)
	assert.Equal(t, a, b, "a sample's loads depend only on (base, seed, index)")
	c, err := l.Draw(make([]float64, 6), base, 3, 6)
	require.NoError(t, err)
	assert.NotEqual(t, a, c)
	d, err := l.Draw(make([]float64, 6), base, 4, 5)
	require.NoError(t, err)
	assert.NotEqual(t, a, d)
	for k := range 3 {
		f := a[k] / base[k]
		if base[k] == 0 {
			assert.Zero(t, a[k])
			f = a[3+k] / base[3+k]
		} else {
			assert.InDelta(t, f, a[3+k]/base[3+k], 1e-15, "P and Q of a load share their factor")
		}
		assert.GreaterOrEqual(t, f, 0.8*0.9)
		assert.LessOrEqual(t, f, 1.2*1.1)
	}
	// Over many samples the factors fill their range and the common
	// factor moves every load together.
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range 2000 {
		x, err := l.Draw(make([]float64, 6), base, 1, i)
		require.NoError(t, err)
		lo, hi = math.Min(lo, x[0]), math.Max(hi, x[0])
	}
	assert.Less(t, lo, 0.75)
	assert.Greater(t, hi, 1.27)
}

// TestLoadModelGolden pins the loads of one sample, bit for bit: the
// same (base, seed, index) must give them on every platform and Go
// release (math/rand/v2's PCG is specified; the products are rounded
// explicitly), or every data set already written stops resuming and
// merging.
func TestLoadModelGolden(t *testing.T) {
	x, err := DefaultLoadModel.Draw(make([]float64, 4), []float64{1, 2, 0.5, -1}, 42, 7)
	require.NoError(t, err)
	got := make([]uint64, len(x))
	for k, v := range x {
		got[k] = math.Float64bits(v)
	}
	assert.Equal(t, []uint64{0x3ff16cf98ceb52d2, 0x40004f3ae90a7da8, 0x3fe16cf98ceb52d2, 0xbff04f3ae90a7da8}, got,
		"%v", x)
}

func TestLoadModelValidate(t *testing.T) {
	for _, tc := range []struct {
		l  LoadModel
		ok bool
	}{
		{DefaultLoadModel, true},
		{LoadModel{1, 1, 0}, true},
		{LoadModel{0, 1, 0.1}, false},
		{LoadModel{1.2, 1.1, 0.1}, false},
		{LoadModel{0.9, math.Inf(1), 0.1}, false},
		{LoadModel{0.9, 1.1, 1}, false},
		{LoadModel{0.9, 1.1, math.NaN()}, false},
	} {
		err := tc.l.Validate()
		assert.Equal(t, tc.ok, err == nil, "%+v: %v", tc.l, err)
		_, err = tc.l.Draw(make([]float64, 2), []float64{1, 1}, 1, 0)
		assert.Equal(t, tc.ok, err == nil)
		if tc.ok {
			back, err := ParseLoadModel(tc.l.String())
			require.NoError(t, err)
			assert.Equal(t, tc.l, back)
		}
	}
	for _, s := range []string{"", "glocal-uniform alpha=U[0.9,1.1] eta=U[1-0.1,1+0.2]", "glocal-uniform alpha=U[0.90,1.1] eta=U[1-0.1,1+0.1]"} {
		_, err := ParseLoadModel(s)
		assert.Error(t, err, s)
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want Shard
		ok   bool
	}{
		{"0/1", Shard{0, 1}, true},
		{"3/4", Shard{3, 4}, true},
		{"4/4", Shard{}, false},
		{"-1/4", Shard{}, false},
		{"1/0", Shard{}, false},
		{"1", Shard{}, false},
		{"01/4", Shard{}, false},
		{"a/b", Shard{}, false},
	} {
		sh, err := ParseShard(tc.s)
		if !tc.ok {
			assert.Error(t, err, tc.s)
			continue
		}
		require.NoError(t, err, tc.s)
		assert.Equal(t, tc.want, sh)
	}
	for _, tc := range []struct {
		sh          Shard
		count, size int
	}{
		{Shard{0, 1}, 5, 5}, {Shard{0, 3}, 10, 4}, {Shard{2, 3}, 10, 3}, {Shard{4, 5}, 3, 0},
	} {
		n := 0
		for i := range tc.count {
			if tc.sh.Owns(i) {
				n++
			}
		}
		assert.Equal(t, tc.size, n)
		assert.Equal(t, tc.size, tc.sh.Size(tc.count), "%v of %d", tc.sh, tc.count)
	}
}

// TestShardsMergeToSingleRun: the merge of 1, 2, 3 and 4 shards is byte
// for byte the file of a single process (Shard{0, 1}), and Read reads the
// samples back bit for bit, failures included.
func TestShardsMergeToSingleRun(t *testing.T) {
	var calls int
	g := fakeGenerator(t, 11, &calls)
	dir := t.TempDir()
	single := runShards(t, g, dir, 1)[0]
	want := read(t, single)
	d, err := Read(bytes.NewReader(want))
	require.NoError(t, err)
	require.Len(t, d.Samples, 11)
	assert.Equal(t, g.Spec, d.Spec)
	failed := 0
	for i, s := range d.Samples {
		x, err := g.Loads(i)
		require.NoError(t, err)
		y, obj, err := g.Solve(x)
		if errors.Is(err, ErrNoSolution) {
			failed++
			assert.Nil(t, s.Y)
			assert.NotContains(t, s.Failure, "\t")
			assert.Equal(t, strings.ReplaceAll(err.Error(), "\t", " "), s.Failure)
			continue
		}
		assert.Equal(t, x, s.X)
		assert.Equal(t, y, s.Y)
		assert.Equal(t, obj, s.Objective)
	}
	require.Positive(t, failed, "the test needs failed samples")
	require.Less(t, failed, 11)
	for of := 1; of <= 4; of++ {
		sub := filepath.Join(dir, fmt.Sprint(of))
		require.NoError(t, os.Mkdir(sub, 0o755))
		paths := runShards(t, g, sub, of)
		out := filepath.Join(sub, "merged.tsv")
		spec, err := Merge(out, paths)
		require.NoError(t, err)
		assert.Equal(t, g.Spec, spec)
		assert.Equal(t, want, read(t, out), "%d shards", of)
	}
}

// TestReferenceShardsMerge: with the reference solver (the pure-Go
// interior-point method, or IPOPT under the tag) on case57, two shards
// merge into the single-process file, and the labels are optima: the
// power flow holds and the objective is near PGLib's.
func TestReferenceShardsMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 6 ACOPFs")
	}
	g, err := NewReference("case57_ieee", 1, 3, DefaultLoadModel, ReferenceOptions{})
	require.NoError(t, err)
	assert.Contains(t, g.Spec.Solver, solverName)
	if strings.HasPrefix(solverName, "IPOPT") {
		assert.Regexp(t, `^IPOPT \d+\.\d+\.\d+ \(`, g.Spec.Solver, "the header names IPOPT's version")
	}
	dir := t.TempDir()
	single := runShards(t, g, dir, 1)[0]
	paths := runShards(t, g, dir, 2)
	out := filepath.Join(dir, "merged.tsv")
	_, err = Merge(out, paths)
	require.NoError(t, err)
	assert.Equal(t, read(t, single), read(t, out))
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	d, err := Read(f)
	require.NoError(t, err)
	c, err := acopf.Load("case57_ieee")
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	_, _, npf := m.PowerFlow().Dims()
	for _, s := range d.Samples {
		require.NotNil(t, s.Y, "sample %d: %s", s.Index, s.Failure)
		r := make([]float64, npf)
		m.PowerFlow().Eval(s.X, s.Y, r, nil)
		for _, v := range r {
			assert.LessOrEqual(t, math.Abs(v), 1e-6)
		}
		assert.InEpsilon(t, acopf.Published[c.Name], s.Objective, 0.3, "loads within ±21 %% of the case's")
		assert.Equal(t, m.Objective(s.Y), s.Objective)
	}
}

// TestResume: a shard stopped after two samples, started again, solves
// only the others and ends with the uninterrupted file; so does one whose
// last line was cut short by a crash (that sample alone is solved again).
func TestResume(t *testing.T) {
	var calls int
	g := fakeGenerator(t, 9, &calls)
	dir := t.TempDir()
	want := read(t, runShards(t, g, dir, 3)[1])

	p := filepath.Join(dir, "resumed.tsv")
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	g.Progress = func(p Progress) {
		if p.Done == 2 {
			cancel()
		}
	}
	rep, err := g.Run(ctx, p, Shard{1, 3})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, Report{Solved: 2, Size: 3}, rep)
	g.Progress = nil
	calls = 0
	rep, err = g.Run(context.Background(), p, Shard{1, 3})
	require.NoError(t, err)
	assert.Equal(t, 1, calls, "only the unsolved sample is solved")
	assert.Equal(t, Report{Found: 2, Solved: 1, Size: 3}, rep)
	assert.Equal(t, want, read(t, p))

	// A finished shard solves nothing.
	calls = 0
	_, err = g.Run(context.Background(), p, Shard{1, 3})
	require.NoError(t, err)
	assert.Zero(t, calls)
	assert.Equal(t, want, read(t, p))

	// A crash in the middle of writing the header.
	require.NoError(t, os.WriteFile(p, want[:40], 0o644))
	calls = 0
	_, err = g.Run(context.Background(), p, Shard{1, 3})
	require.NoError(t, err)
	assert.Equal(t, 3, calls)
	assert.Equal(t, want, read(t, p))

	// A crash in the middle of writing the last line.
	cut := bytes.LastIndexByte(want[:len(want)-1], '\n') + 1
	require.NoError(t, os.WriteFile(p, want[:cut+(len(want)-cut)/2], 0o644))
	calls = 0
	_, err = g.Run(context.Background(), p, Shard{1, 3})
	require.NoError(t, err)
	assert.Equal(t, 1, calls)
	assert.Equal(t, want, read(t, p))
}

// TestResumeRefuses: Run refuses a file of another data set or shard, and
// a damaged one, and leaves it as it was.
func TestResumeRefuses(t *testing.T) {
	var calls int
	g := fakeGenerator(t, 6, &calls)
	dir := t.TempDir()
	p := runShards(t, g, dir, 2)[0]
	good := read(t, p)
	for _, tc := range []struct {
		name string
		edit func(g *Generator, b []byte) []byte
		sh   Shard
		msg  string
	}{
		{"other seed", func(g *Generator, b []byte) []byte { g.Spec.Seed++; return b }, Shard{0, 2}, "seed"},
		{"other count", func(g *Generator, b []byte) []byte { g.Spec.Count++; return b }, Shard{0, 2}, "count"},
		{"other shard", func(g *Generator, b []byte) []byte { return b }, Shard{1, 2}, "shard 0/2 against 1/2"},
		{"damaged line", func(g *Generator, b []byte) []byte { return flipDigit(b, 1) }, Shard{0, 2}, "checksum"},
		{"other loads", func(g *Generator, b []byte) []byte {
			g.Base = append([]float64{g.Base[0] * 2}, g.Base[1:]...)
			return b
		}, Shard{0, 2}, "load model draws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g2 := *g
			b := tc.edit(&g2, append([]byte(nil), good...))
			require.NoError(t, os.WriteFile(p, b, 0o644))
			calls = 0
			_, err := g2.Run(context.Background(), p, tc.sh)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Zero(t, calls)
			assert.Equal(t, b, read(t, p))
		})
	}
}

// flipDigit changes one digit in the n-th sample line (1-based) of a file.
func flipDigit(b []byte, n int) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	l := lines[len(headerKeys)+n-1]
	k := bytes.IndexByte(l, '\t') + 4
	for ; l[k] < '0' || l[k] > '8'; k++ {
	}
	l[k]++
	return bytes.Join(lines, nil)
}

// TestMergeRefuses: Merge refuses every kind of damage, with an error
// that says what is wrong, and writes nothing.
func TestMergeRefuses(t *testing.T) {
	var calls int
	g := fakeGenerator(t, 9, &calls)
	dir := t.TempDir()
	paths := runShards(t, g, dir, 3)
	files := make([][]byte, 3)
	for k, p := range paths {
		files[k] = read(t, p)
	}
	other := *g
	other.Spec.Seed = 8
	otherPath := runShards(t, &other, t.TempDir(), 3)[2]
	g4 := runShards(t, g, t.TempDir(), 4)
	lines := func(b []byte) [][]byte { return bytes.SplitAfter(b, []byte("\n")) }
	for _, tc := range []struct {
		name  string
		edit  func(f [][]byte) [][]byte
		paths func(p []string) []string
		msg   string
	}{
		{"missing index", func(f [][]byte) [][]byte {
			l := lines(f[1])
			f[1] = bytes.Join(append(l[:len(headerKeys)+1], l[len(headerKeys)+2:]...), nil)
			return f
		}, nil, "1 of 9 samples are missing (indices 4)"},
		{"duplicate index", func(f [][]byte) [][]byte {
			l := lines(f[0])
			f[0] = append(f[0], l[len(headerKeys)]...)
			return f
		}, nil, "index 0 appears twice"},
		{"line in the wrong shard", func(f [][]byte) [][]byte {
			f[1] = append(f[1], lines(f[0])[len(headerKeys)]...)
			return f
		}, nil, "index 0 is not shard 1/3's"},
		{"bad checksum", func(f [][]byte) [][]byte { f[2] = flipDigit(f[2], 2); return f }, nil, "checksum"},
		{"incomplete last line", func(f [][]byte) [][]byte { f[2] = f[2][:len(f[2])-5]; return f }, nil, "incomplete line"},
		{"header mismatch", nil, func(p []string) []string { return []string{p[0], p[1], otherPath} }, `seed "8" against "7"`},
		{"missing shard", nil, func(p []string) []string { return p[:2] }, "shard 2/3 is missing"},
		{"shard given twice", nil, func(p []string) []string { return []string{p[0], p[1], p[1]} }, "shard 1/3 is also"},
		{"shards of another split", nil, func(p []string) []string { return []string{p[0], p[1], g4[2]} }, "not one of 3 shards"},
		{"no files", nil, func(p []string) []string { return nil }, "no shard files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := [][]byte{append([]byte(nil), files[0]...), append([]byte(nil), files[1]...), append([]byte(nil), files[2]...)}
			if tc.edit != nil {
				f = tc.edit(f)
			}
			for k, p := range paths {
				require.NoError(t, os.WriteFile(p, f[k], 0o644))
			}
			ps := paths
			if tc.paths != nil {
				ps = tc.paths(paths)
			}
			out := filepath.Join(t.TempDir(), "merged.tsv")
			_, err := Merge(out, ps)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			_, err = os.Stat(out)
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing is written")
			left, _ := filepath.Glob(out + "*")
			assert.Empty(t, left)
		})
	}
}

// TestReadRefuses: Read refuses a shard's file and a damaged data set.
func TestReadRefuses(t *testing.T) {
	var calls int
	g := fakeGenerator(t, 4, &calls)
	dir := t.TempDir()
	full := read(t, runShards(t, g, dir, 1)[0])
	part := read(t, runShards(t, g, dir, 2)[0])
	lines := bytes.SplitAfter(full, []byte("\n"))
	for _, tc := range []struct {
		name string
		b    []byte
		msg  string
	}{
		{"shard", part, "a shard's file"},
		{"truncated", bytes.Join(lines[:len(lines)-2], nil), "3 complete samples, the header says 4"},
		{"out of order", bytes.Join(append(append(append([][]byte{}, lines[:len(headerKeys)]...), lines[len(headerKeys)+1], lines[len(headerKeys)]), lines[len(headerKeys)+2:]...), nil), "index 1 where 0 is due"},
		{"damaged", flipDigit(append([]byte(nil), full...), 3), "checksum"},
		{"no header", full[10:], "header line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.b))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestRunRefusesSolverErrors: an error that does not wrap ErrNoSolution,
// a y of the wrong length or a NaN stops the shard; the samples before
// stay in the file.
func TestRunRefusesSolverErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		solve func(x []float64, ny int) ([]float64, float64, error)
		msg   string
	}{
		{"error", func(x []float64, ny int) ([]float64, float64, error) { return nil, 0, errors.New("malformed") }, "malformed"},
		{"short y", func(x []float64, ny int) ([]float64, float64, error) { return make([]float64, ny-1), 0, nil }, "len(y)"},
		{"NaN", func(x []float64, ny int) ([]float64, float64, error) { return make([]float64, ny), math.NaN(), nil }, "non-finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			g := fakeGenerator(t, 4, &calls)
			good := g.Solve
			g.Solve = func(x []float64) ([]float64, float64, error) {
				if calls == 2 {
					return tc.solve(x, g.Spec.NY)
				}
				return good(x)
			}
			p := filepath.Join(t.TempDir(), "s.tsv")
			rep, err := g.Run(context.Background(), p, Shard{0, 1})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "sample 2")
			assert.Equal(t, 2, rep.Solved)
			assert.Equal(t, len(headerKeys)+2, bytes.Count(read(t, p), []byte("\n")))
		})
	}
}

// TestShippedSHA256 checks the table of shipped cases' SHA-256 against
// the files in problems/acopf/data and against acopf.Names, and
// CaseSHA256 of a file against the table.
func TestShippedSHA256(t *testing.T) {
	for _, name := range acopf.Names() {
		want, ok := shippedSHA256[name]
		if !assert.True(t, ok, "%s is shipped but not in shippedSHA256", name) {
			continue
		}
		path := filepath.Join("..", "data", name+".m")
		if _, err := os.Stat(path); err != nil {
			path += ".gz"
		}
		f, err := os.Open(path)
		require.NoError(t, err)
		var r io.Reader = f
		if strings.HasSuffix(path, ".gz") {
			z, err := gzip.NewReader(f)
			require.NoError(t, err)
			r = z
		}
		h := sha256.New()
		_, err = io.Copy(h, r)
		require.NoError(t, err)
		f.Close()
		assert.Equal(t, want, hex.EncodeToString(h.Sum(nil)), name)
		got, err := CaseSHA256(path)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		got, err = CaseSHA256(strings.TrimPrefix(name, "pglib_opf_"))
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Len(t, shippedSHA256, len(acopf.Names()))
	_, err := CaseSHA256("no_such_case")
	assert.Error(t, err)
}
