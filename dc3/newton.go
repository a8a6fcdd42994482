package dc3

import (
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"math"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
)

// Defaults of NewtonCompletion.
const (
	// DefaultNewtonTol bounds max|c| at a completed point.
	DefaultNewtonTol = 1e-10
	// DefaultNewtonIter bounds the Newton iterations per sample.
	DefaultNewtonIter = 50
)

// NewtonCompletion is DC3's completion for nonlinear equalities
// c(x, y) = 0 with as many equalities N_C as completed variables: given x
// and the predicted variables y_p (indices Partial), it solves
// c(x, y) = 0 for the other variables y_o (indices Other) by Newton's
// method from y_o = 0 (in the graph and in Predict), each step Δ = (∂c/∂y_o)⁻¹c halved until ‖c‖₂
// decreases (at most 30 times), stopping when max|c| ≤ Tol or after
// MaxIter steps. A sample that does not converge keeps its last iterate,
// which is finite; Complete reports it.
//
// Its vector-Jacobian product at a completed point follows from the
// implicit function theorem: for an upstream gradient g = (g_p, g_o),
// ∂L/∂y_p = g_p − (∂c/∂y_p)ᵀw with (∂c/∂y_o)ᵀw = g_o.
type NewtonCompletion struct {
	// C is the constraint; its Dims are (N_C, N_O, N_C).
	C enforce.Constraint
	// Partial and Other partition 0..N_O−1: the predicted and the
	// completed variables (len(Other) = N_C).
	Partial, Other []int
	// Tol and MaxIter are the stopping rule; zero means DefaultNewtonTol
	// and DefaultNewtonIter.
	Tol     float64
	MaxIter int
}

func (nc *NewtonCompletion) settings() (float64, int) {
	tol, it := nc.Tol, nc.MaxIter
	if tol <= 0 {
		tol = DefaultNewtonTol
	}
	if it <= 0 {
		it = DefaultNewtonIter
	}
	return tol, it
}

// Validate returns an error unless C is set, has as many inputs as
// equalities, and Partial and Other partition 0..N_O−1 with
// len(Other) = N_C: every index in range, none repeated, none missing.
func (nc *NewtonCompletion) Validate() error {
	if nc.C == nil {
		return errors.New("dc3: NewtonCompletion: nil constraint C")
	}
	nx, nO, m := nc.C.Dims()
	if nx != m {
		return fmt.Errorf("dc3: NewtonCompletion: C has %d inputs and %d equalities, want as many inputs as equalities", nx, m)
	}
	if len(nc.Other) != m || len(nc.Partial)+len(nc.Other) != nO {
		return fmt.Errorf("dc3: NewtonCompletion: %d partial and %d other variables, want %d and %d (N_O = %d, N_C = %d)",
			len(nc.Partial), len(nc.Other), nO-m, m, nO, m)
	}
	seen := make([]string, nO)
	for _, list := range []struct {
		name string
		idx  []int
	}{{"Partial", nc.Partial}, {"Other", nc.Other}} {
		for _, j := range list.idx {
			if j < 0 || j >= nO {
				return fmt.Errorf("dc3: NewtonCompletion: %s holds index %d, out of range [0, %d)", list.name, j, nO)
			}
			if seen[j] != "" {
				return fmt.Errorf("dc3: NewtonCompletion: variable %d is in %s and in %s", j, seen[j], list.name)
			}
			seen[j] = list.name
		}
	}
	return nil
}

// Complete writes into y (length N_O) the completion of yp (length
// len(Partial)) for input x (length N_C), starting Newton's method from
// the values of y at Other, and returns max|c(x, y)| at the end and
// whether it is at most Tol. A completion need not exist for every y_p,
// and Newton's method need not find one that exists: it converges from a
// start close enough to a solution with a nonsingular ∂c/∂y_o. It returns
// an error if the completion is invalid (Validate) or a length is wrong.
func (nc *NewtonCompletion) Complete(x, yp, y []float64) (float64, bool, error) {
	if err := nc.check(x, yp, y); err != nil {
		return 0, false, err
	}
	res, ok := nc.newton(x, yp, y)
	return res, ok, nil
}

