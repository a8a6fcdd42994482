package acopf

import (
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// shipped holds the case files compiled into the package, with their
// licences and provenance (data/README.md).
//
//go:embed data/*.m data/*.m.gz data/optimum_*.txt.gz data/README.md data/LICENSE.pglib data/LICENSE.matpower
var shipped embed.FS

// Published is PGLib-OPF v23.07's AC objective ($/h) of each shipped
// PGLib case, from BASELINE.md of the pglib-opf repository (typical
// operating conditions, PowerModels.jl with IPOPT), to five significant
// digits as published.
var Published = map[string]float64{
	"pglib_opf_case57_ieee":     3.7589e4,
	"pglib_opf_case118_ieee":    9.7214e4,
	"pglib_opf_case300_ieee":    5.6522e5,
	"pglib_opf_case1354_pegase": 1.2588e6,
	"pglib_opf_case2869_pegase": 2.4628e6,
	"pglib_opf_case10000_goc":   1.3540e6,
}

// Names returns the names of the shipped cases, sorted: the PGLib-OPF
// cases (pglib_opf_case57_ieee, …) and MATPOWER 6.0's case57
// (matpower6_case57).
func Names() []string {
	ents, err := shipped.ReadDir("data")
	if err != nil {
		panic("acopf: embedded data missing: " + err.Error())
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".m") || strings.HasSuffix(n, ".m.gz") {
			names = append(names, caseName(n))
		}
	}
	sort.Strings(names)
	return names
}

// Load returns a case: a shipped case by name (as Names lists it; the
// prefix "pglib_opf_" may be left out, as in "case57_ieee"), or otherwise
// the MATPOWER file at the path name (see ReadFile).
func Load(name string) (*Case, error) {
	for _, n := range []string{name, "pglib_opf_" + name} {
		for _, file := range []string{n + ".m", n + ".m.gz"} {
			f, err := shipped.Open("data/" + file)
			if err != nil {
				continue
			}
			defer f.Close()
			var r io.Reader = f
			if strings.HasSuffix(file, ".gz") {
				z, err := gzip.NewReader(f)
				if err != nil {
					return nil, fmt.Errorf("acopf: embedded %s: %w", file, err)
				}
				defer z.Close()
				r = z
			}
			return Parse(r, file)
		}
	}
	if _, err := os.Stat(name); err != nil {
		return nil, fmt.Errorf("acopf: %q is neither a shipped case (%s) nor a readable file: %w",
			name, strings.Join(Names(), ", "), err)
	}
	return ReadFile(name)
}
