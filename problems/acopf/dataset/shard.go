package dataset

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Shard is a share of a data set's samples: the indices i < Count with
// i mod Of = K (0 ≤ K < Of). Shard{0, 1} is the whole data set.
type Shard struct{ K, Of int }

// ParseShard reads "K/OF", as Shard.String writes it.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	of, err2 := strconv.Atoi(b)
	sh := Shard{k, of}
	if !ok || err1 != nil || err2 != nil || sh.String() != s {
		return Shard{}, fmt.Errorf("dataset: shard %q: want K/OF, two integers", s)
	}
	return sh, sh.Validate()
}

// String returns "K/OF".
func (s Shard) String() string { return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.Of) }

// Validate returns an error unless 0 ≤ K < Of.
func (s Shard) Validate() error {
	if s.Of < 1 || s.K < 0 || s.K >= s.Of {
		return fmt.Errorf("dataset: shard %s: want 0 ≤ K < OF", s)
	}
	return nil
}

// Owns reports whether index i is the shard's (i mod Of = K).
func (s Shard) Owns(i int) bool { return i >= 0 && i%s.Of == s.K }

// Size returns the number of the shard's indices below count.
func (s Shard) Size(count int) int {
	if count <= s.K {
		return 0
	}
	return (count-s.K-1)/s.Of + 1
}

// ErrNoSolution is the error a Solver wraps when it found no optimum for
// a sample's loads (infeasible, or not converged): the sample is recorded
// as failed, with the error's message as its reason, and generation goes
// on. Any other error from a Solver stops the shard.
var ErrNoSolution = errors.New("no solution")

// Solver labels one sample: it returns the optimum y (len NY) of the
// ACOPF at loads x (len NX; it must not modify x) and the objective there
// in $/h. It must be deterministic (the same bits for the same x) for
// shards to merge into the single-process data set.
type Solver func(x []float64) (y []float64, objective float64, err error)

// Generator writes the shards of one data set.
type Generator struct {
	// Spec is the data set.
	Spec Spec
	// Base is the case's own loads (acopf.Model.Loads), len Spec.NX.
	Base []float64
	// Solve labels a sample.
	Solve Solver
	// Progress, when not nil, is called after each sample solved (not
	// after those found in the file).
	Progress func(Progress)
}

// Progress reports one solved sample.
type Progress struct {
	// Index is the sample's, Failure its failure reason or "".
	Index   int
	Failure string
	// Done counts the shard's samples in its file, of Size.
	Done, Size int
	// Elapsed is the solver's wall time on this sample.
	Elapsed time.Duration
}

// Report sums up a Run.
type Report struct {
	// Found is the number of samples already in the file, Solved the
	// number solved by this run (Failed of them without a label), Size
	// the shard's number of samples.
	Found, Solved, Failed, Size int
}

// Loads returns sample i's loads.
func (g *Generator) Loads(i int) ([]float64, error) {
	return g.Spec.Load.Draw(make([]float64, len(g.Base)), g.Base, g.Spec.Seed, i)
}

// Run solves shard sh of the data set into the file at path, in
// increasing index order, appending each sample's line and syncing the
// file as soon as the sample is solved. If the file exists it must be this
// shard's (the same header; otherwise Run refuses it): its samples are
// checked (checksums, indices of the shard, once each, loads equal to
// LoadModel.Draw's bit for bit) and skipped (failed ones too: they are
// not tried again), and an incomplete last line or header (a write cut
// short) is cut off and its sample solved again. Run returns when the
// shard is complete, when ctx is done (with ctx's error; the file then
// holds every sample solved so far), or at the first error of the Solver
// that does not wrap ErrNoSolution.
func (g *Generator) Run(ctx context.Context, path string, sh Shard) (Report, error) {
	var rep Report
	if err := g.Spec.Validate(); err != nil {
		return rep, err
	}
	if err := sh.Validate(); err != nil {
		return rep, err
	}
	if len(g.Base) != g.Spec.NX || g.Solve == nil {
		return rep, fmt.Errorf("dataset: Generator: len(Base) = %d, want nx = %d, and a Solver", len(g.Base), g.Spec.NX)
	}
	rep.Size = sh.Size(g.Spec.Count)
	f, done, err := g.open(path, sh)
	if err != nil {
		return rep, err
	}
	defer f.Close()
	rep.Found = len(done)
	var buf []byte
	for i := sh.K; i < g.Spec.Count; i += sh.Of {
		if done[i] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		x, err := g.Loads(i)
		if err != nil {
			return rep, err
		}
		s := Sample{Index: i, X: x}
		t0 := time.Now()
		y, obj, err := g.Solve(append([]float64(nil), x...))
		elapsed := time.Since(t0)
		switch {
		case errors.Is(err, ErrNoSolution):
			s.Failure = oneLine(err.Error())
			rep.Failed++
		case err != nil:
			return rep, fmt.Errorf("dataset: sample %d: %w", i, err)
		default:
			if len(y) != g.Spec.NY {
				return rep, fmt.Errorf("dataset: sample %d: the solver returned len(y) = %d, want %d", i, len(y), g.Spec.NY)
			}
			for _, v := range append([]float64{obj}, y...) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return rep, fmt.Errorf("dataset: sample %d: the solver returned a non-finite value", i)
				}
			}
			s.Y, s.Objective = y, obj
		}
		buf = appendLine(buf[:0], &s)
		if _, err := f.Write(buf); err != nil {
			return rep, fmt.Errorf("dataset: %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return rep, fmt.Errorf("dataset: %s: %w", path, err)
		}
		rep.Solved++
		done[i] = true
		if g.Progress != nil {
			g.Progress(Progress{Index: i, Failure: s.Failure, Done: len(done), Size: rep.Size, Elapsed: elapsed})
		}
	}
	return rep, nil
}

