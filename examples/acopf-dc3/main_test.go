package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/acopf"
)

func loadModel(t *testing.T) (*acopf.Case, *acopf.Model) {
	c, err := acopf.Load(dc3Case)
	require.NoError(t, err)
	m, err := acopf.NewModel(c)
	require.NoError(t, err)
	return c, m
}

// TestQuick runs -quick's setting on the shipped data set (50 training
// and 10 test samples, 3 epochs, one seed) and checks the table: the
// optimizer's test objective, and ENFORCE's predictions on the power
// flow and within the limits.
func TestQuick(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick"}))
	o.out, o.data = t.TempDir(), "data" // the shipped data set, from the package's folder
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	text := out.String()
	assert.Contains(t, text, "matpower6_case57: 1200 samples (train 1000, valid 100, test 100), seed 1")
	assert.Regexp(t, `optimizer: mean objective \(DC3-scaled\) all [0-9.]+, test 3\.[78]`, text)
	assert.Contains(t, text, "| MLP, 3 epochs, 50 training samples (1 seeds) |")
	assert.Contains(t, text, "| Soft, 3 epochs, 50 training samples (1 seeds) |")
	// DC3's completion and correction: the correction's steps are not
	// re-completed, so the balances drift from Newton's tolerance (DC3's
	// own table: 6.8e-5), but stay well below the MLP's order 1.
	assert.Regexp(t, `\| DC3 with correction, 3 epochs, 50 training samples \(1 seeds\) \| [0-9.]+ \| [-0-9.]+ % \| [0-9.]+e-(0[2-9]|1[0-9])`, text)
	// After 3 epochs on 50 samples the backbone is far from trained and
	// AdaNP does not reach 1e-6 on every test sample within its 100
	// steps; the mean max residual is still below 1e-3 p.u. (MLP's is
	// of order 1).
	assert.Regexp(t, `\| ENFORCE, 3 epochs, 50 training samples \(1 seeds\) \| [0-9.]+ \| [-0-9.]+ % \| [0-9.]+e-(0[4-9]|1[0-9])`, text)
	md, err := os.ReadFile(filepath.Join(o.out, "acopf-dc3.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "| DC3 (DC3 paper) | 3.8160 |")
}

// TestSample checks DC3's load recipe: factors within ±70 % at the buses
// with a positive load, power factors in [0.8, 1] with the sign of the
// base reactive load, and the same draws for the same seed.
func TestSample(t *testing.T) {
	c, m := loadModel(t)
	xs, err := sampleLoads(m, 200, 3)
	require.NoError(t, err)
	again, err := sampleLoads(m, 10, 3)
	require.NoError(t, err)
	assert.Equal(t, xs[:10], again, "a longer draw starts with the shorter one")
	lb := m.PowerFlow().LoadBuses()
	nl := len(lb)
	var meanF float64
	for _, x := range xs {
		for k, i := range lb {
			b := c.Buses[i]
			if b.Pd <= 0 {
				assert.Equal(t, b.Pd, x[k])
				continue
			}
			f := x[k] / b.Pd
			require.Greater(t, f, 0.3)
			require.Less(t, f, 1.7)
			meanF += f / float64(len(xs)*nl)
			q := x[nl+k]
			pf := x[k] / math.Hypot(x[k], q)
			assert.GreaterOrEqual(t, pf, 0.8-1e-12)
			assert.Equal(t, b.Qd > 0, q > 0)
		}
	}
	assert.InDelta(t, 1, meanF, 0.1, "the factors are centred on 1")
}

// TestFBEps checks -fbeps: ENFORCE's constraint takes the smoothing ε
// (acopf.ConstraintOptions.FBEps) and its runs are a row of their own;
// a negative ε is an error.
func TestFBEps(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-methods", "ENFORCE", "-fbeps", "1e-4", "-epochs", "1"}))
	o.out, o.data = "", "data"
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	assert.Contains(t, out.String(), "| ENFORCE, ε_FB 0.0001, 1 epochs, 50 training samples (1 seeds) |")
	o.fbEps = -1
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "FBEps")
}

// TestFactorDraw checks the sampler for grids with many loads against
// DC3's joint rejection sampler on L = 42 load factors (case57's), where
// both work: the acceptance rate acceptance predicts is the joint
// sampler's, and the two laws agree in the factors' mean, spread and
// correlation within five standard errors; every factor is inside
// (0.3, 1.7).
func TestFactorDraw(t *testing.T) {
	const l, n = 42, 20000
	a, b := math.Sqrt(corrCoeff), math.Sqrt(1-corrCoeff)
	type moments struct{ mean, sd, corr float64 }
	stats := func(draws [][]float64) moments {
		var s, s2, cross float64
		for _, f := range draws {
			var sum float64
			for _, v := range f {
				s += v
				s2 += v * v
				sum += v - 1
			}
			cross += sum * sum
		}
		cnt := float64(len(draws) * l)
		mu := s / cnt
		v := s2/cnt - mu*mu
		// Mean of (f_j − 1)(f_k − 1) over pairs j ≠ k, from (Σ(f−1))².
		var diag float64
		for _, f := range draws {
			for _, x := range f {
				diag += (x - 1) * (x - 1)
			}
		}
		pair := (cross - diag) / float64(len(draws)*l*(l-1))
		return moments{mu, math.Sqrt(v), pair / v}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var joint, factor [][]float64
	tries := 0
	for len(joint) < n {
		tries++
		c := rng.NormFloat64()
		f := make([]float64, l)
		ok := true
		for k := range f {
			f[k] = 1 + sigma*(a*c+b*rng.NormFloat64())
			ok = ok && f[k] > 1-maxChange && f[k] < 1+maxChange
		}
		if ok {
			joint = append(joint, f)
		}
	}
	rate := float64(n) / float64(tries)
	p := acceptance(l)
	// case1354_pegase's 621 loads: joint rejection would almost never accept.
	assert.InDelta(t, 4e-7, acceptance(621), 0.5e-7)
	assert.Less(t, acceptance(621), minAccept)
	assert.InDelta(t, p, rate, 5*math.Sqrt(p*(1-p)/float64(tries)), "acceptance %g, joint sampler's %g", p, rate)
	for len(factor) < n {
		f := make([]float64, l)
		if factorDraw(rng, f) {
			for _, v := range f {
				require.True(t, v > 1-maxChange && v < 1+maxChange, "factor %g", v)
			}
			factor = append(factor, f)
		}
	}
	mj, mf := stats(joint), stats(factor)
	// Standard errors: the mean of a draw's factors has variance about
	// σ²(ρ + (1−ρ)/L); the spread and correlation are looser.
	se := sigma * math.Sqrt(corrCoeff/n)
	assert.InDelta(t, mj.mean, mf.mean, 5*math.Sqrt2*se, "mean")
	assert.InDelta(t, mj.sd, mf.sd, 0.01*mj.sd, "standard deviation")
	assert.InDelta(t, mj.corr, mf.corr, 0.03, "correlation")
	t.Logf("joint: %+v (acceptance %.3f); factor: %+v", mj, rate, mf)
}

// TestModes runs the other modes on the shipped data at -quick's size:
// -supervised (rows named after it), -pf-only, -project-mean (onto the
// power flow every test sample converges), -checkpoint (a second run
// resumes the finished checkpoint and reports the same metrics),
// -restarts, and the errors for a bad -corr and for DC3 with -supervised.
func TestModes(t *testing.T) {
	parse := func(args ...string) options {
		o := defaults()
		require.NoError(t, flags(&o).Parse(append([]string{"-quick"}, args...)))
		o.out, o.data = "", "data"
		return o
	}
	var out bytes.Buffer
	require.NoError(t, run(parse("-supervised", "-pf-only", "-methods", "MLP,ENFORCE", "-weights", "auto", "-epochs", "2"), &out, io.Discard))
	assert.Contains(t, out.String(), "| MLP, supervised, power flow only, 2 epochs, 50 training samples (1 seeds) |")
	assert.Contains(t, out.String(), "| ENFORCE, supervised, power flow only, 2 epochs, 50 training samples (1 seeds) |")

	out.Reset()
	require.NoError(t, run(parse("-project-mean", "-weights", "auto", "-fbeps", "1e-4"), &out, io.Discard))
	assert.Regexp(t, `AdaNP onto the power flow \(max\|c\| ≤ 1e-06, at most 100 steps\): depth mean [0-9.]+, max [0-9]+; 0 of 10 not converged`, out.String())
	assert.Contains(t, out.String(), "| power flow and limits | 100 |")

	dir := t.TempDir()
	o := parse("-methods", "ENFORCE", "-weights", "auto", "-fbeps", "1e-4", "-epochs", "2", "-checkpoint", dir)
	var first, second, log1, log2 bytes.Buffer
	require.NoError(t, run(o, &first, &log1))
	matches, err := filepath.Glob(filepath.Join(dir, "matpower6_case57-ENFORCE-fbeps0.0001-seed1", "checkpoint.json"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	require.NoError(t, run(o, &second, &log2))
	assert.Contains(t, log1.String(), "ENFORCE epoch")
	assert.NotContains(t, log2.String(), "ENFORCE epoch", "the second run resumes the finished checkpoint and trains no epoch")
	row := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "| ENFORCE") {
				return l[:strings.LastIndex(strings.TrimSuffix(l, " |"), "|")] // all but the time column
			}
		}
		return ""
	}
	require.NotEmpty(t, row(first.String()))
	assert.Equal(t, row(first.String()), row(second.String()), "the resumed run reports the same metrics")

	// -restarts: a row of its own, and the restart count in the log.
	out.Reset()
	var rlog bytes.Buffer
	require.NoError(t, run(parse("-methods", "ENFORCE", "-weights", "auto", "-fbeps", "1e-4", "-epochs", "1", "-restarts", "2"), &out, &rlog))
	assert.Contains(t, out.String(), "| ENFORCE, 2 restarts, ε_FB 0.0001, 1 epochs, 50 training samples (1 seeds) |")
	assert.Regexp(t, `restarts and refinement: [0-9]+ projections of unconverged samples, [0-9]+ still not converged`, rlog.String())

	// -infer-maxdepth and -refine-fbeps: the first projection cut short,
	// the samples it leaves refined onto limits smoothed less.
	out.Reset()
	rlog.Reset()
	cdir := t.TempDir()
	require.NoError(t, run(parse("-methods", "ENFORCE", "-weights", "auto", "-fbeps", "1e-4", "-epochs", "2", "-cosine", "-infer-maxdepth", "2", "-refine-fbeps", "1e-6, 1e-8", "-checkpoint", cdir), &out, &rlog))
	assert.Contains(t, out.String(), "| ENFORCE, first projection at most 2 steps, refined with ε_FB 1e-6, 1e-8, ε_FB 0.0001, cosine-decayed rate, 2 epochs, 50 training samples (1 seeds) |")
	// -cosine: the rate of the last epoch is 1 % of -lr's (the checkpoint's history).
	raw, err := os.ReadFile(filepath.Join(cdir, "matpower6_case57-ENFORCE-fbeps0.0001-cosine-seed1", "checkpoint.json"))
	require.NoError(t, err)
	var ck struct {
		Checkpoint struct {
			Fit struct{ History []struct{ LearnRate float64 } }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &ck))
	h := ck.Checkpoint.Fit.History
	require.Len(t, h, 2)
	assert.Equal(t, 1e-3, h[0].LearnRate)
	assert.InDelta(t, 1e-5, h[1].LearnRate, 1e-18)
	assert.Regexp(t, `restarts and refinement: [1-9][0-9]* projections of unconverged samples`, rlog.String(), "two steps leave samples to refine")
	// -grad: ENFORCE trains with the gradient asked for (the
	// checkpoint's training settings), in a row and a checkpoint folder of
	// its own.
	out.Reset()
	gdir := t.TempDir()
	require.NoError(t, run(parse("-methods", "ENFORCE", "-weights", "auto", "-fbeps", "1e-4", "-epochs", "1", "-grad", "final-projector", "-checkpoint", gdir), &out, io.Discard))
	assert.Contains(t, out.String(), "| ENFORCE, ε_FB 0.0001, final-projector gradient, 1 epochs, 50 training samples (1 seeds) |")
	raw, err = os.ReadFile(filepath.Join(gdir, "matpower6_case57-ENFORCE-fbeps0.0001-grad-final-projector-seed1", "checkpoint.json"))
	require.NoError(t, err)
	var gck struct {
		Checkpoint struct {
			Config struct{ Train, Infer enforce.Settings }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &gck))
	assert.Equal(t, enforce.FinalProjector, gck.Checkpoint.Config.Train.Grad)
	assert.Equal(t, enforce.Unrolled, gck.Checkpoint.Config.Infer.Grad)
	assert.ErrorContains(t, run(parse("-methods", "ENFORCE", "-epochs", "1", "-grad", "exact"), io.Discard, io.Discard), "-grad")

	// -refine-all: every test sample goes through the refinement.
	out.Reset()
	rlog.Reset()
	require.NoError(t, run(parse("-methods", "ENFORCE", "-weights", "auto", "-fbeps", "1e-4", "-epochs", "1", "-grad", "final-projector", "-checkpoint", gdir, "-refine-fbeps", "1e-6", "-refine-all"), &out, &rlog))
	assert.Contains(t, out.String(), "| ENFORCE, every sample, refined with ε_FB 1e-6, ε_FB 0.0001, final-projector gradient, 1 epochs, 50 training samples (1 seeds) |")
	assert.Regexp(t, `restarts and refinement: (10|1[0-9]) projections of unconverged samples`, rlog.String(), "the 10 test samples, and the ones the first stage missed")
	assert.ErrorContains(t, run(parse("-methods", "ENFORCE", "-epochs", "1", "-refine-all"), io.Discard, io.Discard), "-refine-all")
	assert.ErrorContains(t, run(parse("-project-mean", "-refine-fbeps", "1e-6", "-refine-all"), io.Discard, io.Discard), "-refine-all")

	// -interior: the samples the first projection (cut at 2 steps) left
	// are finished by enforce.Interior, in a row of its own; every test
	// sample then meets the tolerance with no bound violated.
	out.Reset()
	rlog.Reset()
	require.NoError(t, run(parse("-methods", "ENFORCE", "-weights", "auto", "-fbeps", "1e-4", "-epochs", "1", "-grad", "final-projector", "-checkpoint", gdir, "-infer-maxdepth", "2", "-interior", "100"), &out, &rlog))
	assert.Contains(t, out.String(), "| ENFORCE, first projection at most 2 steps, then Interior (100 steps), ε_FB 0.0001, final-projector gradient, 1 epochs, 50 training samples (1 seeds) |")
	assert.Regexp(t, `restarts and refinement: [1-9][0-9]* projections of unconverged samples, 0 still not converged`, rlog.String())
	assert.Regexp(t, `max ineq 0\.0e\+00`, rlog.String())
	out.Reset()
	require.NoError(t, run(parse("-project-mean", "-weights", "auto", "-fbeps", "1e-4", "-interior", "100"), &out, io.Discard))
	assert.Regexp(t, `enforce.Interior \(at most 100 steps\) on every sample, from the mean: 10 samples, 0 not converged .*max g⁺ 0\.00e\+00`, out.String())
	assert.ErrorContains(t, run(parse("-methods", "ENFORCE", "-epochs", "1", "-interior", "-1"), io.Discard, io.Discard), "-interior")

	out.Reset()
	require.NoError(t, run(parse("-project-mean", "-weights", "auto", "-fbeps", "1e-4", "-refine-fbeps", "1e-6"), &out, io.Discard))
	assert.Contains(t, out.String(), "refined with ε_FB 1e-6 (enforce.Refine): 0 of 10 not converged")
	for _, bad := range [][]string{{"-refine-fbeps", "0"}, {"-refine-fbeps", "x"}, {"-refine-fbeps", "1e-6", "-pf-only"}, {"-infer-maxdepth", "-1"}} {
		assert.Error(t, run(parse(append([]string{"-methods", "ENFORCE", "-epochs", "1"}, bad...)...), io.Discard, io.Discard), "%v", bad)
	}

	assert.ErrorContains(t, run(parse("-corr", "sometimes", "-methods", "DC3"), io.Discard, io.Discard), "-corr")
	assert.ErrorContains(t, run(parse("-supervised", "-methods", "DC3"), io.Discard, io.Discard), "-supervised")
}

// TestNNSolver runs DC3's own ACOPF model (dc3.NewACOPF) for one epoch
// with checkpoints, then again from its checkpoint: the second run trains
// nothing and prints the same row.
func TestNNSolver(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-methods", "DC3-NNSolver", "-epochs", "1", "-corr", "test"}))
	o.out, o.data, o.checkpoint = "", "data", t.TempDir()
	row := func() string {
		var out bytes.Buffer
		require.NoError(t, run(o, &out, io.Discard))
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "| DC3 (NNSolver, DC3's loss), correction at test time only, 1 epochs, 50 training samples (1 seeds) |") {
				// The time column varies between runs.
				return l[:strings.LastIndex(strings.TrimSuffix(l, " |"), "|")]
			}
		}
		t.Fatalf("no DC3-NNSolver row in\n%s", out.String())
		return ""
	}
	first := row()
	assert.Equal(t, first, row(), "resumed from the checkpoint")
}

