//go:build ipopt

package acopf

import (
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce/internal/cputime"
	"github.com/enforce-nn/enforce/solvers"
	"github.com/enforce-nn/enforce/solvers/ipopt"
)

// TestReferenceMatchesPGLib solves PGLib-OPF's ACOPF of every shipped
// PGLib case with IPOPT from the flat start and compares the optimum with
// the AC objective PGLib publishes (BASELINE.md): within 0.1 %.
func TestReferenceMatchesPGLib(t *testing.T) {
	for _, name := range Names() {
		pub, ok := Published[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			c, err := Load(name)
			require.NoError(t, err)
			if len(c.Buses) > 1000 && !*bigGrids {
				t.Skip("more than 1000 buses: run with -acopf.big")
			}
			m, err := NewModel(c)
			require.NoError(t, err)
			p, err := m.NLP(m.Loads(), Formulation{})
			require.NoError(t, err)
			cpu := cputime.Process()
			res, err := ipopt.Solver{Tol: 1e-8, ConstrViolTol: 1e-6, Options: ReferenceOptions}.SolveSparse(p, m.FlatStart())
			cpu = cputime.Process() - cpu
			require.NoError(t, err)
			require.Equal(t, solvers.Success, res.Status)
			rel := math.Abs(res.Objective-pub) / pub
			pfRes, relViol := violations(m, p, res.Y)
			t.Logf("%s: objective %.6e, PGLib %.4e, rel. diff %.2e, %d iterations, wall %v, CPU %v, max violation %.1e (power flow %.1e p.u., bounds %.1e relative)",
				name, res.Objective, pub, rel, res.Iterations, res.Runtime.Round(time.Millisecond), cpu.Round(time.Millisecond), res.MaxViolation, pfRes, relViol)
			assert.LessOrEqual(t, rel, 1e-3)
			assert.LessOrEqual(t, pfRes, 1e-6)
			assert.LessOrEqual(t, relViol, 1e-7, "IPOPT relaxes bounds by 1e-8 relative")
		})
	}
}

// BenchmarkReference solves case57's ACOPF (PGLib's formulation, flat
// start) with IPOPT and with the pure-Go interior-point method.
func BenchmarkReference(b *testing.B) {
	c, err := Load("case57_ieee")
	require.NoError(b, err)
	m, err := NewModel(c)
	require.NoError(b, err)
	p, err := m.NLP(m.Loads(), Formulation{})
	require.NoError(b, err)
	b.Run("ipopt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := ipopt.Solver{Tol: 1e-8, ConstrViolTol: 1e-6, Options: ReferenceOptions}.SolveSparse(p, m.FlatStart())
			require.NoError(b, err)
			require.Equal(b, solvers.Success, res.Status)
		}
	})
	b.Run("purego", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := solvers.SolveSparse(p, m.FlatStart(), &solvers.Settings{Tol: 1e-6, FeasTol: 1e-8})
			require.NoError(b, err)
			require.Equal(b, solvers.Success, res.Status)
		}
	})
}

// updateOptima makes TestReferenceOptimaIPOPT write the cached optima.
var updateOptima = flag.Bool("acopf.update", false, "write data/optimum_<case>.txt.gz from IPOPT's optima (TestReferenceOptimaIPOPT)")

// TestReferenceOptimaIPOPT solves PGLib-OPF's ACOPF of every case with a
// cached optimum (of more than 1000 buses only with -acopf.big) with IPOPT
// as TestReferenceMatchesPGLib does and checks that the cached optimum is
// the point IPOPT reaches (objective to 1e-9 relative, y to 1e-6); with
// -acopf.update it writes the cache instead (every PGLib case, cached or
// not):
//
//	go test -tags ipopt -run TestReferenceOptimaIPOPT ./problems/acopf -acopf.big -acopf.update
func TestReferenceOptimaIPOPT(t *testing.T) {
	for _, name := range Names() {
		if _, ok := Published[name]; !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			cached, err := ReferenceOptimum(name)
			if !*updateOptima && errors.Is(err, fs.ErrNotExist) {
				t.Skip("no cached optimum")
			}
			c, err := Load(name)
			require.NoError(t, err)
			if len(c.Buses) > 1000 && !*bigGrids {
				t.Skip("more than 1000 buses: run with -acopf.big")
			}
			m, err := NewModel(c)
			require.NoError(t, err)
			p, err := m.NLP(m.Loads(), Formulation{})
			require.NoError(t, err)
			res, err := ipopt.Solver{Tol: 1e-8, ConstrViolTol: 1e-6, Options: ReferenceOptions}.SolveSparse(p, m.FlatStart())
			require.NoError(t, err)
			require.Equal(t, solvers.Success, res.Status)
			t.Logf("%s: objective %.10e in %d iterations, %v", name, res.Objective, res.Iterations, res.Runtime.Round(time.Millisecond))
			if !*updateOptima {
				require.NoError(t, err)
				assert.InDelta(t, 1, cached.Objective/res.Objective, 1e-9)
				for i := range res.Y {
					assert.InDelta(t, res.Y[i], cached.Y[i], 1e-6, "y[%d]", i)
				}
				return
			}
			sha, err := caseSHA256(name)
			require.NoError(t, err)
			o := &Optimum{
				Case: name, CaseSHA256: sha,
				Formulation: "PGLib-OPF v23.07 (MODEL.tex: thermal and angle-difference limits), acopf.Model.NLP",
				Solver:      fmt.Sprintf("IPOPT %s from FlatStart, tol 1e-8, constr_viol_tol 1e-6, honor_original_bounds no, %d iterations", ipoptVersion(), res.Iterations),
				Objective:   res.Objective, Y: res.Y,
			}
			f, err := os.Create(filepath.Join("data", optimumFile(name)))
			require.NoError(t, err)
			z, err := gzip.NewWriterLevel(f, gzip.BestCompression)
			require.NoError(t, err)
			_, err = o.WriteTo(z)
			require.NoError(t, err)
			require.NoError(t, z.Close())
			require.NoError(t, f.Close())
		})
	}
}

// ipoptVersion returns the version of the IPOPT that pkg-config finds (the
// one cgo links), or "(version unknown)".
func ipoptVersion() string {
	out, err := exec.Command("pkg-config", "--modversion", "ipopt").Output()
	if err != nil {
		return "(version unknown)"
	}
	return strings.TrimSpace(string(out))
}
