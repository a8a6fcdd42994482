// Package harness holds what the example programs under examples/ share
// besides the metrics and figures of package report: their command-line
// convention (Flags), and the loop that trains one model per seed and
// method and measures it (Trials, Fit), so that each program's main.go
// reads as its experiment only.
//
// The convention, the same in every program:
//
//   - -h (or -help) prints the usage, the defaults and what -quick changes,
//     and exits with status 0 without running anything;
//   - -quick replaces the defaults of some flags by a smaller setting that
//     finishes in seconds; a flag given explicitly keeps its value;
//   - -out DIR is the folder for figures (PNG), histories (CSV) and tables
//     (Markdown), created if needed; its default is DefaultOut(program),
//     and -out "" writes no files;
//   - a bad flag exits with status 2, a failed run with status 1.
package harness

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// DefaultOut returns the default of -out for the program name:
// $TMPDIR/enforce-figures/name (os.TempDir).
func DefaultOut(name string) string {
	return filepath.Join(os.TempDir(), "enforce-figures", name)
}

// Flags is a program's flag set under the examples' convention. Register
// the program's own flags on the embedded FlagSet, their -quick values
// with Quick, and -out with Out; then call Main.
type Flags struct {
	*flag.FlagSet
	synopsis string
	quick    bool
	// quickVals are the -quick defaults, in the order of Quick calls.
	quickVals [][2]string
	// quickTo are set to whether -quick was given (QuickVar).
	quickTo []*bool
}

// New returns the flag set of the program name (the folder under
// examples/), with -quick registered. synopsis is printed above the flags
// by -h.
func New(name, synopsis string) *Flags {
	f := &Flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), synopsis: synopsis}
	f.BoolVar(&f.quick, "quick", false, "a reduced setting that finishes in seconds: the defaults listed below; flags given explicitly keep their values")
	f.FlagSet.Usage = f.usage
	return f
}

// Quick makes value the default of the flag name under -quick. The flag
// must be registered before Parse; value is parsed as the flag parses its
// argument.
func (f *Flags) Quick(name, value string) *Flags {
	f.quickVals = append(f.quickVals, [2]string{name, value})
	return f
}

// QuickVar makes Parse set *p to whether -quick was given, so that a
// program can label a smoke run's output (report.Table.Smoke).
func (f *Flags) QuickVar(p *bool) {
	f.quickTo = append(f.quickTo, p)
}

// Out registers -out, the folder for the program's files, with the
// default DefaultOut(f.Name()).
func (f *Flags) Out(p *string) {
	f.StringVar(p, "out", DefaultOut(f.Name()), `folder for the figures (PNG), histories (CSV) and tables; "" writes no files`)
}

// usage prints the synopsis, the flags and the -quick defaults.
func (f *Flags) usage() {
	w := f.Output()
	fmt.Fprintf(w, "Usage: go run ./examples/%s [flags]\n\n", f.Name())
	if f.synopsis != "" {
		fmt.Fprintf(w, "%s\n\n", f.synopsis)
	}
	fmt.Fprintln(w, "Flags:")
	f.PrintDefaults()
	if len(f.quickVals) > 0 {
		parts := make([]string, len(f.quickVals))
		for i, kv := range f.quickVals {
			parts[i] = fmt.Sprintf("-%s %s", kv[0], kv[1])
		}
		fmt.Fprintf(w, "\n-quick sets: %s\n", strings.Join(parts, ", "))
	}
}

// Parse parses args; with -quick it then sets every flag registered with
// Quick that args did not set to its -quick value. It returns
// flag.ErrHelp for -h, and an error for a bad flag, a positional
// argument, or a -quick value of a flag that is not registered or does
// not parse.
func (f *Flags) Parse(args []string) error {
	if err := f.FlagSet.Parse(args); err != nil {
		return err
	}
	return f.applyQuick()
}

// applyQuick checks the arguments left after the flags and applies the
// -quick defaults.
func (f *Flags) applyQuick() error {
	if f.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags only; see -h)", f.Arg(0))
	}
	for _, p := range f.quickTo {
		*p = f.quick
	}
	if !f.quick {
		return nil
	}
	set := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	for _, kv := range f.quickVals {
		if set[kv[0]] {
			continue
		}
		if f.Lookup(kv[0]) == nil {
			return fmt.Errorf("-quick sets -%s, which is not a flag", kv[0])
		}
		if err := f.Set(kv[0], kv[1]); err != nil {
			return fmt.Errorf("-quick value of -%s: %w", kv[0], err)
		}
	}
	return nil
}

// Main parses args, writing usage and errors to stderr, and calls run. It
// returns the exit status: 0 after -h (run is not called) or a run that
// succeeded, 2 for a bad flag or argument, 1 when run fails.
func (f *Flags) Main(args []string, stderr io.Writer, run func() error) int {
	f.SetOutput(stderr)
	if err := f.FlagSet.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2 // the flag package has printed the error and the usage
	}
	if err := f.applyQuick(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", f.Name(), err)
		return 2
	}
	if err := run(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", f.Name(), err)
		return 1
	}
	return 0
}

// Command returns the entry point of a program that follows the
// convention: it starts from defaults(), registers the command line with
// flags, and calls run with the parsed options (Flags.Main); under -quick
// it first prints SmokeBanner on stdout. main is then
// os.Exit(cli(os.Args[1:], os.Stdout, os.Stderr)).
func Command[O any](defaults func() O, flags func(*O) *Flags, run func(o O, stdout, stderr io.Writer) error) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		o := defaults()
		f := flags(&o)
		return f.Main(args, stderr, func() error {
			f.PrintSmoke(stdout)
			return run(o, stdout, stderr)
		})
	}
}

// PrintSmoke prints SmokeBanner on w when -quick was given (after Parse),
// as a program's first line of output; Command calls it.
func (f *Flags) PrintSmoke(w io.Writer) {
	if f.quick {
		fmt.Fprintln(w, SmokeBanner)
	}
}

// SmokeBanner is the first line of a program's output under -quick.
const SmokeBanner = "SMOKE RUN (-quick): a reduced setting that checks the program runs; its numbers are not the paper's setting."
