package dc3

import (
	"fmt"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/enforce-nn/enforce"
	"github.com/enforce-nn/enforce/problems/acopf"
)

// ACOPFCompletion is DC3's equality completion for AC optimal power flow
// (locuslab/DC3, utils.py, ACOPFProblem.complete_partial and PFFunction):
// the network predicts the partial variables
//
//	y_p = (Pg of every generator but the reference bus's, Vm of every generator bus),
//
// and the other variables, Vm of the load buses, Va of every bus, Pg of the
// reference bus's generator and Qg of every generator, are found by solving
// the power flow (acopf.PowerFlow, with the reference angle row Va_ref = 0)
// by Newton's method: 2·nb + 1 equations in as many unknowns. Its
// vector-Jacobian product follows from the implicit function theorem, as
// NewtonCompletion's, which does the work.
//
// y is laid out as acopf.PowerFlow's y = (Vm, Va, Pg, Qg).
type ACOPFCompletion struct {
	// Newton is the completion on the power flow in shifted variables
	// y' = y − e, e = 1 at the voltage magnitudes and 0 elsewhere (so that
	// NewtonCompletion's start y'_o = 0 of the graph is the flat start
	// Vm = 1, Va = 0, Pg = Qg = 0), with its inputs padded with zeros to as
	// many as its equalities (NewtonCompletion's contract).
	Newton   NewtonCompletion
	pf       enforce.Constraint // acopf.PowerFlow, unshifted
	nx, nb   int
	lo, span []float64 // the partial variables' bounds (PartialBounds)
}

// NewACOPFCompletion returns DC3's completion for the ACOPF of m. It
// returns an error when a bus has more than one generator (DC3's
// formulation has one per generator bus) or a reference bus has none.
func NewACOPFCompletion(m *acopf.Model) (*ACOPFCompletion, error) {
	c := m.Case
	nb, ng := len(c.Buses), len(c.Gens)
	pf := m.PowerFlow()
	nx, ny, nc := pf.Dims()
	genAt := make([]int, nb)
	for i := range genAt {
		genAt[i] = -1
	}
	isRef := make([]bool, nb)
	for _, r := range c.Refs {
		isRef[r] = true
	}
	for j, g := range c.Gens {
		if genAt[g.Bus] >= 0 {
			return nil, fmt.Errorf("dc3: ACOPF completion: bus %d has more than one generator", c.Buses[g.Bus].ID)
		}
		genAt[g.Bus] = j
	}
	for _, r := range c.Refs {
		if genAt[r] < 0 {
			return nil, fmt.Errorf("dc3: ACOPF completion: reference bus %d has no generator", c.Buses[r].ID)
		}
	}
	partial := make([]int, 0, 2*ng)
	for j, g := range c.Gens {
		if !isRef[g.Bus] {
			partial = append(partial, 2*nb+j)
		}
	}
	for i := range nb {
		if genAt[i] >= 0 {
			partial = append(partial, i)
		}
	}
	isPartial := make([]bool, ny)
	for _, k := range partial {
		isPartial[k] = true
	}
	other := make([]int, 0, ny-len(partial))
	for k := range ny {
		if !isPartial[k] {
			other = append(other, k)
		}
	}
	if len(other) != nc || nx > nc {
		return nil, fmt.Errorf("dc3: ACOPF completion: %d completed variables for %d equations and %d inputs", len(other), nc, nx)
	}
	a := &ACOPFCompletion{Newton: NewtonCompletion{C: &shifted{c: pf, nx: nx, nc: nc, nb: nb}, Partial: partial, Other: other}, pf: pf, nx: nx, nb: nb}
	if err := a.Newton.Validate(); err != nil {
		return nil, err
	}
	a.lo, a.span = make([]float64, len(partial)), make([]float64, len(partial))
	for i, k := range partial {
		if k < nb {
			a.lo[i], a.span[i] = c.Buses[k].Vmin, c.Buses[k].Vmax-c.Buses[k].Vmin
		} else {
			g := c.Gens[k-2*nb]
			a.lo[i], a.span[i] = g.Pmin, g.Pmax-g.Pmin
		}
	}
	return a, nil
}

// PartialBounds returns the lower bounds and the widths of the partial
// variables, in the order of Partial: Vmin and Vmax − Vmin of a generator
// bus's magnitude, Pmin and Pmax − Pmin of a generator's output. DC3's
// network maps its outputs into them, y_p = lo + span·σ(z).
func (a *ACOPFCompletion) PartialBounds() (lo, span []float64) {
	return slices.Clone(a.lo), slices.Clone(a.span)
}

// CompleteFlat completes each row of the partial variables yp (n×len(Partial))
// for the loads in the same row of x (n×nx), Newton's method started from
// the flat start (Vm = 1, Va = 0, Pg = Qg = 0 at the other variables) as
// in Node's graph, and returns the points y (n×ny). A sample whose Newton
// iteration does not converge keeps its last iterate, as DC3's does; an
// error names the sample.
func (a *ACOPFCompletion) CompleteFlat(x, yp *mat.Dense) (*mat.Dense, error) {
	n, _ := x.Dims()
	if r, k := yp.Dims(); r != n || k != len(a.Newton.Partial) {
		return nil, fmt.Errorf("dc3: ACOPF completion: yp is %d×%d, want %d×%d", r, k, n, len(a.Newton.Partial))
	}
	_, ny, _ := a.Newton.C.Dims()
	y := mat.NewDense(n, ny, nil)
	for i := range n {
		row := y.RawRowView(i)
		for k := range a.nb {
			row[k] = 1
		}
		if _, _, err := a.Complete(x.RawRowView(i), yp.RawRowView(i), row); err != nil {
			return nil, fmt.Errorf("dc3: completing sample %d: %w", i, err)
		}
	}
	return y, nil
}

