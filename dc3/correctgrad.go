package dc3

import (
	"errors"
	"fmt"
	"hash"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
)

// The exact gradient of the training-time correction
// (Correction.ExactGradient). Per sample, the correction is the recurrence
//
//	s_{k+1} = η·D(y_k) + μ·s_k,   y_{k+1} = y_k − s_{k+1},   s_0 = 0,
//
// with D the direction of correctionDir, and its vector-Jacobian product
// runs it backwards: s̄_{k+1} = −ȳ_{k+1} + μ·s̄_{k+2}, ȳ_k = ȳ_{k+1} +
// η·J_D(y_k)ᵀs̄_{k+1}. With J = ∂c/∂y = [J_p J_o] at y (partial and other
// variables), A = −J_o⁻¹J_p, P = [I; A], ∇ = 2·J_gᵀmax(0, g) the direct
// gradient of the violation, D = P·Pᵀ∇, and a cotangent v, u = Pᵀv,
// λ₁ = J_o⁻ᵀ∇_o and λ₂ = J_o⁻ᵀv_o:
//
//	J_D(y)ᵀv = (∂∇/∂y)ᵀP·u − H(λ₁)·P·u − H(λ₂)·D,
//
// where ∂∇/∂y = 2·J_gᵀ·diag(g > 0)·J_g + Σ_r 2·max(0, g_r)·∇²g_r and
// H(λ) = Σ_i λ_i∇²c_i (the power flow's HessVec). The last two terms are
// the derivative of A, δA = −J_o⁻¹·δJ·P.

// checkExact returns an error unless the power flow and corr.Ineq give the
// second derivatives the exact gradient needs.
func (a *ACOPFCompletion) checkExact(corr Correction) error {
	if enforce.CapabilitiesOf(a.pf).HessVec == nil {
		return errors.New("dc3: Correction.ExactGradient: the power flow has no HessVec")
	}
	k := enforce.CapabilitiesOf(corr.Ineq)
	if k.HessVec == nil && k.ConstantJacobian == nil {
		return errors.New("dc3: Correction.ExactGradient: Correction.Ineq declares neither HessVec nor a constant Jacobian")
	}
	return nil
}

// correctionVJP writes into ybar the gradient with respect to the
// completed point y0 of one sample of a loss whose gradient with respect
// to its point after corr.Steps correction steps is gout.
func (a *ACOPFCompletion) correctionVJP(x, y0, gout, ybar []float64, corr Correction) error {
	ny := len(y0)
	traj := make([][]float64, corr.Steps)
	y := append([]float64(nil), y0...)
	dg, d := make([]float64, ny), make([]float64, ny)
	var s []float64
	for k := range corr.Steps {
		traj[k] = append([]float64(nil), y...)
		if err := a.step(x, y, corr, &s, dg, d); err != nil {
			return err
		}
	}
	copy(ybar, gout)
	sbar, sb, jv := make([]float64, ny), make([]float64, ny), make([]float64, ny)
	for k := corr.Steps - 1; k >= 0; k-- {
		for i := range sb {
			sb[i] = sbar[i] - ybar[i]
		}
		if err := a.dirVJP(x, traj[k], sb, corr.Ineq, jv); err != nil {
			return err
		}
		for i := range ybar {
			ybar[i] += corr.LearnRate * jv[i]
			sbar[i] = corr.Momentum * sb[i]
		}
	}
	return nil
}

// dirVJP writes into out J_D(y)ᵀv, the vector-Jacobian product of the
// correction direction D at the point y (see the top of this file).
func (a *ACOPFCompletion) dirVJP(x, y, v []float64, ineq enforce.Constraint, out []float64) error {
	ny := len(y)
	ys := append([]float64(nil), y...)
	for i := range a.nb {
		ys[i]--
	}
	l := a.Newton.linearise(a.pad(x), ys)
	_, _, ng := ineq.Dims()
	g, jg := make([]float64, ng), make([]float64, ng*ny)
	ineq.Eval(x, y, g, jg)
	grad := make([]float64, ny)
	h2 := make([]float64, ng) // 2·max(0, g)
	for r, gv := range g {
		if gv > 0 {
			h2[r] = 2 * gv
			for k := range ny {
				grad[k] += h2[r] * jg[r*ny+k]
			}
		}
	}
	np := len(a.Newton.Partial)
	dp, u := make([]float64, np), make([]float64, np)
	dir, pu := make([]float64, ny), make([]float64, ny)
	lam1, err := l.project(grad, dp)
	if err == nil {
		err = l.lift(dp, dir)
	}
	var lam2 []float64
	if err == nil {
		lam2, err = l.project(v, u)
	}
	if err == nil {
		err = l.lift(u, pu)
	}
	if err != nil {
		return fmt.Errorf("dc3: ∂c/∂y_o is singular at the corrected point: %w", err)
	}
	// (∂∇/∂y)ᵀ·P·u.
	clear(out)
	for r, gv := range g {
		if !(gv > 0) {
			continue
		}
		var t float64
		for k := range ny {
			t += jg[r*ny+k] * pu[k]
		}
		for k := range ny {
			out[k] += 2 * t * jg[r*ny+k]
		}
	}
	tmp := make([]float64, ny)
	if hv := enforce.CapabilitiesOf(ineq).HessVec; hv != nil {
		hv(x, y, h2, pu, tmp)
		for k := range out {
			out[k] += tmp[k]
		}
	}
	// −H(λ₁)·P·u − H(λ₂)·D, on the unshifted power flow (the same second
	// derivatives as the shifted one's).
	hc := enforce.CapabilitiesOf(a.pf).HessVec
	for _, t := range []struct{ lam, z []float64 }{{lam1, pu}, {lam2, dir}} {
		hc(x, y, t.lam, t.z, tmp)
		for k := range out {
			out[k] -= tmp[k]
		}
	}
	return nil
}

// correctGradOp is (x, y, ḡ) ↦ ∂L/∂y of the training-time correction of
// the completed points y, whose corrected points have the gradient ḡ.
type correctGradOp struct {
	matrixOp3
	a    *ACOPFCompletion
	corr Correction
}

func (op *correctGradOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("%v: want 3 inputs, got %d", op, len(inputs))
	}
	ys, ok := inputs[1].(tensor.Shape)
	if !ok || ys.Dims() != 2 {
		return nil, fmt.Errorf("%v: y has shape %v, want a matrix", op, inputs[1])
	}
	return ys.Clone(), nil
}

func (op *correctGradOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	data, err := float64Inputs3(op, inputs)
	if err != nil {
		return nil, err
	}
	nx := op.a.nx
	_, ny, _ := op.a.Newton.C.Dims()
	n := len(data[1]) / ny
	ybar := make([]float64, n*ny)
	for i := range n {
		if err := op.a.correctionVJP(data[0][i*nx:(i+1)*nx], data[1][i*ny:(i+1)*ny], data[2][i*ny:(i+1)*ny], ybar[i*ny:(i+1)*ny], op.corr); err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return tensor.New(tensor.WithShape(n, ny), tensor.WithBacking(ybar)), nil
}

func (op *correctGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "∂dc3.correct(%p, %v, %v, %d, %p)", op.a, op.corr.LearnRate, op.corr.Momentum, op.corr.Steps, op.corr.Ineq)
}
func (op *correctGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *correctGradOp) String() string   { return "∂DC3Correction/∂y" }

var _ gorgonia.Op = (*correctGradOp)(nil)