// open opens shard sh's file at path for appending: a new file (or one
// holding a header cut short) gets the header; an existing one is checked
// (see Run), cut after its last complete line and positioned there. It
// returns the indices in the file.
func (g *Generator) open(path string, sh Shard) (f *os.File, done map[int]bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			err = fmt.Errorf("dataset: %s: %w", path, err)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	hdr := g.Spec.header(sh)
	fresh := st.Size() == 0
	if !fresh && st.Size() < int64(len(hdr)) {
		// A header cut short by a crash is written again.
		b, err := io.ReadAll(f)
		if err != nil {
			return nil, nil, err
		}
		fresh = bytes.HasPrefix(hdr, b)
	}
	done = map[int]bool{}
	end := int64(len(hdr))
	if fresh {
		if err := f.Truncate(0); err != nil {
			return nil, nil, err
		}
		if _, err := f.WriteAt(hdr, 0); err != nil {
			return nil, nil, err
		}
	} else {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, nil, err
		}
		x := make([]float64, g.Spec.NX)
		sc, err := scan(f, func(s *Sample, _ int64, _ int) error {
			if done[s.Index] {
				return fmt.Errorf("index %d appears twice", s.Index)
			}
			done[s.Index] = true
			if s.Y == nil {
				return nil
			}
			if _, err := g.Spec.Load.Draw(x, g.Base, g.Spec.Seed, s.Index); err != nil {
				return err
			}
			for k := range x {
				if math.Float64bits(x[k]) != math.Float64bits(s.X[k]) {
					return fmt.Errorf("sample %d: load %d is %v, the load model draws %v", s.Index, k, s.X[k], x[k])
				}
			}
			return nil
		}, func(sc scanned) error {
			if d := diff(sc.spec, g.Spec); d != "" || sc.shard != sh {
				if d == "" {
					d = fmt.Sprintf("shard %s against %s", sc.shard, sh)
				}
				return fmt.Errorf("the file belongs to another data set or shard (%s): move it away or write elsewhere", d)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("resuming: %w", err)
		}
		if sc.partial {
			if err := f.Truncate(sc.end); err != nil {
				return nil, nil, fmt.Errorf("cutting off an incomplete last line: %w", err)
			}
		}
		end = sc.end
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		return nil, nil, err
	}
	return f, done, f.Sync()
}

// scanned is what scan found in a file.
type scanned struct {
	spec  Spec
	shard Shard
	// end is the offset after the last complete line, and partial
	// reports bytes after it without a line break.
	end     int64
	partial bool
}

// scan reads a file's header, calls header (when not nil) with it, and
// then reads its sample lines, checking each (checksum, fields, an index
// of the header's shard) and calling each with the sample, its line's
// offset and its length with the line break. Errors name the line.
func scan(r io.Reader, each func(s *Sample, off int64, n int) error, header func(scanned) error) (scanned, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	spec, sh, off, err := readHeader(br)
	sc := scanned{spec: spec, shard: sh, end: off}
	if err != nil {
		return sc, err
	}
	if header != nil {
		if err := header(sc); err != nil {
			return sc, err
		}
	}
	for lineNo := len(headerKeys) + 1; ; lineNo++ {
		line, err := br.ReadString('\n')
		if errors.Is(err, io.EOF) {
			sc.partial = line != ""
			return sc, nil
		}
		if err != nil {
			return sc, err
		}
		s, err := parseLine(strings.TrimSuffix(line, "\n"), spec)
		if err == nil && !sh.Owns(s.Index) {
			err = fmt.Errorf("index %d is not shard %s's", s.Index, sh)
		}
		if err == nil {
			err = each(&s, sc.end, len(line))
		}
		if err != nil {
			return sc, fmt.Errorf("line %d: %w", lineNo, err)
		}
		sc.end += int64(len(line))
	}
}