// check validates nc and the lengths of x, a partial vector and a full one.
func (nc *NewtonCompletion) check(x, yp, y []float64) error {
	if err := nc.Validate(); err != nil {
		return err
	}
	nx, nO, _ := nc.C.Dims()
	if len(x) != nx || len(yp) != len(nc.Partial) || len(y) != nO {
		return fmt.Errorf("dc3: NewtonCompletion: lengths %d, %d, %d, want %d, %d, %d", len(x), len(yp), len(y), nx, len(nc.Partial), nO)
	}
	return nil
}

// newton is Complete without the checks.
func (nc *NewtonCompletion) newton(x, yp, y []float64) (float64, bool) {
	_, nO, m := nc.C.Dims()
	tol, maxIter := nc.settings()
	for i, j := range nc.Partial {
		y[j] = yp[i]
	}
	c, jac, trial, ct := make([]float64, m), make([]float64, m*nO), make([]float64, nO), make([]float64, m)
	jo := mat.NewDense(m, m, nil)
	var lu mat.LU
	var delta mat.VecDense
	for it := 0; ; it++ {
		nc.C.Eval(x, y, c, jac)
		res := floats.Norm(c, math.Inf(1))
		if res <= tol {
			return res, true
		}
		if it == maxIter || math.IsNaN(res) {
			return res, false
		}
		for i := range m {
			for j, col := range nc.Other {
				jo.Set(i, j, jac[i*nO+col])
			}
		}
		lu.Factorize(jo)
		if lu.Cond() > 1e14 {
			return res, false
		}
		if err := lu.SolveVecTo(&delta, false, mat.NewVecDense(m, c)); err != nil {
			return res, false
		}
		norm := floats.Norm(c, 2)
		t := 1.0
		for range 31 {
			copy(trial, y)
			for j, col := range nc.Other {
				trial[col] -= t * delta.AtVec(j)
			}
			nc.C.Eval(x, trial, ct, nil)
			if n := floats.Norm(ct, 2); n < norm {
				break
			}
			t /= 2
		}
		if t < 1e-9 {
			return res, false
		}
		copy(y, trial)
	}
}

// VJP writes into gp (length len(Partial)) the gradient with respect to
// y_p of a loss whose gradient with respect to the completed y is g, at
// the completed point y. It returns an error if the completion is invalid
// (Validate), a length is wrong, or ∂c/∂y_o is singular there.
func (nc *NewtonCompletion) VJP(x, y, g, gp []float64) error {
	if err := nc.check(x, gp, y); err != nil {
		return err
	}
	if len(g) != len(y) {
		return fmt.Errorf("dc3: NewtonCompletion: VJP: len(g) = %d, want %d", len(g), len(y))
	}
	return nc.vjp(x, y, g, gp)
}

// vjp is VJP without the checks.
func (nc *NewtonCompletion) vjp(x, y, g, gp []float64) error {
	if _, err := nc.linearise(x, y).project(g, gp); err != nil {
		return fmt.Errorf("dc3: ∂c/∂y_o is singular at the completed point: %w", err)
	}
	return nil
}

// linearisation is ∂c/∂y = [J_p J_o] at a point with the factorisation of
// J_o: the pieces of the implicit function theorem, y_o(y_p) with
// ∂y_o/∂y_p = A = −J_o⁻¹J_p, and P = [I; A] the derivative of y in y_p.
type linearisation struct {
	nc    *NewtonCompletion
	jac   []float64 // row-major, N_C×N_O
	ny, m int
	lu    mat.LU
}

// linearise evaluates ∂c/∂y at y and factors ∂c/∂y_o.
func (nc *NewtonCompletion) linearise(x, y []float64) *linearisation {
	_, nO, m := nc.C.Dims()
	l := &linearisation{nc: nc, jac: make([]float64, m*nO), ny: nO, m: m}
	nc.C.Eval(x, y, make([]float64, m), l.jac)
	jo := mat.NewDense(m, m, nil)
	for i := range m {
		for j, col := range nc.Other {
			jo.Set(i, j, l.jac[i*nO+col])
		}
	}
	l.lu.Factorize(jo)
	return l
}

