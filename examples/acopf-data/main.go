// Command acopf-data generates labelled ACOPF data sets (package
// problems/acopf/dataset) in shards that run anywhere, one process each,
// and merges them into one verified data set. docs/acopf-data.md runs the
// shards as a Slurm job array and as a Kubernetes Indexed Job.
//
//	acopf-data generate -case case1354_pegase -n 1000 -seed 1 -shard 3/16 -out shards/
//	acopf-data merge -out case1354.tsv shards/*.shard-*-of-16.tsv
//	acopf-data info case1354.tsv
//
// generate solves shard K/OF of the data set (the sample indices i < n
// with i mod OF = K) into OUT/<case>-seed<S>-n<N>.shard-K-of-OF.tsv, one
// line per sample as soon as it is solved; run the same command again
// after an interruption and it goes on where it stopped, solving nothing
// twice. Each sample's loads depend only on (case, seed, index)
// (dataset.LoadModel: a common factor α ~ U[-common] and one factor per
// load η ~ U[1 ± -local]); its label is the ACOPF optimum (-formulation;
// PGLib-OPF's by default) from IPOPT when built with -tags ipopt, else
// from the pure-Go interior-point method (dense: a few hundred buses).
// It prints one line per solved sample, with the solve's wall time, to
// standard error. SIGINT and SIGTERM stop it at once (exit status 1), as
// a scheduler's preemption does: the sample in hand is lost (a line cut
// short is cut off by the next run) and solved again when the same
// command runs again.
//
// merge verifies the shard files (the same header, every shard of one
// split, every index exactly once, every line's checksum) and writes the
// data set, the same bytes as one process would write with -shard 0/1;
// on any mismatch it says what is wrong and writes nothing. info
// verifies a data set and prints its header and counts.
//
// Exit status: 0 on success, 2 for bad flags, 1 for a failed run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/enforce-nn/enforce/problems/acopf/dataset"
)

// errUsage marks bad flags (exit status 2).
var errUsage = errors.New("usage")

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "acopf-data: %v: stopped; the samples solved so far are in the shard's file: run the same command again to go on\n", s)
		os.Exit(1)
	}()
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "acopf-data:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  acopf-data generate -case NAME|FILE -n N [-seed S] [-shard K/OF] [-out DIR] [flags]
  acopf-data merge -out FILE SHARD-FILE...
  acopf-data info FILE