// TestPredictions writes a network's test predictions for examples/acopf
// -points: one row per test sample, the loads then ŷ.
func TestPredictions(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-methods", "MLP", "-epochs", "1"}))
	o.out, o.data, o.predictions = "", "data", t.TempDir()
	require.NoError(t, run(o, io.Discard, io.Discard))
	b, err := os.ReadFile(filepath.Join(o.predictions, "matpower6_case57-MLP-seed1.csv"))
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, rows, 10, "-quick's 10 test samples")
	for _, r := range rows {
		assert.Len(t, strings.Split(r, ","), 84+128, "nx + ny")
	}
}

// TestInferLineSearch runs ENFORCE's inference with a line-searched first
// projection (-infer-linesearch), which names the row.
func TestInferLineSearch(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-methods", "ENFORCE", "-weights", "auto", "-epochs", "1", "-infer-linesearch"}))
	o.out, o.data = "", "data"
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	assert.Contains(t, out.String(), "| ENFORCE, first projection line-searched, 1 epochs, 50 training samples (1 seeds) |")
}

// TestCorrGrad trains DC3 both ways with the exact gradient of the
// training-time correction, and rejects it where no correction trains.
func TestCorrGrad(t *testing.T) {
	o := defaults()
	require.NoError(t, flags(&o).Parse([]string{"-quick", "-methods", "DC3,DC3-NNSolver", "-epochs", "1", "-corr-grad", "exact"}))
	o.out, o.data = "", "data"
	var out bytes.Buffer
	require.NoError(t, run(o, &out, io.Discard))
	assert.Contains(t, out.String(), "| DC3 with correction (exact gradient), 1 epochs, 50 training samples (1 seeds) |")
	assert.Contains(t, out.String(), "| DC3 (NNSolver, DC3's loss) with correction (exact gradient), 1 epochs, 50 training samples (1 seeds) |")
	o.corr = "test"
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "-corr-grad exact")
	o.corr, o.corrGrad = "train+test", "straight"
	assert.ErrorContains(t, run(o, io.Discard, io.Discard), "identity or exact")
}