// project writes into p (length len(Partial)) Pᵀr = r_p − J_pᵀw for r on
// the whole y, where J_oᵀw = r_o, and returns w; the error is the solve's.
func (l *linearisation) project(r, p []float64) ([]float64, error) {
	ro := mat.NewVecDense(l.m, nil)
	for j, col := range l.nc.Other {
		ro.SetVec(j, r[col])
	}
	var w mat.VecDense
	if err := l.lu.SolveVecTo(&w, true, ro); err != nil {
		return nil, err
	}
	for i, col := range l.nc.Partial {
		s := r[col]
		for rr := range l.m {
			s -= l.jac[rr*l.ny+col] * w.AtVec(rr)
		}
		p[i] = s
	}
	return w.RawVector().Data, nil
}

// lift writes into z (length N_O) P·zp: zp at the partial variables and
// −J_o⁻¹J_p·zp at the others; the error is the solve's.
func (l *linearisation) lift(zp, z []float64) error {
	rhs := mat.NewVecDense(l.m, nil)
	for i, col := range l.nc.Partial {
		z[col] = zp[i]
		for r := range l.m {
			rhs.SetVec(r, rhs.AtVec(r)+l.jac[r*l.ny+col]*zp[i])
		}
	}
	var v mat.VecDense
	if err := l.lu.SolveVecTo(&v, false, rhs); err != nil {
		return err
	}
	for j, col := range l.nc.Other {
		z[col] = -v.AtVec(j)
	}
	return nil
}

func (nc *NewtonCompletion) node(x, yp *gorgonia.Node) (*gorgonia.Node, error) {
	if err := nc.Validate(); err != nil {
		return nil, err
	}
	return gorgonia.ApplyOp(&newtonOp{nc: nc}, x, yp)
}

func (nc *NewtonCompletion) complete(x, yp *mat.Dense) (*mat.Dense, error) {
	n, _ := x.Dims()
	_, nO, _ := nc.C.Dims()
	y := mat.NewDense(n, nO, nil) // y_o starts at zero
	for i := range n {
		if _, _, err := nc.Complete(x.RawRowView(i), yp.RawRowView(i), y.RawRowView(i)); err != nil {
			return nil, err
		}
	}
	return y, nil
}

// newtonOp is the gorgonia Op (x, y_p) ↦ y of a NewtonCompletion.
type newtonOp struct{ nc *NewtonCompletion }

func (op *newtonOp) Arity() int { return 2 }

// Type is Matrix a → Matrix a → Matrix a.
func (op *newtonOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, m)
}

func (op *newtonOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	_, nO, _ := op.nc.C.Dims()
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	xs, ok := inputs[0].(tensor.Shape)
	if !ok || xs.Dims() != 2 {
		return nil, fmt.Errorf("%v: x has shape %v, want a matrix", op, inputs[0])
	}
	return tensor.Shape{xs[0], nO}, nil
}

// float64s returns the data of a float64 matrix value.
func float64s(v gorgonia.Value) ([]float64, error) {
	d, ok := v.Data().([]float64)
	if !ok {
		return nil, errors.New("dc3: Newton completion supports float64 graphs only")
	}
	return d, nil
}

func (op *newtonOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	x, err := float64s(inputs[0])
	if err != nil {
		return nil, err
	}
	yp, err := float64s(inputs[1])
	if err != nil {
		return nil, err
	}
	nx, nO, _ := op.nc.C.Dims()
	k := len(op.nc.Partial)
	n := len(x) / nx
	y := make([]float64, n*nO)
	for i := range n {
		if _, _, err := op.nc.Complete(x[i*nx:(i+1)*nx], yp[i*k:(i+1)*k], y[i*nO:(i+1)*nO]); err != nil {
			return nil, err
		}
	}
	return tensor.New(tensor.WithShape(n, nO), tensor.WithBacking(y)), nil
}

