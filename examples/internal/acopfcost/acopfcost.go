// Package acopfcost builds the generation cost of an acopf.Model as a
// train.Objective, shared by the ACOPF examples (acopf-dc3, acopf-learn).
package acopfcost

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce/problems/acopf"
	"github.com/enforce-nn/enforce/train"
)

// Objective returns the generation cost over scale as a train.Objective:
// f(y) = Σ_j (a2_j·Pg_j² + a1_j·Pg_j + a0_j)/scale per sample, Pg in p.u.
// as acopf.Model.Objective evaluates it, in the graph's precision
// (float64 or float32). It returns an error for a generator with a
// reactive cost or a cost that is not a polynomial of degree ≤ 2, which
// the objective would otherwise leave out or get wrong, and for a scale
// that is not positive and finite.
func Objective(m *acopf.Model, scale float64) (train.Objective, error) {
	if !(scale > 0) || scale > 1e300 {
		return nil, fmt.Errorf("acopfcost: scale = %v, want positive and finite", scale)
	}
	_, ny := m.Dims()
	nb := len(m.Case.Buses)
	q, l := make([]float64, ny), make([]float64, ny)
	var a0 float64
	for j, gen := range m.Case.Gens {
		if gen.QCost != nil {
			return nil, fmt.Errorf("acopfcost: generator %d has a reactive cost: not supported", j)
		}
		if gen.Cost == nil || gen.Cost.Model != 2 || len(gen.Cost.Poly) > 3 {
			return nil, fmt.Errorf("acopfcost: generator %d: only polynomial costs of degree ≤ 2 are supported", j)
		}
		p := gen.Cost.Poly
		k := 2*nb + j
		if len(p) > 0 {
			a0 += p[0] / scale
		}
		if len(p) > 1 {
			l[k] = p[1] / scale
		}
		if len(p) > 2 {
			q[k] = p[2] / scale
		}
	}
	return func(_, y *gorgonia.Node) (*gorgonia.Node, error) {
		g := y.Graph()
		dt := y.Dtype()
		if dt != tensor.Float64 && dt != tensor.Float32 {
			return nil, fmt.Errorf("acopfcost: a %v graph: want float64 or float32", dt)
		}
		vec := func(v []float64, name string) *gorgonia.Node {
			var back any = append([]float64(nil), v...)
			if dt == tensor.Float32 {
				f := make([]float32, len(v))
				for i := range v {
					f[i] = float32(v[i])
				}
				back = f
			}
			return gorgonia.NewVector(g, dt, gorgonia.WithShape(len(v)), gorgonia.WithName(name),
				gorgonia.WithValue(tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(back))))
		}
		sq, err := gorgonia.HadamardProd(y, y)
		if err != nil {
			return nil, err
		}
		fq, err := gorgonia.Mul(sq, vec(q, "cost_q"))
		if err != nil {
			return nil, err
		}
		fl, err := gorgonia.Mul(y, vec(l, "cost_l"))
		if err != nil {
			return nil, err
		}
		f, err := gorgonia.Add(fq, fl)
		if err != nil || a0 == 0 {
			return f, err
		}
		var c any = a0
		if dt == tensor.Float32 {
			c = float32(a0)
		}
		return gorgonia.Add(f, gorgonia.NewConstant(c))
	}, nil
}
