package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/examples/internal/harness"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// projectMean is -project-mean: it projects the mean of the training
// optima (what a network that has learned only the mean predicts; with
// standardised outputs, a network whose outputs are zero) onto the power
// flow, and onto the power flow and the limits, at the loads of the test
// samples, and prints the residuals after a fixed number of steps and
// AdaNP's own run (max|c| ≤ 1e-6, at most 100 steps). It isolates the
// projection from the training: how far from the manifold AdaNP converges
// on this grid when the loads, and with them the active bounds, change.
func projectMean(o options, m *acopf.Model, d *dataset, w io.Writer) error {
	nTr, nVa := split(len(d.X))
	nTe := len(d.X) - nTr - nVa
	if o.ntest > 0 {
		nTe = min(nTe, o.ntest)
	}
	x := rows(d.X[len(d.X)-nTe:])
	_, ny := m.Dims()
	mean := make([]float64, ny)
	for _, y := range d.Y[:nTr] {
		for k, v := range y {
			mean[k] += v / float64(nTr)
		}
	}
	y0 := mat.NewDense(nTe, ny, nil)
	for i := range nTe {
		y0.SetRow(i, mean)
	}
	full, err := m.ConstraintWith(acopf.ConstraintOptions{FBEps: o.fbEps})
	if err != nil {
		return err
	}
	pf, lim := m.PowerFlow(), m.Inequalities()
	_, _, npf := pf.Dims()
	_, _, ng := lim.Dims()
	worst := func(yp *mat.Dense) (maxPF, maxG float64, active int) {
		c, g := make([]float64, npf), make([]float64, ng)
		for i := range nTe {
			xi, yi := x.RawRowView(i), yp.RawRowView(i)[:ny]
			pf.Eval(xi, yi, c, nil)
			lim.Eval(xi, yi, g, nil)
			for _, v := range c {
				maxPF = math.Max(maxPF, math.Abs(v))
			}
			for _, v := range g {
				maxG = math.Max(maxG, v)
				if v > -1e-3 {
					active++
				}
			}
		}
		return maxPF, maxG, active / nTe
	}
	p0, g0, a0 := worst(y0)
	fmt.Fprintf(w, "\nThe training optima's mean projected at the loads of %d test samples (ε_FB %g, -weights %s, -path %s); before: max|pf| %.2e, max g⁺ %.2e, %d bounds within 1e-3 of active per sample\n\n",
		nTe, o.fbEps, o.weights, o.path, p0, g0, a0)
	fmt.Fprintln(w, "| constraint | steps | max\\|pf\\| | max g⁺ | bounds within 1e-3 of active (per sample) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	cons := []struct {
		name string
		c    enforce.Constraint
	}{{"power flow", pf}, {"power flow and limits", full}}
	settings := func() (enforce.Settings, error) {
		_, s, err := harness.AdaNPSettings(o.weights)
		if err != nil {
			return s, err
		}
		return s, setPath(&s, o.path)
	}
	for _, cn := range cons {
		for _, steps := range []int{1, 2, 3, 5, 10, 20, 50, 100} {
			s, err := settings()
			if err != nil {
				return err
			}
			s.MinDepth, s.MaxDepth = steps, steps
			a, err := enforce.NewAdaNP(cn.c, s)
			if err != nil {
				return err
			}
			yp, _, err := a.Project(x, y0)
			if err != nil {
				return err
			}
			p, g, act := worst(yp)
			fmt.Fprintf(w, "| %s | %d | %.2e | %.2e | %d |\n", cn.name, steps, p, g, act)
		}
	}
	fmt.Fprintln(w)
	refineEps, err := parseEpsList(o.refineFBEps)
	if err != nil {
		return err
	}
	for _, cn := range cons {
		s, err := settings()
		if err != nil {
			return err
		}
		a, err := enforce.NewAdaNP(cn.c, s)
		if err != nil {
			return err
		}
		t0 := time.Now()
		yp, st, err := a.Project(x, y0)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "AdaNP onto the %s (max|c| ≤ %g, at most %d steps): depth mean %.2f, max %d; %d of %d not converged (%d of them stalled), %.2f s\n",
			cn.name, enforce.DefaultTol, enforce.DefaultMaxDepth, st.MeanDepth, st.Depth, st.NotConverged, nTe, st.Stalled, time.Since(t0).Seconds())
		if cn.c == full && o.interior > 0 {
			// -interior: enforce.Interior from where AdaNP stopped on the
			// samples it missed, and from the mean on every sample.
			in, err := newInterior(m, s, o.interior)
			if err != nil {
				return err
			}
			for _, from := range []string{"AdaNP's misses, from where it stopped", "every sample, from the mean"} {
				yi, rws := mat.DenseCopyOf(yp), st.Missed
				if rws == nil {
					rws = []int{}
				}
				if from != "AdaNP's misses, from where it stopped" {
					yi, rws = mat.DenseCopyOf(y0), allRows(nTe)
				}
				t0 := time.Now()
				ist, err := in.RefineRows(x, yi, rws)
				if err != nil {
					return err
				}
				secs := time.Since(t0).Seconds()
				p, g, _ := worst(yi)
				var obj, opt float64
				for i := range nTe {
					obj += m.Objective(yi.RawRowView(i)[:ny]) / float64(nTe)
					opt += m.Objective(d.Y[len(d.X)-nTe+i]) / float64(nTe)
				}
				fmt.Fprintf(w, "  enforce.Interior (at most %d steps) on %s: %d samples, %d not converged (%d stalled), depth mean %.2f, max %d; max|pf| %.2e, max g⁺ %.2e; cost %+.2f %% from the optima (all %d samples); %.2f s\n",
					o.interior, from, ist.Samples, ist.NotConverged, ist.Stalled, ist.MeanDepth, ist.Depth, p, g, 100*(obj/opt-1), nTe, secs)
			}
		}
		if cn.c != full || len(refineEps) == 0 {
			continue
		}
		// -refine-fbeps: the samples left above the tolerance projected
		// again onto the limits smoothed with each ε_FB in turn.
		stages, err := refineStages(m, a, 0, refineEps)
		if err != nil {
			return err
		}
		t0 = time.Now()
		rs, err := enforce.Refine(x, yp, st.Missed, stages...)
		if err != nil {
			return err
		}
		p, g, _ := worst(yp)
		fmt.Fprintf(w, "  refined with ε_FB %s (enforce.Refine): %d of %d not converged, max|pf| %.2e, max g⁺ %.2e, %.2f s;", o.refineFBEps, len(rs.Missed), nTe, p, g, time.Since(t0).Seconds())
		for k, rst := range rs.Stages {
			fmt.Fprintf(w, " stage %d: %d samples, depth mean %.2f, max %d, %d not converged;", k+1, rst.Samples, rst.MeanDepth, rst.Depth, rst.NotConverged)
		}
		fmt.Fprintln(w)
	}
	return nil
}