func (op *newtonOp) ReturnsPtr() bool     { return false }
func (op *newtonOp) CallsExtern() bool    { return false }
func (op *newtonOp) OverwritesInput() int { return -1 }
func (op *newtonOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "dc3.newton(%p)", op.nc)
}
func (op *newtonOp) Hashcode() uint32 { return hashOf(op) }
func (op *newtonOp) String() string   { return "DC3NewtonCompletion" }

func hashOf(op gorgonia.Op) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// DiffWRT: differentiable with respect to y_p only (x is data).
func (op *newtonOp) DiffWRT(inputs int) []bool {
	if inputs != 2 {
		return make([]bool, inputs)
	}
	return []bool{false, true}
}

// SymDiff returns the gradient node with respect to y_p.
func (op *newtonOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%v: want 2 inputs, got %d", op, len(inputs))
	}
	gp, err := gorgonia.ApplyOp(&newtonGradOp{nc: op.nc}, inputs[0], output, grad)
	if err != nil {
		return nil, err
	}
	return gorgonia.Nodes{nil, gp}, nil
}

// matrixOp3 is what the package's gradient ops share: three matrix
// inputs (x, the point, the incoming gradient) to one matrix, computed into
// a new value.
type matrixOp3 struct{}

func (matrixOp3) Arity() int { return 3 }

// Type is Matrix a → Matrix a → Matrix a → Matrix a.
func (matrixOp3) Type() hm.Type {
	a := hm.TypeVariable('a')
	m := gorgonia.TensorType{Dims: 2, Of: a}
	return hm.NewFnType(m, m, m, m)
}

func (matrixOp3) ReturnsPtr() bool     { return false }
func (matrixOp3) CallsExtern() bool    { return false }
func (matrixOp3) OverwritesInput() int { return -1 }

// float64Inputs3 returns the data of the three float64 inputs of op.
func float64Inputs3(op gorgonia.Op, inputs []gorgonia.Value) (data [3][]float64, err error) {
	if len(inputs) != 3 {
		return data, fmt.Errorf("%v: want 3 inputs, got %d", op, len(inputs))
	}
	for i, v := range inputs {
		if data[i], err = float64s(v); err != nil {
			return data, err
		}
	}
	return data, nil
}

// newtonGradOp is (x, y, g) ↦ ∂L/∂y_p of a NewtonCompletion.
type newtonGradOp struct {
	matrixOp3
	nc *NewtonCompletion
}

func (op *newtonGradOp) InferShape(inputs ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("%v: want 3 inputs, got %d", op, len(inputs))
	}
	xs, ok := inputs[0].(tensor.Shape)
	if !ok || xs.Dims() != 2 {
		return nil, fmt.Errorf("%v: x has shape %v, want a matrix", op, inputs[0])
	}
	return tensor.Shape{xs[0], len(op.nc.Partial)}, nil
}

func (op *newtonGradOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	data, err := float64Inputs3(op, inputs)
	if err != nil {
		return nil, err
	}
	nx, nO, _ := op.nc.C.Dims()
	k := len(op.nc.Partial)
	n := len(data[0]) / nx
	gp := make([]float64, n*k)
	for i := range n {
		if err := op.nc.VJP(data[0][i*nx:(i+1)*nx], data[1][i*nO:(i+1)*nO], data[2][i*nO:(i+1)*nO], gp[i*k:(i+1)*k]); err != nil {
			return nil, err
		}
	}
	return tensor.New(tensor.WithShape(n, k), tensor.WithBacking(gp)), nil
}

func (op *newtonGradOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "∂dc3.newton(%p)", op.nc)
}
func (op *newtonGradOp) Hashcode() uint32 { return hashOf(op) }
func (op *newtonGradOp) String() string   { return "∂DC3NewtonCompletion/∂y_p" }

var (
	_ gorgonia.SDOp = (*newtonOp)(nil)
	_ gorgonia.Op   = (*newtonGradOp)(nil)
	_ completion    = (*NewtonCompletion)(nil)
	_ completion    = (*linearCompletion)(nil)
)