Run "acopf-data generate -h" (or merge -h) for the flags.`

// run runs the subcommand args[0] with its flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "generate":
		return generate(ctx, args[1:], stdout, stderr)
	case "merge":
		return merge(args[1:], stdout, stderr)
	case "info":
		return info(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return flag.ErrHelp
	}
	fmt.Fprintf(stderr, "acopf-data: unknown command %q\n%s\n", args[0], usage)
	return errUsage
}

// parse parses a subcommand's flags, mapping flag errors to errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return errUsage
	}
	return err
}

// shardFile returns the path of shard sh's file of spec in dir.
func shardFile(dir string, spec dataset.Spec, sh dataset.Shard) string {
	return filepath.Join(dir, fmt.Sprintf("%s-seed%d-n%d.shard-%d-of-%d.tsv", spec.Case, spec.Seed, spec.Count, sh.K, sh.Of))
}

func generate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("acopf-data generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	caseName := fs.String("case", "", "the case: a shipped name (acopf.Names, the prefix pglib_opf_ optional) or a MATPOWER file (required)")
	n := fs.Int("n", 0, "the number of samples of the data set (required)")
	seed := fs.Uint64("seed", 1, "the seed of the loads")
	shardFlag := fs.String("shard", "0/1", "the shard K/OF to solve: the indices i < n with i mod OF = K")
	out := fs.String("out", ".", "the folder of the shard's file (created if needed)")
	formulation := fs.String("formulation", "pglib", "the ACOPF solved: pglib (PGLib-OPF's: thermal and angle-difference limits), no-flow-limits, no-angle-limits or no-line-limits (DC3's)")
	tol := fs.Float64("tol", 1e-8, "the solver's tolerance")
	maxIter := fs.Int("maxiter", 500, "the solver's iteration limit per start: a sample it does not solve within it from any start is recorded as failed")
	common := fs.String("common", "0.9,1.1", "the range lo,hi of the loads' common factor α ~ U[lo, hi]")
	local := fs.Float64("local", 0.1, "the half width s of each load's own factor η ~ U[1-s, 1+s]")
	if err := parse(fs, args); err != nil {
		return err
	}
	bad := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "acopf-data generate: "+format+"\n", a...)
		return errUsage
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	if *caseName == "" || *n < 1 {
		return bad("-case and a positive -n are required")
	}
	sh, err := dataset.ParseShard(*shardFlag)
	if err != nil {
		return bad("%v", err)
	}
	f, ok := dataset.Formulations[*formulation]
	if !ok {
		return bad("unknown -formulation %q", *formulation)
	}
	lo, hi, ok := strings.Cut(*common, ",")
	l := dataset.LoadModel{Local: *local}
	var e1, e2 error
	l.CommonLo, e1 = strconv.ParseFloat(lo, 64)
	l.CommonHi, e2 = strconv.ParseFloat(hi, 64)
	if !ok || e1 != nil || e2 != nil {
		return bad("-common %q: want lo,hi", *common)
	}
	if err := l.Validate(); err != nil {
		return bad("%v", err)
	}
	g, err := dataset.NewReference(*caseName, *seed, *n, l, dataset.ReferenceOptions{Formulation: f, Tol: *tol, MaxIterations: *maxIter})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path := shardFile(*out, g.Spec, sh)
	fmt.Fprintf(stderr, "%s: shard %s of %d samples of %s (nx %d, ny %d), seed %d, %s; %s\n",
		path, sh, g.Spec.Count, g.Spec.Case, g.Spec.NX, g.Spec.NY, g.Spec.Seed, g.Spec.Load, g.Spec.Solver)
	var total time.Duration
	g.Progress = func(p dataset.Progress) {
		total += p.Elapsed
		status := "solved"
		if p.Failure != "" {
			status = "failed: " + p.Failure
		}
		fmt.Fprintf(stderr, "sample %d (%d/%d): %s in %.3f s\n", p.Index, p.Done, p.Size, status, p.Elapsed.Seconds())
	}
	rep, err := g.Run(ctx, path, sh)
	if rep.Solved > 0 {
		fmt.Fprintf(stderr, "%d samples solved now (%d failed), %.3f s per solve (wall); %d were in the file\n",
			rep.Solved, rep.Failed, total.Seconds()/float64(rep.Solved), rep.Found)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: shard %s complete, %d samples\n", path, sh, rep.Size)
	return nil
}

func merge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("acopf-data merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "the data set's file (required); the shard files are the arguments")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "acopf-data merge: -out and at least one shard file are required")
		return errUsage
	}
	spec, err := dataset.Merge(*out, fs.Args())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d samples of %s from %d shard files\n", *out, spec.Count, spec.Case, fs.NArg())
	return nil
}

func info(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("acopf-data info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "acopf-data info: one data set file")
		return errUsage
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := dataset.Read(f)
	if err != nil {
		return err
	}
	var ok int
	var sum float64
	for _, s := range d.Samples {
		if s.Y != nil {
			ok++
			sum += s.Objective
		}
	}
	s := d.Spec
	fmt.Fprintf(stdout, "case %s (sha256 %s), formulation %s\nseed %d, %d samples, loads %s\nsolver %s, tol %g\nnx %d, ny %d\nlabelled %d, failed %d",
		s.Case, s.CaseSHA256, s.Formulation, s.Seed, s.Count, s.Load, s.Solver, s.Tol, s.NX, s.NY, ok, s.Count-ok)
	if ok > 0 {
		fmt.Fprintf(stdout, ", mean objective %.8g $/h", sum/float64(ok))
	}
	fmt.Fprintln(stdout)
	return nil
}