// Partial returns the indices in y of the partial variables, in the
// order of y_p: Pg of the non-reference generators, then Vm of the
// generator buses.
func (a *ACOPFCompletion) Partial() []int { return append([]int(nil), a.Newton.Partial...) }

// Complete writes into y the completion of y_p for the loads x
// (acopf.PowerFlow's x), starting Newton's method from y's values at the
// other variables, and returns max|c| at the end and whether it is at most
// the tolerance (NewtonCompletion.Complete).
func (a *ACOPFCompletion) Complete(x, yp, y []float64) (float64, bool, error) {
	if len(x) != a.nx {
		return 0, false, fmt.Errorf("dc3: ACOPF completion: len(x) = %d, want %d", len(x), a.nx)
	}
	sp := append([]float64(nil), yp...)
	for i, k := range a.Newton.Partial {
		if k < a.nb {
			sp[i]--
		}
	}
	for i := range a.nb {
		y[i]--
	}
	res, ok, err := a.Newton.Complete(a.pad(x), sp, y)
	for i := range a.nb {
		y[i]++
	}
	return res, ok, err
}

// VJP writes into gp the gradient with respect to y_p of a loss whose
// gradient with respect to the completed y is g (NewtonCompletion.VJP).
func (a *ACOPFCompletion) VJP(x, y, g, gp []float64) error {
	if len(x) != a.nx {
		return fmt.Errorf("dc3: ACOPF completion: len(x) = %d, want %d", len(x), a.nx)
	}
	ys := append([]float64(nil), y...)
	for i := range a.nb {
		ys[i]--
	}
	return a.Newton.VJP(a.pad(x), ys, g, gp)
}

// Node adds the completion of a batch to a float64 graph: for loads x
// (n×nx) and partial variables yp (n×len(Partial)) it returns y (n×ny),
// each sample completed by Newton's method from the flat start, with the
// gradient with respect to yp of the implicit function theorem (x is
// data). A sample whose Newton iteration does not converge keeps its last
// iterate, as DC3's does.
func (a *ACOPFCompletion) Node(x, yp *gorgonia.Node) (*gorgonia.Node, error) {
	xs, ps := x.Shape(), yp.Shape()
	_, ny, nc := a.Newton.C.Dims()
	k := len(a.Newton.Partial)
	if xs.Dims() != 2 || xs[1] != a.nx || ps.Dims() != 2 || ps[1] != k || ps[0] != xs[0] {
		return nil, fmt.Errorf("dc3: ACOPF completion: x %v and yp %v, want (n, %d) and (n, %d)", xs, ps, a.nx, k)
	}
	n := xs[0]
	g := x.Graph()
	cst := func(r, c int, f func(i, j int) float64, name string) *gorgonia.Node {
		v := make([]float64, r*c)
		for i := range r {
			for j := range c {
				v[i*c+j] = f(i, j)
			}
		}
		return gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(r, c), gorgonia.WithName(fmt.Sprintf("%s_%p_%d", name, a, n)),
			gorgonia.WithValue(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(v))))
	}
	xp, err := gorgonia.Concat(1, x, cst(n, nc-a.nx, func(int, int) float64 { return 0 }, "dc3_acopf_pad"))
	if err != nil {
		return nil, err
	}
	sp, err := gorgonia.Sub(yp, cst(n, k, func(_, j int) float64 {
		if a.Newton.Partial[j] < a.nb {
			return 1
		}
		return 0
	}, "dc3_acopf_ep"))
	if err != nil {
		return nil, err
	}
	ys, err := a.Newton.node(xp, sp)
	if err != nil {
		return nil, err
	}
	return gorgonia.Add(ys, cst(n, ny, func(_, j int) float64 {
		if j < a.nb {
			return 1
		}
		return 0
	}, "dc3_acopf_e"))
}

func (a *ACOPFCompletion) pad(x []float64) []float64 {
	_, _, nc := a.Newton.C.Dims()
	xp := make([]float64, nc)
	copy(xp, x)
	return xp
}

// shifted is the power flow c(x, y' + e) in the shifted variables y' (e
// = 1 at the first nb entries, the voltage magnitudes), with its input
// padded with zeros to nc entries.
type shifted struct {
	c          enforce.Constraint
	nx, nc, nb int
	pool       sync.Pool
}

func (s *shifted) Dims() (nx, ny, nc int) {
	_, ny, _ = s.c.Dims()
	return s.nc, ny, s.nc
}

func (s *shifted) Eval(x, y, c, jy []float64) {
	buf, _ := s.pool.Get().(*[]float64)
	if buf == nil {
		b := make([]float64, len(y))
		buf = &b
	}
	z := *buf
	copy(z, y)
	for i := range s.nb {
		z[i]++
	}
	s.c.Eval(x[:s.nx], z, c, jy)
	s.pool.Put(buf)
}
